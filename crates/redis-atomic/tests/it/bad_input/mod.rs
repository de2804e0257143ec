//! The bad-input sweep: every script in the registry, every argument replaced in turn by hostile
//! values (empty, binary, 1 MiB, zero, negative, near 2^53, i64::MAX, not a number), and every
//! key in turn holding another type. A script must answer with a value or a typed error
//! (`BadArgument`, `WrongType`), never a Lua runtime error; when it refuses, no key changed; a
//! key of another type is never overwritten. Plus a proptest of the argument encoding.

use crate::common::{env, patient, Env, Mode};
use proptest::prelude::*;
use redis::Value;
use redis_atomic::script::{registry, DynScript, RawReply, ScriptDef};
use redis_atomic::{Arg, Error};
use std::sync::OnceLock;

/// The built-in script `def` as a run-time script: the same name, bytes, function and library,
/// its counts checked at the call (so any count can be sent), its reply decoded only as far as
/// its declared status word. Built once per script.
pub(crate) fn dynamic(def: &'static ScriptDef) -> &'static DynScript<RawReply> {
    static ALL: OnceLock<Vec<&'static DynScript<RawReply>>> = OnceLock::new();
    let all = ALL.get_or_init(|| {
        let copy = |d: &'static ScriptDef| ScriptDef {
            name: d.name,
            version: d.version,
            summary: d.summary,
            invariant: d.invariant,
            keys: d.keys,
            args: d.args,
            returns: d.returns,
            statuses: d.statuses,
            retry: d.retry,
            flags: d.flags,
            sha1: d.sha1,
            source: d.source,
            function: d.function,
            function_body: d.function_body,
            library: d.library,
            batch: d.batch,
        };
        let leak = |d| &*Box::leak(Box::new(DynScript::new(copy(d))));
        registry::ALL.iter().map(|d| leak(d)).collect()
    });
    all.iter().copied().find(|s| s.name == def.name).unwrap()
}

fn hostile() -> Vec<Vec<u8>> {
    let mut v: Vec<Vec<u8>> = [
        "",
        "0",
        "-1",
        "-9223372036854775808",
        "9223372036854775807",
        "9007199254740993",
        "18446744073709551616",
        "1e308",
        "nan",
        "inf",
        "0x10",
        " 7",
        "1.5",
        "abc",
        "a\nb",
        "{tag}",
    ]
    .iter()
    .map(|s| s.as_bytes().to_vec())
    .collect();
    v.push(vec![0xff, 0xfe, 0x00, 0x80]);
    v.push(vec![b'x'; 1 << 20]);
    v
}

fn keys_for(env: &Env, def: &ScriptDef) -> Vec<String> {
    (0..def.keys.len())
        .map(|i| {
            env.keyspace
                .key("sweep", 1, def.name, &[&format!("k{i}")])
                .unwrap()
        })
        .collect()
}

/// Each key's serialized value (DUMP), hashed so a failure message stays readable.
async fn dump(env: &Env, keys: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for k in keys {
        let v = env.raw(redis::cmd("DUMP").arg(k)).await;
        out.push(sha1_smol::Sha1::from(format!("{v:?}")).digest().to_string());
    }
    out
}

/// A baseline every argument accepts (a number, a token, a TTL long enough not to expire during
/// the sweep); each hostile value replaces one argument at a time.
const BASELINE: &[u8] = b"60000";

/// Acceptable: a reply, or a typed refusal. A `Server` error from a script is a script bug.
fn judge<T: std::fmt::Debug>(def: &ScriptDef, what: &str, result: &Result<T, Error>) {
    match result {
        Ok(_) | Err(Error::BadArgument(_)) | Err(Error::WrongType(_)) => {}
        Err(e) => panic!("{}: {what}: {e:?}", def.name),
    }
}

