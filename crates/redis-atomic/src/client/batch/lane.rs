//! One lane: the calls in flight for one batch entry point on one node (or slot), and the
//! decisions waiting for one of them to finish.
//!
//! A lane counts its busy call slots. A decision takes a free slot and goes alone
//! ([`Lane::try_enter`], released by [`Permit`]'s drop), or queues ([`Lane::enqueue`]). Whoever
//! releases a slot first takes what is queued ([`take`]) and, if anything, keeps the slot and
//! hands the group to a drain task ([`Held`]), which sends it and then the next group, until the
//! queue is empty and the slot is free again. So while the queue holds anything, a slot is busy
//! and will take it: nothing waits for a timer, and nothing is left behind.
//!
//! A queued decision is an [`Entry`] (an owned copy of its keys and arguments, and where its
//! reply goes) and a [`Waiter`] (its caller's side). Both share a state: waiting, taken (on its
//! way to the server) or abandoned (its caller stopped waiting: it is skipped, never sent). The
//! waiter's timeout tells the two apart: still waiting means nothing was sent (`NotSent`),
//! taken means the call may have run (`OutcomeUnknown`).

use super::{send, Batching};
use crate::client::Client;
use crate::script::ScriptDef;
use crate::{Arg, Error};
use redis::Value;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use tokio::sync::oneshot;

const WAITING: u8 = 0;
const TAKEN: u8 = 1;
const ABANDONED: u8 = 2;

/// What a decision's caller gets: its reply, or its own error.
pub(super) type Outcome = Result<Value, Error>;

/// The calls in flight and the decisions waiting, for one batch entry point on one node.
pub(super) struct Lane {
    /// The batch entry point this lane's batches call.
    pub(super) batch: &'static ScriptDef,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    busy: usize,
    queue: VecDeque<Entry>,
}

impl Lane {
    pub(super) fn new(batch: &'static ScriptDef) -> Lane {
        Lane {
            batch,
            state: Mutex::default(),
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // A std mutex: held to count or move entries, never across an await.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Takes a call slot if fewer than `limit` are busy.
    pub(super) fn try_enter(&self, limit: usize) -> bool {
        let mut state = self.state();
        let free = state.busy < limit;
        state.busy += usize::from(free);
        free
    }

    /// Queues `entry`, unless a slot freed since [`Lane::try_enter`] said none was: then the
    /// slot is taken and the entry handed back, to go alone.
    pub(super) fn enqueue(&self, entry: Entry, limit: usize) -> Result<(), Entry> {
        let mut state = self.state();
        if state.busy < limit {
            state.busy += 1;
            return Err(entry);
        }
        state.queue.push_back(entry);
        Ok(())
    }

    /// A slot's call finished: the waiting decisions (as many as one call takes) keep the slot,
    /// or, none waiting, the slot is free.
    fn next(&self, config: &Batching) -> Option<Vec<Entry>> {
        let mut state = self.state();
        let group = take(&mut state.queue, config);
        if group.is_none() {
            state.busy -= 1;
        }
        group
    }

    /// Releases a slot: what waits leaves now, in a drain task that keeps the slot.
    fn release(self: &Arc<Self>, client: &Client) {
        let Some(group) = self.next(&client.batcher.config) else {
            return;
        };
        let held = Held {
            lane: self.clone(),
            client: client.clone(),
            released: false,
        };
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => drop(runtime.spawn(held.drain(group))),
            Err(_) => {
                // No runtime to send from (a client dropped outside one): nothing was sent.
                for entry in group {
                    entry.deliver(Err(not_sent("no runtime left to send the batch")));
                }
                drop(held); // releases the slot (and fails what else waits the same way)
            }
        }
    }
}

/// The next group from the front of `queue`: waiting entries in order, at most
/// [`Batching::max_decisions`] and [`Batching::max_bytes`] (the first always), a solo entry only
/// alone. Abandoned entries are dropped on the way.
fn take(queue: &mut VecDeque<Entry>, config: &Batching) -> Option<Vec<Entry>> {
    let mut group: Vec<Entry> = Vec::new();
    let mut bytes = 0;
    while let Some(front) = queue.front() {
        if front.state.load(Ordering::Acquire) == ABANDONED {
            queue.pop_front();
            continue;
        }
        let full = group.len() >= config.max_decisions || bytes + front.bytes > config.max_bytes;
        if !group.is_empty() && (front.solo || full) {
            break;
        }
        let Some(entry) = queue.pop_front() else {
            break;
        };
        if !entry.claim() {
            continue; // abandoned just now
        }
        bytes += entry.bytes;
        let solo = entry.solo;
        group.push(entry);
        if solo {
            break;
        }
    }
    (!group.is_empty()).then_some(group)
}

/// A call slot of a decision going alone, released (and handed on) when dropped — also when
/// the caller's future is dropped mid-call.
pub(super) struct Permit<'a> {
    lane: Arc<Lane>,
    client: &'a Client,
}

