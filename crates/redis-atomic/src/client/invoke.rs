//! Sending one script: argument encoding, the retry loop, `NOSCRIPT` recovery, metrics.

use super::retry::resend_with;
use super::Client;
use crate::observe;
use crate::script::{registry, Delivery, DynScript, RetryClass, Script, ScriptDef};
use crate::{keys, Error};
use redis::{Cmd, Value};
use std::time::Instant;
use tracing::Instrument as _;

/// One script argument: bytes or an integer.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Arg<'a> {
    /// Binary-safe bytes.
    Bytes(&'a [u8]),
    /// An integer, sent in decimal.
    Int(i64),
}

impl<'a> From<&'a str> for Arg<'a> {
    fn from(s: &'a str) -> Self {
        Arg::Bytes(s.as_bytes())
    }
}

impl<'a> From<&'a [u8]> for Arg<'a> {
    fn from(b: &'a [u8]) -> Self {
        Arg::Bytes(b)
    }
}

impl From<i64> for Arg<'_> {
    fn from(n: i64) -> Self {
        Arg::Int(n)
    }
}

impl redis::ToRedisArgs for Arg<'_> {
    fn write_redis_args<W: ?Sized + redis::RedisWrite>(&self, out: &mut W) {
        match self {
            Arg::Bytes(b) => out.write_arg(b),
            Arg::Int(n) => out.write_arg(n.to_string().as_bytes()),
        }
    }
}

impl redis::ToSingleRedisArg for Arg<'_> {}

