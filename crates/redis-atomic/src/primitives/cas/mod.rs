//! Optimistic compare-and-set: `WATCH`, read, decide in Rust, `MULTI`/`EXEC`, bounded retries.
//!
//! **Invariant.** An attempt's writes apply only if no key it read changed between its `WATCH`
//! and its `EXEC`; so the value returned in [`CasOutcome::Committed`] was decided on the state
//! the writes replaced (no lost update). [`CasOutcome::Aborted`] is decided on a consistent
//! snapshot too: the abort is confirmed by an empty `MULTI`/`EXEC` under the same watch.
//!
//! **Keys.** The keys read (all watched) and the keys written must share one hash slot: checked
//! before anything is sent ([`Error::CrossSlot`]); in a cluster the attempt runs on a connection
//! to the node that serves the slot.
//!
//! **Mechanism.** Rung 4 of the ladder. Each attempt takes a [`DedicatedConnection`] (never the
//! shared multiplexed ones: `WATCH` is per connection, redis-rs #565, fred #251), sends `WATCH`
//! and the [`Read`]s in one round trip, calls the closure with the [`Snapshot`], then sends
//! `MULTI`, the [`Write`]s and `EXEC` in a second. `EXEC` returning nil is a conflict: the attempt
//! is retried after a full-jitter pause, at most [`CasPolicy::max_attempts`] times and never past
//! [`CasPolicy::deadline`] (the unbounded retry loop of redis-rs' `transaction` is what this
//! replaces). Every exit path leaves no watch behind: `EXEC` clears it, an error or an abort by the
//! closure sends `UNWATCH`, and a connection in an unknown state (timeout, panic, cancelled
//! future) is closed instead of reused.
//!
//! **Retry.** Conflicts and failures before `EXEC` are retried here (nothing was written). A
//! lost `EXEC` reply is returned as [`Error::OutcomeUnknown`]: the writes may have applied, and
//! re-running the closure on top of them could apply them twice.
//!
//! **Not guaranteed.** Progress under contention: on a hot key most attempts abort (see
//! `docs/cas.md` for measured abort rates); above a handful of contenders a script is cheaper
//! and never aborts. No rollback inside `EXEC` (a write to a key of another type fails alone,
//! reported as [`Error::WrongType`]). Keys the closure did not read are not protected. A
//! failover can lose a commit (asynchronous replication) unless [`crate::ClientConfig::replicas`]
//! is set: then `WAIT` follows a committing `EXEC` in the same round trip, and a commit that
//! reached too few replicas is [`Error::NotReplicated`] (it stands on the primary; the closure
//! is not run again).

mod read;

pub use read::{Read, Snapshot, MAX_READS};

use crate::client::{full_jitter, DedicatedConnection};
use crate::keys::same_slot;
use crate::multi::exec;
use crate::observe::{OPS_TOTAL, RETRIES_TOTAL};
use crate::write::{check_batch, Write};
use crate::{Client, Error};
use redis::Cmd;
use std::time::{Duration, Instant};

/// `redis_atomic_cas_aborts_total`: `EXEC`s aborted because a watched key changed.
pub const CAS_ABORTS_TOTAL: &str = "redis_atomic_cas_aborts_total";

/// Bounds of one [`Cas::update`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct CasPolicy {
    /// Attempts in all, the first included.
    pub max_attempts: u32,
    /// No attempt starts after this much time since the first.
    pub deadline: Duration,
    /// Backoff base (full jitter: uniform in `[0, min(cap, base * 2^n))`).
    pub base_backoff: Duration,
    /// Backoff cap.
    pub max_backoff: Duration,
}

impl Default for CasPolicy {
    fn default() -> Self {
        CasPolicy {
            max_attempts: 16,
            deadline: Duration::from_secs(2),
            base_backoff: Duration::from_millis(1),
            max_backoff: Duration::from_millis(50),
        }
    }
}

