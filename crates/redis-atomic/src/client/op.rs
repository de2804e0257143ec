//! The one call path: every operation — a script, or commands a primitive sends itself — runs
//! here, so each gets the same span, retry loop, metrics and event (see [`crate::observe`]).

use super::retry::{self, Ran, Rules, Verdict};
use super::{ask, sentinel, tls, Client, RetryPolicy};
use crate::observe::{self, Op};
use crate::Error;
use redis::{Cmd, Value};
use std::future::Future;
use std::time::{Duration, Instant};
use tracing::Instrument as _;

/// How an operation's failures and values are judged.
pub(crate) type Judge<'a> = &'a (dyn Fn(&Error) -> Verdict + Sync);
/// `Some(cap)`: the value is a conflict, retried after at most `cap` (see [`retry::Rules`]).
pub(crate) type Conflict<'a, T> = &'a (dyn Fn(&T) -> Option<Duration> + Sync);
/// The `outcome` label of a successful value.
pub(crate) type Label<'a, T> = &'a (dyn for<'v> Fn(&'v T) -> &'v str + Sync);

/// Redirects one [`Client::command`] follows in a chain (go-redis's default `MaxRedirects`): a
/// slot moving back and forth takes two; more means the map is changing faster than calls can
/// follow, and the last refusal is returned (nothing ran).
const REDIRECTS: usize = 3;

impl Client {
    /// Runs `attempt` as operation `op` under the client's retry policy: span, bounded retries
    /// (judged by `judge`, conflicts by `conflict`), metrics and one debug event. `key` (any key
    /// of the call) gives the span its hashed tag.
    pub(crate) async fn run_op<T, F, Fut>(
        &self,
        op: Op,
        key: Option<&str>,
        judge: Judge<'_>,
        conflict: Conflict<'_, T>,
        label: Label<'_, T>,
        attempt: F,
    ) -> Result<T, Error>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, Error>>,
    {
        self.run_op_with(&self.config.retry, op, key, judge, conflict, label, attempt)
            .await
    }

    /// [`Client::run_op`] under another policy (contention, a caller's wait).
    #[allow(clippy::too_many_arguments)]
    pub(crate) async fn run_op_with<T, F, Fut>(
        &self,
        policy: &RetryPolicy,
        op: Op,
        key: Option<&str>,
        judge: Judge<'_>,
        conflict: Conflict<'_, T>,
        label: Label<'_, T>,
        attempt: F,
    ) -> Result<T, Error>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, Error>>,
    {
        self.open_or_refuse()?;
        let span = observe::span(&op, key);
        let started = Instant::now();
        let on_retry = |err: Option<&Error>, _attempt: u32| observe::retry(&op, err);
        let rules = Rules {
            policy,
            started,
            judge,
            conflict,
            on_retry: &on_retry,
        };
        // `instrument`, not `enter`: an entered guard held across an await would leave the span
        // entered on the worker thread while other tasks run there.
        let Ran { result, attempts } = retry::run(rules, attempt).instrument(span.clone()).await;
        // The call is retry-safe exactly when its own judge would resend an unknown outcome:
        // the fact every face reports (`Error::retry_safe`), decided here, once.
        let result = result.map_err(|e| {
            let safe = judge(&e) == Verdict::RetryUnknown;
            e.retry_safe_if(safe)
        });
        let _entered = span.enter();
        let outcome = match &result {
            Ok(value) => Ok(label(value)),
            Err(err) => Err(err),
        };
        observe::finished(&op, outcome, started.elapsed(), attempts);
        result
    }

    /// One idempotent command of a primitive's own (`op` names it): resent after transient
    /// refusals and unknown outcomes within the client's retry policy, observed like a script.
    pub(crate) async fn idempotent(&self, op: Op, key: &str, cmd: &Cmd) -> Result<Value, Error> {
        self.run_op(
            op,
            Some(key),
            &|e| Verdict::of(e, true),
            &retry::no_conflict,
            &|_| "ok",
            || self.command(cmd),
        )
        .await
    }

