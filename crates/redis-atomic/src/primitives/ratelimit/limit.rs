//! Validated limits: a [`Limit`] that exists is one the scripts accept and compute exactly.
//!
//! Like governor's `Quota`, invalid values cannot be represented: zero limits, zero or sub-ms
//! periods, bursts on algorithms without one, and sizes whose integer µs arithmetic would leave
//! the 53 bits a Lua number holds exactly are refused at construction with
//! [`Error::BadArgument`]. The scripts check the same bounds again for callers that bypass these
//! types.

use crate::Error;
use std::fmt;
use std::time::Duration;

/// Largest `limit` (and `burst`) accepted.
pub const MAX_LIMIT: u64 = 1_000_000_000;
/// Largest `limit` of a sliding log: it keeps one sorted-set member per admitted unit, so memory
/// and the worst-case trim grow with it. Use the sliding window counter above this.
pub const MAX_LOG_LIMIT: u64 = 10_000;
/// Shortest period: 1 ms.
pub const MIN_PERIOD: Duration = Duration::from_millis(1);
/// Longest period: 366 days.
pub const MAX_PERIOD: Duration = Duration::from_secs(366 * 24 * 3600);
/// Most limits in one [`Policy`].
pub const MAX_LIMITS: usize = 8;
/// Longest limit name, in bytes.
pub const MAX_NAME_LEN: usize = 64;
/// Products the scripts compute (limit × period, burst × interval) stay at or below 2^52 µs.
pub const EXACT: u64 = 1 << 52;

/// A rate-limiting algorithm. All run on the server's clock with integer µs arithmetic.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Algorithm {
    /// At most `limit` units per window of `period` aligned to the epoch. Cheapest; allows up to
    /// 2 × limit across a window boundary.
    FixedWindow,
    /// At most `limit` units per window of `period` (rounded up to whole ms) that opens at an
    /// identity's first request after its last window closed: a plain counter whose key expiry
    /// closes the window. The cheapest on the server (no clock read, no parsing; about the
    /// classic `INCR` + `EXPIRE`), with the fixed window's 2 × limit across a boundary; windows
    /// are not aligned, and no test clock can drive it (docs/ratelimit.md "Anchored window").
    AnchoredWindow,
    /// At most `limit` units within any `period` (one sorted-set member per unit). Exact; memory
    /// grows with the limit.
    SlidingLog,
    /// Sliding window counter: the previous window's count weighted by how much of it still
    /// overlaps the sliding window, plus the current window's. Constant memory, approximate.
    SlidingWindow,
    /// A bucket of `burst` tokens refilled by one token every `period / limit` (rounded up).
    TokenBucket,
    /// Generic cell rate algorithm: `burst` at once, then one per `period / limit` (rounded up).
    Gcra,
}

impl Algorithm {
    /// Every algorithm.
    pub const ALL: [Algorithm; 6] = [
        Algorithm::FixedWindow,
        Algorithm::AnchoredWindow,
        Algorithm::SlidingLog,
        Algorithm::SlidingWindow,
        Algorithm::TokenBucket,
        Algorithm::Gcra,
    ];

    /// The code the scripts and key names use (`fw`, `aw`, `sl`, `sw`, `tb`, `gcra`).
    pub fn code(self) -> &'static str {
        match self {
            Algorithm::FixedWindow => "fw",
            Algorithm::AnchoredWindow => "aw",
            Algorithm::SlidingLog => "sl",
            Algorithm::SlidingWindow => "sw",
            Algorithm::TokenBucket => "tb",
            Algorithm::Gcra => "gcra",
        }
    }

    /// The CLI name (`fixed-window`, `anchored-window`, `sliding-log`, `sliding-window`,
    /// `token-bucket`, `gcra`).
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::FixedWindow => "fixed-window",
            Algorithm::AnchoredWindow => "anchored-window",
            Algorithm::SlidingLog => "sliding-log",
            Algorithm::SlidingWindow => "sliding-window",
            Algorithm::TokenBucket => "token-bucket",
            Algorithm::Gcra => "gcra",
        }
    }

    /// Whether the algorithm has a burst distinct from its limit.
    pub fn has_burst(self) -> bool {
        matches!(self, Algorithm::TokenBucket | Algorithm::Gcra)
    }

    /// Whether a test clock (`consume_at`, feature `test-clock`) can drive it: every algorithm
    /// but the anchored window, whose clock is its key's expiry on the server.
    pub fn takes_test_clock(self) -> bool {
        self != Algorithm::AnchoredWindow
    }
}

