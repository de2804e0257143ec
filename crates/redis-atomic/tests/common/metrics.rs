//! A global metrics recorder for one test binary, and counter sums by label. Test binaries that
//! assert metrics include this file (`#[path = "common/metrics.rs"] mod metrics;`), so the
//! recorder and the label matching are written once.
#![allow(dead_code, clippy::unwrap_used)]

use metrics_util::debugging::{DebugValue, DebuggingRecorder, Snapshotter};
use std::sync::OnceLock;

/// The binary's recorder, installed on first use: call it before the first operation to count.
pub fn snapshotter() -> &'static Snapshotter {
    static S: OnceLock<Snapshotter> = OnceLock::new();
    S.get_or_init(|| {
        let recorder = DebuggingRecorder::new();
        let snapshotter = recorder.snapshotter();
        recorder.install().unwrap();
        snapshotter
    })
}

/// Sum of counter `name` over all label sets whose labels include `with`.
pub fn counter(name: &str, with: &[(&str, &str)]) -> u64 {
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
