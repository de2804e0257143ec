//! What a benchmark entry implements ([`Workload`]), and what every entry shares: the raw path's
//! one `EVALSHA` decoded through the script's generated reply type ([`evalsha`]), per-task state
//! ([`PerTask`]) and the context it is built from ([`BenchCtx`]).
//!
//! The raw path sends exactly what the library sends (same script, keys, arguments) as one
//! `EVALSHA` on a plain multiplexed connection, and decodes the reply with the same generated
//! type the library matches on, so both paths do the same work and fail the run alike when a
//! decision is not the one the workload expects.

use super::classic::Classic;
use redis::aio::MultiplexedConnection;
use redis_atomic::script::{DynScript, FromReply, Reply, Script};
use redis_atomic::{Arg, Client, Keyspace, OwnerToken};
use std::sync::{Mutex, MutexGuard, PoisonError};

pub use futures::future::BoxFuture;

/// A connection of the raw and reference paths.
pub type Conn = MultiplexedConnection;
/// One decision (or a preparation) in flight: fails the run unless it went as expected.
pub type Decided<'a> = BoxFuture<'a, anyhow::Result<()>>;
/// A record being made: its keys.
pub type Record<'a> = BoxFuture<'a, anyhow::Result<Vec<String>>>;

/// Which way a decision is made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Path {
    /// Raw `EVALSHA` of the same scripts.
    Raw,
    /// Through the library.
    Library,
    /// Raw `EVALSHA` of the classic script the primitive replaces (entries with a reference).
    Reference,
}

impl Path {
    /// `raw`, `library` or `reference`: also the prefix of each path's own resources, so the
    /// paths never share state.
    pub fn name(self) -> &'static str {
        match self {
            Path::Raw => "raw",
            Path::Library => "library",
            Path::Reference => "reference",
        }
    }

    /// Index into per-path arrays.
    pub fn index(self) -> usize {
        self as usize
    }
}

/// Whether a task may end its phase before its next call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// Not yet: mid-cycle (a lock acquired, not yet released).
    No,
    /// Once the phase's time is up: between cycles.
    AtDeadline,
    /// Now: nothing left to do in this phase (a drained backlog).
    Now,
}

/// Attempts that decided nothing, from a workload whose decisions can conflict (CAS).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Conflicts {
    /// Attempts whose `EXEC` aborted because a watched key changed.
    pub aborted: u64,
    /// Updates that ran out of attempts.
    pub gave_up: u64,
}

impl Conflicts {
    /// What happened since `earlier`.
    pub fn since(self, earlier: Conflicts) -> Conflicts {
        Conflicts {
            aborted: self.aborted.saturating_sub(earlier.aborted),
            gave_up: self.gave_up.saturating_sub(earlier.gave_up),
        }
    }
}

/// What a workload gets.
#[derive(Clone)]
pub struct BenchCtx {
    /// Library client (a fresh one every round).
    pub client: Client,
    /// A keyspace unique to this run and entry.
    pub keyspace: Keyspace,
    /// Concurrent tasks (per-task state is indexed by task).
    pub tasks: usize,
    /// Rate-limit entries: identities each decision draws from at random (`--identities`);
    /// `None`, one per task.
    pub identities: Option<u64>,
    /// One owner token for this run and entry, the same in every round (so a lease taken in
    /// one round is the caller's own in the next).
    pub token: OwnerToken,
}

