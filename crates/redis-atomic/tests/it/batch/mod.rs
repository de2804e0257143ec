//! Natural batching ([`redis_atomic::Batching`]): decisions that queue up for the same node leave
//! together as one call of a generated batch entry point. What must hold:
//!
//! * exactness ([`exact`]): random sequences of decisions of every batchable script, good and bad
//!   inputs, sharing keys (so some meet another script's type), give the same replies and the
//!   same final state batched as one by one, on two servers whose clocks are frozen at the same
//!   instants;
//! * lost replies ([`faults`]): a batch whose reply is lost makes each of its decisions
//!   `OutcomeUnknown`; retry-safe ones (request ids) are resent, others are not, and the server
//!   shows every decision ran exactly once — on a standalone server and on a 3+3 cluster
//!   ([`cluster`]);
//! * one slot per batch ([`cluster`]): on a cluster, decisions of different slots never share a
//!   batch, even on one node.
//!
//! Run on Valkey too by the server matrix (`REDIS_ATOMIC_SERVER_BIN`).

mod cluster;
mod exact;
mod faults;
