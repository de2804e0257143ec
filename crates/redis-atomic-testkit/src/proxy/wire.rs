//! RESP on the wire, for the fault proxy: where a frame ends (so the proxy can tell replies apart
//! and pair each with its request), and the replies [`Fault::CorruptReplies`] puts in place of a
//! real one.
//!
//! Why the proxy frames at all: corrupting "a reply to a script call" needs to know where that
//! reply starts and ends, and which request it answers. Requests and replies of one connection
//! are in order (RESP has no ids), so counting request frames and reply frames pairs them.
//! Framing stops for good on a connection whose bytes are not RESP the proxy can follow (a
//! replica's RDB transfer, inline commands, a rewrite that made a frame unbounded): from then on
//! its bytes pass through untouched and nothing on it is corrupted.
//!
//! What a corruption may be, and why nothing else: the proxy must not *lie* in a way no client
//! can detect, or it would be testing nothing but its own lie. A well-formed replacement is
//! therefore never a reply any script sends (every script answers an array headed by a status
//! word; every string generated here starts with `corrupt`, which no status word does), never an
//! error reply with a code that says "nothing ran" (`NOSCRIPT`, `MOVED`, `BUSY`, …: the client
//! would trust it and resend), and never a RESP3 push or attribute (which are not replies: the
//! reply after them would answer the wrong request). Malformed bytes and replies cut short end
//! the connection, as a server that broke mid-reply would: on a connection that carried on, the
//! rest of the stream would be out of step.
//!
//! [`Fault::CorruptReplies`]: super::Fault::CorruptReplies

use rand::rngs::StdRng;
use rand::{Rng, RngCore};

/// Where a frame at the start of a buffer ends.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Scan {
    /// A whole frame of this many bytes.
    Complete(usize),
    /// Not all of it has arrived yet.
    Incomplete,
    /// Not RESP the proxy can follow (or a frame it will not wait for: over the bounds below).
    Malformed,
}

/// The most items one frame may announce before the proxy stops following the stream.
const MAX_ITEMS: u64 = 1 << 20;
/// The longest string one frame may announce before the proxy stops following the stream.
const MAX_STRING: u64 = 64 << 20;

/// The frame at the start of `buf`: aggregates counted by the items they still owe, so nesting
/// costs nothing and no allocation depends on a number in the bytes.
pub(crate) fn scan(buf: &[u8]) -> Scan {
    let mut pos = 0usize;
    let mut owed: u64 = 1;
    while owed > 0 {
        owed -= 1;
        let Some(&kind) = buf.get(pos) else {
            return Scan::Incomplete;
        };
        let Some(eol) = find_crlf(buf, pos + 1) else {
            return Scan::Incomplete;
        };
        let line = &buf[pos + 1..eol];
        pos = eol + 2;
        match kind {
            b'+' | b'-' | b':' | b',' | b'#' | b'_' | b'(' => {}
            b'$' | b'!' | b'=' => match number(line) {
                Some(-1) if kind == b'$' => {}
                Some(n) if (0..=MAX_STRING as i64).contains(&n) => {
                    let end = pos + n as usize;
                    if buf.len() < end + 2 {
                        return Scan::Incomplete;
                    }
                    if &buf[end..end + 2] != b"\r\n" {
                        return Scan::Malformed;
                    }
                    pos = end + 2;
                }
                _ => return Scan::Malformed,
            },
            b'*' | b'~' | b'%' | b'>' | b'|' => match number(line) {
                Some(-1) if kind == b'*' => {}
                Some(n) if (0..=MAX_ITEMS as i64).contains(&n) => {
                    let n = n as u64;
                    owed += match kind {
                        b'%' => 2 * n,
                        b'|' => 2 * n + 1, // an attribute is followed by the value it annotates
                        _ => n,
                    };
                    if owed > MAX_ITEMS {
                        return Scan::Malformed;
                    }
                }
                _ => return Scan::Malformed,
            },
            _ => return Scan::Malformed,
        }
    }
    Scan::Complete(pos)
}

fn find_crlf(buf: &[u8], from: usize) -> Option<usize> {
    let rest = buf.get(from..)?;
    rest.windows(2).position(|w| w == b"\r\n").map(|i| from + i)
}

fn number(line: &[u8]) -> Option<i64> {
    std::str::from_utf8(line).ok()?.parse().ok()
}

