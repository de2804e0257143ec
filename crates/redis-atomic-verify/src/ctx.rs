//! What a check gets, and the scaffolding every check shares: its workers (spawned, run until the
//! deadline, joined), how it treats errors, its calls' tally ([`CheckCtx::call`]: availability,
//! unknown outcomes), and which judgement the fault allows ([`CheckCtx::lossy`]).
//!
//! How errors are treated, in every check, clean or under faults: an error is an outcome to
//! count and carry on from, never the end of the run. A refusal (`NotSent`, `Rejected`,
//! `CrossSlot`: nothing ran) is an operation that surely did not apply; a lost or unusable
//! reply (`OutcomeUnknown`, `BadReply`) one that may have — the history checkers model both.
//! Only an error that is neither (a script error, `NOPERM`, a wrong type) fails the check in a
//! clean run, where it means the check cannot prove anything (its row says why); under faults
//! even those count as unknown outcomes (a corrupted reply can be any error).

use crate::check::{CheckError, CheckResult};
use crate::faults::FaultKind;
use crate::race::Race;
use crate::tally::{Served, Tally};
use indicatif::ProgressBar;
use redis_atomic::{Client, Error, Keyspace};
use redis_atomic_testkit::{history, Verdict};
use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};
use tokio::sync::watch;

/// What a check gets: a client, its own keyspace, how long to run, how many tasks, and the fault
/// injected meanwhile.
#[derive(Clone)]
#[non_exhaustive]
pub struct CheckCtx {
    /// Connected client (through the faults, if any).
    pub client: Client,
    /// A keyspace unique to this check and run.
    pub keyspace: Keyspace,
    /// How long to drive the primitive.
    pub duration: Duration,
    /// Concurrent tasks.
    pub concurrency: usize,
    /// Bypass the primitive (see [`crate::Verify::sabotage`]).
    pub sabotage: bool,
    /// The fault injected while the check runs (None: a clean run).
    pub fault: Option<FaultKind>,
    /// The URLs `client` reaches (through the faults' proxies, if any): what a driver is given
    /// ([`crate::Verify::urls`] in a clean run). Empty when unknown.
    pub urls: Vec<String>,
    pub(crate) progress: ProgressBar,
    pub(crate) started: Instant,
    pub(crate) tally: Arc<Tally>,
    pub(crate) race: Arc<Race>,
    pub(crate) settled: watch::Receiver<bool>,
    /// Set when a check that starts late ([`crate::Check::starts_late`]) begins.
    pub(crate) begun: Arc<watch::Sender<bool>>,
}

impl CheckCtx {
    /// A clean-run context.
    pub(crate) fn new(client: Client, keyspace: Keyspace, progress: ProgressBar) -> CheckCtx {
        CheckCtx {
            client,
            keyspace,
            duration: Duration::from_secs(2),
            concurrency: 16,
            progress,
            sabotage: false,
            fault: None,
            urls: Vec::new(),
            started: Instant::now(),
            tally: Arc::default(),
            race: Arc::default(),
            settled: watch::channel(true).1,
            begun: Arc::new(watch::channel(false).0),
        }
    }

    /// Counts one operation on the progress line.
    pub fn tick(&self) {
        self.progress.inc(1);
    }

    /// Whether the fault may lose acknowledged writes (a primary killed before it replicated):
    /// the check then judges only what survives such a loss.
    pub fn lossy(&self) -> bool {
        self.fault.is_some_and(|f| f.loses_acknowledged_writes())
    }

    /// Time since the check started: the one clock its histories are recorded on.
    pub fn clock(&self) -> Duration {
        self.started.elapsed()
    }

    /// Whether the check's duration is still running.
    pub fn running(&self) -> bool {
        self.clock() < self.duration
    }

    /// [`CheckCtx::running`], and past the deadline while `none_yet` (nothing recorded so far: a
    /// fault such as a failover can block every request for the whole run), bounded at four more
    /// durations, by when the injector has healed the server.
    pub fn running_until_first(&self, none_yet: bool) -> bool {
        self.running_while(none_yet)
    }

    /// [`CheckCtx::running`], and past the deadline while `more` (a condition the check waits
    /// on: a first outcome, a sabotage shown), bounded at four more durations.
    pub fn running_while(&self, more: bool) -> bool {
        self.running() || (more && self.clock() < self.duration * 5)
    }

    /// Runs `worker(index, ctx)` on `concurrency` tasks and joins them: their results in index
    /// order, or the first error (a worker's, or a panic), which ends the check (an `error` row) and aborts the
    /// other workers. Workers loop while [`CheckCtx::running`].
    pub async fn run_workers<T, F, Fut>(&self, worker: F) -> CheckResult<Vec<T>>
    where
        T: Send + 'static,
        F: Fn(usize, CheckCtx) -> Fut,
        Fut: Future<Output = CheckResult<T>> + Send + 'static,
    {
        let mut tasks = tokio::task::JoinSet::new();
        for i in 0..self.concurrency {
            let work = worker(i, self.clone());
            tasks.spawn(async move { work.await.map(|t| (i, t)) });
        }
        let mut results = Vec::with_capacity(self.concurrency);
        while let Some(joined) = tasks.join_next().await {
            results.push(joined??);
        }
        results.sort_by_key(|(i, _)| *i);
        Ok(results.into_iter().map(|(_, t)| t).collect())
    }

