//! Optimistic compare-and-set: `WATCH`, read, decide in Rust, `MULTI`/`EXEC`, bounded retries.
//!
//! **Invariant.** An attempt's writes apply only if no key it read changed between its `WATCH`
//! and its `EXEC`; so the value returned in [`CasOutcome::Committed`] was decided on the state
//! the writes replaced (no lost update). [`CasOutcome::Aborted`] is decided on a consistent
//! snapshot too: the abort is confirmed by an empty `MULTI`/`EXEC` under the same watch.
//!
//! **Keys.** The caller's: the keys read (all watched) and the keys written must share one hash
//! slot, checked before anything is sent ([`Error::CrossSlot`]); in a cluster the attempt runs on
//! a connection to the node that serves the slot.
//!
//! **Shape.** [`Cas::new`] takes only the client (it acts on the caller's keys, no keyspace);
//! [`Cas::with_policy`] bounds it. A conflict that outlasted the policy is a value
//! ([`CasOutcome::Conflict`]).
//!
//! **Mechanism.** Rung 4. Each attempt takes a [`DedicatedConnection`] (never the
//! shared multiplexed ones: `WATCH` is per connection, redis-rs #565, fred #251), sends `WATCH`
//! and the [`Read`]s in one round trip, calls the closure with the [`Snapshot`], then sends
//! `MULTI`, the [`Write`]s and `EXEC` in a second. Every exit path leaves no watch behind: `EXEC`
//! clears it, an error or an abort by the closure sends `UNWATCH`, and a connection in an unknown
//! state (timeout, panic, cancelled future) is closed instead of reused.
//!
//! **Retry.** One [`RetryPolicy`] bounds an update ([`Cas::with_policy`]; by default the client's
//! [`contention`](crate::ClientConfig::contention) policy, [`RetryPolicy::contention`]: 16
//! attempts within 2 s), and the client's one retry loop runs it (observed as `cas`/`update`,
//! command `watch_multi_exec`; the unbounded retry loop of redis-rs' `transaction` is what this
//! replaces). `EXEC` returning nil is a conflict: counted in [`CAS_ABORTS_TOTAL`] and retried
//! after a full-jitter pause until attempts or the deadline run out, then returned as
//! [`CasOutcome::Conflict`] with the number of attempts made. A failure before `EXEC` was sent
//! (nothing written: a transient refusal, a lost reply to `WATCH` and the reads) is retried the
//! same way. A lost `EXEC` reply is returned as [`Error::OutcomeUnknown`]: the writes may have
//! applied, and re-running the closure on top of them could apply them twice.
//!
//! **Not guaranteed.** Progress under contention: on a hot key most attempts abort (measured
//! abort rates: docs/performance.md, "CAS against one script"); above a handful of contenders a
//! script is cheaper and never aborts. No rollback inside `EXEC` (a write to a key of another
//! type fails alone, reported as [`Error::WrongType`]). Keys the closure did not read are not
//! protected. A failover can lose a commit (asynchronous replication) unless
//! [`crate::ClientConfig::replicas`] is set: then `WAIT` follows a committing `EXEC` in the same
//! round trip, and a commit that reached too few replicas is [`Error::NotReplicated`] (it stands
//! on the primary; the closure is not run again).

mod read;

pub use read::{Read, Snapshot, MAX_READS};

use crate::client::retry::Verdict;
use crate::client::{DedicatedConnection, RetryPolicy};
use crate::keys::same_slot;
use crate::multi::exec;
use crate::observe::Op;
use crate::write::{check_batch, Write};
use crate::{Client, Error};
use redis::Cmd;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

/// `redis_atomic_cas_aborts_total`: `EXEC`s aborted because a watched key changed.
pub const CAS_ABORTS_TOTAL: &str = "redis_atomic_cas_aborts_total";
/// One update: `WATCH` and reads, then `MULTI`/writes/`EXEC`, per attempt.
const UPDATE: Op = Op::command("cas", "update", "watch_multi_exec");

/// What the closure decided on a snapshot.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Decision<T> {
    /// Apply these writes atomically, if nothing read has changed; then return `value`.
    Commit {
        /// The writes (may be empty: the snapshot is only validated).
        writes: Vec<Write>,
        /// Returned in [`CasOutcome::Committed`].
        value: T,
    },
    /// Write nothing; returned in [`CasOutcome::Aborted`] once the snapshot is confirmed.
    Abort(T),
}

impl<T> Decision<T> {
    /// Commit `writes`, then return `value`.
    pub fn commit(writes: Vec<Write>, value: T) -> Self {
        Decision::Commit { writes, value }
    }

    /// Write nothing, return `value`.
    pub fn abort(value: T) -> Self {
        Decision::Abort(value)
    }
}

