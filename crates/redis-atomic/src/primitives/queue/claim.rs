//! Claims: [`Queue::claim`] (`queue_claim`, `retry: unsafe`) and its retry-safe twin
//! [`Queue::claim_with_id`] (`queue_claim_id`, `retry: safe`). Both lease up to `max_jobs` due
//! jobs in one script (the same fragments); the twin also records what it leased under the claim
//! id, so a resend after a lost reply returns the same leases instead of taking more jobs.

use super::types::{MAX_TTL, MAX_WORKER_LEN};
use super::{batch, deliveries, Claim, Job, Queue};
use crate::client::Arg;
use crate::lease::{millis, Fence, Held, OwnerToken};
use crate::script::registry::{QueueClaimIdReply, QueueClaimReply, QUEUE_CLAIM, QUEUE_CLAIM_ID};
use crate::Error;
use std::time::{Duration, Instant};

/// One leased job as a claim reply carries it.
struct Leased {
    id: String,
    fence: Fence,
    deliveries: u64,
    payload: Vec<u8>,
    /// What is left of the lease when the reply was made (the claim's ttl, for a fresh lease).
    ttl: Duration,
    /// When the lease began, server ms ([`Job::claimed_at_ms`]).
    claimed_at_ms: u64,
}

impl Queue {
    /// Leases up to `max_jobs` (1..=1000) due jobs to `worker` (at most [`MAX_WORKER_LEN`]
    /// bytes) for `ttl` (after first returning up to `max_jobs` expired leases). Not retried
    /// after an unknown outcome: the jobs it may have leased come back after `ttl`.
    /// [`Queue::claim_with_id`] is the retry-safe claim.
    pub async fn claim(
        &self,
        worker: &OwnerToken,
        ttl: Duration,
        max_jobs: usize,
    ) -> Result<Claim, Error> {
        let args = self.claim_args(worker, ttl, max_jobs)?;
        let k = &self.keys;
        let keys: [&str; 6] = [&k.due, &k.inflight, &k.dead, &k.meta, &k.payload, &k.errors];
        let sent = Instant::now();
        Ok(match self.client.call(&QUEUE_CLAIM, keys, args).await? {
            QueueClaimReply::Claimed { now_ms, jobs, .. } => {
                let jobs = jobs.into_iter().map(|j| Leased {
                    id: j.id,
                    fence: j.fence,
                    deliveries: j.deliveries,
                    payload: j.payload,
                    ttl,
                    claimed_at_ms: now_ms,
                });
                self.claimed(jobs, worker, sent)
            }
            QueueClaimReply::Empty { retry_after } => Claim::Empty { retry_after },
            QueueClaimReply::Idle => Claim::Idle,
        })
    }

    /// [`Queue::claim`], retry-safe with `claim_id` (1..=[`super::MAX_CLAIM_ID_LEN`] bytes; use
    /// a new one per claim, e.g. a UUID): the client resends it after a lost reply, and a caller
    /// that still gets [`Error::OutcomeUnknown`] resends the same id.
    ///
    /// The first claim with an id that leases jobs records them (at
    /// [`QueueKeys::claim`](super::QueueKeys::claim)) for
    /// max([`QueueConfig::claim_id_ttl`](super::QueueConfig::claim_id_ttl), `ttl`). A repeat of
    /// the id while that record lives leases nothing and reaps nothing; it answers
    /// [`Claim::Claimed`] with, in the first claim's order, each recorded job whose lease from
    /// that claim is still live — running under the same fence, for the same `worker`, its
    /// deadline not passed — with the same fence, the same delivery count (not incremented) and
    /// [`Job::expires_by`] from the lease time left, [`Job::claimed_at_ms`] its deadline minus
    /// `ttl` (the first claim's time, unless the lease was extended). Jobs acked, nacked, reaped,
    /// claimed again or whose deadline passed since are left out, so a repeat after every lease
    /// ended answers `Claimed` with no jobs (never new ones). A repeat by another worker gets no
    /// jobs. A first claim that found nothing due records nothing (it leased nothing), so a
    /// repeat of it claims afresh; so does any use of the id after its record expired.
    pub async fn claim_with_id(
        &self,
        worker: &OwnerToken,
        ttl: Duration,
        max_jobs: usize,
        claim_id: &str,
    ) -> Result<Claim, Error> {
        let [w, v, n, d, m, k] = self.claim_args(worker, ttl, max_jobs)?;
        let record_ttl = millis("claim id ttl", self.config.claim_id_ttl, MAX_TTL)?;
        let record = self.keys.claim(claim_id)?;
        let q = &self.keys;
        let keys: [&str; 7] = [
            &q.due,
            &q.inflight,
            &q.dead,
            &q.meta,
            &q.payload,
            &q.errors,
            &record,
        ];
        let sent = Instant::now();
        let args = [w, v, n, d, m, k, Arg::Int(record_ttl)];
        Ok(match self.client.call(&QUEUE_CLAIM_ID, keys, args).await? {
            QueueClaimIdReply::Claimed { now_ms, jobs, .. } => {
                let ttl_ms = ms(ttl);
                let jobs = jobs.into_iter().map(|j| Leased {
                    // A replayed lease began at its deadline minus the ttl (unless extended).
                    claimed_at_ms: now_ms.saturating_add(ms(j.ttl)).saturating_sub(ttl_ms),
                    id: j.id,
                    fence: j.fence,
                    deliveries: j.deliveries,
                    payload: j.payload,
                    ttl: j.ttl,
                });
                self.claimed(jobs, worker, sent)
            }
            QueueClaimIdReply::Empty { retry_after } => Claim::Empty { retry_after },
            QueueClaimIdReply::Idle => Claim::Idle,
        })
    }

    /// The six arguments both claim scripts start with, checked.
    fn claim_args<'a>(
        &self,
        worker: &'a OwnerToken,
        ttl: Duration,
        max_jobs: usize,
    ) -> Result<[Arg<'a>; 6], Error> {
        let name = worker.as_str();
        if name.len() > MAX_WORKER_LEN {
            return Err(Error::BadArgument(format!(
                "worker must be 1..={MAX_WORKER_LEN} bytes, got {}",
                name.len()
            )));
        }
        let max_jobs = batch("max_jobs", max_jobs)?;
        let ttl = millis("ttl", ttl, MAX_TTL)?;
        let [max_dead, keep_dead] = self.dead_bound();
        Ok([
            name.into(),
            Arg::Int(ttl),
            max_jobs,
            self.max_deliveries(),
            max_dead,
            keep_dead,
        ])
    }

    /// The handles of the jobs a claim sent at `sent` leased to `worker`.
    fn claimed(
        &self,
        jobs: impl Iterator<Item = Leased>,
        worker: &OwnerToken,
        sent: Instant,
    ) -> Claim {
        let job = |j: Leased| Job {
            queue: self.clone(),
            id: j.id,
            payload: j.payload,
            deliveries: deliveries(j.deliveries),
            claimed_at_ms: j.claimed_at_ms,
            held: Held::new(worker.clone(), j.fence, sent, j.ttl),
        };
        Claim::Claimed(jobs.map(job).collect())
    }
}

/// `d` in whole ms, saturating.
fn ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}
