//! Batched vs one by one: the same decisions in the same order on two servers (one client with
//! batching off, one that batches everything that queues), clocks frozen at the same instants and
//! stepped between rounds so windows roll and keys expire. Replies and final state must be equal.
//! The batched side's decisions of a round are all polled while its server holds script calls,
//! so they queue behind each other however the test's threads are scheduled (unheld, a thread
//! descheduled between sending and reading could find its reply already there, and the next
//! decision a free slot).

use crate::bad_input::dynamic;
use crate::common::patient;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use redis::Value;
use redis_atomic::script::{registry, ScriptDef};
use redis_atomic::{Arg, Batching, Client, Delivery, Error};
use redis_atomic_testkit::{unique_prefix, RedisServer, ServerOptions};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Keys every decision draws from: shared by all scripts, so a key often holds another script's
/// type (`WRONGTYPE`, or a value that is not a number).
const KEYS: usize = 5;

/// One decision: a batchable script, its keys (indexes into the shared names) and arguments.
#[derive(Clone, Debug)]
struct Decision {
    script: usize,
    keys: Vec<usize>,
    args: Vec<String>,
}

fn batchable() -> Vec<&'static ScriptDef> {
    registry::ALL
        .iter()
        .copied()
        .filter(|d| d.batch.is_some())
        .collect()
}

/// Batchable scripts whose replies and state never depend on the server's clock when the rate
/// limits get a test clock: what runs on a server whose clock the testkit cannot freeze to the
/// microsecond (Valkey derives its time from the CPU's counter between readings).
const CLOCKLESS: &[&str] = &[
    "quota_add",
    "quota_add_id",
    "lock_release",
    "sem_release",
    "rl_fixed_window",
    "rl_gcra",
    "rl_sliding_log",
    "rl_sliding_window",
    "rl_token_bucket",
    "rl_policy",
];

/// Plausible values per argument name (so most decisions do something), and a bad one now and
/// then (refused with a typed error, which must not disturb the others).
fn values(name: &str) -> &'static [&'static str] {
    match name {
        "token" | "holder" => &["t1", "t2"],
        "fence" => &["1", "2", "3"],
        "fingerprint" => &["f1", "f2"],
        "ttl_ms" | "result_ttl_ms" | "request_ttl_ms" => &["60000", "1500"],
        // Only the first value on a clock that cannot be frozen (nothing expires mid-test).
        "delta" => &["1", "4", "-2"],
        "min" => &["0", "-3"],
        "max" => &["10", "6"],
        "mode" => &["refuse", "clamp"],
        "cost" => &["1", "2"],
        "limit" => &["3", "5"],
        "period_ms" => &["1000", "60000"],
        "period_us" => &["1000000", "60000000"],
        "burst" => &["0", "2"],
        "capacity" => &["1", "2"],
        "request_id" => &["", "r1", "r2"],
        "request_ttl_us" => &["60000000"],
        _ => &[""], // test_now_us: the server's (frozen) clock
    }
}

/// `rl_policy`'s variadic tail: one limit per key after the request key.
fn policy_spec(limits: usize, pick: &[usize], frozen: bool) -> Vec<String> {
    const ALGOS: [&str; 6] = ["fw", "sl", "sw", "tb", "gcra", "aw"];
    let algos = if frozen { 6 } else { 5 }; // the anchored window takes no test clock
    (0..limits)
        .flat_map(|i| {
            let p = pick.get(i).copied().unwrap_or(0);
            [
                ALGOS[p % algos].to_string(),
                ["3", "5"][p % 2].to_string(),
                "1000000".to_string(),
                "0".to_string(),
            ]
        })
        .collect()
}

/// The scripts a decision may call: all batchable ones on a frozen clock, else [`CLOCKLESS`].
fn scripts(frozen: bool) -> Vec<usize> {
    let all = batchable();
    (0..all.len())
        .filter(|&i| frozen || CLOCKLESS.contains(&all[i].name))
        .collect()
}

