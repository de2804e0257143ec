//! The observability contract (docs/operations.md "Observability"): every operation is counted
//! with its script's name and version, failures by kind, and nothing — spans, events, error
//! messages — ever shows a raw key or token. Counters come from a recorder of each test's own;
//! events from a global `tracing` subscriber that formats only what these tests' threads emit.

use crate::common::metrics::Recorded;
use crate::common::{standalone, Env};
use redis_atomic::lease::OwnerToken;
use redis_atomic::lock::{Acquire, Locks};
use redis_atomic::script::registry::LOCK_ACQUIRE;
use redis_atomic::{Arg, ClientConfig, Error};
use redis_atomic_testkit::ServerOptions;
use std::cell::Cell;
use std::io::Write;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;
use tracing_subscriber::filter::{filter_fn, FilterExt as _, LevelFilter};
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::Layer as _;

thread_local! {
    /// Whether this thread's events are captured (the observe tests' own threads).
    static CAPTURING: Cell<bool> = const { Cell::new(false) };
}

/// Everything the global `tracing` subscriber writes. Global, not thread-local: a thread-local
/// subscriber (`set_default`) raced other threads on tracing's per-callsite interest cache and,
/// under load, missed the event. Its filter is decided per event, on the emitting thread: only
/// threads that called [`captured`] are formatted, so the binary's other tests pay one
/// thread-local read per debug event. The other tests of this binary hit the library's callsites
/// before it is installed, and a callsite registering while it was installed may keep the old
/// (never) interest: [`captured`] rebuilds the interest cache after installing, so the callsites
/// these tests observe, long registered by then, are asked again.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

/// The captured output, installing the global subscriber on first use, and capturing this
/// thread's events from now on (the tests run on a current-thread runtime: every task of theirs
/// runs here).
fn captured() -> Captured {
    static CAPTURED: OnceLock<Captured> = OnceLock::new();
    CAPTURING.with(|c| c.set(true));
    let captured = CAPTURED
        .get_or_init(|| {
            let captured = Captured::default();
            let writer = captured.clone();
            let ours = filter_fn(|_| CAPTURING.with(Cell::get));
            let layer = tracing_subscriber::fmt::layer()
                .with_ansi(false)
                .with_writer(move || writer.clone())
                .with_filter(ours.and(LevelFilter::DEBUG));
            let subscriber = tracing_subscriber::registry().with(layer);
            tracing::subscriber::set_global_default(subscriber).unwrap();
            captured
        })
        .clone();
    tracing::callsite::rebuild_interest_cache();
    captured
}

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Captured {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}

async fn env(test: &str) -> Env {
    captured();
    standalone(test, ServerOptions::default(), ClientConfig::default()).await
}

const SECRET_TAG: &str = "customer-4242-secret";

/// Operations are counted with primitive, op, script and version, and end in one debug event per
/// operation with outcome, latency and attempts, inside a span with the hashed tag — and neither
/// spans nor events carry the key or the owner token.
#[tokio::test]
async fn ops_are_labelled_and_logs_redact_keys_and_tokens() {
    let m = Recorded::new();
    let _recording = m.on_this_thread();
    let env = env("observe-labels").await;
    let locks = Locks::new(env.client.clone(), env.keyspace.clone());
    let version = LOCK_ACQUIRE.version.to_string();
    let labels = [
        ("primitive", "lock"),
        ("op", "acquire"),
        ("script", "lock_acquire"),
        ("version", version.as_str()),
        ("outcome", "acquired"),
    ];
    let before = m.counter("redis_atomic_ops_total", &labels);
    let token = OwnerToken::new("tok-TOPSECRET-0001").unwrap();
    let out = locks
        .acquire_with_token(SECRET_TAG, &token, Duration::from_secs(5))
        .await
        .unwrap();
    assert!(matches!(out, Acquire::Acquired(_)));
    assert_eq!(m.counter("redis_atomic_ops_total", &labels), before + 1);

    let text = captured().text();
    // The documented tag: SHA1 of the key's hash tag, 8 hex digits.
    let tag = sha1_smol::Sha1::from(SECRET_TAG).digest().to_string()[..8].to_string();
    // Other tests' events share the global output: this operation's line has its script and tag.
    let line = text
        .lines()
        .find(|l| l.contains("operation") && l.contains(&tag) && l.contains("lock_acquire"))
        .unwrap_or_else(|| {
            panic!("no lock_acquire operation event with the hashed tag {tag}: {text}")
        });
    assert!(line.contains("attempts=1"), "{line}");
    assert!(!text.contains(SECRET_TAG), "a key leaked: {text}");
    assert!(!text.contains("TOPSECRET"), "a token leaked: {text}");
}

/// A cross-slot call and a wrong-type key are typed errors whose messages (Display and Debug)
/// name slots and codes, never the keys; the failure is counted by kind.
#[tokio::test]
async fn errors_redact_keys_and_are_counted_by_kind() {
    let m = Recorded::new();
    let _recording = m.on_this_thread();
    let env = env("observe-errors").await;
    let a = format!("{}:x:{{{SECRET_TAG}}}", env.keyspace.namespace());
    let b = format!("{}:x:{{other-secret-tag}}", env.keyspace.namespace());
    let err = env
        .client
        .call(&LOCK_ACQUIRE, [&a, &b], ["tok".into(), Arg::Int(1000)])
        .await
        .unwrap_err();
    assert!(
        matches!(err, Error::CrossSlot { ref slots } if slots.len() == 2),
        "{err:?}"
    );
    for shown in [err.to_string(), format!("{err:?}")] {
        assert!(
            !shown.contains(SECRET_TAG) && !shown.contains("other-secret-tag"),
            "{shown}"
        );
    }

    let locks = Locks::new(env.client.clone(), env.keyspace.clone());
    let keys = locks.keys(SECRET_TAG).unwrap();
    env.raw(redis::cmd("HSET").arg(&keys.fence).arg("f").arg("v"))
        .await;
    let kind = [
        ("primitive", "lock"),
        ("op", "acquire"),
        ("kind", "wrong_type"),
    ];
    let before = m.counter("redis_atomic_errors_total", &kind);
    let err = locks
        .acquire(SECRET_TAG, Duration::from_secs(5))
        .await
        .unwrap_err();
    assert!(matches!(err, Error::WrongType(_)), "{err:?}");
    for shown in [err.to_string(), format!("{err:?}")] {
        assert!(!shown.contains(SECRET_TAG), "{shown}");
    }
    assert_eq!(m.counter("redis_atomic_errors_total", &kind), before + 1);
}
