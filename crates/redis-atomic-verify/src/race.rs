//! What makes a sabotaged primitive's race show on any machine: the gap between its read and its
//! write is held open by a condition, not a pause. A task that read waits until another task has
//! read too, so both act on the same stale state — the lost update, the double "first", the
//! over-admission the check must flag. A pause (or a bare `yield`) races only by luck: on a
//! loaded machine a sabotaged row once saw none in 80 operations.

use crate::ctx::CheckCtx;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use tokio::sync::Notify;

/// The longest a task holds its gap open when no other task reads (the check's last tasks):
/// a bound, not the synchronisation.
const BOUND: Duration = Duration::from_millis(100);

/// Reads made so far by a check's sabotaged tasks, and who waits for the next one.
#[derive(Debug, Default)]
pub(crate) struct Race {
    reads: AtomicU64,
    read: Notify,
}

impl CheckCtx {
    /// In a sabotaged workload ([`CheckCtx::sabotage`]), between a read and the write decided on
    /// it: waits until another task has passed here since (bounded), so two writes are decided
    /// on the same read.
    pub async fn race_gap(&self) {
        let mine = self.race.reads.fetch_add(1, Ordering::SeqCst) + 1;
        self.race.read.notify_waiters();
        let deadline = tokio::time::Instant::now() + BOUND;
        loop {
            let next = self.race.read.notified();
            if self.race.reads.load(Ordering::SeqCst) > mine || !self.running() {
                return;
            }
            if tokio::time::timeout_at(deadline, next).await.is_err() {
                return;
            }
        }
    }
}
