//! The handle of a live claim: the lease shape ([`Lease`]) plus the two ways a claim ends.
//!
//! Every method delegates to the store's record-level implementation that the by-parts methods
//! ([`Idempotency::extend`], [`Idempotency::complete`], [`Idempotency::fail`]) use too; the
//! handle only remembers the record's keys, so it does not hash (scope, key) again.

use super::{End, Failure, Idempotency, IdempotencyKeys, Outcome, Response};
use crate::lease::{lease_by_inherent, Extend, Fence, Held, Lease, OwnerToken};
use crate::Error;
use std::time::{Duration, Instant};

/// A live claim: the caller executes the request, then stores the result with
/// [`Claim::complete`] or [`Claim::fail`]. Dropping it does nothing: the lease runs out and the
/// next duplicate takes the key over.
#[derive(Debug)]
#[must_use = "a claim should end with complete() or fail()"]
pub struct Claim {
    store: Idempotency,
    keys: IdempotencyKeys,
    held: Held,
    takeover: bool,
}

impl Claim {
    pub(super) fn new(
        store: Idempotency,
        keys: IdempotencyKeys,
        held: Held,
        takeover: bool,
    ) -> Claim {
        Claim {
            store,
            keys,
            held,
            takeover,
        }
    }

    /// The claim's fence (its generation): strictly increasing per key, floored at the server's
    /// µs clock. Pass it to the side effect's own store and reject smaller ones there.
    pub fn fence(&self) -> Fence {
        self.held.fence
    }

    /// The owner token (reuse it with [`Idempotency::begin_with_token`] after an unknown
    /// outcome).
    pub fn token(&self) -> &OwnerToken {
        &self.held.token
    }

    /// Whether this claim took over an earlier executor's expired lease.
    pub fn is_takeover(&self) -> bool {
        self.takeover
    }

    /// The lease's length as last set (by the claim or the last confirmed extend).
    pub fn ttl(&self) -> Duration {
        self.held.ttl
    }

    /// Until when, by the local clock, the lease surely lasts: the time the claiming (or last
    /// extending) request was sent plus its ttl.
    pub fn expires_by(&self) -> Instant {
        self.held.expires_by()
    }

    /// Sets the lease to end `ttl` from the server's now; [`Extend::Lost`] once the claim was
    /// taken over or ended.
    pub async fn extend(&mut self, ttl: Duration) -> Result<Extend, Error> {
        let sent = Instant::now();
        let outcome = self
            .store
            .extend_record(&self.keys, &self.held.token, self.held.fence, ttl)
            .await?;
        self.held.extended(&outcome, sent, ttl);
        Ok(outcome)
    }

    /// Stores `response` for replay. After an unknown outcome, repeat it by parts
    /// ([`Idempotency::complete`] with this claim's token and fence): a repeat answers
    /// [`Outcome::Stored`] again.
    pub async fn complete(self, response: &Response) -> Result<Outcome, Error> {
        self.end(End::Completed(response)).await
    }

    /// Ends the claim with a failure: [`Failure::Retryable`] frees the key, [`Failure::Final`]
    /// stores the response for replay. After an unknown outcome, repeat it by parts
    /// ([`Idempotency::fail`]).
    pub async fn fail(self, failure: &Failure) -> Result<Outcome, Error> {
        self.end(End::Failed(failure)).await
    }

    async fn end(&self, end: End<'_>) -> Result<Outcome, Error> {
        let held = &self.held;
        self.store
            .finish(&self.keys, &held.token, held.fence, end)
            .await
    }
}

impl Lease for Claim {
    const PRIMITIVE: &'static str = "idempotency";

    lease_by_inherent!(Claim);

    /// Gives nothing back: freeing the key (`fail(Retryable)`) would let a duplicate run the
    /// request again while this executor may already have made the side effect and be about to
    /// store it (a `complete` after an unconfirmed loss still stores while nobody took over). The
    /// claim runs out and the next duplicate takes it over.
    async fn give_back(&mut self) -> Result<(), Error> {
        Ok(())
    }
}