fn decision(frozen: bool) -> impl Strategy<Value = Decision> {
    let choice = scripts(frozen);
    (
        proptest::sample::select(choice),
        proptest::collection::vec(0..KEYS, 4),
        proptest::collection::vec(0usize..64, 12),
        1usize..4,
    )
        .prop_map(move |(script, keys, picks, limits)| {
            let def = batchable()[script];
            let variadic = def.variadic();
            let nkeys = if variadic { 1 + limits } else { def.keys.len() };
            let fixed: Vec<&str> = def
                .args
                .iter()
                .filter(|a| !a.ends_with("..."))
                .copied()
                .collect();
            let mut args: Vec<String> = fixed
                .iter()
                .zip(&picks)
                .map(|(name, p)| match p {
                    0 => "abc".to_string(), // 1 in 64: a bad argument
                    _ if !frozen && name.ends_with("ttl_ms") => "60000".to_string(),
                    _ if !frozen && *name == "period_us" => "60000000".to_string(),
                    p => values(name)[p % values(name).len()].to_string(),
                })
                .collect();
            if variadic {
                args.extend(policy_spec(limits, &picks[fixed.len()..], frozen));
            }
            let keys = (0..nkeys).map(|i| keys[i % keys.len()]).collect();
            Decision { script, keys, args }
        })
}

/// Rounds of decisions, each preceded by how far the frozen clocks step (0 ms: the same instant).
fn rounds(frozen: bool) -> impl Strategy<Value = (Delivery, Vec<(u64, Vec<Decision>)>)> {
    let delivery = prop_oneof![Just(Delivery::Eval), Just(Delivery::Functions)];
    let step = prop_oneof![Just(0u64), Just(400), Just(1100), Just(61_000)];
    let round = (step, proptest::collection::vec(decision(frozen), 1..12));
    (delivery, proptest::collection::vec(round, 1..6))
}

/// A reply or error as compared: an error by its kind and message (a raised error answered inside
/// a batch lacks the `script: …, on @user_script:N.` suffix a lone call appends).
fn outcome(r: Result<redis_atomic::script::RawReply, Error>) -> String {
    match r {
        Ok(reply) => format!("{reply:?}"),
        Err(e) => {
            let text = e.to_string();
            let text = text
                .split(" script: ")
                .next()
                .unwrap_or_default()
                .to_string();
            format!("{}: {text}", e.label())
        }
    }
}

struct Side {
    server: RedisServer,
    client: Client,
}

/// Runs `round`; `now` fills the rate limits' `test_now_us` (`None`: the server's clock).
async fn run(
    side: &Side,
    prefix: &str,
    round: &[Decision],
    batched: bool,
    now: Option<u128>,
) -> Vec<String> {
    let names: Vec<String> = (0..KEYS).map(|i| format!("{{{prefix}}}:k{i}")).collect();
    let now = now.map(|us| us.to_string()).unwrap_or_default();
    let calls = round.iter().map(|d| {
        let def = dynamic(batchable()[d.script]);
        let keys: Vec<&str> = d.keys.iter().map(|&k| names[k].as_str()).collect();
        let args: Vec<Arg<'_>> = d
            .args
            .iter()
            .zip(def.args.iter().chain(std::iter::repeat(&"spec")))
            .map(|(a, name)| match *name {
                "test_now_us" => Arg::Bytes(now.as_bytes()),
                _ => Arg::Bytes(a.as_bytes()),
            })
            .collect();
        async move { outcome(side.client.call(def, &keys, &args).await) }
    });
    if batched {
        // Polled once in order while the server holds script calls: the first goes alone and
        // cannot finish within that poll (however late its thread runs), so the rest queue
        // behind it in order; then the server resumes.
        let mut all = std::pin::pin!(futures::future::join_all(calls));
        pause(&side.server, true);
        let first = futures::poll!(all.as_mut());
        pause(&side.server, false);
        match first {
            std::task::Poll::Ready(out) => out,
            std::task::Poll::Pending => all.await,
        }
    } else {
        let mut out = Vec::new();
        for call in calls {
            out.push(call.await);
        }
        out
    }
}

/// `CLIENT PAUSE … WRITE` (every batchable script writes: its calls wait) or `CLIENT UNPAUSE`,
/// on a connection of its own.
fn pause(server: &RedisServer, on: bool) {
    let mut conn = server.client().get_connection().unwrap();
    let mut cmd = redis::cmd("CLIENT");
    match on {
        true => cmd.arg("PAUSE").arg(60_000).arg("WRITE"),
        false => cmd.arg("UNPAUSE"),
    };
    let () = cmd.query(&mut conn).unwrap();
}

