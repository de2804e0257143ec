//! Shared by the module's suites: the built `.so`, servers with and without it, and replies
//! normalised for comparison with a script's.

#![allow(dead_code)] // each suite uses its part

use redis::Value;
use redis_atomic_testkit::{RedisServer, ServerOptions};
use std::path::PathBuf;

/// The module this test binary was built with: `target/<profile>/deps/libredis_atomic_module.so`,
/// beside the test binary (cargo copies it up to `target/<profile>` only when it builds the
/// library on its own, so that copy may be older than this test).
pub fn module_path() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    let so = exe
        .parent()
        .expect("target/<profile>/deps")
        .join("libredis_atomic_module.so");
    assert!(so.exists(), "{} not built", so.display());
    so
}

/// A server (under the clock shim when `clock`), with the module loaded when `module`.
pub fn server(module: bool, clock: bool) -> RedisServer {
    let mut extra_config = Vec::new();
    if module {
        extra_config.push(format!("loadmodule {}", module_path().display()));
    }
    RedisServer::start(ServerOptions {
        clock,
        extra_config,
        ..Default::default()
    })
    .expect("start a server")
}

/// Whether the server's clock can be frozen to the microsecond (Redis; Valkey derives its time
/// from the CPU's counter between readings, so there the rate limits get a test clock).
pub fn freezable(server: &RedisServer) -> bool {
    let mut conn = server.client().get_connection().expect("connect");
    let info: String = redis::cmd("INFO")
        .arg("server")
        .query(&mut conn)
        .expect("INFO");
    !info.contains("valkey_version")
}

/// A reply as compared: a value as it is, an error by its code and message up to the suffix a
/// script's raised error carries (" script: <sha>, on @user_script:N.").
pub fn outcome(r: redis::RedisResult<Value>) -> String {
    match r {
        Ok(v) => format!("{v:?}"),
        Err(e) => {
            let text = format!("{} {}", e.code().unwrap_or("?"), e.detail().unwrap_or(""));
            text.split(" script: ")
                .next()
                .unwrap_or_default()
                .to_string()
        }
    }
}