impl fmt::Display for Algorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Algorithm {
    type Err = Error;
    /// Every documented spelling: the kebab-case [`Algorithm::name`] and its snake_case twin
    /// (`sliding_log`, the Python spelling), so each face accepts what its guide lists.
    ///
    /// ```
    /// use redis_atomic::ratelimit::Algorithm;
    /// assert_eq!("gcra".parse::<Algorithm>().unwrap(), Algorithm::Gcra);
    /// assert_eq!("sliding_log".parse::<Algorithm>().unwrap(), Algorithm::SlidingLog);
    /// assert!("leaky".parse::<Algorithm>().is_err());
    /// ```
    fn from_str(s: &str) -> Result<Self, Error> {
        let kebab = s.replace('_', "-");
        Algorithm::ALL
            .into_iter()
            .find(|a| a.name() == kebab)
            .ok_or_else(|| {
                Error::BadArgument(format!(
                    "unknown algorithm `{s}` (fixed-window, anchored-window, sliding-log, \
                     sliding-window, token-bucket, gcra)"
                ))
            })
    }
}

/// One limit: `limit` units per `period` under an [`Algorithm`], with a `burst` for the bucket
/// algorithms (by default equal to `limit`) and a name (its key part and header policy name).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Limit {
    name: String,
    algorithm: Algorithm,
    limit: u64,
    period_us: u64,
    burst: u64,
}

fn bad(msg: String) -> Error {
    Error::BadArgument(msg)
}

impl Limit {
    /// `limit` units per `period` (whole µs; 1 ms to 366 days). Named after the algorithm.
    ///
    /// ```
    /// use redis_atomic::ratelimit::{Algorithm, Limit};
    /// use std::time::Duration;
    /// let l = Limit::new(Algorithm::Gcra, 10, Duration::from_secs(1)).unwrap();
    /// assert_eq!((l.burst(), l.interval()), (10, Duration::from_millis(100)));
    /// assert!(Limit::new(Algorithm::Gcra, 0, Duration::from_secs(1)).is_err());
    /// assert!(Limit::new(Algorithm::FixedWindow, 5, Duration::ZERO).is_err());
    /// ```
    pub fn new(algorithm: Algorithm, limit: u64, period: Duration) -> Result<Limit, Error> {
        let max = match algorithm {
            Algorithm::SlidingLog => MAX_LOG_LIMIT,
            _ => MAX_LIMIT,
        };
        if limit == 0 || limit > max {
            return Err(bad(format!(
                "{algorithm} limit must be in 1..={max}, got {limit}"
            )));
        }
        if period < MIN_PERIOD || period > MAX_PERIOD {
            return Err(bad(format!(
                "period must be between 1 ms and 366 days, got {period:?}"
            )));
        }
        let period_us = u64::try_from(period.as_micros())
            .map_err(|_| bad(format!("period {period:?} too long")))?;
        let l = Limit {
            name: algorithm.name().to_string(),
            algorithm,
            limit,
            period_us,
            burst: limit,
        };
        l.check_exact()?;
        Ok(l)
    }

    /// [`Algorithm::FixedWindow`].
    pub fn fixed_window(limit: u64, period: Duration) -> Result<Limit, Error> {
        Limit::new(Algorithm::FixedWindow, limit, period)
    }

    /// [`Algorithm::AnchoredWindow`].
    pub fn anchored_window(limit: u64, period: Duration) -> Result<Limit, Error> {
        Limit::new(Algorithm::AnchoredWindow, limit, period)
    }

    /// [`Algorithm::SlidingLog`].
    pub fn sliding_log(limit: u64, period: Duration) -> Result<Limit, Error> {
        Limit::new(Algorithm::SlidingLog, limit, period)
    }

    /// [`Algorithm::SlidingWindow`].
    pub fn sliding_window(limit: u64, period: Duration) -> Result<Limit, Error> {
        Limit::new(Algorithm::SlidingWindow, limit, period)
    }

    /// [`Algorithm::TokenBucket`].
    pub fn token_bucket(limit: u64, period: Duration) -> Result<Limit, Error> {
        Limit::new(Algorithm::TokenBucket, limit, period)
    }

    /// [`Algorithm::Gcra`].
    pub fn gcra(limit: u64, period: Duration) -> Result<Limit, Error> {
        Limit::new(Algorithm::Gcra, limit, period)
    }

    /// With this burst (token bucket and GCRA only): the units admitted at once from idle, and
    /// the largest cost a request may have.
    pub fn with_burst(mut self, burst: u64) -> Result<Limit, Error> {
        if !self.algorithm.has_burst() {
            return Err(bad(format!(
                "{} has no burst: its capacity is its limit",
                self.algorithm
            )));
        }
        if burst == 0 || burst > MAX_LIMIT {
            return Err(bad(format!(
                "burst must be in 1..={MAX_LIMIT}, got {burst}"
            )));
        }
        self.burst = burst;
        self.check_exact()?;
        Ok(self)
    }

