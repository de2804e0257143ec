//! Locks: the invariant under concurrency and bad input, faults, the native rung, and the
//! watchdog (the generic [`redis_atomic::lease::Watched`] over a lock, and over every other
//! lease kind).

mod basics;
mod faults;
mod native;
mod watchdog;
