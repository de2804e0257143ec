//! The tokio runtime every call runs on: one per process, built on first use, shared by every
//! `Client` and every JavaScript thread (main or worker).
//!
//! A multi-thread runtime with tokio's default worker count: the cores this process may run on
//! (`available_parallelism`, which honours `taskset` / CPU affinity), so a process pinned to one
//! core gets one worker. Measured on the 2-core VM pinned to one core (tools/peer-bench.py): a
//! current-thread runtime on a thread of its own cost the same CPU per decision and ran slower
//! under load; the cost that matters is the hand-off between Node's thread and the runtime's,
//! which [`crate::bridge`] batches.

use std::future::Future;
use std::sync::OnceLock;
use tokio::runtime::{Builder, Handle, Runtime};

static RUNTIME: OnceLock<Runtime> = OnceLock::new();

/// The runtime's handle, built on first use.
pub(crate) fn handle() -> &'static Handle {
    RUNTIME
        .get_or_init(|| {
            Builder::new_multi_thread()
                .enable_all()
                .thread_name("redis-atomic")
                .build()
                // Only fails when the OS refuses threads or an epoll instance: nothing works then.
                .expect("redis-atomic: could not start the tokio runtime")
        })
        .handle()
}

/// Runs `fut` on the runtime.
pub(crate) fn spawn<F>(fut: F)
where
    F: Future<Output = ()> + Send + 'static,
{
    handle().spawn(fut);
}