impl<'a> Permit<'a> {
    pub(super) fn new(lane: Arc<Lane>, client: &'a Client) -> Permit<'a> {
        Permit { lane, client }
    }
}

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        self.lane.release(self.client);
    }
}

/// A call slot kept by a drain task; released when the queue is empty (or the task ends).
struct Held {
    lane: Arc<Lane>,
    client: Client,
    released: bool,
}

impl Held {
    /// Sends `group`, then every group that queued meanwhile, then frees the slot.
    async fn drain(mut self, mut group: Vec<Entry>) {
        loop {
            send::group(&self.client, self.lane.batch, group).await;
            match self.lane.next(&self.client.batcher.config) {
                Some(next) => group = next,
                None => {
                    self.released = true;
                    return;
                }
            }
        }
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        if !self.released {
            self.lane.release(&self.client);
        }
    }
}

/// A queued decision: its script, an owned copy of its keys and arguments, where its reply goes.
pub(super) struct Entry {
    pub(super) def: &'static ScriptDef,
    /// Every key, back to back.
    keys: String,
    /// Every argument, back to back (integers in decimal, as sent).
    args: Vec<u8>,
    /// End offset of each key, then of each argument.
    ends: Vec<usize>,
    nkeys: usize,
    /// Keys and arguments in bytes.
    pub(super) bytes: usize,
    /// Too large for a batch: leaves as a call of its own.
    pub(super) solo: bool,
    state: Arc<AtomicU8>,
    reply: oneshot::Sender<Outcome>,
}

impl Entry {
    /// The entry of one decision and its caller's side.
    pub(super) fn new(
        def: &'static ScriptDef,
        keys: &[&str],
        args: &[Arg<'_>],
        config: &Batching,
    ) -> (Entry, Waiter) {
        let mut owned = String::new();
        let mut bytes = Vec::new();
        let mut ends = Vec::with_capacity(keys.len() + args.len());
        for key in keys {
            owned.push_str(key);
            ends.push(owned.len());
        }
        for arg in args {
            match arg {
                Arg::Bytes(b) => bytes.extend_from_slice(b),
                Arg::Int(n) => bytes.extend_from_slice(n.to_string().as_bytes()),
            }
            ends.push(bytes.len());
        }
        let size = owned.len() + bytes.len();
        let items = keys.len() + args.len();
        let solo = size > config.max_bytes
            || items > redis_atomic_scripts::codegen::batch::MAX_DECISION_ITEMS;
        let state = Arc::new(AtomicU8::new(WAITING));
        let (tx, rx) = oneshot::channel();
        let entry = Entry {
            def,
            keys: owned,
            args: bytes,
            ends,
            nkeys: keys.len(),
            bytes: size,
            solo,
            state: state.clone(),
            reply: tx,
        };
        (entry, Waiter { state, reply: rx })
    }

    /// Marks the entry taken, unless its caller abandoned it.
    fn claim(&self) -> bool {
        let cas = self
            .state
            .compare_exchange(WAITING, TAKEN, Ordering::AcqRel, Ordering::Acquire);
        cas.is_ok()
    }

    pub(super) fn keys(&self) -> impl Iterator<Item = &str> + '_ {
        let ends = &self.ends[..self.nkeys];
        ends.iter().scan(0, |start, &end| {
            let key = &self.keys[*start..end];
            *start = end;
            Some(key)
        })
    }

