//! The job queue: leases, acks, nacks, the retry-safe claim, dead letters, faults and a stress
//! run.

mod basics;
mod dead;
mod faults;
mod stress;
