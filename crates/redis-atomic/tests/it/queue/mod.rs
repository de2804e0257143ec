//! The job queue: enqueue, due order, dead letters, reaping, a job as a lease, faults and a stress
//! run.

mod basics;
mod dead;
mod faults;
mod lease;
mod stress;