    pub(super) fn args(&self) -> impl Iterator<Item = &[u8]> + '_ {
        let ends = &self.ends[self.nkeys..];
        ends.iter().scan(0, |start, &end| {
            let arg = &self.args[*start..end];
            *start = end;
            Some(arg)
        })
    }

    pub(super) fn nkeys(&self) -> usize {
        self.nkeys
    }

    pub(super) fn nargs(&self) -> usize {
        self.ends.len() - self.nkeys
    }

    /// Hands the decision its outcome (dropped if its caller stopped waiting).
    pub(super) fn deliver(self, outcome: Outcome) {
        let _ = self.reply.send(outcome);
    }
}

/// The caller's side of a queued decision.
pub(super) struct Waiter {
    state: Arc<AtomicU8>,
    reply: oneshot::Receiver<Outcome>,
}

impl Waiter {
    /// The decision's outcome, waiting at most `timeout`: past it, a decision never taken was
    /// not sent; one taken may have run.
    pub(super) async fn wait(mut self, timeout: Duration) -> Outcome {
        let timed_out = match tokio::time::timeout(timeout, &mut self.reply).await {
            Ok(Ok(outcome)) => return outcome,
            Ok(Err(_)) => false, // the entry was dropped without an outcome
            Err(_) => true,
        };
        if self.abandon() {
            return Err(if timed_out {
                // A timeout (`Error::timed_out`), though nothing was sent.
                Error::NotSent(redis::RedisError::from(std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    "waited for a call in flight until the timeout",
                )))
            } else {
                not_sent("the batch it waited for was dropped")
            });
        }
        Err(Error::OutcomeUnknown {
            reason: match timed_out {
                true => format!("no reply within {timeout:?} (in a batch)"),
                false => "the batch carrying it ended without its reply".into(),
            },
            attempts: 1,
            timed_out,
            retry_safe: false,
        })
    }

    /// Marks the decision abandoned if it was still waiting (it will not be sent).
    fn abandon(&self) -> bool {
        let cas =
            self.state
                .compare_exchange(WAITING, ABANDONED, Ordering::AcqRel, Ordering::Acquire);
        cas.is_ok()
    }
}

impl Drop for Waiter {
    /// A caller that stops waiting (its future dropped) leaves nothing to send behind.
    fn drop(&mut self) {
        self.abandon();
    }
}

fn not_sent(why: &'static str) -> Error {
    Error::NotSent(redis::RedisError::from((redis::ErrorKind::Client, why)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::script::registry;

    fn entry(bytes: usize) -> (Entry, Waiter) {
        let arg = vec![b'x'; bytes];
        let config = Batching::default().max(3, 100);
        let args = [Arg::Bytes(&arg), Arg::Int(7)];
        Entry::new(&registry::LOCK_RELEASE, &["k"], &args, &config)
    }

    /// Groups keep order, stop at the count or byte bound (the first entry always goes), take a
    /// solo entry only alone, and skip abandoned entries.
    #[test]
    fn take_bounds_groups() {
        let config = Batching::default().max(3, 100);
        let mut queue = VecDeque::new();
        let mut waiters = Vec::new();
        for size in [10, 10, 10, 10, 70, 30, 500, 10] {
            let (e, w) = entry(size);
            queue.push_back(e);
            waiters.push(w);
        }
        waiters[1].abandon();
        let sizes = |g: Vec<Entry>| g.iter().map(|e| e.bytes).collect::<Vec<_>>();
        // 12 bytes each: key "k", the argument, "7".
        assert_eq!(sizes(take(&mut queue, &config).unwrap()), [12, 12, 12]);
        assert_eq!(sizes(take(&mut queue, &config).unwrap()), [72]);
        assert_eq!(sizes(take(&mut queue, &config).unwrap()), [32]);
        assert_eq!(sizes(take(&mut queue, &config).unwrap()), [502]);
        assert_eq!(sizes(take(&mut queue, &config).unwrap()), [12]);
        assert!(take(&mut queue, &config).is_none());
        assert!(!waiters[0].abandon(), "a taken entry cannot be abandoned");
    }

    /// An entry gives back exactly the keys and arguments it was made from.
    #[test]
    fn entry_round_trip() {
        let (e, _w) = entry(3);
        assert_eq!(e.keys().collect::<Vec<_>>(), ["k"]);
        assert_eq!(e.args().collect::<Vec<_>>(), [b"xxx".as_slice(), b"7"]);
        assert_eq!((e.nkeys(), e.nargs(), e.solo), (1, 2, false));
    }
}
