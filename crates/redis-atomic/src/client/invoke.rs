//! Calling one script: argument encoding, the typed call, `NOSCRIPT` recovery, delivery.

use super::retry::{self, no_conflict, Rules, Verdict};
use super::{Client, RetryPolicy};
use crate::observe::{self, Op};
#[cfg(doc)]
use crate::script::registry;
use crate::script::{
    Callable, Delivery, FromReply, LibraryDef, RawReply, Reply, RetryClass, ScriptDef, ScriptSet,
};
use crate::{keys, Error};
use redis::{Cmd, Value};

/// `FUNCTION LIST` questions after a refused `FUNCTION LOAD` (see [`Client::load_functions`]).
const LIST_TRIES: u32 = 5;
/// The longest pause between them: replication of the winner's load to a replica takes well
/// under this.
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
    /// only as the script's retry class allows. `script` is a static of the generated registry
    /// or of a user's generated bindings: a [`Script`](crate::script::Script), whose key and
    /// argument arrays and reply type the compiler checks, or a
    /// [`DynScript`](crate::script::DynScript) (a variadic script, or one of a
    /// [`ScriptSet`]), whose slices are checked here against its
    /// header ([`Error::BadArgument`], nothing sent). The keys must share one hash slot
    /// ([`Error::CrossSlot`] otherwise, nothing sent).
    pub async fn call<S: Callable>(
        &self,
        script: &'static S,
        keys: S::Keys<'_>,
        args: S::Args<'_>,
    ) -> Result<S::Reply, Error> {
        let def = script.def();
        let (keys, args) = (keys.as_ref(), args.as_ref());
        self.call_def(def, keys, args, def.retry).await
    }

    /// Runs the script `name` of `set` (a folder loaded at run time) and decodes its reply as far
    /// as its declared status word: [`Client::call`] of [`ScriptSet::get`]`(name)`, or
    /// [`Error::BadArgument`] (nothing sent) when the set has no such script.
    pub async fn call_named(
        &self,
        set: &ScriptSet,
        name: &str,
        keys: &[&str],
        args: &[Arg<'_>],
    ) -> Result<RawReply, Error> {
        let script = set.get(name).ok_or_else(|| {
            Error::BadArgument(format!(
                "library {} has no script named {name:?}",
                set.library().name
            ))
        })?;
        self.call(script, keys, args).await
    }

    /// [`Client::call`] with the retry class overridden for this call, e.g. `Safe` for a
    /// rate-limit call that carries a request id (repeating it cannot charge twice).
    pub(crate) async fn call_as<S: Callable>(
        &self,
        script: &'static S,
        keys: S::Keys<'_>,
        args: S::Args<'_>,
        retry: RetryClass,
    ) -> Result<S::Reply, Error> {
        let (keys, args) = (keys.as_ref(), args.as_ref());
        self.call_def(script.def(), keys, args, retry).await
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

    /// One attempt: a batchable script through its lane ([`super::batch`]: alone, or in the
    /// next call of the lane when calls are in flight), any other alone.
    pub(super) async fn attempt(
        &self,
        def: &'static ScriptDef,
        keys: &[&str],
        args: &[Arg<'_>],
    ) -> Result<Value, Error> {
        if let Some(cmd) = self.module_cmd(def, keys, args).await {
            match self.send_script(def, &cmd).await {
                // Nothing ran (a node without the module): the script, and no module until the
                // next detection.
                Err(e) if super::capabilities::unsupported(&e) => self.caps.refuse_module(),
                sent => return sent,
            }
        }
        let ran = match self.batch_of(def) {
            Some(batch) => self.batched(batch, def, keys, args).await,
            None => self.attempt_alone(def, keys, args).await,
        };
        if ran.is_ok() {
            self.detect_after(def); // on the connection that just answered
        }
        ran
    }

    /// One call of `def` of its own, with the single reload `NOSCRIPT` / a missing Function
    /// allows.
    pub(super) async fn attempt_alone(
        &self,
        def: &'static ScriptDef,
        keys: &[&str],
        args: &[Arg<'_>],
    ) -> Result<Value, Error> {
        let cmd = self.script_cmd(def, keys, args);
        self.reloading(def, || self.send_script(def, &cmd)).await
    }

    /// `send()`, and once more after loading `def` (its script, or its Function library) when
    /// the server did not have it: `NOSCRIPT`, or a missing Function, means nothing ran.
    pub(super) async fn reloading<T, F, Fut>(
        &self,
        def: &'static ScriptDef,
        send: F,
    ) -> Result<T, Error>
    where
        F: Fn() -> Fut,
        Fut: std::future::Future<Output = Result<T, Error>>,
    {
        match send().await {
            Err(Error::Rejected { code, .. }) if code == "NOSCRIPT" => {
                observe::noscript(def);
                self.load_script(def).await?;
                send().await
            }
            Err(err) if self.config.delivery == Delivery::Functions && function_missing(&err) => {
                observe::noscript(def);
                self.load_functions(def.library).await?;
                send().await
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
        let mut cmd = self.call_cmd(def);
        cmd.arg(keys.len()).arg(keys).arg(args);
        cmd
    }

    /// `EVALSHA <sha1>` / `FCALL <function>` of `def` (`_RO` for a `no-writes` script), to which
    /// the key count, keys and arguments follow.
    pub(super) fn call_cmd(&self, def: &ScriptDef) -> Cmd {
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
        cmd
    }

    /// Loads `scripts` on the server (on every primary in a cluster) before they are needed:
    /// `SCRIPT LOAD` of each, and with [`Delivery::Functions`] `FUNCTION LOAD` of each library
    /// they belong to (one already loaded under its name is left alone). What a deployment
    /// pre-loads: [`registry::ALL`] for the built-in scripts (e.g. before pipelining `EVALSHA`,
    /// where no `NOSCRIPT` fallback is possible), a user's generated `ALL`, or
    /// [`ScriptSet::defs`]. Calls load what they miss by themselves; this only saves the first
    /// call a round trip. A batchable script's batch entry point is loaded with it.
    pub async fn load(&self, scripts: &[&ScriptDef]) -> Result<(), Error> {
        let mut libraries: Vec<&LibraryDef> = Vec::new();
        let mut batches: Vec<&ScriptDef> = Vec::new();
        for def in scripts {
            self.load_script(def).await?;
            if let Some(batch) = def
                .batch
                .filter(|b| !batches.iter().any(|l| std::ptr::eq(*l, *b)))
            {
                self.load_script(batch).await?;
                batches.push(batch);
            }
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

    /// `SCRIPT LOAD` of one script (on every primary, through a cluster connection).
    pub(crate) async fn load_script(&self, def: &ScriptDef) -> Result<(), Error> {
        self.command(redis::cmd("SCRIPT").arg("LOAD").arg(def.source))
            .await
            .map(drop)
    }

    /// `FUNCTION LOAD` of `library` (every primary in a cluster). A library already loaded under
    /// that name is left alone: replacing it is the ops CLI's decision. Whether a refused load
    /// means "already there" (another client won the race) is asked of the server (`FUNCTION
    /// LIST`), not read from the error text. In a cluster that question goes to a random node,
    /// possibly a replica the winner's load has not reached yet, so it is asked again through the
    /// one retry loop while the answer is "not there": up to [`LIST_TRIES`] questions, jittered
    /// pauses of at most [`LIST_PAUSE`], before the refusal stands.
    pub(crate) async fn load_functions(&self, library: &LibraryDef) -> Result<(), Error> {
        let mut load = redis::cmd("FUNCTION");
        load.arg("LOAD").arg(library.source);
        let err = match self.command(&load).await {
            Err(err @ Error::Server { .. }) => err,
            other => return other.map(drop),
        };
        let mut list = redis::cmd("FUNCTION");
        list.arg("LIST").arg("LIBRARYNAME").arg(library.name);
        let policy = RetryPolicy::new(LIST_TRIES, LIST_PAUSE * LIST_TRIES * 2)
            .backoff(LIST_PAUSE / 2, LIST_PAUSE * 2);
        let rules = Rules {
            policy: &policy,
            started: std::time::Instant::now(),
            judge: &|e| Verdict::of(e, true), // FUNCTION LIST only reads
            conflict: &|there: &bool| (!there).then_some(LIST_PAUSE),
            on_retry: &retry::quiet,
        };
        let listed = retry::run(rules, || async {
            let reply = self.command(&list).await?;
            Ok(matches!(reply, Value::Array(libs) if !libs.is_empty()))
        });
        match listed.await.result? {
            true => Ok(()),
            false => Err(err),
        }
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
