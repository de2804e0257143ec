//! The one thing a row of the report is: a [`Check`]. The built-in checks implement it
//! ([`crate::checks::builtin`]), and so can any other crate — a face that adds a primitive adds
//! its row with [`crate::Verify::add_check`], without this crate knowing about it.

use crate::ctx::CheckCtx;
use crate::report::Findings;
use futures::future::BoxFuture;

/// Why a check could not run to a verdict (not a violation: a violation is a verdict in its
/// [`Findings`]); its row then has status `error` and this as the reason, and the run goes on.
/// Any error converts into it with `?`.
pub type CheckError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// A check's result.
pub type CheckResult<T> = Result<T, CheckError>;

/// One row of the report: a primitive driven under concurrency (and faults), its history judged.
///
/// ```no_run
/// use futures::future::BoxFuture;
/// use redis_atomic_verify::{Check, CheckCtx, CheckResult, Findings};
/// use redis_atomic_testkit::Verdict;
///
/// /// Every `SET` acknowledged is read back.
/// struct ReadYourWrites;
///
/// impl Check for ReadYourWrites {
///     fn name(&self) -> &str { "read-your-writes" }
///     fn invariant(&self) -> &str { "an acknowledged SET is read back" }
///     fn run(&self, ctx: CheckCtx) -> BoxFuture<'static, CheckResult<Findings>> {
///         Box::pin(async move {
///             let key = ctx.keyspace.key("mine", 1, "ryw", &["k"])?;
///             let mut lost = Vec::new();
///             let mut ops = 0;
///             while ctx.running() {
///                 ops += 1;
///                 ctx.client.command(redis::cmd("SET").arg(&key).arg(ops)).await?;
///                 let got: u64 = redis::from_redis_value(
///                     ctx.client.command(redis::cmd("GET").arg(&key)).await?)?;
///                 if got != ops {
///                     lost.push(format!("wrote {ops}, read {got}"));
///                 }
///                 ctx.tick();
///             }
///             Ok(Findings::new(ops).with(Verdict::observed(ops, lost)))
///         })
///     }
/// }
/// ```
pub trait Check: Send + Sync {
    /// The row's name in the report (`lock`, `ratelimit-fw`, …), unique within a run; it also
    /// names the check's keyspace.
    fn name(&self) -> &str;

    /// The invariant the check proves, in one sentence.
    fn invariant(&self) -> &str;

    /// Drives the primitive under `ctx` until [`CheckCtx::running`] ends and judges what it saw.
    /// The primitive's errors are outcomes ([`CheckCtx::absorb`] counts refusals and unknown
    /// outcomes and carries on); an error returned here means the check could not run to a
    /// verdict, and becomes its row's reason.
    fn run(&self, ctx: CheckCtx) -> BoxFuture<'static, CheckResult<Findings>>;

    /// Whether the check has a start-up of its own before its clock starts (a driver's processes
    /// started and greeted) and says when it is over ([`CheckCtx::begin`]): the faults are then
    /// injected from that moment for the check's duration, not from when it was called (a slow
    /// start-up would otherwise spend the faults before the first operation). False by default.
    fn starts_late(&self) -> bool {
        false
    }
}
