//! The built-in checks, one per primitive, each a file here and one line in [`BUILTIN`]. All of
//! one shape: many concurrent tasks ([`CheckCtx::run_workers`]) drive the primitive while the
//! check records what they saw (side effects counted, not assumed); the testkit's history
//! checkers (`redis_atomic_testkit::history`, the same ones the library's tests use) then judge
//! the record against the primitive's model, and the check returns their verdicts as
//! [`Findings`]. A check's code is thus the workload and the record, nothing else: spawning,
//! joining, error policy and the report live in the crate once.

mod cas;
mod dedup;
mod fenced;
mod idempotency;
pub(crate) mod lock;
pub(crate) mod queue;
pub(crate) mod quota;
mod ratelimit;
mod semaphore;

pub(crate) use crate::check::{CheckError, CheckResult};
pub(crate) use crate::ctx::{decode, locked, unseen, CheckCtx};
pub(crate) use crate::report::Findings;

use crate::check::Check;
use futures::future::BoxFuture;
use redis_atomic::ratelimit::Algorithm;
use std::sync::Arc;

type RunFn = fn(CheckCtx) -> BoxFuture<'static, CheckResult<Findings>>;

/// A built-in check: its row name, its invariant, and how.
#[derive(Clone, Copy)]
struct Builtin {
    name: &'static str,
    invariant: &'static str,
    run: RunFn,
}

impl Check for Builtin {
    fn name(&self) -> &str {
        self.name
    }

    fn invariant(&self) -> &str {
        self.invariant
    }

    fn run(&self, ctx: CheckCtx) -> BoxFuture<'static, CheckResult<Findings>> {
        (self.run)(ctx)
    }
}

const fn check(name: &'static str, invariant: &'static str, run: RunFn) -> Builtin {
    Builtin {
        name,
        invariant,
        run,
    }
}

/// Every primitive's check, in report order.
const BUILTIN: &[Builtin] = &[
    check("lock", lock::INVARIANT, |c| Box::pin(lock::run(c))),
    check("idempotency", idempotency::INVARIANT, |c| {
        Box::pin(idempotency::run(c))
    }),
    check("queue", queue::INVARIANT, |c| Box::pin(queue::run(c))),
    check("ratelimit-fw", ratelimit::FIXED_WINDOW, |c| {
        Box::pin(ratelimit::run(c, Algorithm::FixedWindow))
    }),
    check("ratelimit-aw", ratelimit::ANCHORED_WINDOW, |c| {
        Box::pin(ratelimit::run(c, Algorithm::AnchoredWindow))
    }),
    check("ratelimit-sl", ratelimit::SLIDING_LOG, |c| {
        Box::pin(ratelimit::run(c, Algorithm::SlidingLog))
    }),
    check("ratelimit-sw", ratelimit::SLIDING_WINDOW, |c| {
        Box::pin(ratelimit::run(c, Algorithm::SlidingWindow))
    }),
    check("ratelimit-tb", ratelimit::RATE, |c| {
        Box::pin(ratelimit::run(c, Algorithm::TokenBucket))
    }),
    check("ratelimit-gcra", ratelimit::RATE, |c| {
        Box::pin(ratelimit::run(c, Algorithm::Gcra))
    }),
    check("quota", quota::INVARIANT, |c| Box::pin(quota::run(c))),
    check("semaphore", semaphore::INVARIANT, |c| {
        Box::pin(semaphore::run(c))
    }),
    check("fenced-write", fenced::INVARIANT, |c| {
        Box::pin(fenced::run(c))
    }),
    check("cas", cas::INVARIANT, |c| Box::pin(cas::run(c))),
    check("dedup", dedup::INVARIANT, |c| Box::pin(dedup::run(c))),
];

/// Every primitive's built-in check, in report order: lock, idempotency, queue, the six rate
/// limiters, quota, semaphore, fenced-write, cas, dedup.
pub fn builtin() -> Vec<Arc<dyn Check>> {
    BUILTIN
        .iter()
        .map(|c| Arc::new(*c) as Arc<dyn Check>)
        .collect()
}
