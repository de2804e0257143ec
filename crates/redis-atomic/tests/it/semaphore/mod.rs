//! Semaphores: capacity under concurrency, fenced permits, faults.

mod basics;
mod faults;