/// How an update ended.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum CasOutcome<T> {
    /// The writes applied on the state they were decided on.
    Committed(T),
    /// The closure chose not to write, on a consistent snapshot.
    Aborted(T),
    /// Every attempt conflicted with a concurrent change (attempts or deadline ran out).
    Conflict {
        /// Attempts made, the failed ones included.
        attempts: u32,
    },
}

impl<T> CasOutcome<T> {
    /// The `outcome` label of `redis_atomic_ops_total`.
    fn label(&self) -> &'static str {
        match self {
            CasOutcome::Committed(_) => "committed",
            CasOutcome::Aborted(_) => "aborted",
            CasOutcome::Conflict { .. } => "conflict",
        }
    }
}

/// Optimistic updates over one client.
#[derive(Clone, Debug)]
pub struct Cas {
    client: Client,
    policy: RetryPolicy,
}

/// What the attempts of one update share. Attempts run one after another; the locks are never
/// held across an `.await` (they only make the shared state reachable from each attempt).
struct Attempts<F> {
    /// The connection, kept from one attempt to the next unless an attempt failed on it.
    conn: Mutex<Option<DedicatedConnection>>,
    decide: Mutex<F>,
    /// Attempts started.
    made: AtomicU32,
    /// Whether the current attempt sent `EXEC` (its failure may then have written).
    exec_sent: AtomicBool,
}

impl Cas {
    /// Updates through `client` (built by [`Client::connect`] or [`Client::connect_cluster`]),
    /// bounded by its [`contention`](crate::ClientConfig::contention) policy.
    pub fn new(client: Client) -> Self {
        let policy = client.config().contention.clone();
        Cas { client, policy }
    }

    /// With these bounds (attempts, deadline, backoff between attempts).
    pub fn with_policy(mut self, policy: RetryPolicy) -> Self {
        self.policy = policy;
        self
    }

    /// Watches and reads `reads`, calls `decide` with the snapshot, and applies its writes if no
    /// read key changed; retries conflicts within the policy. `decide` may run several times:
    /// keep it free of side effects outside its return value.
    ///
    /// ```no_run
    /// # async fn demo(client: redis_atomic::Client) -> Result<(), redis_atomic::Error> {
    /// use redis_atomic::cas::{Cas, CasOutcome, Decision, Read};
    /// use redis_atomic::write::Write;
    /// let key = "app:max:v1:{m}";
    /// let offered = 42u64;
    /// let out = Cas::new(client)
    ///     .update(&[Read::get(key)], |s| match s.get::<Option<u64>>(0)? {
    ///         Some(current) if current >= offered => Ok(Decision::abort(current)),
    ///         _ => Ok(Decision::commit(vec![Write::set(key, offered.to_string())], offered)),
    ///     })
    ///     .await?;
    /// assert!(matches!(out, CasOutcome::Committed(_) | CasOutcome::Aborted(_) | CasOutcome::Conflict { .. }));
    /// # Ok(()) }
    /// ```
    pub async fn update<T, F>(&self, reads: &[Read], decide: F) -> Result<CasOutcome<T>, Error>
    where
        F: FnMut(&Snapshot) -> Result<Decision<T>, Error>,
    {
        check_reads(reads)?;
        let shared = Attempts {
            conn: Mutex::new(None),
            decide: Mutex::new(decide),
            made: AtomicU32::new(0),
            exec_sent: AtomicBool::new(false),
        };
        // What failed before EXEC was sent wrote nothing and is retried (a transient refusal, a
        // lost reply to WATCH and the reads); a lost EXEC reply may have written and is not.
        let judge = |e: &Error| {
            let before_exec = !shared.exec_sent.load(Ordering::SeqCst);
            if e.is_transient() || (e.is_outcome_unknown() && before_exec) {
                Verdict::Retry
            } else {
                Verdict::Fail
            }
        };
        let conflict = |o: &CasOutcome<T>| match o {
            CasOutcome::Conflict { .. } => Some(Duration::MAX), // the policy's backoff decides
            _ => None,
        };
        self.client
            .run_op_with(
                &self.policy,
                UPDATE,
                Some(reads[0].key()),
                &judge,
                &conflict,
                &|o: &CasOutcome<T>| o.label(),
                || self.attempt(&shared, reads),
            )
            .await
    }