    /// One call to the primitive, recorded for the row's availability (refused or not, when).
    /// Every call a check makes to the primitive goes through here; its final reads and
    /// bookkeeping do not.
    pub async fn call<T>(&self, call: impl Future<Output = Result<T, Error>>) -> Result<T, Error> {
        let invoked = self.clock();
        let result = call.await;
        let served = match &result {
            Ok(_) => Served::Yes,
            Err(e) if e.nothing_ran() => Served::Refused,
            Err(_) => Served::No,
        };
        self.tally.call(invoked, self.clock(), served);
        result
    }

    /// Counts `err` and returns Ok so the caller carries on (see the module doc): a refusal
    /// (nothing ran) as such, a lost or unusable reply as an unknown outcome. An error that is
    /// neither is returned as the check's failure in a clean run, counted as unknown under faults.
    pub fn absorb(&self, err: Error) -> CheckResult<()> {
        if err.nothing_ran() {
            return Ok(());
        }
        if !unseen(&err) && self.fault.is_none() {
            return Err(CheckError::from(err));
        }
        self.tally.count_unknown();
        Ok(())
    }

    /// Whether a write applied, as histories record it: `Some(applied)` from a reply,
    /// `Some(false)` when an error says nothing ran, None when it may have run. Errors are
    /// [absorbed](CheckCtx::absorb) first.
    pub fn outcome(&self, result: Result<bool, Error>) -> CheckResult<Option<bool>> {
        match result {
            Ok(applied) => Ok(Some(applied)),
            Err(e) => {
                let ran = !e.nothing_ran();
                self.absorb(e)?;
                Ok((!ran).then_some(false))
            }
        }
    }

    /// Sends `call` ([`CheckCtx::call`]) until its outcome is known, at most three times: the
    /// library's advice for an unknown outcome (or an unusable reply) of a call with an owner
    /// token (ask again with the same token). None when it stays unknown or fails (absorbed).
    pub async fn until_known<R, F, Fut>(&self, mut call: F) -> CheckResult<Option<R>>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<R, Error>>,
    {
        for _ in 0..3 {
            match self.call(call()).await {
                Ok(r) => return Ok(Some(r)),
                Err(e) if unseen(&e) => self.absorb(e)?,
                Err(e) => {
                    self.absorb(e)?;
                    return Ok(None);
                }
            }
        }
        Ok(None)
    }

    /// `cmd` sent as one call of the check ([`CheckCtx::call`]).
    pub async fn command(&self, cmd: &redis::Cmd) -> Result<redis::Value, Error> {
        self.call(self.client.command(cmd)).await
    }

    /// The counter check the fault allows: [`history::check_counter`], or when acknowledged
    /// writes may be lost [`history::check_counter_lossy`] (nothing invented).
    pub fn check_counter(
        &self,
        initial: i64,
        stored: i64,
        deltas: &[(i64, Option<bool>)],
    ) -> Verdict {
        if self.lossy() {
            history::check_counter_lossy(initial, stored, deltas)
        } else {
            history::check_counter(initial, stored, deltas)
        }
    }

    /// Counts one unknown outcome the check resolved itself (e.g. an effect it cannot confirm).
    pub fn count_unknown(&self) {
        self.tally.count_unknown();
    }

    /// Unknown outcomes so far.
    pub fn unknown(&self) -> u64 {
        self.tally.unknown()
    }

    /// Starts the check's clock now, after a start-up of its own, and the faults' injection with
    /// it ([`crate::Check::starts_late`]).
    pub fn begin(&mut self) {
        self.started = Instant::now();
        self.begun.send_replace(true);
    }

    /// Waits until the injector has stopped and healed the server (at once in a clean run).
    pub async fn settled(&self) {
        let mut rx = self.settled.clone();
        let _ = rx.wait_for(|done| *done).await;
    }

    /// A command that must succeed once the faults are over (a final read): waits for
    /// [`CheckCtx::settled`], then retries failures for up to 10 s (a restarted server loads its
    /// AOF, a failed-over cluster settles).
    pub async fn final_command(&self, cmd: &redis::Cmd) -> CheckResult<redis::Value> {
        self.settled().await;
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        loop {
            match self.client.command(cmd).await {
                Ok(v) => return Ok(v),
                Err(e) if tokio::time::Instant::now() > deadline => return Err(e.into()),
                Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
            }
        }
    }

    /// [`CheckCtx::final_command`] `GET key`, decoded (None: no value).
    pub async fn final_get<T: redis::FromRedisValue>(&self, key: &str) -> CheckResult<Option<T>> {
        Ok(redis::from_redis_value(
            self.final_command(redis::cmd("GET").arg(key)).await?,
        )?)
    }
}

/// A reply lost (the outcome is unknown) or unusable (it ran, its reply is not understood).
pub(crate) fn unseen(err: &Error) -> bool {
    err.is_outcome_unknown() || matches!(err, Error::BadReply { .. } | Error::NotReplicated { .. })
}

/// A raw command's reply as `T`; a reply of another shape is [`Error::BadReply`] (it ran, its
/// reply is unusable), an outcome like any other.
pub(crate) fn decode<T: redis::FromRedisValue>(
    what: &'static str,
    value: redis::Value,
) -> Result<T, Error> {
    redis::from_redis_value(value).map_err(|e| Error::BadReply {
        script: what,
        detail: e.to_string(),
    })
}

/// A log shared by a check's workers, poisoned or not (a panicking worker fails the check anyway).
pub(crate) fn locked<T>(log: &Mutex<T>) -> MutexGuard<'_, T> {
    log.lock().unwrap_or_else(|p| p.into_inner())
}