    /// Sends one command with the per-call timeout; classifies failures. An owned connection
    /// whose request timed out or broke is discarded. On a cluster, redirects are followed —
    /// `ASK` (`ASKING` and the command, pipelined, on the target node) and `MOVED` (the command
    /// to the slot's new owner) — up to [`REDIRECTS`] in a chain: a redirect means nothing ran
    /// where the request went, whatever the command. A chain happens while a slot moves back: a
    /// stale map's node says `MOVED` to the node the slot is leaving, which says `ASK`. Not
    /// retried, not observed: the raw path.
    pub async fn command(&self, cmd: &Cmd) -> Result<Value, Error> {
        let mut lease = self.transport.checkout().await.map_err(not_sent)?;
        let reply = tokio::time::timeout(self.config.timeout, lease.conn.request(cmd)).await;
        let mut settled = self.settle(lease.slot, reply.map_err(|_| self.config.timeout));
        if !self.transport.is_cluster() {
            return settled;
        }
        let mut pipe = redis::pipe();
        pipe.add_command(cmd.clone());
        for _ in 0..REDIRECTS {
            let Err(err) = &settled else {
                return settled;
            };
            let followed = if let Some(node) = ask::target(err) {
                self.ask(node, &pipe, self.config.timeout).await
            } else if let Some(node) = ask::moved(err) {
                self.redetect(); // the topology changed: another node, maybe another server
                self.to_node(node, &pipe, self.config.timeout, "MOVED")
                    .await
            } else {
                return settled;
            };
            // The next redirect may come as the pipeline's error or as its reply's.
            settled = followed.and_then(|values| {
                let value = values.into_iter().next().unwrap_or(Value::Nil);
                self.settle(lease.slot, Ok(Ok(value)))
            });
        }
        settled
    }

    /// Sends `pipe` to `node` after `ASKING` (one pipeline, see [`ask`]); its replies, server
    /// errors among them as values.
    pub(super) async fn ask(
        &self,
        node: (String, u16),
        pipe: &redis::Pipeline,
        timeout: Duration,
    ) -> Result<Vec<Value>, Error> {
        let (asking, ours) = ask::asking(pipe);
        ask::strip(self.to_node(node, &asking, timeout, "ASK").await?, &ours)
    }

    /// Sends `pipe` to `node` (a redirect's target: `why` is `ASK` or `MOVED`) within `timeout`.
    /// [`Client::command`] follows redirects: nothing ran where the request went, so even a raw
    /// command racing a slot migration need not fail.
    async fn to_node(
        &self,
        (host, port): (String, u16),
        pipe: &redis::Pipeline,
        timeout: Duration,
        why: &str,
    ) -> Result<Vec<Value>, Error> {
        let sent = self.transport.to_node(&host, port, pipe);
        match tokio::time::timeout(timeout, sent).await {
            Ok(Ok(values)) => Ok(values),
            Ok(Err(e)) => Err(Error::from_redis(e)),
            Err(_) => Err(Error::OutcomeUnknown {
                reason: format!("no reply within {timeout:?} from {host}:{port} ({why})"),
                attempts: 1,
                timed_out: true,
                retry_safe: false,
            }),
        }
    }

    /// Turns a reply (or the time waited for none) into a value or a classified error, and
    /// discards the connection of a request whose outcome is unknown, or that reached a node
    /// which may be no primary any more (`READONLY`, `NOREPLICAS`: through Sentinel, the next
    /// connection asks where the primary is now).
    pub(super) fn settle(
        &self,
        slot: usize,
        reply: Result<redis::RedisResult<Value>, Duration>,
    ) -> Result<Value, Error> {
        let err = match reply {
            Ok(Ok(Value::ServerError(e))) => server_error(&e),
            Ok(Ok(value)) => return Ok(value),
            Ok(Err(e)) => Error::from_redis(e),
            Err(waited) => Error::OutcomeUnknown {
                reason: format!("no reply within {waited:?}"),
                attempts: 1,
                timed_out: true,
                retry_safe: false,
            },
        };
        let stale = matches!(&err, Error::Rejected { code, .. } if sentinel::stale_primary(code));
        if err.is_outcome_unknown() || stale {
            self.transport.discard(slot);
            if !self.transport.is_cluster() {
                self.redetect(); // the next connection may reach another server (failover)
            }
        }
        Err(err)
    }
}

/// An error reply, classified by its code (a command's, or one element of a batch's reply).
pub(super) fn server_error(e: &redis::ServerError) -> Error {
    Error::from_code(
        e.code().to_string(),
        e.details().unwrap_or_default().to_string(),
    )
}

/// A connection that could not be had: nothing was sent ([`Error::Tls`] when TLS is why).
pub(super) fn not_sent(err: redis::RedisError) -> Error {
    match tls::failure(&err) {
        Some(why) => Error::Tls(why),
        None => Error::NotSent(err),
    }
}
