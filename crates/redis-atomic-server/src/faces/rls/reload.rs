//! Reloading the rules: on SIGHUP, and when a config file changes (its size or modification time,
//! checked every `poll`). A new config is parsed whole before it replaces the old one; one that
//! is refused leaves the old rules serving and logs why, one line naming file, line and field.
//! Requests in flight finish under the rules they started with (they hold their snapshot).
//! `redis_atomic_rls_config_reloads_total{result="ok"|"refused"}` counts both.

use super::config::{stamp, Rules};
use super::service::SharedRules;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// Watches `path` until the runtime stops.
pub fn spawn(path: PathBuf, rules: SharedRules, poll: Duration) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut last = stamp(&path);
        #[cfg(unix)]
        let mut hup = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup()).ok();
        loop {
            #[cfg(unix)]
            let signal = async {
                match hup.as_mut() {
                    Some(s) => {
                        s.recv().await;
                    }
                    None => std::future::pending::<()>().await,
                }
            };
            #[cfg(not(unix))]
            let signal = std::future::pending::<()>();
            let forced = tokio::select! {
                () = signal => true,
                () = tokio::time::sleep(poll) => false,
            };
            let now = stamp(&path);
            if forced || now != last {
                last = now;
                reload(&path, &rules);
            }
        }
    })
}

/// Loads `path` and, if it is valid, puts it in force; returns whether it did.
pub fn reload(path: &std::path::Path, rules: &SharedRules) -> bool {
    match Rules::load(path) {
        Ok(new) => {
            let domains = new.len();
            match rules.write() {
                Ok(mut r) => *r = Arc::new(new),
                Err(p) => *p.into_inner() = Arc::new(new),
            }
            metrics::counter!("redis_atomic_rls_config_reloads_total", "result" => "ok")
                .increment(1);
            tracing::info!(domains, "rate-limit config reloaded");
            true
        }
        Err(e) => {
            metrics::counter!("redis_atomic_rls_config_reloads_total", "result" => "refused")
                .increment(1);
            tracing::warn!(error = %e, "rate-limit config refused: the previous rules stay in force");
            false
        }
    }
}
