//! A path's failed decisions: counted, the first one described, and the run goes on. A bench
//! measures; a refusal, a timeout or a reply it cannot use is a figure of the path (its error
//! count), not the end of the run. A path whose every decision failed is reported as such.
//!
//! Both paths wait up to [`TIMEOUT`] for a reply and never resend (the library's client is
//! built with `RetryPolicy::none()`): a decision is exactly one request, so the round trips the
//! server counts stay exact, and what fails is an error of its path, never a hidden second
//! round trip.

use std::time::Duration;

/// How long a decision (or the bench's own `INFO`) waits for its reply: far beyond any delay a
/// loaded machine adds, so a slow reply is measured, not counted as an error.
pub const TIMEOUT: Duration = Duration::from_secs(10);

/// A pause after a failed decision, so a path that fails at once does not spin.
pub const PAUSE: Duration = Duration::from_millis(1);

/// Failed decisions of one path (or phase).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Errors {
    /// How many.
    pub count: u64,
    /// The first, on one line.
    pub first: Option<String>,
}

impl Errors {
    /// Counts one failed decision.
    pub fn record(&mut self, error: &anyhow::Error) {
        self.count += 1;
        if self.first.is_none() {
            self.first = Some(crate::output::one_line(error));
        }
    }

    /// These and `other`'s (the first stays the earliest seen).
    pub fn merge(&mut self, other: &Errors) {
        self.count += other.count;
        if self.first.is_none() {
            self.first.clone_from(&other.first);
        }
    }
}
