//! How every command prints: one-line errors that name each cause once ([`one_line`]), and
//! standard streams on which a closed pipe is a quiet end ([`Streams`]).
//!
//! Errors: anyhow's `{:#}` prints an error and each of its sources, joined by `: `. Many errors
//! already put their source's text in their own message — the `redis` crate's do, with the I/O
//! error under them — so the chain printed the same cause two or three times (`connection:
//! Connection refused (os error 111): Connection refused (os error 111): ...`). [`one_line`] prints
//! a cause only when the message so far does not already contain it. Every command that prints an
//! error uses it.
//!
//! A closed pipe: `redis-atomic scripts list | head -1` closes stdout after one line. Rust ignores
//! SIGPIPE, so the next write fails with `BrokenPipe`, and every command would turn that into
//! `error: Broken pipe` and exit 2. [`Streams`] notices the broken pipe once, for every command:
//! from then on stderr is silent and the process exits 0, as a Unix filter does when its reader
//! has what it wanted.

use anyhow::Context as _;
use std::io::{ErrorKind, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// The command's stdout and stderr; see the module doc.
#[derive(Default)]
pub struct Streams {
    closed: Arc<AtomicBool>,
}

impl Streams {
    /// Stdout, unlocked (each write locks briefly: holding the lock for a whole run would block
    /// a progress bar's tick thread and any log line from a worker thread).
    pub fn out(&self) -> Out {
        Out {
            closed: self.closed.clone(),
        }
    }

    /// Stderr, silent once stdout's reader has gone.
    pub fn err(&self) -> ErrOut {
        ErrOut {
            closed: self.closed.clone(),
        }
    }

    /// `code`, or 0 when stdout's reader went away (the quiet end of a pipe).
    pub fn exit_code(&self, code: i32) -> i32 {
        if self.closed.load(Ordering::Relaxed) {
            0
        } else {
            code
        }
    }
}

/// Stdout, noting a broken pipe.
pub struct Out {
    closed: Arc<AtomicBool>,
}

impl Out {
    fn noted<T>(&self, r: std::io::Result<T>) -> std::io::Result<T> {
        if let Err(e) = &r {
            if e.kind() == ErrorKind::BrokenPipe {
                self.closed.store(true, Ordering::Relaxed);
            }
        }
        r
    }
}

impl Write for Out {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let r = std::io::stdout().write(buf);
        self.noted(r)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        let r = std::io::stdout().flush();
        self.noted(r)
    }
}

/// Stderr, silent after stdout's pipe broke.
pub struct ErrOut {
    closed: Arc<AtomicBool>,
}

impl Write for ErrOut {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.closed.load(Ordering::Relaxed) {
            return Ok(buf.len());
        }
        std::io::stderr().write(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
}

/// The multi-threaded tokio runtime every async command runs on (one configuration, one place).
pub fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("tokio runtime")
}

/// `e` and its causes on one line, each cause once.
pub fn one_line(e: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if out.contains(&text) {
            continue;
        }
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&text);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("outer: {0}")]
    struct Outer(#[source] std::io::Error);

    /// A cause already in the message is not printed again; a new one is.
    #[test]
    fn each_cause_once() {
        let io = std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "refused");
        let e = anyhow::Error::new(Outer(io)).context("connecting to --url");
        assert_eq!(
            format!("{e:#}"),
            "connecting to --url: outer: refused: refused"
        );
        assert_eq!(one_line(&e), "connecting to --url: outer: refused");
        let plain = anyhow::anyhow!("a").context("b");
        assert_eq!(one_line(&plain), "b: a");
    }
}