    /// One attempt, on the connection the previous one left (a new one after a failure).
    async fn attempt<T, F>(
        &self,
        shared: &Attempts<F>,
        reads: &[Read],
    ) -> Result<CasOutcome<T>, Error>
    where
        F: FnMut(&Snapshot) -> Result<Decision<T>, Error>,
    {
        let made = shared.made.fetch_add(1, Ordering::SeqCst) + 1;
        shared.exec_sent.store(false, Ordering::SeqCst);
        let mut conn = take(&shared.conn);
        let result = self.attempt_on(&mut conn, shared, reads).await;
        *shared.conn.lock().unwrap_or_else(PoisonError::into_inner) = conn;
        match result? {
            Some(outcome) => Ok(outcome),
            None => {
                metrics::counter!(CAS_ABORTS_TOTAL).increment(1);
                Ok(CasOutcome::Conflict { attempts: made })
            }
        }
    }

    /// `WATCH` and read, decide, `EXEC`: the outcome, or `None` when `EXEC` aborted. `conn` is
    /// left `None` when it may hold a watch or be out of step (it is then closed, not reused).
    async fn attempt_on<T, F>(
        &self,
        conn: &mut Option<DedicatedConnection>,
        shared: &Attempts<F>,
        reads: &[Read],
    ) -> Result<Option<CasOutcome<T>>, Error>
    where
        F: FnMut(&Snapshot) -> Result<Decision<T>, Error>,
    {
        let c = match conn {
            Some(c) => c,
            None => conn.insert(self.client.dedicated(reads[0].key()).await?),
        };
        let snapshot = match watch_and_read(c, reads).await {
            Ok(s) => s,
            Err(e) => {
                *conn = None; // closed: the watch goes with it
                return Err(e);
            }
        };
        let decided = {
            let mut decide = shared.decide.lock().unwrap_or_else(PoisonError::into_inner);
            (*decide)(&snapshot)
        };
        let (cmds, decision) = match decided.and_then(|d| plan(reads, d)) {
            Ok(planned) => planned,
            Err(e) => {
                let _ = c.command(&redis::cmd("UNWATCH")).await;
                *conn = None;
                return Err(e);
            }
        };
        // Nothing to write (an abort confirmed, or an empty commit): no replica to wait for.
        let replicas = self.client.config().replicas.filter(|_| !cmds.is_empty());
        shared.exec_sent.store(true, Ordering::SeqCst);
        match exec(c, &cmds, replicas).await {
            Ok(Some(_)) => Ok(Some(decision)),
            Ok(None) => Ok(None),
            Err(e) => {
                if e.nothing_ran() {
                    *conn = None;
                }
                Err(e)
            }
        }
    }
}

/// The connection an earlier attempt left, taken out of the shared slot.
fn take(slot: &Mutex<Option<DedicatedConnection>>) -> Option<DedicatedConnection> {
    slot.lock().unwrap_or_else(PoisonError::into_inner).take()
}

fn check_reads(reads: &[Read]) -> Result<(), Error> {
    if reads.is_empty() || reads.len() > MAX_READS {
        return Err(Error::BadArgument(format!(
            "an update reads 1..={MAX_READS} keys, got {}",
            reads.len()
        )));
    }
    if reads.iter().any(|r| r.key().is_empty()) {
        return Err(Error::BadArgument("read key must not be empty".into()));
    }
    let keys: Vec<&str> = reads.iter().map(Read::key).collect();
    same_slot(&keys).map(drop)
}

/// `WATCH` every key read, then the reads, in one round trip.
async fn watch_and_read(conn: &mut DedicatedConnection, reads: &[Read]) -> Result<Snapshot, Error> {
    let mut pipe = redis::pipe();
    let watch = pipe.cmd("WATCH");
    for r in reads {
        watch.arg(r.key());
    }
    for r in reads {
        pipe.add_command(r.cmd());
    }
    let mut values = conn.pipeline(&pipe).await?;
    if let Some(redis::Value::ServerError(e)) = values
        .iter()
        .find(|v| matches!(v, redis::Value::ServerError(_)))
    {
        return Err(Error::from_code(
            e.code().to_string(),
            e.details().unwrap_or_default().to_string(),
        ));
    }
    values.remove(0);
    Ok(Snapshot::new(values))
}

/// The commands of a decision (checked: bounds, one slot with the reads) and its outcome.
fn plan<T>(reads: &[Read], decision: Decision<T>) -> Result<(Vec<Cmd>, CasOutcome<T>), Error> {
    match decision {
        Decision::Abort(value) => Ok((Vec::new(), CasOutcome::Aborted(value))),
        Decision::Commit { writes, value } if writes.is_empty() => {
            Ok((Vec::new(), CasOutcome::Committed(value)))
        }
        Decision::Commit { writes, value } => {
            let cmds = check_batch(&writes)?;
            let keys: Vec<&str> = [reads[0].key(), writes[0].key()].into();
            same_slot(&keys)?;
            Ok((cmds, CasOutcome::Committed(value)))
        }
    }
}
