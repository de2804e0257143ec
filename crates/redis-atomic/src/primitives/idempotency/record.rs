//! The record-level writes of a claim's executor: extending its lease and ending it. The one
//! implementation behind both the [`Claim`](super::Claim) handle and the by-parts methods of
//! [`Idempotency`]; both name the record by its [`IdempotencyKeys`] and the claim by token and fence,
//! which every script checks.

use super::{Failure, Idempotency, IdempotencyKeys, Outcome, Response, MAX_RESULT_TTL, MAX_TTL};
use crate::client::Arg;
use crate::lease::{millis, Extend, Fence, OwnerToken};
use crate::script::registry::{IdemCompleteReply, IdemExtendReply, IDEM_COMPLETE, IDEM_EXTEND};
use crate::Error;
use std::time::Duration;

/// How a claim ends, as `idem_complete` names it.
pub(super) enum End<'a> {
    Completed(&'a Response),
    Failed(&'a Failure),
}

impl Idempotency {
    /// The one implementation of extending a claim (by parts and through [`Claim`](super::Claim)).
    pub(super) async fn extend_record(
        &self,
        keys: &IdempotencyKeys,
        token: &OwnerToken,
        fence: Fence,
        ttl: Duration,
    ) -> Result<Extend, Error> {
        let ttl_ms = millis("ttl", ttl, MAX_TTL)?;
        let fence_arg = fence.0.to_string();
        let args = [
            token.as_str().into(),
            fence_arg.as_str().into(),
            Arg::Int(ttl_ms),
        ];
        let reply = self.client.call(&IDEM_EXTEND, [&keys.record], args).await?;
        Ok(match reply {
            IdemExtendReply::Extended { fence, ttl } => Extend::Extended { fence, ttl },
            IdemExtendReply::Lost => Extend::Lost,
        })
    }

    /// The one implementation of ending a claim (by parts and through [`Claim`](super::Claim)).
    pub(super) async fn finish(
        &self,
        keys: &IdempotencyKeys,
        token: &OwnerToken,
        fence: Fence,
        end: End<'_>,
    ) -> Result<Outcome, Error> {
        let (word, response) = match end {
            End::Completed(r) => ("completed", Some(r)),
            End::Failed(Failure::Retryable) => ("retry", None),
            End::Failed(Failure::Final(r)) => ("failed", Some(r)),
        };
        let payload = match response {
            Some(r) => r.encode()?,
            None => Vec::new(),
        };
        let limit = self.config.max_response_bytes;
        if payload.len() > limit {
            return Err(Error::BadArgument(format!(
                "response is {} bytes encoded, over the {limit}-byte limit: store a Body::Reference",
                payload.len()
            )));
        }
        let ttl_ms = millis("result_ttl", self.config.result_ttl, MAX_RESULT_TTL)?;
        let fence_arg = fence.0.to_string();
        let args = [
            token.as_str().into(),
            fence_arg.as_str().into(),
            word.into(),
            payload.as_slice().into(),
            Arg::Int(ttl_ms),
        ];
        let reply = self
            .client
            .call(&IDEM_COMPLETE, [&keys.record], args)
            .await?;
        Ok(match reply {
            IdemCompleteReply::Stored => Outcome::Stored,
            IdemCompleteReply::Lost => Outcome::Lost,
        })
    }
}
