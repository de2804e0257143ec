//! Natural batching: decisions that queue up for the same node leave together as one call.
//!
//! Why: on a server-bound workload every script call pays the server a fixed overhead (read,
//! parse, find the script, set up `KEYS`/`ARGV`, call, write the reply) on top of its body. A
//! batch entry point generated from the same script bodies (see
//! `redis_atomic_scripts::codegen::batch`) runs several decisions in one call and answers one
//! reply per decision, each exactly what its own call would have answered at that place in the
//! order (the batch is atomic, which is stronger).
//!
//! The rule, per *lane* — one batch entry point on one node (on a cluster, one slot: a batch's
//! keys must share a slot):
//!
//! * a decision that finds fewer than [`Batching::in_flight`] calls of its lane in flight goes
//!   out at once, alone, exactly as without batching: no timer, no added latency at low load;
//! * otherwise it waits; when a call of the lane finishes, the waiting decisions leave together
//!   (at most [`Batching::max_decisions`] and [`Batching::max_bytes`]) as one call of the batch
//!   entry point, or, fewer than [`Batching::min_batch`] of them, as separate calls (a batch that
//!   small costs the server more than the calls it replaces).
//!
//! Only scripts whose header says `--- batch: yes` take this path ([`ScriptDef::batch`]); native
//! commands and dedicated connections never do. Everything around a decision stays per decision:
//! its span, metrics and retry loop ([`Client::run_op`] wraps each one), its typed reply, its own
//! error (one decision's bad argument or `WRONGTYPE` is its own error element). A batch whose
//! reply is lost makes each of its decisions `OutcomeUnknown`, and each decision's retry class
//! decides whether it is resent. A decision still waiting when its timeout passes was never sent
//! ([`Error::NotSent`]). Decisions per call are recorded in the histogram
//! `redis_atomic_batch_size` and in [`Client::batch_stats`].
//!
//! What a batch could change, and why each decision still gets the reply of a lone call at its
//! place in the order:
//!
//! * **Flags.** Batch entry points are grouped by their scripts' shebang flags (one per set of
//!   flags), so the server admits a batch exactly when it would admit each decision: a writing
//!   batch is refused under `OOM` before anything runs, a `no-writes` batch goes as `FCALL_RO` /
//!   `EVALSHA_RO` and may run on a replica, `allow-stale` only with scripts that allow it. A
//!   read-only script never rides in a writing batch (it would lose `_RO` and replica reads).
//! * **Time.** Redis (and Valkey) judge key expiry by one clock reading per script run, while
//!   `TIME` answers the clock as it runs. Inside a batch, decision *k* sees expiry as of the
//!   batch's start and `TIME` a few µs later. A lone call has the same split over its own run;
//!   a batch widens it to the batch's run (tens of µs per decision, so well under a millisecond
//!   at the default bound). Every batchable script decides from one source: the rate limits
//!   keep their own timestamps and compute from `TIME` (TTLs only clean up); locks, semaphores,
//!   idempotency records and quotas decide by the key's existence and report `PTTL`, both on the
//!   expiry clock. So each decision's reply is the one a lone call would get with no time passing
//!   between it and the previous decision: an order the server could have run anyway.
//! * **Memory.** The `OOM` check happens once, before a writing batch runs; a lone call after the
//!   limit was crossed mid-batch would have been refused. The overshoot is bounded by one
//!   batch's writes ([`Batching::max_bytes`] of input, small fixed-size records).
//! * **Replication.** A script's writes are replicated as its effects, wrapped in one
//!   `MULTI`/`EXEC`: replicas apply a batch atomically, and `WAIT` after it covers every
//!   decision.
//! * **Errors.** Each decision runs under `xpcall`: an error reply it returns, or one it raises (a
//!   failed `redis.call`, `WRONGTYPE`), is its own element of the batch's reply, and what it wrote
//!   before failing stands, as it would alone.

mod lane;
mod send;

use super::Client;
use crate::observe::BATCH_SIZE;
use crate::script::ScriptDef;
use crate::{Arg, Error};
use lane::{Entry, Lane, Permit};
use redis::Value;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// How decisions of batchable scripts may leave together ([`ClientConfig::batching`]).
///
/// [`ClientConfig::batching`]: super::ClientConfig::batching
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Batching {
    /// Whether they may. On by default; off, every decision is a call of its own.
    pub enabled: bool,
    /// Calls of one lane (a node, or a slot on a cluster) in flight before a new decision waits
    /// for one of them to finish instead of going out at once.
    pub in_flight: usize,
    /// Most decisions in one batch.
    pub max_decisions: usize,
    /// Most bytes of keys and arguments in one batch (a larger decision still goes, alone).
    pub max_bytes: usize,
    /// Fewest waiting decisions that leave as one batch call; fewer leave as separate calls.
    pub min_batch: usize,
}

impl Default for Batching {
    /// On: 4 calls in flight per lane, batches of 3 to 64 decisions and at most 256 KiB (64
    /// short decisions run in well under a millisecond of server time, far below
    /// `busy-reply-threshold`). Measured (server and client pinned to a core each, anchored
    /// window, one lane): at 16 decisions in flight, 2 calls per lane starved the server (too
    /// few calls in flight between batches: 0.7× the unbatched rate) where 4 matched or beat
    /// it; at 128 in flight both made batches of 20 to 40 and 1.3–1.5× the unbatched rate. A
    /// batch of fewer than 3 costs the server more than the calls it replaces. Measure yours
    /// with `redis-atomic bench` and `--no-batching`.
    fn default() -> Self {
        Batching {
            enabled: true,
            in_flight: 4,
            max_decisions: 64,
            max_bytes: 256 * 1024,
            min_batch: 3,
        }
    }
}

