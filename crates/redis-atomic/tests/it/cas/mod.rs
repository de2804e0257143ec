//! Optimistic CAS: no lost update under contention, watches that catch every change, bounded
//! retries.

mod basics;
mod retry;
