//! A leased job ([`Job`], the handle a claim returns) and the lease operations on a job: extend,
//! ack and nack. Each is one script call, made by the by-parts methods on [`Queue`] (for callers
//! that only have the job's id, worker and fence: another process, an HTTP client); the handle's
//! methods delegate to them.

use super::types::{whole_ms, Ack, Nack, MAX_DELAY, MAX_ERROR_LEN, MAX_TTL};
use super::{check_id, Queue};
use crate::client::Arg;
use crate::lease::{lease_by_inherent, millis, Extend, Fence, Held, Lease, OwnerToken};
use crate::script::registry::{
    QueueAckReply, QueueExtendReply, QueueNackReply, QUEUE_ACK, QUEUE_EXTEND, QUEUE_NACK,
};
use crate::Error;
use std::time::{Duration, Instant};

/// A leased job: its id, payload and lease. Pass [`Job::fence`] to every write the job makes,
/// then [`ack`](Job::ack) or [`nack`](Job::nack) it (both consume it); [`extend`](Job::extend) a
/// long job's lease. Dropping it does nothing: the lease runs out and the job is claimed again.
/// Not `Clone`: one handle per lease, ended once.
#[derive(Debug)]
#[must_use = "a leased job should be acked or nacked"]
pub struct Job {
    pub(super) queue: Queue,
    pub(super) id: String,
    pub(super) payload: Vec<u8>,
    pub(super) deliveries: u32,
    pub(super) claimed_at_ms: u64,
    pub(super) held: Held,
}

impl Job {
    /// The job id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The payload, byte for byte as enqueued.
    pub fn payload(&self) -> &[u8] {
        &self.payload
    }

    /// The payload, taken out of the handle (the lease is then only reachable by parts).
    pub fn into_payload(self) -> Vec<u8> {
        self.payload
    }

    /// This lease's fence: larger than every earlier lease of this job. Pass it to the writes the
    /// job makes, so a store can refuse a superseded worker.
    pub fn fence(&self) -> Fence {
        self.held.fence
    }

    /// The worker the job is leased to (the `worker` of the claim).
    pub fn token(&self) -> &OwnerToken {
        &self.held.token
    }

    /// Deliveries of this job so far, this one included (1 on the first claim).
    pub fn deliveries(&self) -> u32 {
        self.deliveries
    }

    /// The server's clock (ms since the epoch) when the lease began.
    pub fn claimed_at_ms(&self) -> u64 {
        self.claimed_at_ms
    }

    /// The lease's length as last set (by the claim — what was left of it, for a claim id's
    /// repeat — or the last confirmed extend).
    pub fn ttl(&self) -> Duration {
        self.held.ttl
    }

    /// Until when, by the local clock, the lease surely lasts: the time the claim (or the last
    /// extension) was sent plus its ttl. Stop or extend before this.
    pub fn expires_by(&self) -> Instant {
        self.held.expires_by()
    }

    /// Sets the lease to end `ttl` from the server's now (absolute, never added).
    pub async fn extend(&mut self, ttl: Duration) -> Result<Extend, Error> {
        let sent = Instant::now();
        let held = &self.held;
        let outcome = self
            .queue
            .extend(&self.id, &held.token, held.fence, ttl)
            .await?;
        self.held.extended(&outcome, sent, ttl);
        Ok(outcome)
    }

    /// Completes the job if this is still its current lease. After an unknown outcome, repeat it
    /// by parts ([`Queue::ack`] with this job's id, token and fence): within the dedup window a
    /// repeat answers [`Ack::Acked`] again.
    pub async fn ack(self) -> Result<Ack, Error> {
        let held = &self.held;
        self.queue.ack(&self.id, &held.token, held.fence).await
    }

    /// Gives the job back if this is still its current lease: see [`Queue::nack`]. After an
    /// unknown outcome, repeat it by parts (a repeat of one that ran answers [`Nack::Lost`]).
    pub async fn nack(self, retry_after: Duration, error: &str) -> Result<Nack, Error> {
        let held = &self.held;
        self.queue
            .nack(&self.id, &held.token, held.fence, retry_after, error)
            .await
    }
}