    /// With this name: 1..=64 bytes of `[A-Za-z0-9_.-]`. It names the limit's key and its entry in
    /// the `RateLimit-Policy` header; limits of one [`Policy`] need distinct names.
    pub fn named(mut self, name: &str) -> Result<Limit, Error> {
        let ok = !name.is_empty()
            && name.len() <= MAX_NAME_LEN
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'));
        if !ok {
            return Err(bad(format!(
                "limit name must be 1..={MAX_NAME_LEN} bytes of [A-Za-z0-9_.-], got {name:?}"
            )));
        }
        self.name = name.to_string();
        Ok(self)
    }

    fn check_exact(&self) -> Result<(), Error> {
        let product = match self.algorithm {
            Algorithm::SlidingWindow => u128::from(self.limit) * u128::from(self.period_us),
            Algorithm::TokenBucket | Algorithm::Gcra => {
                u128::from(self.burst) * u128::from(self.interval_us())
            }
            _ => 0,
        };
        if product > u128::from(EXACT) {
            return Err(bad(format!(
                "{} {}/{:?} (burst {}) needs more than 52 bits of µs arithmetic; use a shorter \
                 period or a smaller limit",
                self.algorithm,
                self.limit,
                self.period(),
                self.burst
            )));
        }
        Ok(())
    }

    /// The name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The algorithm.
    pub fn algorithm(&self) -> Algorithm {
        self.algorithm
    }

    /// Units per period.
    pub fn limit(&self) -> u64 {
        self.limit
    }

    /// The period.
    pub fn period(&self) -> Duration {
        Duration::from_micros(self.period_us)
    }

    /// The period in µs.
    pub fn period_us(&self) -> u64 {
        self.period_us
    }

    /// The period rounded up to whole ms: the anchored window's key expiry (`PEXPIRE` takes ms).
    pub fn period_ms(&self) -> u64 {
        self.period_us.div_ceil(1000)
    }

    /// The largest cost one request may have: the burst for the bucket algorithms, else the
    /// limit.
    pub fn burst(&self) -> u64 {
        self.burst
    }

    /// Time per unit for the bucket algorithms: `ceil(period / limit)`, so the rate is never
    /// above `limit / period`.
    pub fn interval(&self) -> Duration {
        Duration::from_micros(self.interval_us())
    }

    /// [`Limit::interval`] in µs.
    pub fn interval_us(&self) -> u64 {
        self.period_us.div_ceil(self.limit)
    }
}

/// Several limits decided together, all or nothing: a request is charged to every limit or to
/// none (e.g. 10/s GCRA and 10 000/day fixed window).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Policy {
    limits: Vec<Limit>,
}

impl Policy {
    /// 1..=[`MAX_LIMITS`] limits with distinct names.
    pub fn new(limits: Vec<Limit>) -> Result<Policy, Error> {
        if limits.is_empty() || limits.len() > MAX_LIMITS {
            return Err(bad(format!(
                "a policy has 1..={MAX_LIMITS} limits, got {}",
                limits.len()
            )));
        }
        for (i, l) in limits.iter().enumerate() {
            if limits[..i].iter().any(|o| o.name == l.name) {
                return Err(bad(format!("two limits are named {:?}", l.name)));
            }
        }
        Ok(Policy { limits })
    }

    /// The limits, in decision order.
    pub fn limits(&self) -> &[Limit] {
        &self.limits
    }

    /// The largest cost any request may have: the smallest burst.
    pub fn max_cost(&self) -> u64 {
        self.limits.iter().map(Limit::burst).min().unwrap_or(0)
    }

    /// The longest period.
    pub fn longest_period(&self) -> Duration {
        self.limits
            .iter()
            .map(Limit::period)
            .max()
            .unwrap_or_default()
    }

    /// `Ok` when `cost` fits every limit; [`Error::CostExceedsBurst`] or, for 0,
    /// [`Error::BadArgument`].
    pub fn check_cost(&self, cost: u64) -> Result<(), Error> {
        if cost == 0 {
            return Err(bad("cost must be at least 1".into()));
        }
        let burst = self.max_cost();
        if cost > burst {
            return Err(Error::CostExceedsBurst { cost, burst });
        }
        Ok(())
    }
}

impl From<Limit> for Policy {
    fn from(limit: Limit) -> Policy {
        Policy {
            limits: vec![limit],
        }
    }
}
