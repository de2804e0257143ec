//! Calling one script: argument encoding, the typed call, `NOSCRIPT` recovery, delivery.

use super::retry::{no_conflict, Verdict};
use super::Client;
use crate::observe::{self, Op};
use crate::script::{
    registry, Delivery, DynScript, FromReply, LibraryDef, Reply, RetryClass, Script, ScriptDef,
};
use crate::{keys, Error};
use redis::{Cmd, Value};

/// `FUNCTION LIST` questions after a refused `FUNCTION LOAD` (see [`Client::load_functions`]).
const LIST_TRIES: u32 = 5;
/// Between them: replication of the winner's load to a replica takes well under this.
const LIST_PAUSE: std::time::Duration = std::time::Duration::from_millis(20);

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

impl<'a> From<&'a String> for Arg<'a> {
    fn from(s: &'a String) -> Self {
        Arg::Bytes(s.as_bytes())
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
    /// Runs `script` with its keys and arguments and decodes its reply: one request, retried
    /// only as the script's retry class allows. The keys must share one hash slot
    /// ([`Error::CrossSlot`] otherwise, nothing sent). Counts and reply type are checked by the
    /// compiler.
    pub async fn call<const K: usize, const A: usize, R: FromReply>(
        &self,
        script: &'static Script<K, A, R>,
        keys: [&str; K],
        args: [Arg<'_>; A],
    ) -> Result<R, Error> {
        self.call_def(&script.def, &keys, &args, script.retry).await
    }

    /// [`Client::call`] with the retry class overridden for this call, e.g. `Safe` for a
    /// rate-limit call that carries a request id (repeating it cannot charge twice).
    pub async fn call_with<const K: usize, const A: usize, R: FromReply>(
        &self,
        script: &'static Script<K, A, R>,
        keys: [&str; K],
        args: [Arg<'_>; A],
        retry: RetryClass,
    ) -> Result<R, Error> {
        self.call_def(&script.def, &keys, &args, retry).await
    }

    /// Runs a script whose counts are checked against its header at the call: one with a
    /// variadic key or argument list, or one loaded at run time ([`crate::script::ScriptSet`]).
    pub async fn call_dyn<R: FromReply>(
        &self,
        script: &'static DynScript<R>,
        keys: &[&str],
        args: &[Arg<'_>],
    ) -> Result<R, Error> {
        self.call_def(&script.def, keys, args, script.retry).await
    }

    /// [`Client::call_dyn`] with the retry class overridden for this call.
    pub async fn call_dyn_with<R: FromReply>(
        &self,
        script: &'static DynScript<R>,
        keys: &[&str],
        args: &[Arg<'_>],
        retry: RetryClass,
    ) -> Result<R, Error> {
        self.call_def(&script.def, keys, args, retry).await
    }

    /// Runs a script found at run time and returns its raw reply (for tools: the CLI, tests
    /// that send what no binding would). Counts are checked here.
    pub async fn invoke_def(
        &self,
        def: &'static ScriptDef,
        keys: &[&str],
        args: &[Arg<'_>],
    ) -> Result<Value, Error> {
        self.checked(def, keys, args)?;
        self.run_op(
            Op::script(def),
            keys.first().copied(),
            &|e| Verdict::of(e, def.retry == RetryClass::Safe),
            &no_conflict,
            &|v| observe::status_word(v).unwrap_or("ok"),
            || self.attempt(def, keys, args),
        )
        .await
    }

    async fn call_def<R: FromReply>(
        &self,
        def: &'static ScriptDef,
        keys: &[&str],
        args: &[Arg<'_>],
        retry: RetryClass,
    ) -> Result<R, Error> {
        self.checked(def, keys, args)?;
        self.run_op(
            Op::script(def),
            keys.first().copied(),
            &|e| Verdict::of(e, retry == RetryClass::Safe),
            &no_conflict,
            &|r: &R| r.status(),
            || async { decode(def, self.attempt(def, keys, args).await?) },
        )
        .await
    }

    pub(super) fn checked(
        &self,
        def: &ScriptDef,
        keys: &[&str],
        args: &[Arg<'_>],
    ) -> Result<(), Error> {
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
        Ok(())
    }

    /// One attempt, with the single reload that `NOSCRIPT` / a missing Function allows.
    pub(super) async fn attempt(
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
                self.load_functions(def.library).await?;
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
            Delivery::Functions => cmd.arg(def.function),
            _ => cmd.arg(def.sha1),
        };
        cmd.arg(keys.len()).arg(keys).arg(args);
        cmd
    }

    /// `SCRIPT LOAD` of one script (on every primary, through a cluster connection).
    pub async fn load_script(&self, def: &ScriptDef) -> Result<(), Error> {
        self.command(redis::cmd("SCRIPT").arg("LOAD").arg(def.source))
            .await
            .map(drop)
    }

    /// Loads every built-in script (on every primary in a cluster), e.g. before pipelining
    /// `EVALSHA`, where no `NOSCRIPT` fallback is possible; with [`Delivery::Functions`], loads
    /// the library.
    pub async fn load_all(&self) -> Result<(), Error> {
        self.preload(registry::ALL).await
    }

    /// Loads `scripts` (on every primary in a cluster), e.g. a user's generated `ALL` or
    /// [`ScriptSet::defs`](crate::script::ScriptSet::defs); with [`Delivery::Functions`], each
    /// library they belong to.
    pub async fn preload(&self, scripts: &[&ScriptDef]) -> Result<(), Error> {
        let mut libraries: Vec<&LibraryDef> = Vec::new();
        for def in scripts {
            self.load_script(def).await?;
            if !libraries.iter().any(|l| l.name == def.library.name) {
                libraries.push(def.library);
            }
        }
        if self.config.delivery == Delivery::Functions {
            for library in libraries {
                self.load_functions(library).await?;
            }
        }
        Ok(())
    }

    /// `FUNCTION LOAD` of the built-in `redis_atomic_v<N>` (see [`Client::load_functions`]).
    pub async fn load_library(&self) -> Result<(), Error> {
        self.load_functions(&registry::LIBRARY).await
    }

    /// `FUNCTION LOAD` of `library` (every primary in a cluster). A library already loaded under
    /// that name is left alone: replacing it is the ops CLI's decision. Whether a refused load
    /// means "already there" (another client won the race) is asked of the server (`FUNCTION
    /// LIST`), not read from the error text. In a cluster that question goes to a random node,
    /// possibly a replica the winner's load has not reached yet, so it is asked up to
    /// five times, 20 ms apart, before the refusal stands.
    pub async fn load_functions(&self, library: &LibraryDef) -> Result<(), Error> {
        let mut load = redis::cmd("FUNCTION");
        load.arg("LOAD").arg(library.source);
        let err = match self.command(&load).await {
            Err(err @ Error::Server { .. }) => err,
            other => return other.map(drop),
        };
        let mut list = redis::cmd("FUNCTION");
        list.arg("LIST").arg("LIBRARYNAME").arg(library.name);
        for attempt in 0..LIST_TRIES {
            if attempt > 0 {
                tokio::time::sleep(LIST_PAUSE).await;
            }
            if matches!(self.command(&list).await?, Value::Array(libs) if !libs.is_empty()) {
                return Ok(());
            }
        }
        Err(err)
    }
}

/// A script's raw reply as its typed reply.
pub(super) fn decode<R: FromReply>(def: &ScriptDef, value: Value) -> Result<R, Error> {
    R::from_reply(Reply::parse(def.name, value)?.declared(def.statuses))
}

/// The one place a message, not a code, is matched: both Redis and Valkey answer a missing
/// function with the generic `ERR` code and this text.
fn function_missing(err: &Error) -> bool {
    matches!(err, Error::Server { code, message } if code == "ERR" && message.starts_with("Function not found"))
}
