//! Primitives built on plain commands rather than scripts — optimistic CAS, MULTI/EXEC batches,
//! event dedup — in one test binary, so the shared cluster starts once for all three.
#![allow(clippy::unwrap_used)]

#[path = "../common/mod.rs"]
mod common;

mod cas;
mod cas_retry;
mod dedup;
mod multi;

use metrics_util::debugging::{DebugValue, DebuggingRecorder, Snapshotter};
use std::sync::OnceLock;

/// The metrics recorder of this binary, installed on first use (so tests assert differences:
/// the tests of one binary run concurrently and share it).
fn snapshotter() -> &'static Snapshotter {
    static S: OnceLock<Snapshotter> = OnceLock::new();
    S.get_or_init(|| {
        let recorder = DebuggingRecorder::new();
        let snapshotter = recorder.snapshotter();
        recorder.install().unwrap();
        snapshotter
    })
}

/// The sum of counter `name` over all its series.
fn counter(name: &str) -> u64 {
    counter_with(name, &[])
}

/// The sum of counter `name` over the series carrying every label of `with`.
fn counter_with(name: &str, with: &[(&str, &str)]) -> u64 {
    snapshotter()
        .snapshot()
        .into_vec()
        .into_iter()
        .filter(|(key, ..)| key.key().name() == name)
        .filter(|(key, ..)| {
            with.iter()
                .all(|(k, v)| key.key().labels().any(|l| l.key() == *k && l.value() == *v))
        })
        .map(|(.., value)| match value {
            DebugValue::Counter(n) => n,
            _ => 0,
        })
        .sum()
}
