//! One direction of one proxied connection: bytes copied chunk by chunk, the fault in force
//! applied to each, and (while the stream can be followed, see [`super::wire`]) requests and
//! replies framed and paired, so [`Fault::CorruptReplies`] can replace whole replies to script
//! calls.
//!
//! A connection that lost a reply ([`Fault::DropReplies`]) is *poisoned*: from then on nothing
//! more is forwarded to its client, until the connection is reset. (Forwarding a later reply
//! would hand the client the answer to another request: its replies would be out of step, which
//! no real network does to a TCP stream.)

use super::wire::{self, Corruption, Scan};
use super::{Counters, Fault};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::sync::watch;

/// Requests framed but not yet answered, in order (`true`: a script call); None once the
/// connection's bytes could not be followed.
#[derive(Default)]
pub(super) struct Pairing(Mutex<Option<VecDeque<bool>>>);

/// Requests a connection may have in flight before the proxy stops following it.
const MAX_OWED: usize = 1 << 16;

impl Pairing {
    pub(super) fn new() -> Pairing {
        Pairing(Mutex::new(Some(VecDeque::new())))
    }

    fn with<T>(&self, f: impl FnOnce(&mut Option<VecDeque<bool>>) -> T) -> T {
        f(&mut self.0.lock().unwrap_or_else(|p| p.into_inner()))
    }

    fn stop(&self) {
        self.with(|owed| *owed = None);
    }

    fn followed(&self) -> bool {
        self.with(|owed| owed.is_some())
    }

    fn push(&self, script: bool) {
        self.with(|owed| {
            if let Some(q) = owed {
                q.push_back(script);
                if q.len() > MAX_OWED {
                    *owed = None;
                }
            }
        });
    }

    /// The request the next reply answers; None (and following stops) when there is none.
    fn pop(&self) -> Option<bool> {
        self.with(|owed| {
            let next = owed.as_mut()?.pop_front();
            if next.is_none() {
                *owed = None;
            }
            next
        })
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Direction {
    Request,
    Reply,
}

/// One direction of one connection.
pub(super) struct Pump {
    pub(super) dir: Direction,
    pub(super) serial: u64,
    pub(super) fault: watch::Receiver<Fault>,
    pub(super) counters: Arc<Counters>,
    /// Set once a reply was swallowed: the stream can no longer be resumed.
    pub(super) poisoned: Arc<AtomicBool>,
    pub(super) pairing: Arc<Pairing>,
}

/// What one chunk becomes.
struct Out {
    bytes: Vec<u8>,
    /// End the connection after the bytes (a corruption that breaks the stream).
    close: bool,
}

impl Pump {
    /// Copies until either side closes (or a corruption ends the connection), applying the fault
    /// in force to each chunk.
    pub(super) async fn run(self, mut from: OwnedReadHalf, mut to: OwnedWriteHalf) {
        let mut buf = vec![0u8; 64 * 1024];
        let mut framer = Framer::default();
        loop {
            let n = match from.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => n,
            };
            let now = *self.fault.borrow();
            if self.dir == Direction::Reply && self.poisoned.load(Ordering::SeqCst) {
                self.counters
                    .replies_dropped
                    .fetch_add(1, Ordering::Relaxed);
                continue;
            }
            if self.swallows(now) {
                let counter = match self.dir {
                    Direction::Request => &self.counters.requests_dropped,
                    Direction::Reply => &self.counters.replies_dropped,
                };
                counter.fetch_add(1, Ordering::Relaxed);
                self.poisoned.store(true, Ordering::SeqCst);
                framer.pending.clear();
                self.pairing.stop();
                continue;
            }
            if let Fault::Latency(d) = now {
                tokio::time::sleep(d).await;
            }
            let out = match self.dir {
                Direction::Request => {
                    framer.requests(&buf[..n], &self.pairing);
                    Out {
                        bytes: buf[..n].to_vec(),
                        close: false,
                    }
                }
                Direction::Reply => {
                    let chunk = self.rewritten(now, &buf[..n]);
                    framer.replies(&chunk, now, &self)
                }
            };
            if to.write_all(&out.bytes).await.is_err() {
                return;
            }
            if out.close {
                self.poisoned.store(true, Ordering::SeqCst);
                self.counters.reset.fetch_add(1, Ordering::Relaxed);
                // FIN after the bytes, so the client reads them before the end (a reset could
                // discard them); the connection is dropped once the client closes or in 1 s.
                let _ = to.shutdown().await;
                tokio::time::sleep(Duration::from_secs(1)).await;
                return;
            }
        }
    }

    fn swallows(&self, fault: Fault) -> bool {
        fault == Fault::Blackhole || (fault == Fault::DropReplies && self.dir == Direction::Reply)
    }

    fn rewritten(&self, fault: Fault, chunk: &[u8]) -> Vec<u8> {
        match fault {
            Fault::RewriteReplies { find, replace } => {
                let (bytes, count) = rewrite(chunk, find, replace);
                self.counters
                    .replies_rewritten
                    .fetch_add(count, Ordering::Relaxed);
                bytes
            }
            _ => chunk.to_vec(),
        }
    }
}

/// Frames one direction's bytes while the connection can be followed.
#[derive(Default)]
struct Framer {
    /// Bytes of a frame not complete yet.
    pending: Vec<u8>,
    /// The corrupting fault's generator: (seed it was made from, generator).
    rng: Option<(u64, StdRng)>,
}

impl Framer {
    /// Records each whole request (before it is forwarded: its reply cannot come sooner).
    fn requests(&mut self, chunk: &[u8], pairing: &Pairing) {
        if !pairing.followed() {
            return;
        }
        self.pending.extend_from_slice(chunk);
        loop {
            match wire::scan(&self.pending) {
                Scan::Complete(len) => {
                    pairing.push(wire::is_script_call(&self.pending[..len]));
                    self.pending.drain(..len);
                }
                Scan::Incomplete => return,
                Scan::Malformed => {
                    pairing.stop();
                    self.pending = Vec::new();
                    return;
                }
            }
        }
    }

