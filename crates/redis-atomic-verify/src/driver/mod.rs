//! Drivers: the rows run through another program — a face of ours in another language, or a
//! library people use instead — that speaks the driver protocol (JSON lines on its stdin and
//! stdout; docs/verify.md, "Drivers"). The harness starts the program once per worker for each
//! row, tells it where the server is (through the same fault proxies as the in-process rows, so
//! every fault applies to any language) and asks it to run one operation of the vocabulary table
//! at a time; it records what each call was told and judges the histories with the same testkit
//! checkers as the in-process rows.
//!
//! A driver declares the rows it supports in its hello answer; any other row is reported
//! `unsupported`, never passed. A driver that cannot be started, exits, hangs or answers garbage
//! makes its row an `error` row saying so, and the run goes on.

mod lock;
mod proc;
mod queue;
mod quota;
mod rate;
mod semaphore;
mod session;
mod wire;

use crate::check::{Check, CheckResult};
use crate::ctx::CheckCtx;
use crate::report::Findings;
use futures::future::BoxFuture;
use proc::Proc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A driver program: its command line (run with `sh -c`) and how long it may take per call.
#[derive(Clone)]
pub struct Driver {
    command: String,
    timeout: Duration,
    /// Processes between rows: started once, greeted again by each row (an interpreter's
    /// start-up is paid once, not by every row's clock).
    idle: Arc<Mutex<Vec<Proc>>>,
}

impl std::fmt::Debug for Driver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Driver")
            .field("command", &self.command)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl Driver {
    /// `command`, a shell command line, started once per worker (and again after it failed a
    /// row); 10 s per call.
    pub fn new(command: impl Into<String>) -> Driver {
        Driver {
            command: command.into(),
            timeout: Duration::from_secs(10),
            idle: Arc::default(),
        }
    }

    /// How long one call may take before the driver counts as hung (killed; its row an error).
    pub fn timeout(mut self, timeout: Duration) -> Driver {
        self.timeout = timeout;
        self
    }

    /// The driver's rows, every one the protocol defines, in report order
    /// ([`crate::Verify::checks`] takes them): `lock`, `mutex`, `quota`, `queue`, `queue-alo`,
    /// `ratelimit-sl`, `ratelimit-win`, `semaphore`.
    pub fn checks(&self) -> Vec<Arc<dyn Check>> {
        ROWS.iter()
            .map(|&row| {
                Arc::new(DriverCheck {
                    driver: self.clone(),
                    row,
                }) as Arc<dyn Check>
            })
            .collect()
    }
}

type RunFn = fn(Driver, CheckCtx, &'static str) -> BoxFuture<'static, CheckResult<Findings>>;

/// A row of the protocol: its name, its invariant, how.
#[derive(Clone, Copy)]
struct Row {
    name: &'static str,
    invariant: &'static str,
    run: RunFn,
}

const ROWS: &[Row] = &[
    Row {
        name: "lock",
        invariant: lock::INVARIANT,
        run: |d, c, n| Box::pin(lock::run(d, c, n, lock::Race::Lock { fences: true })),
    },
    Row {
        name: "mutex",
        invariant: lock::EXCLUSION,
        run: |d, c, n| Box::pin(lock::run(d, c, n, lock::Race::Lock { fences: false })),
    },
    Row {
        name: "quota",
        invariant: quota::INVARIANT,
        run: |d, c, n| Box::pin(quota::run(d, c, n)),
    },
    Row {
        name: "queue",
        invariant: queue::INVARIANT,
        run: |d, c, n| Box::pin(queue::run(d, c, n, queue::Judge::Leases)),
    },
    Row {
        name: "queue-alo",
        invariant: queue::AT_LEAST_ONCE,
        run: |d, c, n| Box::pin(queue::run(d, c, n, queue::Judge::AtLeastOnce)),
    },
    Row {
        name: "ratelimit-sl",
        invariant: rate::ANY_PERIOD,
        run: |d, c, n| Box::pin(rate::run(d, c, n, rate::Judge::AnyPeriod)),
    },
    Row {
        name: "ratelimit-win",
        invariant: rate::WINDOWS,
        run: |d, c, n| Box::pin(rate::run(d, c, n, rate::Judge::Windows)),
    },
    Row {
        name: "semaphore",
        invariant: semaphore::INVARIANT,
        run: |d, c, n| Box::pin(semaphore::run(d, c, n)),
    },
];

struct DriverCheck {
    driver: Driver,
    row: Row,
}

impl Check for DriverCheck {
    fn name(&self) -> &str {
        self.row.name
    }

    fn invariant(&self) -> &str {
        self.row.invariant
    }

    fn run(&self, ctx: CheckCtx) -> BoxFuture<'static, CheckResult<Findings>> {
        (self.row.run)(self.driver.clone(), ctx, self.row.name)
    }

    /// The processes start and are greeted before the row's clock (and its faults) start.
    fn starts_late(&self) -> bool {
        true
    }
}