impl Batching {
    /// Every decision a call of its own.
    pub fn off() -> Self {
        Batching {
            enabled: false,
            ..Self::default()
        }
    }

    /// With this many calls in flight per lane before decisions wait (at least 1).
    pub fn in_flight(mut self, calls: usize) -> Self {
        self.in_flight = calls.max(1);
        self
    }

    /// With at most this many decisions (at least 1) and bytes per batch.
    pub fn max(mut self, decisions: usize, bytes: usize) -> Self {
        self.max_decisions = decisions.max(1);
        self.max_bytes = bytes;
        self
    }

    /// With batches of at least this many decisions (fewer leave as separate calls).
    pub fn min_batch(mut self, decisions: usize) -> Self {
        self.min_batch = decisions.max(2);
        self
    }
}

/// What a client's batching did so far ([`Client::batch_stats`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct BatchStats {
    /// Decisions of batchable scripts, however they left.
    pub decisions: u64,
    /// Of those, decisions that found a call slot free and went out at once, alone.
    pub alone: u64,
    /// Batch calls sent.
    pub batches: u64,
    /// Decisions that left in those batch calls.
    pub batched: u64,
    /// Decisions that waited and left as separate calls (too few, or too large, to batch).
    pub separate: u64,
}

impl BatchStats {
    /// What happened between `earlier` and this snapshot.
    pub fn since(&self, earlier: &BatchStats) -> BatchStats {
        BatchStats {
            decisions: self.decisions.saturating_sub(earlier.decisions),
            alone: self.alone.saturating_sub(earlier.alone),
            batches: self.batches.saturating_sub(earlier.batches),
            batched: self.batched.saturating_sub(earlier.batched),
            separate: self.separate.saturating_sub(earlier.separate),
        }
    }

    /// Mean decisions per batch call (0 without any).
    pub fn mean_batch(&self) -> f64 {
        match self.batches {
            0 => 0.0,
            n => self.batched as f64 / n as f64,
        }
    }
}

/// A client's lanes and counters.
pub(crate) struct Batcher {
    config: Batching,
    /// By batch entry point (its address) and slot (0 off a cluster).
    lanes: Mutex<HashMap<(usize, u16), Arc<Lane>>>,
    decisions: AtomicU64,
    alone: AtomicU64,
    batches: AtomicU64,
    batched: AtomicU64,
    separate: AtomicU64,
}

impl Batcher {
    pub(crate) fn new(config: Batching) -> Batcher {
        Batcher {
            config,
            lanes: Mutex::default(),
            decisions: AtomicU64::new(0),
            alone: AtomicU64::new(0),
            batches: AtomicU64::new(0),
            batched: AtomicU64::new(0),
            separate: AtomicU64::new(0),
        }
    }

    fn lane(&self, batch: &'static ScriptDef, slot: u16) -> Arc<Lane> {
        let key = (std::ptr::from_ref(batch) as usize, slot);
        // A std mutex, held for one lookup, never across an await.
        let mut lanes = self.lanes.lock().unwrap_or_else(|p| p.into_inner());
        lanes
            .entry(key)
            .or_insert_with(|| Arc::new(Lane::new(batch)))
            .clone()
    }

    /// Counts one batch call of `n` decisions.
    fn sent_batch(&self, n: usize) {
        self.batches.fetch_add(1, Ordering::Relaxed);
        self.batched.fetch_add(n as u64, Ordering::Relaxed);
        metrics::histogram!(BATCH_SIZE).record(n as f64);
    }

    /// Counts `n` waiting decisions that left as calls of their own.
    fn sent_separately(&self, n: usize) {
        self.separate.fetch_add(n as u64, Ordering::Relaxed);
        for _ in 0..n {
            metrics::histogram!(BATCH_SIZE).record(1.0);
        }
    }
}

impl Client {
    /// What this client's batching did so far (zeros with batching off). Counted per client
    /// configuration: a [`Client::with_config`] copy counts on its own.
    pub fn batch_stats(&self) -> BatchStats {
        let b = &self.batcher;
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        BatchStats {
            decisions: get(&b.decisions),
            alone: get(&b.alone),
            batches: get(&b.batches),
            batched: get(&b.batched),
            separate: get(&b.separate),
        }
    }

    /// The batch entry point `def` may ride in with this client's settings, if any.
    pub(super) fn batch_of(&self, def: &ScriptDef) -> Option<&'static ScriptDef> {
        def.batch.filter(|_| self.batcher.config.enabled)
    }

    /// One attempt of a batchable decision: at once and alone when its lane has a call slot
    /// free, else in the next call of its lane (see the module doc).
    pub(super) async fn batched(
        &self,
        batch: &'static ScriptDef,
        def: &'static ScriptDef,
        keys: &[&str],
        args: &[Arg<'_>],
    ) -> Result<Value, Error> {
        let b = &self.batcher;
        b.decisions.fetch_add(1, Ordering::Relaxed);
        let slot = match keys.first() {
            Some(key) if self.is_cluster() => crate::keys::slot(key.as_bytes()),
            _ => 0,
        };
        let lane = b.lane(batch, slot);
        let limit = b.config.in_flight;
        let permit = if lane.try_enter(limit) {
            Permit::new(lane, self)
        } else {
            let (entry, waiter) = Entry::new(def, keys, args, &b.config);
            match lane.enqueue(entry, limit) {
                Ok(()) => return waiter.wait(self.config.timeout).await,
                Err(_) => Permit::new(lane, self), // a slot freed meanwhile: go alone
            }
        };
        b.alone.fetch_add(1, Ordering::Relaxed);
        metrics::histogram!(BATCH_SIZE).record(1.0);
        let reply = self.attempt_alone(def, keys, args).await;
        drop(permit); // hands the slot to what waited meanwhile
        reply
    }
}