/// One entry's decisions, every way. Task `t`'s `i`-th call (`i` counts on across rounds, per
/// path). A workload is built afresh every round (on fresh connections); what must outlive a
/// round lives in Redis, and each task ends a phase only where [`Workload::stop`] allows.
pub trait Workload: Send + Sync {
    /// Decisions in one cycle: 2 for acquire | release, 3 for enqueue | claim | ack.
    fn cycle(&self) -> u64 {
        1
    }
    /// Whether task `task` may stop before call `next`; by default between cycles.
    fn stop(&self, _task: usize, next: u64) -> Stop {
        if next % self.cycle().max(1) == 0 {
            Stop::AtDeadline
        } else {
            Stop::No
        }
    }
    /// Before each phase of `path`, unmeasured (outside its clock and its commandstats): makes
    /// about `decisions` more decisions possible (fills a backlog, takes the leases to extend).
    fn prepare(&self, _path: Path, _decisions: u64) -> Decided<'_> {
        Box::pin(async { Ok(()) })
    }
    /// One decision through the library.
    fn library(&self, task: usize, i: u64) -> Decided<'_>;
    /// The same decision as raw `EVALSHA` of the same script.
    fn raw<'a>(&'a self, conn: &'a mut Conn, task: usize, i: u64) -> Decided<'a>;
    /// The classic script this entry's third path runs, if any.
    fn reference_script(&self) -> Option<&'static Classic> {
        None
    }
    /// The same decision by [`Workload::reference_script`] (only entries that have one).
    fn reference<'a>(&'a self, _conn: &'a mut Conn, _task: usize, _i: u64) -> Decided<'a> {
        Box::pin(async { anyhow::bail!("this entry has no reference path") })
    }
    /// Commands the library path sends itself that scripts call too (so commandstats alone
    /// cannot tell them apart), lower-case: counted as client-sent on the library path.
    fn sent_directly(&self) -> &'static [&'static str] {
        &[]
    }
    /// Conflicts so far (CAS); none by default.
    fn conflicts(&self) -> Conflicts {
        Conflicts::default()
    }
    /// Creates one record as the primitive leaves it; returns its keys (for `MEMORY USAGE`).
    fn record(&self) -> Record<'_>;
}

/// Builds an entry's workload for one round.
pub type SetupFn = fn(BenchCtx) -> anyhow::Result<Box<dyn Workload>>;

/// Raw `EVALSHA` of `script`: one command, its reply decoded through the script's generated
/// type. Counts are checked by the compiler, as for [`Client::call`].
pub async fn evalsha<const K: usize, const A: usize, R: FromReply>(
    conn: &mut MultiplexedConnection,
    script: &'static Script<K, A, R>,
    keys: [&str; K],
    args: [Arg<'_>; A],
) -> anyhow::Result<R> {
    let value = send(conn, script.sha1, &keys, &args).await?;
    Ok(R::from_reply(Reply::parse(script.name, value)?)?)
}

/// [`evalsha`] of a script with a variadic key or argument list (counts checked here).
pub async fn evalsha_dyn<R: FromReply>(
    conn: &mut MultiplexedConnection,
    script: &'static DynScript<R>,
    keys: &[&str],
    args: &[Arg<'_>],
) -> anyhow::Result<R> {
    anyhow::ensure!(
        script.accepts(keys.len(), args.len()),
        "{}: {} keys and {} args do not fit its header",
        script.name,
        keys.len(),
        args.len()
    );
    let value = send(conn, script.sha1, keys, args).await?;
    Ok(R::from_reply(Reply::parse(script.name, value)?)?)
}

/// One `EVALSHA` of a loaded script, its raw reply.
pub async fn send(
    conn: &mut MultiplexedConnection,
    sha1: &str,
    keys: &[&str],
    args: &[Arg<'_>],
) -> anyhow::Result<redis::Value> {
    let mut cmd = redis::cmd("EVALSHA");
    cmd.arg(sha1).arg(keys.len()).arg(keys).arg(args);
    Ok(cmd.query_async(conn).await?)
}

/// A duration in whole milliseconds, as scripts take it.
pub fn ms(d: std::time::Duration) -> Arg<'static> {
    Arg::Int(i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// One value per task (a claim between its begin and its complete, a leased job).
pub struct PerTask<T>(Vec<Mutex<T>>);

impl<T: Default> PerTask<T> {
    /// A default value for each of `tasks` tasks.
    pub fn new(tasks: usize) -> Self {
        PerTask((0..tasks).map(|_| Mutex::new(T::default())).collect())
    }
}

impl<T> PerTask<T> {
    /// Task `task`'s value. Each task only touches its own, so this never waits; a poisoned
    /// lock (a panicked task) still yields the value.
    pub fn lock(&self, task: usize) -> MutexGuard<'_, T> {
        self.0[task].lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl<T> PerTask<Option<T>> {
    /// Stores task `task`'s value.
    pub fn put(&self, task: usize, value: T) {
        *self.lock(task) = Some(value);
    }

    /// Takes task `task`'s value, which an earlier call of its cycle stored.
    pub fn take(&self, task: usize) -> anyhow::Result<T> {
        self.lock(task)
            .take()
            .ok_or_else(|| anyhow::anyhow!("task {task}: nothing stored by the cycle's last call"))
    }
}
