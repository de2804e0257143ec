//! `verify --driver CMD`: the rows run through a program that speaks the driver protocol
//! (docs/verify.md, "Drivers") instead of the library in-process, and `--fault`, which narrows
//! the faults to the named kinds (a short matrix for a slow client).

use redis_atomic_verify::{Driver, FaultKind};
use std::time::Duration;

/// The driver's flags.
#[derive(Debug, clap::Args)]
pub struct DriverArgs {
    /// Run the driver protocol's rows (lock, mutex, quota, queue, queue-alo, ratelimit-sl,
    /// ratelimit-win, semaphore) through this command (a shell command line), started once per
    /// --concurrency: a client in any language, judged like the library. Rows it does not
    /// declare are `unsupported`.
    #[arg(long, value_name = "CMD")]
    pub driver: Option<String>,
    /// Seconds a driver may take to answer one call before it counts as hung.
    #[arg(long, default_value_t = 10.0, value_name = "SECONDS")]
    pub driver_timeout: f64,
    /// Only this fault (repeatable; implies --faults): conn-kill, lost-reply, corrupt-reply,
    /// stall, script-flush, crash, oom; with --cluster slot-migrate, failover, primary-kill.
    #[arg(long, value_name = "NAME")]
    pub fault: Vec<String>,
}

impl DriverArgs {
    /// The flags checked before anything starts.
    pub fn check(&self) -> anyhow::Result<()> {
        if !(self.driver_timeout > 0.0 && self.driver_timeout <= 3600.0) {
            anyhow::bail!(
                "--driver-timeout must be in (0, 3600], got {}",
                self.driver_timeout
            );
        }
        self.kinds().map(drop)
    }

    /// The driver, if one was given.
    pub fn driver(&self) -> Option<Driver> {
        let timeout = Duration::from_secs_f64(self.driver_timeout);
        self.driver
            .as_ref()
            .map(|cmd| Driver::new(cmd.clone()).timeout(timeout))
    }

    /// The kinds `--fault` names.
    pub fn kinds(&self) -> anyhow::Result<Vec<FaultKind>> {
        self.fault
            .iter()
            .map(|name| {
                FaultKind::from_name(name)
                    .ok_or_else(|| anyhow::anyhow!("--fault: no fault `{name}`"))
            })
            .collect()
    }
}
