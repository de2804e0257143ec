//! Metrics a test can count exactly. The tests of this binary run side by side in one process,
//! so a test that asserts counters records into a recorder of its own, installed on every thread
//! its operations run on: the test's own thread ([`Recorded::on_this_thread`]: enough for a
//! current-thread runtime, where every task runs there) and the workers of a multi-thread runtime
//! built for it ([`Recorded::runtime`]). No global recorder is installed: other tests' operations
//! go uncounted.

use metrics::LocalRecorderGuard;
use metrics_util::debugging::{DebugValue, DebuggingRecorder, Snapshotter};
use std::cell::RefCell;

/// A counter's name, its labels (key, value) and its value.
pub type Counted = (String, Vec<(String, String)>, u64);

/// One test's recorder.
pub struct Recorded {
    recorder: &'static DebuggingRecorder,
    snapshotter: Snapshotter,
}

thread_local! {
    /// The recorder a runtime worker thread records into (set when the thread starts).
    static WORKER: RefCell<Option<LocalRecorderGuard<'static>>> = const { RefCell::new(None) };
}

impl Recorded {
    /// A fresh recorder (leaked: one small allocation per counting test).
    pub fn new() -> Recorded {
        let recorder: &'static DebuggingRecorder = Box::leak(Box::new(DebuggingRecorder::new()));
        Recorded {
            snapshotter: recorder.snapshotter(),
            recorder,
        }
    }

    /// Records what this thread does while the guard lives.
    #[must_use = "recording stops when the guard is dropped"]
    pub fn on_this_thread(&self) -> LocalRecorderGuard<'static> {
        metrics::set_default_local_recorder(self.recorder)
    }

    /// A multi-thread runtime (`workers` threads) whose every thread records here; block on it
    /// from a thread that records too ([`Recorded::on_this_thread`]).
    pub fn runtime(&self, workers: usize) -> tokio::runtime::Runtime {
        let recorder = self.recorder;
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(workers)
            .enable_all()
            .on_thread_start(move || {
                let guard = metrics::set_default_local_recorder(recorder);
                WORKER.with(|w| *w.borrow_mut() = Some(guard));
            })
            .on_thread_stop(|| WORKER.with(|w| drop(w.borrow_mut().take())))
            .build()
            .unwrap()
    }

    /// Sum of counter `name` over all label sets whose labels include `with`.
    pub fn counter(&self, name: &str, with: &[(&str, &str)]) -> u64 {
        self.snapshotter
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

    /// Every counter with its labels, for tests that match labels themselves.
    pub fn counters(&self) -> Vec<Counted> {
        self.snapshotter
            .snapshot()
            .into_vec()
            .into_iter()
            .filter_map(|(key, .., value)| match value {
                DebugValue::Counter(n) => {
                    let labels = key.key().labels();
                    let labels = labels.map(|l| (l.key().into(), l.value().into())).collect();
                    Some((key.key().name().to_string(), labels, n))
                }
                _ => None,
            })
            .collect()
    }
}

impl Recorded {
    /// Runs `test` to completion on a 2-worker multi-thread runtime whose every thread, and the
    /// calling one, record here.
    pub fn block_on<F: std::future::Future>(&self, test: F) -> F::Output {
        let _here = self.on_this_thread();
        self.runtime(2).block_on(test)
    }
}