    /// Whole replies out (each one possibly corrupted), a partial one kept for the next chunk;
    /// everything as it came once the stream cannot be followed.
    fn replies(&mut self, chunk: &[u8], fault: Fault, pump: &Pump) -> Out {
        if !pump.pairing.followed() {
            let mut bytes = std::mem::take(&mut self.pending);
            bytes.extend_from_slice(chunk);
            return Out {
                bytes,
                close: false,
            };
        }
        let mut pending = std::mem::take(&mut self.pending);
        pending.extend_from_slice(chunk);
        let mut bytes = Vec::with_capacity(pending.len());
        let mut at = 0;
        while let Scan::Complete(len) = wire::scan(&pending[at..]) {
            let frame = &pending[at..at + len];
            at += len;
            // A RESP3 push answers no request.
            let script = frame[0] != b'>' && pump.pairing.pop() == Some(true);
            match self.corruption(fault, script, frame, pump) {
                None => bytes.extend_from_slice(frame),
                Some(Corruption::Replace(wrong)) => bytes.extend(wrong),
                Some(Corruption::ThenClose(cut)) => {
                    bytes.extend(cut);
                    return Out { bytes, close: true };
                }
            }
            if !pump.pairing.followed() {
                break;
            }
        }
        pending.drain(..at);
        if !pump.pairing.followed() || wire::scan(&pending) == Scan::Malformed {
            pump.pairing.stop();
            bytes.append(&mut pending);
        }
        self.pending = pending;
        Out {
            bytes,
            close: false,
        }
    }

    /// Whether (and how) the reply to a script call is corrupted under `fault`.
    fn corruption(
        &mut self,
        fault: Fault,
        script: bool,
        frame: &[u8],
        pump: &Pump,
    ) -> Option<Corruption> {
        let Fault::CorruptReplies { percent, seed } = fault else {
            return None;
        };
        if !script {
            return None;
        }
        let fresh = || {
            let mixed = seed ^ pump.serial.wrapping_mul(0x9E37_79B9_7F4A_7C15);
            (seed, StdRng::seed_from_u64(mixed))
        };
        if self.rng.as_ref().is_none_or(|(made, _)| *made != seed) {
            self.rng = Some(fresh());
        }
        let (_, rng) = self.rng.as_mut()?;
        if rng.random_range(0..100u32) >= u32::from(percent.min(100)) {
            return None;
        }
        pump.counters
            .replies_corrupted
            .fetch_add(1, Ordering::Relaxed);
        Some(wire::corrupt(rng, frame))
    }
}

/// `chunk` with each occurrence of `find` replaced, and how many there were.
fn rewrite(chunk: &[u8], find: &[u8], replace: &[u8]) -> (Vec<u8>, u64) {
    let mut out = Vec::with_capacity(chunk.len());
    let (mut i, mut count) = (0, 0);
    while i < chunk.len() {
        if !find.is_empty() && chunk[i..].starts_with(find) {
            out.extend_from_slice(replace);
            i += find.len();
            count += 1;
        } else {
            out.push(chunk[i]);
            i += 1;
        }
    }
    (out, count)
}

#[cfg(test)]
mod tests {
    /// Every occurrence is replaced and counted; an empty pattern replaces nothing.
    #[test]
    fn rewrite_replaces_each_occurrence() {
        assert_eq!(
            super::rewrite(b":3\r\n:3\r\n:13\r\n", b":3\r\n", b":9\r\n"),
            (b":9\r\n:9\r\n:13\r\n".to_vec(), 2)
        );
        assert_eq!(super::rewrite(b"abc", b"", b"x"), (b"abc".to_vec(), 0));
    }
}
