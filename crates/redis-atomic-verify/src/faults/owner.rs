//! The thread that starts, and restarts, the servers faults are injected into.
//!
//! Why a thread of its own: a server the testkit starts dies with the *thread* that started it
//! (`PR_SET_PDEATHSIG`), and tokio retires a pooled blocking thread after a while idle — taking
//! its servers with it (a fault cluster once died that way in the middle of a run). This thread
//! lives until the run's faults are over.

use crate::check::CheckResult;
use std::sync::mpsc;
use std::thread::JoinHandle;

type Job = Box<dyn FnOnce() + Send>;

/// The thread, and the way to hand it work.
pub(crate) struct Owner {
    jobs: Option<mpsc::Sender<Job>>,
    thread: Option<JoinHandle<()>>,
}

impl Owner {
    pub(crate) fn new() -> std::io::Result<Owner> {
        let (jobs, rx) = mpsc::channel::<Job>();
        let thread = std::thread::Builder::new()
            .name("verify-fault-servers".into())
            .spawn(move || rx.into_iter().for_each(|job| job()))?;
        Ok(Owner {
            jobs: Some(jobs),
            thread: Some(thread),
        })
    }

    /// Runs `work` on the thread (one piece of work at a time) and waits for its result.
    pub(crate) async fn run<T: Send + 'static>(
        &self,
        work: impl FnOnce() -> T + Send + 'static,
    ) -> CheckResult<T> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        let job: Job = Box::new(move || {
            let _ = tx.send(work());
        });
        let ended = || err!("the thread of the fault servers has ended");
        self.jobs
            .as_ref()
            .ok_or_else(ended)?
            .send(job)
            .map_err(|_| ended())?;
        rx.await.map_err(|_| ended())
    }
}

impl Drop for Owner {
    fn drop(&mut self) {
        drop(self.jobs.take()); // the thread's loop ends with its last job
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