impl CasPolicy {
    /// At most `max_attempts` attempts (at least 1) within `deadline`.
    pub fn new(max_attempts: u32, deadline: Duration) -> Self {
        CasPolicy {
            max_attempts: max_attempts.max(1),
            deadline,
            ..Self::default()
        }
    }
}

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
        /// Attempts made.
        attempts: u32,
    },
}

/// Optimistic updates over one client.
#[derive(Clone, Debug)]
pub struct Cas {
    client: Client,
    policy: CasPolicy,
}

/// One attempt's result, before the retry decision.
enum Step<T> {
    Done(CasOutcome<T>),
    Conflict,
}

impl Cas {
    /// Updates through `client` (built by [`Client::connect`] or [`Client::connect_cluster`]).
    pub fn new(client: Client) -> Self {
        Cas {
            client,
            policy: CasPolicy::default(),
        }
    }

    /// With these bounds.
    pub fn with_policy(mut self, policy: CasPolicy) -> Self {
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
    pub async fn update<T, F>(&self, reads: &[Read], mut decide: F) -> Result<CasOutcome<T>, Error>
    where
        F: FnMut(&Snapshot) -> Result<Decision<T>, Error>,
    {
        check_reads(reads)?;
        let started = Instant::now();
        let mut conn: Option<DedicatedConnection> = None;
        let mut attempt = 1;
        let result = loop {
            let err = match self.attempt(&mut conn, reads, &mut decide).await {
                Ok(Step::Done(outcome)) => break Ok(outcome),
                Ok(Step::Conflict) => {
                    metrics::counter!(CAS_ABORTS_TOTAL).increment(1);
                    None
                }
                Err(err) if err.is_transient() || (err.is_outcome_unknown() && conn.is_none()) => {
                    conn = None;
                    Some(err)
                }
                Err(err) => break Err(err),
            };
            let pause = full_jitter(self.policy.base_backoff, self.policy.max_backoff, attempt);
            if attempt >= self.policy.max_attempts
                || started.elapsed() + pause > self.policy.deadline
            {
                break match err {
                    Some(err) => Err(err),
                    None => Ok(CasOutcome::Conflict { attempts: attempt }),
                };
            }
            let reason = err.as_ref().map_or("conflict", Error::label);
            metrics::counter!(RETRIES_TOTAL, "primitive" => "cas", "op" => "update", "reason" => reason)
                .increment(1);
            tokio::time::sleep(pause).await;
            attempt += 1;
        };
        let outcome = match &result {
            Ok(CasOutcome::Committed(_)) => "committed",
            Ok(CasOutcome::Aborted(_)) => "aborted",
            Ok(CasOutcome::Conflict { .. }) => "conflict",
            Err(e) => e.label(),
        };
        metrics::counter!(OPS_TOTAL, "primitive" => "cas", "op" => "update", "outcome" => outcome)
            .increment(1);
        result
    }

    /// One attempt. An error whose outcome is unknown leaves `conn` as `Some` only when it came
    /// from `EXEC` (the writes may have applied: not retried).
    async fn attempt<T, F>(
        &self,
        conn: &mut Option<DedicatedConnection>,
        reads: &[Read],
        decide: &mut F,
    ) -> Result<Step<T>, Error>
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
        let (cmds, decision) = match decide(&snapshot).and_then(|d| plan(reads, d)) {
            Ok(planned) => planned,
            Err(e) => {
                let _ = c.command(&redis::cmd("UNWATCH")).await;
                *conn = None;
                return Err(e);
            }
        };
        // Nothing to write (an abort confirmed, or an empty commit): no replica to wait for.
        let replicas = self.client.config().replicas.filter(|_| !cmds.is_empty());
        match exec(c, &cmds, replicas).await {
            Ok(Some(_)) => Ok(Step::Done(decision)),
            Ok(None) => Ok(Step::Conflict),
            Err(e) if e.nothing_ran() => {
                *conn = None;
                Err(e)
            }
            Err(e) => Err(e),
        }
    }
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
