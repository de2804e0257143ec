//! Quotas and counters.
