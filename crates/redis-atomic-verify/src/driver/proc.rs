//! One driver process: started with `sh -c "exec CMD"`, spoken to in JSON lines on its stdin and
//! stdout, killed when dropped. Every way a foreign program can misbehave — exiting, closing its
//! stdout, hanging, printing something that is not one JSON object — is a [`DriverFault`]
//! returned to the row, never a panic or the end of the run: the harness is production code.
//! Its stderr is kept (the last few KiB) so a crash's report says what the driver said.

use serde_json::Value;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

/// The most of a driver's stderr kept for its fault's description.
const STDERR_TAIL: usize = 2048;
/// The longest line a driver may answer with.
const MAX_LINE: usize = 64 * 1024;

/// How a driver process failed the harness (its row becomes an `error` row saying so).
#[derive(Debug, thiserror::Error)]
pub(crate) enum DriverFault {
    /// It could not be started.
    #[error("driver `{cmd}` did not start: {source}")]
    Spawn { cmd: String, source: std::io::Error },
    /// It exited, or closed its stdin or stdout.
    #[error("driver exited or closed its pipes ({status}); its stderr: {stderr}")]
    Exited { status: String, stderr: String },
    /// It did not answer in time.
    #[error("driver did not answer `{what}` within {after:?} (killed)")]
    Hung { what: String, after: Duration },
    /// It answered something that is not a reply of the protocol.
    #[error("driver answered garbage to `{what}`: {line}")]
    Garbage { what: String, line: String },
}

/// A running driver process.
pub(crate) struct Proc {
    child: Child,
    stdin: ChildStdin,
    stdout: Lines<BufReader<ChildStdout>>,
    stderr: Arc<Mutex<Vec<u8>>>,
}

impl Proc {
    /// Starts `cmd` (a shell command line).
    pub(crate) fn spawn(cmd: &str) -> Result<Proc, DriverFault> {
        let spawn_err = |source| DriverFault::Spawn {
            cmd: cmd.to_string(),
            source,
        };
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(format!("exec {cmd}"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(spawn_err)?;
        let missing = || spawn_err(std::io::Error::other("no pipe"));
        let stdin = child.stdin.take().ok_or_else(missing)?;
        let stdout = BufReader::new(child.stdout.take().ok_or_else(missing)?).lines();
        let stderr = Arc::new(Mutex::new(Vec::new()));
        if let Some(mut pipe) = child.stderr.take() {
            let tail = stderr.clone();
            tokio::spawn(async move {
                let mut buf = [0u8; 1024];
                while let Ok(n @ 1..) = pipe.read(&mut buf).await {
                    let mut t = tail.lock().unwrap_or_else(|p| p.into_inner());
                    t.extend_from_slice(&buf[..n]);
                    let excess = t.len().saturating_sub(STDERR_TAIL);
                    t.drain(..excess);
                }
            });
        }
        Ok(Proc {
            child,
            stdin,
            stdout,
            stderr,
        })
    }

    /// Sends `message` and waits (at most `within`) for the one-line JSON object it answers.
    /// On a fault the process is killed: it is of no further use.
    pub(crate) async fn ask(
        &mut self,
        message: &Value,
        within: Duration,
    ) -> Result<Value, DriverFault> {
        let what = message
            .get("op")
            .and_then(Value::as_str)
            .unwrap_or("?")
            .to_string();
        let answer = tokio::time::timeout(within, self.exchange(message)).await;
        let fault = match answer {
            Ok(Ok(Some(line))) if line.len() <= MAX_LINE => match serde_json::from_str(&line) {
                Ok(v @ Value::Object(_)) => return Ok(v),
                _ => DriverFault::Garbage {
                    what,
                    line: clip(&line),
                },
            },
            Ok(Ok(Some(line))) => DriverFault::Garbage {
                what,
                line: clip(&line),
            },
            Ok(_) => self.exited().await,
            Err(_) => DriverFault::Hung {
                what,
                after: within,
            },
        };
        let _ = self.child.start_kill();
        Err(fault)
    }

    async fn exchange(&mut self, message: &Value) -> std::io::Result<Option<String>> {
        let mut line = message.to_string();
        line.push('\n');
        self.stdin.write_all(line.as_bytes()).await?;
        self.stdin.flush().await?;
        self.stdout.next_line().await
    }

    /// The fault of a process whose pipes closed: its exit status (once it exited) and stderr.
    async fn exited(&mut self) -> DriverFault {
        let status = match tokio::time::timeout(Duration::from_secs(1), self.child.wait()).await {
            Ok(Ok(s)) => s.to_string(),
            _ => "still running".to_string(),
        };
        let stderr = self.stderr.lock().unwrap_or_else(|p| p.into_inner());
        DriverFault::Exited {
            status,
            stderr: clip(&String::from_utf8_lossy(&stderr)),
        }
    }
}

/// At most 200 characters of `text`, on one line.
fn clip(text: &str) -> String {
    let one: String = text.trim().replace('\n', " | ");
    match one.char_indices().nth(200) {
        Some((i, _)) => format!("{}…", &one[..i]),
        None => one,
    }
}