/// Whether a request frame is a script call (`EVAL`, `EVALSHA`, `FCALL` and their `_RO` forms)
/// or a server module's native in place of one (`RATOMIC.<SCRIPT>`, whose reply is the script's;
/// not the `RATOMIC.VERSION` probe): the replies
/// [`Fault::CorruptReplies`](super::Fault::CorruptReplies) may replace.
pub(crate) fn is_script_call(frame: &[u8]) -> bool {
    let name = command_name(frame).unwrap_or_default();
    let name = name.to_ascii_uppercase();
    let native = name.starts_with(b"RATOMIC.") && name.as_slice() != b"RATOMIC.VERSION";
    native
        || matches!(
            name.as_slice(),
            b"EVAL" | b"EVALSHA" | b"EVAL_RO" | b"EVALSHA_RO" | b"FCALL" | b"FCALL_RO"
        )
}

/// The first argument of a request (`*N\r\n$L\r\n<name>\r\n…`).
fn command_name(frame: &[u8]) -> Option<&[u8]> {
    let header = find_crlf(frame, 0)?;
    let len_at = header + 2;
    if frame.get(len_at) != Some(&b'$') {
        return None;
    }
    let eol = find_crlf(frame, len_at + 1)?;
    let len = usize::try_from(number(&frame[len_at + 1..eol])?).ok()?;
    frame.get(eol + 2..eol + 2 + len)
}

/// What goes to the client instead of a reply.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Corruption {
    /// A well-formed reply of a shape no script sends; the connection carries on.
    Replace(Vec<u8>),
    /// These bytes, then the connection ends: malformed RESP, or the real reply cut short.
    ThenClose(Vec<u8>),
}

/// A corruption of `reply` (one whole frame): a well-formed wrong value 60 % of the time,
/// malformed bytes 25 %, the reply cut short 15 %. Sizes bounded: nesting ≤ 3, ≤ 6 items per
/// aggregate, ≤ 32 bytes per string.
pub(crate) fn corrupt(rng: &mut StdRng, reply: &[u8]) -> Corruption {
    match rng.random_range(0..20) {
        0..12 => {
            let mut out = Vec::new();
            wrong_value(rng, 3, &mut out);
            Corruption::Replace(out)
        }
        12..17 => Corruption::ThenClose(malformed(rng)),
        _ => {
            let cut = rng.random_range(0..reply.len().max(1));
            Corruption::ThenClose(reply[..cut].to_vec())
        }
    }
}

/// A string no status word can be: `corrupt` and up to 24 random letters or bytes.
fn text(rng: &mut StdRng) -> Vec<u8> {
    let mut s = b"corrupt".to_vec();
    let n = rng.random_range(0..25);
    if rng.random_bool(0.5) {
        s.extend((0..n).map(|_| rng.random_range(b'a'..=b'z')));
    } else {
        s.extend((0..n).map(|_| rng.random::<u8>()));
    }
    s
}

fn bulk(out: &mut Vec<u8>, kind: u8, bytes: &[u8]) {
    out.push(kind);
    out.extend(format!("{}\r\n", bytes.len()).as_bytes());
    out.extend(bytes);
    out.extend(b"\r\n");
}

fn line(out: &mut Vec<u8>, kind: u8, text: &str) {
    out.push(kind);
    out.extend(text.as_bytes());
    out.extend(b"\r\n");
}

/// One well-formed value that no script's reply decodes from (see the module doc).
fn wrong_value(rng: &mut StdRng, depth: u32, out: &mut Vec<u8>) {
    let kinds = if depth == 0 { 11 } else { 14 };
    match rng.random_range(0..kinds) {
        0 => line(out, b':', &rng.random::<i64>().to_string()),
        1 => line(
            out,
            b':',
            ["0", "-1", "4611686018427387904"][rng.random_range(0..3)],
        ),
        2 => out.extend(["$-1\r\n", "*-1\r\n", "_\r\n"][rng.random_range(0..3)].as_bytes()),
        3 => line(out, b'+', "corrupt"),
        4 => bulk(out, b'$', &text(rng)),
        5 => line(out, b'-', "ERR corrupt reply injected by the fault proxy"),
        6 => line(out, b'-', "CORRUPT injected by the fault proxy"),
        7 => line(
            out,
            b',',
            ["3.25", "inf", "-inf", "nan"][rng.random_range(0..4)],
        ),
        8 => line(out, b'#', if rng.random_bool(0.5) { "t" } else { "f" }),
        9 => line(out, b'(', "-12345678901234567890123456789"),
        10 => {
            let mut verbatim = b"txt:".to_vec();
            verbatim.extend(text(rng));
            bulk(out, b'=', &verbatim);
        }
        kind => {
            // An aggregate: an array headed by anything but a status word, a set or a map.
            let n = rng.random_range(0..7u32);
            let (tag, items) = match kind {
                11 => (b'*', n),
                12 => (b'~', n),
                _ => (b'%', n * 2),
            };
            line(out, tag, &n.to_string());
            for _ in 0..items {
                wrong_value(rng, depth - 1, out);
            }
        }
    }
}

