//! What a client really sent, read from the server's `MONITOR` feed: the wire, not the library's
//! idea of it. Each operation is framed by two `ECHO` markers sent on a connection of their own,
//! so the lines between them are the operation's traffic (and, tagged `lua`, its scripts' own
//! calls).

use redis_atomic_testkit::RedisServer;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::time::Duration;

/// How long a `MONITOR` line may take to arrive before the test fails instead of hanging.
const PATIENCE: Duration = Duration::from_secs(30);

/// One command as the server saw it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Line {
    /// `lua` for a script's own `redis.call`, else the client's address.
    pub source: String,
    /// The command and its arguments, as sent.
    pub args: Vec<Vec<u8>>,
}

/// A `MONITOR` connection and a connection for the markers.
pub struct Monitor {
    feed: BufReader<TcpStream>,
    markers: redis::Connection,
    framed: u64,
}

impl Monitor {
    pub fn start(server: &RedisServer) -> Monitor {
        let stream = TcpStream::connect(server.addr().expect("a TCP server")).unwrap();
        stream.set_read_timeout(Some(PATIENCE)).unwrap();
        let mut feed = BufReader::new(stream);
        feed.get_mut().write_all(b"MONITOR\r\n").unwrap();
        let mut ok = String::new();
        feed.read_line(&mut ok).unwrap();
        assert_eq!(ok, "+OK\r\n", "MONITOR refused");
        let markers = server.client().get_connection().unwrap();
        Monitor {
            feed,
            markers,
            framed: 0,
        }
    }

    /// A raw command on the markers' connection (setting up state between operations).
    pub fn command(&mut self, cmd: &redis::Cmd) {
        let _: redis::Value = cmd.query(&mut self.markers).unwrap();
    }

    /// The traffic of `op`, a future that runs the operation.
    pub async fn frame<F: std::future::Future>(&mut self, op: F) -> (F::Output, Vec<Line>) {
        self.framed += 1;
        let begin = format!("conformance-begin-{}", self.framed);
        let end = format!("conformance-end-{}", self.framed);
        self.command(redis::cmd("ECHO").arg(&begin));
        let out = op.await;
        self.command(redis::cmd("ECHO").arg(&end));
        self.skip_to(&begin);
        let mut lines = Vec::new();
        loop {
            let line = self.next();
            if is_marker(&line, &end) {
                return (out, lines);
            }
            lines.push(line);
        }
    }

    fn skip_to(&mut self, marker: &str) {
        while !is_marker(&self.next(), marker) {}
    }

    fn next(&mut self) -> Line {
        let mut raw = Vec::new();
        self.feed
            .read_until(b'\n', &mut raw)
            .expect("a MONITOR line in time");
        parse(&raw).unwrap_or_else(|| panic!("not a MONITOR line: {raw:?}"))
    }
}

fn is_marker(line: &Line, marker: &str) -> bool {
    line.args.len() == 2
        && line.args[0].eq_ignore_ascii_case(b"ECHO")
        && line.args[1] == marker.as_bytes()
}

/// `+<time> [<db> <source>] "<arg>" "<arg>" ...`, each argument quoted as `sdscatrepr` does.
fn parse(raw: &[u8]) -> Option<Line> {
    let raw = raw.strip_prefix(b"+")?.strip_suffix(b"\r\n")?;
    let open = raw.iter().position(|&b| b == b'[')?;
    let close = open + raw[open..].iter().position(|&b| b == b']')?;
    let inside = std::str::from_utf8(&raw[open + 1..close]).ok()?;
    let source = inside.split_once(' ')?.1.to_string();
    let mut args = Vec::new();
    let mut rest = &raw[close + 1..];
    while let Some(start) = rest.iter().position(|&b| b == b'"') {
        let (arg, used) = unquote(&rest[start + 1..])?;
        args.push(arg);
        rest = &rest[start + 1 + used..];
    }
    Some(Line { source, args })
}

/// One quoted argument up to its closing quote: the bytes and how many were read.
fn unquote(s: &[u8]) -> Option<(Vec<u8>, usize)> {
    let mut out = Vec::new();
    let mut i = 0;
    loop {
        match *s.get(i)? {
            b'"' => return Some((out, i + 1)),
            b'\\' => {
                let (byte, used) = match *s.get(i + 1)? {
                    b'n' => (b'\n', 2),
                    b'r' => (b'\r', 2),
                    b't' => (b'\t', 2),
                    b'a' => (7, 2),
                    b'b' => (8, 2),
                    b'x' => {
                        let hex = std::str::from_utf8(s.get(i + 2..i + 4)?).ok()?;
                        (u8::from_str_radix(hex, 16).ok()?, 4)
                    }
                    other => (other, 2),
                };
                out.push(byte);
                i += used;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
}

#[test]
fn parses_monitor_lines() {
    let line = parse(b"+1700000000.123456 [0 127.0.0.1:5000] \"SET\" \"a\\\"b\" \"\\xff\\n\"\r\n");
    let line = line.unwrap();
    assert_eq!(line.source, "127.0.0.1:5000");
    assert_eq!(
        line.args,
        vec![b"SET".to_vec(), b"a\"b".to_vec(), vec![0xff, b'\n']]
    );
    let lua = parse(b"+1.0 [0 lua] \"GET\" \"k\"\r\n").unwrap();
    assert_eq!(lua.source, "lua");
}
