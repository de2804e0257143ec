//! Section `replies`: a script's raw reply → its status word and fields, or the error a malformed
//! reply is. Decoded by the generated reply types (`build.rs` makes one per script from its
//! `returns:` header); a case's fields are checked by rendering the value the file describes in
//! the generated type's shape and comparing it with what the decoder made of the raw reply.

use super::vectors::{bytes, cases, expected, text, Check};
use redis::Value as Resp;
use redis_atomic::lease::Fence;
use redis_atomic::script::registry::{self, *};
use redis_atomic::script::{find, FromReply, Reply};
use redis_atomic::Error;
use redis_atomic_scripts::returns::{self, Field, Item, Type};
use serde_json::{json, Value};
use std::fmt::Debug;
use std::time::Duration;

#[test]
fn replies() {
    let mut check = Check::new("replies");
    for case in cases("replies") {
        let script = text(&case, "script");
        let actual = match decoded(script, &case["raw"]) {
            Ok((status, debug)) => json!({ "status": status, "debug": debug }),
            Err(e) => json!({ "error": e.code() }),
        };
        let mut want = expected(&case, &["script", "raw", "outcome"]);
        if let Some(fields) = want.as_object_mut().and_then(|o| o.remove("fields")) {
            let status = text(&case, "status");
            match render(script, status, &fields) {
                Ok(debug) => want["debug"] = json!(debug),
                Err(why) => check.fail(format!("{}: {why}", case["id"])),
            }
        }
        check.compare(&case, &want, &actual);
    }
    check.finish();
}

/// Every status word every built-in script's header declares has a case: a script that gains a
/// status fails here until the vectors have it.
#[test]
fn every_status_has_a_case() {
    let cases = cases("replies");
    let mut missing = Vec::new();
    for def in registry::ALL {
        for status in def.statuses {
            let covered = cases.iter().any(|c| {
                c["script"] == def.name && c["status"] == *status && c.get("error").is_none()
            });
            if !covered {
                missing.push(format!("{}/{status}", def.name));
            }
        }
    }
    assert!(missing.is_empty(), "no reply case for {missing:?}");
}

/// The raw reply of the file as the server would send it. A `{"error": "CODE message"}` reply
/// is classified as the client classifies a server's error reply.
fn resp(raw: &Value) -> Result<Resp, Error> {
    Ok(match raw {
        Value::Null => Resp::Nil,
        Value::Number(n) => Resp::Int(n.as_i64().expect("an i64")),
        Value::Array(items) => Resp::Array(items.iter().map(resp).collect::<Result<_, _>>()?),
        Value::Object(o) if o.contains_key("error") => {
            let line = o["error"].as_str().expect("an error line");
            let (code, message) = line.split_once(' ').unwrap_or((line, ""));
            return Err(Error::from_server_error(code, message));
        }
        other => Resp::BulkString(bytes(other)),
    })
}

/// The status word and the decoded value's `Debug`.
fn decoded(script: &str, raw: &Value) -> Result<(String, String), Error> {
    let value = resp(raw)?;
    let def = find(script).unwrap_or_else(|| panic!("no built-in script {script:?}"));
    decode(def.name, value).unwrap_or_else(|| panic!("no decoder for {script}: add it below"))
}

fn typed<R: FromReply + Debug>(name: &'static str, value: Resp) -> Result<(String, String), Error> {
    let reply = R::from_reply(Reply::parse(name, value)?)?;
    Ok((reply.status().to_string(), format!("{reply:?}")))
}

macro_rules! decoders {
    ($($name:literal => $ty:ty,)*) => {
        /// The generated reply type of each built-in script.
        fn decode(name: &'static str, value: Resp) -> Option<Result<(String, String), Error>> {
            Some(match name {
                $($name => typed::<$ty>(name, value),)*
                _ => return None,
            })
        }
    };
}