/// Every argument of every script, replaced in turn by each hostile value: typed answers only,
/// and a refusal changes nothing.
#[tokio::test]
async fn every_script_every_argument() {
    for mode in [Mode::StandaloneEval, Mode::StandaloneFunctions] {
        let env = env(mode, "sweep-args", patient()).await;
        for def in registry::ALL {
            let keys = keys_for(&env, def);
            let key_refs: Vec<&str> = keys.iter().map(String::as_str).collect();
            for i in 0..def.args.len() {
                for bad in hostile() {
                    let mut args: Vec<Arg<'_>> = vec![Arg::Bytes(BASELINE); def.args.len()];
                    args[i] = Arg::Bytes(&bad);
                    let before = dump(&env, &keys).await;
                    let r = env.client.call(dynamic(def), &key_refs, &args).await;
                    let what = format!("{mode:?} arg {} = {:?}", def.args[i], preview(&bad));
                    judge(def, &what, &r);
                    if r.is_err() {
                        assert_eq!(before, dump(&env, &keys).await, "{}: {what}", def.name);
                    }
                }
            }
        }
    }
}

/// Each key in turn holds a list or a stream (types no script uses, so for every key they are
/// "another primitive's data"): the script refuses or ignores it, and never overwrites it.
#[tokio::test]
async fn every_script_every_key_of_another_type() {
    let env = env(Mode::StandaloneEval, "sweep-types", patient()).await;
    let writers: [(&str, &[&str]); 2] = [("RPUSH", &["a"]), ("XADD", &["*", "f", "v"])];
    for def in registry::ALL {
        for cmd in redis_atomic_scripts::check::called_commands(def.source) {
            let cmd = cmd.to_ascii_uppercase();
            assert!(
                !(cmd.starts_with('L') || cmd.starts_with('R') || cmd.starts_with('X')),
                "{} calls {cmd}: pick other types for this sweep",
                def.name
            );
        }
    }
    for def in registry::ALL {
        let keys = keys_for(&env, def);
        let key_refs: Vec<&str> = keys.iter().map(String::as_str).collect();
        for (k, key) in keys.iter().enumerate() {
            for (cmd, cmd_args) in writers {
                let _ = env.raw(redis::cmd("DEL").arg(&keys)).await;
                env.raw(redis::cmd(cmd).arg(key).arg(cmd_args)).await;
                let before = dump(&env, std::slice::from_ref(key)).await;
                let args = vec![Arg::Bytes(BASELINE); def.args.len()];
                let r = env.client.call(dynamic(def), &key_refs, &args).await;
                judge(def, &format!("{} holds a {cmd} type", def.keys[k]), &r);
                assert_eq!(
                    before,
                    dump(&env, std::slice::from_ref(key)).await,
                    "{}: {} of another type was overwritten",
                    def.name,
                    def.keys[k]
                );
            }
        }
    }
}

/// The library refuses a key or argument count that differs from the header before sending.
#[tokio::test]
async fn counts_that_disagree_with_the_header_are_refused() {
    let env = env(Mode::StandaloneEval, "sweep-counts", patient()).await;
    for def in registry::ALL {
        let r = env.client.call(dynamic(def), &[], &[]).await;
        if !def.keys.is_empty() || !def.args.is_empty() {
            assert!(
                matches!(r, Err(Error::BadArgument(_))),
                "{}: {r:?}",
                def.name
            );
        }
    }
}

fn preview(b: &[u8]) -> String {
    let s = String::from_utf8_lossy(&b[..b.len().min(24)]).into_owned();
    if b.len() > 24 {
        format!("{s}… ({} bytes)", b.len())
    } else {
        s
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Arguments reach the server byte-exact: any bytes, any i64.
    #[test]
    fn argument_encoding_is_exact(bytes in proptest::collection::vec(any::<u8>(), 0..512), n in any::<i64>()) {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async {
            let env = env(Mode::StandaloneEval, "prop", patient()).await;
            let mut cmd = redis::cmd("EVAL");
            cmd.arg("return ARGV").arg(0).arg(Arg::Bytes(&bytes)).arg(Arg::Int(n));
            let echoed = env.raw(&cmd).await;
            let expected = Value::Array(vec![
                Value::BulkString(bytes.clone()),
                Value::BulkString(n.to_string().into_bytes()),
            ]);
            prop_assert_eq!(echoed, expected);
            Ok(())
        })?;
    }
}