/// Bytes that are not RESP, or RESP that cannot complete as sent.
fn malformed(rng: &mut StdRng) -> Vec<u8> {
    let mut out = Vec::new();
    match rng.random_range(0..7) {
        0 => out.extend(b"?corrupt\r\n"),                   // no such type
        1 => out.extend(b":12x4\r\n"),                      // not a number
        2 => out.extend(b"$-7\r\n"),                        // negative length
        3 => out.extend(b"*-3\r\n"),                        // negative count
        4 => out.extend(b"$9223372036854775807\r\n"),       // a string that never ends
        5 => out.extend(b"*4611686018427387904\r\n:1\r\n"), // items that never come
        _ => {
            // A string shorter than announced.
            let body = text(rng);
            out.extend(format!("${}\r\n", body.len() + 1 + rng.random_range(0..64)).as_bytes());
            out.extend(&body);
        }
    }
    if rng.next_u32() % 4 == 0 {
        out.truncate(rng.random_range(1..=out.len()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    /// Frames of every kind end where RESP says; partial ones wait; nonsense and frames over
    /// the bounds are malformed.
    #[test]
    fn scan_finds_frame_ends() {
        let frames: &[&[u8]] = &[
            b"+OK\r\n",
            b":-12\r\n",
            b"$3\r\nab\n\r\n",
            b"$-1\r\n",
            b"*-1\r\n",
            b"*2\r\n$1\r\na\r\n*1\r\n:1\r\n",
            b"%1\r\n+k\r\n~2\r\n,1.5\r\n#t\r\n",
            b"|1\r\n+a\r\n:1\r\n:2\r\n",
            b"=8\r\ntxt:abcd\r\n",
        ];
        for frame in frames {
            let mut buf = frame.to_vec();
            buf.extend(b"+next\r\n");
            assert_eq!(scan(&buf), Scan::Complete(frame.len()), "{frame:?}");
            for cut in 0..frame.len() {
                assert_eq!(
                    scan(&frame[..cut]),
                    Scan::Incomplete,
                    "{frame:?} cut at {cut}"
                );
            }
        }
        for bad in [
            &b"?x\r\n"[..],
            b"$-2\r\n",
            b"$3\r\nabcd\r\n",
            b"*99999999999\r\n",
        ] {
            assert_eq!(scan(bad), Scan::Malformed, "{bad:?}");
        }
    }

    /// Script calls are told apart by their first argument, in any case.
    #[test]
    fn script_calls() {
        assert!(is_script_call(
            b"*3\r\n$7\r\nevalsha\r\n$1\r\nx\r\n$1\r\n0\r\n"
        ));
        assert!(is_script_call(b"*2\r\n$8\r\nFCALL_RO\r\n$1\r\nf\r\n"));
        assert!(is_script_call(
            b"*2\r\n$23\r\nratomic.rl_fixed_window\r\n$1\r\nk\r\n"
        ));
        assert!(!is_script_call(b"*1\r\n$15\r\nRATOMIC.VERSION\r\n"));
        assert!(!is_script_call(b"*2\r\n$3\r\nGET\r\n$1\r\nk\r\n"));
        assert!(!is_script_call(b"PING\r\n"));
    }

    /// A replacement is one whole frame and never an array headed by a status word; what
    /// closes the connection is never a whole reply that would decode; all is bounded.
    #[test]
    fn corruptions_are_bounded_and_never_a_script_reply() {
        let mut rng = StdRng::seed_from_u64(7);
        let reply = b"*2\r\n$8\r\nacquired\r\n:5\r\n";
        let (mut replaced, mut closed) = (0, 0);
        for _ in 0..5000 {
            match corrupt(&mut rng, reply) {
                Corruption::Replace(bytes) => {
                    replaced += 1;
                    assert_eq!(scan(&bytes), Scan::Complete(bytes.len()), "{bytes:?}");
                    assert!(bytes.len() < 4096);
                    let redis = redis::parse_redis_value(&bytes).unwrap();
                    if let redis::Value::Array(items) = &redis {
                        if let Some(redis::Value::BulkString(head)) = items.first() {
                            assert!(head.starts_with(b"corrupt"), "{redis:?}");
                        }
                    }
                }
                Corruption::ThenClose(bytes) => {
                    closed += 1;
                    assert!(
                        !matches!(scan(&bytes), Scan::Complete(n) if n == bytes.len() && bytes == reply)
                    );
                    assert!(bytes.len() < 4096);
                }
            }
        }
        assert!(replaced > 2500 && closed > 1000, "{replaced} {closed}");
    }
}
