//! Verify as a user's test calls it, one test binary: the builder and a check of one's own
//! ([`api`]), rows on a client that batches ([`batched`]), what a run leaves on the server
//! ([`cleanup`]), the report's bytes ([`report`]), and the embedded-server bootstrap
//! ([`bootstrap`]). Runs share this binary's server, each
//! under a namespace of its own. (The CLI's tests run the whole matrix through the binary:
//! every check, faults, a cluster, an ACL user.)
#![allow(clippy::unwrap_used, missing_docs)]

mod api;
mod batched;
mod bootstrap;
mod cleanup;
mod driver;
mod report;

use redis_atomic::{Client, ClientConfig};
use redis_atomic_testkit::{unique_prefix, RedisServer};
use redis_atomic_verify::CLEAN_TIMEOUT;

/// A client on the shared server, with the timeout a clean run wants.
pub async fn client() -> Client {
    let config = ClientConfig::default().timeout(CLEAN_TIMEOUT);
    Client::connect(&RedisServer::shared().url(), config)
        .await
        .unwrap()
}

/// A namespace of the test's own (`Verify::namespace` allows no `:` or braces).
pub fn namespace(test: &str) -> String {
    unique_prefix(test)
}
