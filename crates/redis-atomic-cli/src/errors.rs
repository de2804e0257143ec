//! One-line error messages that name each cause once.
//!
//! anyhow's `{:#}` prints an error and each of its sources, joined by `: `. Many errors already
//! put their source's text in their own message — the `redis` crate's do, with the I/O error
//! under them — so the chain printed the same cause two or three times
//! (`connection: Connection refused (os error 111): Connection refused (os error 111): ...`).
//! [`one_line`] prints a cause only when the message so far does not already contain it. Every
//! command that prints an error uses it.

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
