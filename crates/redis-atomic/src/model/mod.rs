//! Pure Rust reference models of the scripts' algorithms, with an injectable clock.
//!
//! A model decides exactly what its script decides, from the same inputs, with no Redis: the
//! proptests drive random sequences of (time step, cost, request id) through both and require
//! identical verdicts. Time is a parameter (µs since the epoch), never read from a global clock,
//! so every model run is deterministic; [`Clock`] lets code choose between [`SystemClock`] and a
//! [`ManualClock`] it advances itself (as governor does).

pub mod ratelimit;

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// A source of "now" in µs since the Unix epoch.
pub trait Clock: Send + Sync + std::fmt::Debug {
    /// Now, in µs since the epoch.
    fn now_us(&self) -> u64;
}

/// The machine's wall clock.
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_us(&self) -> u64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_micros()).unwrap_or(u64::MAX))
    }
}

/// A clock that moves only when told to.
///
/// ```
/// use redis_atomic::model::{Clock, ManualClock};
/// let clock = ManualClock::new(1_000);
/// clock.advance(500);
/// assert_eq!(clock.now_us(), 1_500);
/// ```
#[derive(Debug, Default)]
pub struct ManualClock(AtomicU64);

impl ManualClock {
    /// Starting at `now_us`.
    pub fn new(now_us: u64) -> Self {
        ManualClock(AtomicU64::new(now_us))
    }

    /// Moves forward by `us`.
    pub fn advance(&self, us: u64) {
        self.0.fetch_add(us, Ordering::SeqCst);
    }

    /// Sets the time.
    pub fn set(&self, now_us: u64) {
        self.0.store(now_us, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now_us(&self) -> u64 {
        self.0.load(Ordering::SeqCst)
    }
}