impl Client {
    /// Runs `script` with its keys and arguments: one request, retried only as its retry class
    /// allows. The keys must share one hash slot ([`Error::CrossSlot`] otherwise, nothing sent).
    pub async fn invoke<const K: usize, const A: usize>(
        &self,
        script: &'static Script<K, A>,
        keys: [&str; K],
        args: [Arg<'_>; A],
    ) -> Result<Value, Error> {
        self.invoke_def(&script.def, &keys, &args).await
    }

    /// Runs a script with a variadic key or argument list; counts are checked against its header.
    pub async fn invoke_dyn(
        &self,
        script: &'static DynScript,
        keys: &[&str],
        args: &[Arg<'_>],
    ) -> Result<Value, Error> {
        self.invoke_def(&script.def, keys, args).await
    }

    /// Like [`Client::invoke`] for a script found at run time; counts are checked here.
    pub async fn invoke_def(
        &self,
        def: &'static ScriptDef,
        keys: &[&str],
        args: &[Arg<'_>],
    ) -> Result<Value, Error> {
        if !def.accepts(keys.len(), args.len()) {
            return Err(Error::BadArgument(format!(
                "{} takes {} keys and {} args, got {} and {}",
                def.name,
                def.keys.len(),
                def.args.len(),
                keys.len(),
                args.len()
            )));
        }
        if keys.len() > 1 {
            keys::same_slot(keys)?; // one key is always in one slot
        }
        let span = observe::span(def, keys.first().copied());
        let started = Instant::now();
        // `instrument`, not `enter`: an entered guard held across an await would leave the span
        // entered on the worker thread while other tasks run there.
        let result = self
            .with_retries(def, keys, args, started)
            .instrument(span)
            .await;
        observe::record(def, &result, started.elapsed());
        result
    }

    async fn with_retries(
        &self,
        def: &'static ScriptDef,
        keys: &[&str],
        args: &[Arg<'_>],
        started: Instant,
    ) -> Result<Value, Error> {
        let unknown_is_safe = def.retry == RetryClass::Safe;
        let before_retry = |err: &Error, attempt: u32| {
            observe::retry(def, err);
            tracing::debug!(error = %err, attempt, "retrying");
        };
        resend_with(
            &self.config.retry,
            started,
            unknown_is_safe,
            before_retry,
            || self.attempt(def, keys, args),
        )
        .await
    }

    /// One attempt, with the single reload that `NOSCRIPT` / a missing Function allows.
    async fn attempt(
        &self,
        def: &'static ScriptDef,
        keys: &[&str],
        args: &[Arg<'_>],
    ) -> Result<Value, Error> {
        let cmd = self.script_cmd(def, keys, args);
        match self.send_script(def, &cmd).await {
            Err(Error::Rejected { code, .. }) if code == "NOSCRIPT" => {
                observe::noscript(def);
                self.load_script(def).await?;
                self.send_script(def, &cmd).await
            }
            Err(err) if self.config.delivery == Delivery::Functions && function_missing(&err) => {
                observe::noscript(def);
                self.load_library().await?;
                self.send_script(def, &cmd).await
            }
            other => other,
        }
    }

    /// The script alone, or, with [`ClientConfig::replicas`](super::ClientConfig::replicas) and a
    /// script that writes, the script and `WAIT` in one pipeline.
    async fn send_script(&self, def: &ScriptDef, cmd: &Cmd) -> Result<Value, Error> {
        match self.config.replicas {
            Some(replicas) if !def.read_only() => self.command_then_wait(cmd, replicas).await,
            _ => self.command(cmd).await,
        }
    }

    fn script_cmd(&self, def: &ScriptDef, keys: &[&str], args: &[Arg<'_>]) -> Cmd {
        let mut cmd = match (self.config.delivery, def.read_only()) {
            (Delivery::Functions, false) => redis::cmd("FCALL"),
            (Delivery::Functions, true) => redis::cmd("FCALL_RO"),
            (_, false) => redis::cmd("EVALSHA"),
            (_, true) => redis::cmd("EVALSHA_RO"),
        };
        match self.config.delivery {
            Delivery::Functions => cmd.arg(def.function_name()),
            _ => cmd.arg(def.sha1),
        };
        cmd.arg(keys.len()).arg(keys).arg(args);
        cmd
    }

    /// Sends one command with the per-call timeout; classifies failures. An owned connection
    /// whose request timed out or broke is discarded.
    pub async fn command(&self, cmd: &Cmd) -> Result<Value, Error> {
        let mut lease = self.transport.checkout().await.map_err(Error::NotSent)?;
        let reply = tokio::time::timeout(self.config.timeout, lease.conn.request(cmd)).await;
        self.settle(lease.slot, reply.map_err(|_| self.config.timeout))
    }

    /// Turns a reply (or the time waited for none) into a value or a classified error, and
    /// discards the connection of a request whose outcome is unknown.
    pub(super) fn settle(
        &self,
        slot: usize,
        reply: Result<redis::RedisResult<Value>, std::time::Duration>,
    ) -> Result<Value, Error> {
        let err = match reply {
            Ok(Ok(Value::ServerError(e))) => Error::from_code(
                e.code().to_string(),
                e.details().unwrap_or_default().to_string(),
            ),
            Ok(Ok(value)) => return Ok(value),
            Ok(Err(e)) => Error::from_redis(e),
            Err(waited) => Error::OutcomeUnknown {
                reason: format!("no reply within {waited:?}"),
                attempts: 1,
            },
        };
        if err.is_outcome_unknown() {
            self.transport.discard(slot);
        }
        Err(err)
    }

    /// `SCRIPT LOAD` of one script (on every primary, through a cluster connection).
    pub async fn load_script(&self, def: &ScriptDef) -> Result<(), Error> {
        self.command(redis::cmd("SCRIPT").arg("LOAD").arg(def.source))
            .await
            .map(drop)
    }

    /// Loads every script (on every primary in a cluster), e.g. before pipelining `EVALSHA`,
    /// where no `NOSCRIPT` fallback is possible; with [`Delivery::Functions`], loads the library.
    pub async fn load_all(&self) -> Result<(), Error> {
        for def in registry::ALL {
            self.load_script(def).await?;
        }
        if self.config.delivery == Delivery::Functions {
            self.load_library().await?;
        }
        Ok(())
    }

    /// `FUNCTION LOAD` of `redis_atomic_v<N>` (every primary in a cluster). A library already
    /// loaded under that name is left alone: replacing it is the ops CLI's decision.
    pub async fn load_library(&self) -> Result<(), Error> {
        let mut cmd = redis::cmd("FUNCTION");
        cmd.arg("LOAD").arg(registry::LIBRARY_SOURCE);
        match self.command(&cmd).await {
            Err(Error::Server { message, .. }) if message.contains("already exists") => Ok(()),
            other => other.map(drop),
        }
    }
}

/// The one place a message, not a code, is matched: both Redis and Valkey answer a missing
/// function with the generic `ERR` code and this text.
fn function_missing(err: &Error) -> bool {
    matches!(err, Error::Server { code, message } if code == "ERR" && message.starts_with("Function not found"))
}