/// Every shared key's value and remaining life (on a clock that runs, only whether it has one).
async fn state(side: &Side, prefix: &str, frozen: bool) -> Vec<(Value, Value)> {
    let mut out = Vec::new();
    for i in 0..KEYS {
        let key = format!("{{{prefix}}}:k{i}");
        let dump = side
            .client
            .command(redis::cmd("DUMP").arg(&key))
            .await
            .unwrap();
        let pttl = side
            .client
            .command(redis::cmd("PTTL").arg(&key))
            .await
            .unwrap();
        let pttl = match pttl {
            Value::Int(ms) if !frozen && ms > 0 => Value::Int(1),
            other => other,
        };
        out.push((dump, pttl));
    }
    out
}

fn sides(delivery: Delivery) -> [Side; 2] {
    [false, true].map(|batched| {
        let server = RedisServer::start(ServerOptions {
            clock: true,
            ..Default::default()
        })
        .unwrap();
        let batching = match batched {
            false => Batching::off(),
            true => Batching::default().in_flight(1).min_batch(2),
        };
        let config = patient().delivery(delivery).batching(batching);
        let rt = tokio::runtime::Handle::current();
        let client =
            tokio::task::block_in_place(|| rt.block_on(Client::connect(&server.url(), config)))
                .unwrap();
        Side { server, client }
    })
}

/// Whether the server's clock can be frozen to the microsecond: Redis reads the wall clock (which
/// the testkit's shim stops); Valkey adds the CPU's counter to its last reading, which no shim
/// stops, so there the rate limits get a test clock and only [`CLOCKLESS`] scripts run.
fn freezable(server: &RedisServer) -> bool {
    let mut conn = server.client().get_connection().unwrap();
    let info: String = redis::cmd("INFO").arg("server").query(&mut conn).unwrap();
    !info.contains("valkey_version")
}

/// Random rounds on both servers: identical replies, identical final state, and batches sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn batched_equals_one_by_one() {
    let pairs = [sides(Delivery::Eval), sides(Delivery::Functions)];
    let mut runner = TestRunner::new(Config {
        cases: 12,
        failure_persistence: None,
        ..Config::default()
    });
    let rt = tokio::runtime::Handle::current();
    let start = SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
    let case = std::cell::Cell::new(0u64);
    let frozen = freezable(&pairs[0][0].server);
    runner
        .run(&rounds(frozen), |(delivery, rounds)| {
            case.set(case.get() + 1);
            let case = case.get();
            let [one, batched] = &pairs[usize::from(delivery == Delivery::Functions)];
            let prefix = unique_prefix(&format!("exact{case}"));
            // Each case starts a day after the last: nothing of an earlier case is alive.
            let mut at = start + Duration::from_secs(86_400 * case);
            let before = batched.client.batch_stats();
            tokio::task::block_in_place(|| {
                rt.block_on(async {
                    for (i, (step, round)) in rounds.iter().enumerate() {
                        at += Duration::from_millis(*step);
                        let now = match frozen {
                            true => {
                                for side in [one, batched] {
                                    side.server.freeze_clock(Some(at)).unwrap();
                                }
                                None
                            }
                            false => Some(at.as_micros()),
                        };
                        let alone = run(one, &prefix, round, false, now).await;
                        let together = run(batched, &prefix, round, true, now).await;
                        prop_assert_eq!(&alone, &together, "round {}: {:?}", i, round);
                    }
                    let states = (
                        state(one, &prefix, frozen).await,
                        state(batched, &prefix, frozen).await,
                    );
                    prop_assert_eq!(states.0, states.1);
                    Ok(())
                })
            })?;
            // Every decision left once. In each round at least all but the first waited (the
            // first waits too if the last round's batch still held the slot), in at most two
            // groups (the slot's holder may take the first few before the rest are queued): a
            // round of three or more sent a batch.
            let stats = batched.client.batch_stats().since(&before);
            let decisions: usize = rounds.iter().map(|(_, r)| r.len()).sum();
            prop_assert_eq!(stats.decisions, decisions as u64);
            prop_assert_eq!(
                stats.alone + stats.batched + stats.separate,
                decisions as u64
            );
            let threes = rounds.iter().filter(|(_, r)| r.len() >= 3).count();
            prop_assert!(stats.batches >= threes as u64, "{:?}", stats);
            Ok(())
        })
        .unwrap();
    // Over all cases, decisions did leave in batches of several.
    let stats = pairs[0][1].client.batch_stats();
    let stats2 = pairs[1][1].client.batch_stats();
    assert!(
        stats.batches > 0 && stats2.batches > 0,
        "{stats:?} {stats2:?}"
    );
}
