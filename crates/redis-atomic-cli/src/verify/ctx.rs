//! What a check gets, and how it treats errors: in a clean run any error fails the check; under
//! faults an error is an outcome to count (unknown, or surely not applied) and carry on from.

use super::faults::FaultKind;
use indicatif::ProgressBar;
use redis_atomic::{Client, Keyspace};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;

/// What a check gets: a client, its own keyspace, how long to run, how many tasks, and the fault
/// injected meanwhile.
#[derive(Clone)]
pub struct CheckCtx {
    /// Connected client (through the faults, if any).
    pub client: Client,
    /// A keyspace unique to this check and run.
    pub keyspace: Keyspace,
    /// How long to drive the primitive.
    pub duration: Duration,
    /// Concurrent tasks.
    pub concurrency: usize,
    /// Progress (operations so far).
    pub progress: ProgressBar,
    /// Bypass the primitive (see [`super::VerifyArgs::sabotage`]).
    pub sabotage: bool,
    /// The fault injected while the check runs (None: a clean run).
    pub fault: Option<FaultKind>,
    pub(super) unknown: Arc<AtomicU64>,
    pub(super) settled: watch::Receiver<bool>,
}

impl CheckCtx {
    /// A clean-run context.
    pub(super) fn new(client: Client, keyspace: Keyspace, progress: ProgressBar) -> CheckCtx {
        CheckCtx {
            client,
            keyspace,
            duration: Duration::from_secs(2),
            concurrency: 16,
            progress,
            sabotage: false,
            fault: None,
            unknown: Arc::default(),
            settled: watch::channel(true).1,
        }
    }

    /// Under faults, counts `err` (as unknown when it may have run) and returns Ok so the caller
    /// carries on; in a clean run returns it as the check's failure.
    pub fn absorb(&self, err: redis_atomic::Error) -> anyhow::Result<()> {
        if self.fault.is_none() {
            return Err(err.into());
        }
        if err.is_outcome_unknown() {
            self.unknown.fetch_add(1, Ordering::Relaxed);
        }
        Ok(())
    }

    /// Counts one unknown outcome the check resolved itself (e.g. an effect it cannot confirm).
    pub fn count_unknown(&self) {
        self.unknown.fetch_add(1, Ordering::Relaxed);
    }

    /// Unknown outcomes so far.
    pub fn unknown(&self) -> u64 {
        self.unknown.load(Ordering::Relaxed)
    }

    /// Waits until the injector has stopped and healed the server (at once in a clean run).
    pub async fn settled(&self) {
        let mut rx = self.settled.clone();
        let _ = rx.wait_for(|done| *done).await;
    }

    /// A command that must succeed once the faults are over (a final read): waits for
    /// [`CheckCtx::settled`], then retries failures for up to 10 s (a restarted server loads its
    /// AOF, a failed-over cluster settles).
    pub async fn final_command(&self, cmd: &redis::Cmd) -> anyhow::Result<redis::Value> {
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
}