decoders! {
    "fenced_write" => FencedWriteReply,
    "idem_begin" => IdemBeginReply,
    "idem_complete" => IdemCompleteReply,
    "idem_extend" => IdemExtendReply,
    "lock_acquire" => LockAcquireReply,
    "lock_extend" => LockExtendReply,
    "lock_inspect" => LockInspectReply,
    "lock_release" => LockReleaseReply,
    "queue_ack" => QueueAckReply,
    "queue_claim" => QueueClaimReply,
    "queue_claim_id" => QueueClaimIdReply,
    "queue_dead_list" => QueueDeadListReply,
    "queue_dead_purge" => QueueDeadPurgeReply,
    "queue_dead_requeue" => QueueDeadRequeueReply,
    "queue_enqueue" => QueueEnqueueReply,
    "queue_extend" => QueueExtendReply,
    "queue_inspect" => QueueInspectReply,
    "queue_nack" => QueueNackReply,
    "queue_reap" => QueueReapReply,
    "queue_stats" => QueueStatsReply,
    "quota_add" => QuotaAddReply,
    "quota_add_id" => QuotaAddIdReply,
    "quota_max" => QuotaMaxReply,
    "rl_anchored_window" => RlAnchoredWindowReply,
    "rl_fixed_window" => RlFixedWindowReply,
    "rl_gcra" => RlGcraReply,
    "rl_policy" => RlPolicyReply,
    "rl_sliding_log" => RlSlidingLogReply,
    "rl_sliding_window" => RlSlidingWindowReply,
    "rl_token_bucket" => RlTokenBucketReply,
    "sem_acquire" => SemAcquireReply,
    "sem_extend" => SemExtendReply,
    "sem_inspect" => SemInspectReply,
    "sem_release" => SemReleaseReply,
}

/// `not_held` → `NotHeld`: how the generator names variants and types.
fn camel(name: &str) -> String {
    name.split('_')
        .map(|p| {
            let mut c = p.chars();
            c.next().map_or(String::new(), |f| {
                f.to_ascii_uppercase().to_string() + c.as_str()
            })
        })
        .collect()
}

/// The file's name of a field: the header's, with `_ms` / `_us` for durations.
fn json_name(f: &Field) -> String {
    match f.ty {
        Type::Ms => format!("{}_ms", f.name),
        Type::Us => format!("{}_us", f.name),
        _ => f.name.clone(),
    }
}

/// The `Debug` of the generated value the file's `fields` describe for `status` of `script`.
fn render(script: &str, status: &str, fields: &Value) -> Result<String, String> {
    let def = find(script).ok_or("no such script")?;
    let shapes = returns::parse(def.returns)?;
    let shape = shapes
        .shapes
        .iter()
        .find(|s| s.status == status)
        .ok_or(format!("{script} declares no status {status:?}"))?;
    let given = fields.as_object().ok_or("fields must be an object")?;
    let mut names = Vec::new();
    let mut parts = Vec::new();
    for item in &shape.items {
        let (name, text) = match item {
            Item::Field(f) => (json_name(f), field(f, &given.get(&json_name(f)))?),
            Item::Group(g) => {
                let reps = given
                    .get(&g.name)
                    .and_then(Value::as_array)
                    .ok_or(format!("{} must be an array", g.name))?;
                let ty = format!("{}{}Item", camel(script), camel(&g.name));
                let mut items = Vec::new();
                for rep in reps {
                    let mut inner = Vec::new();
                    for f in &g.fields {
                        inner.push(format!("{}: {}", f.name, field(f, &rep.get(json_name(f)))?));
                    }
                    items.push(format!("{ty} {{ {} }}", inner.join(", ")));
                }
                (g.name.clone(), format!("[{}]", items.join(", ")))
            }
        };
        let rust_name = match item {
            Item::Field(f) => f.name.clone(),
            Item::Group(g) => g.name.clone(),
        };
        names.push(name);
        parts.push(format!("{rust_name}: {text}"));
    }
    if let Some(extra) = given.keys().find(|k| !names.contains(k)) {
        return Err(format!(
            "field {extra:?} is not in the header of {script}/{status}"
        ));
    }
    let variant = camel(status);
    Ok(if parts.is_empty() {
        variant
    } else {
        format!("{variant} {{ {} }}", parts.join(", "))
    })
}

/// The `Debug` of one field's generated value.
fn field(f: &Field, v: &Option<&Value>) -> Result<String, String> {
    let missing = || {
        format!(
            "field {:?} is missing or of the wrong JSON type",
            json_name(f)
        )
    };
    let Some(v) = v.filter(|v| !v.is_null()) else {
        return if f.optional {
            Ok("None".into())
        } else {
            Err(missing())
        };
    };
    let uint = || v.as_u64().ok_or_else(missing);
    let text = match &f.ty {
        Type::Uint => uint()?.to_string(),
        Type::Int => v.as_i64().ok_or_else(missing)?.to_string(),
        Type::Bool => v.as_bool().ok_or_else(missing)?.to_string(),
        Type::Ms => format!("{:?}", Duration::from_millis(uint()?)),
        Type::Us => format!("{:?}", Duration::from_micros(uint()?)),
        Type::Fence => format!("{:?}", Fence(uint()?)),
        Type::Bytes => format!("{:?}", bytes(v)),
        Type::Str | Type::Text => format!("{:?}", v.as_str().ok_or_else(missing)?),
        Type::Word(_) => camel(v.as_str().ok_or_else(missing)?),
    };
    Ok(if f.optional {
        format!("Some({text})")
    } else {
        text
    })
}