impl Lease for Job {
    const PRIMITIVE: &'static str = "queue";

    lease_by_inherent!(Job);

    /// Gives nothing back: a nack would make the job due for another worker while this one may
    /// already have done it and be about to ack (an ack after an unconfirmed loss still counts
    /// while no claim or reap took the job back). The lease runs out and a claim or reap returns
    /// the job, as for a worker that died.
    async fn give_back(&mut self) -> Result<(), Error> {
        Ok(())
    }
}

impl Queue {
    /// Sets the lease of `job_id`, leased to `token` (the worker) with `fence`, to end `ttl` (at
    /// most [`MAX_TTL`]) from the server's now (absolute, never added): the by-parts twin of
    /// [`Job::extend`].
    pub async fn extend(
        &self,
        job_id: &str,
        token: &OwnerToken,
        fence: Fence,
        ttl: Duration,
    ) -> Result<Extend, Error> {
        check_id(job_id)?;
        let ttl_ms = millis("ttl", ttl, MAX_TTL)?;
        let fence_arg = fence.to_string();
        let k = &self.keys;
        let args = [
            job_id.into(),
            token.as_str().into(),
            fence_arg.as_str().into(),
            Arg::Int(ttl_ms),
        ];
        let reply = self
            .client
            .call(&QUEUE_EXTEND, [&k.inflight, &k.meta], args)
            .await?;
        Ok(match reply {
            QueueExtendReply::Extended { fence, ttl } => Extend::Extended { fence, ttl },
            QueueExtendReply::Lost => Extend::Lost,
        })
    }

    /// Completes `job_id` if it is leased to `token` (the worker) with `fence`: the by-parts twin
    /// of [`Job::ack`].
    pub async fn ack(&self, job_id: &str, token: &OwnerToken, fence: Fence) -> Result<Ack, Error> {
        check_id(job_id)?;
        let fence = fence.to_string();
        let k = &self.keys;
        let keys: [&str; 5] = [&k.inflight, &k.meta, &k.payload, &k.errors, &k.done];
        let keep = Arg::Int(whole_ms(self.config.dedup_window));
        let args = [
            job_id.into(),
            token.as_str().into(),
            fence.as_str().into(),
            keep,
        ];
        Ok(match self.client.call(&QUEUE_ACK, keys, args).await? {
            QueueAckReply::Acked => Ack::Acked,
            QueueAckReply::Lost => Ack::Lost,
        })
    }

    /// Gives `job_id` back if it is leased to `token` (the worker) with `fence`: due again after
    /// `retry_after`, or dead-lettered with `error` once delivered `max_deliveries` times (the
    /// by-parts twin of [`Job::nack`]). `error` is cut to [`MAX_ERROR_LEN`] bytes.
    pub async fn nack(
        &self,
        job_id: &str,
        token: &OwnerToken,
        fence: Fence,
        retry_after: Duration,
        error: &str,
    ) -> Result<Nack, Error> {
        check_id(job_id)?;
        if retry_after > MAX_DELAY {
            return Err(Error::BadArgument(
                "retry_after must be at most a year".into(),
            ));
        }
        let mut cut = error.len().min(MAX_ERROR_LEN);
        while !error.is_char_boundary(cut) {
            cut -= 1;
        }
        let fence = fence.to_string();
        let k = &self.keys;
        let keys: [&str; 6] = [&k.inflight, &k.due, &k.dead, &k.meta, &k.payload, &k.errors];
        let [max_dead, keep_dead] = self.dead_bound();
        let args = [
            job_id.into(),
            token.as_str().into(),
            fence.as_str().into(),
            Arg::Int(whole_ms(retry_after)),
            self.max_deliveries(),
            error[..cut].into(),
            max_dead,
            keep_dead,
        ];
        Ok(match self.client.call(&QUEUE_NACK, keys, args).await? {
            QueueNackReply::Retrying { retry_after } => Nack::Retrying { retry_after },
            QueueNackReply::Dead => Nack::Dead,
            QueueNackReply::Lost => Nack::Lost,
        })
    }
}
