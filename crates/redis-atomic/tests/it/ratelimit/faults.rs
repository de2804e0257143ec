//! Rate limits under faults: script-cache loss, restart, OOM, lost replies. Typed errors, no
//! partial writes, and a request id is charged once however its replies were lost.

use crate::common::{
    assert_down, env_on, flush_env, impatient, own_env, patient, recovering, stalled_for,
    standalone, Env, Mode, CLUSTER_MODES, MODES,
};
use redis_atomic::ratelimit::{Decision, Limit, Policy, RateLimiter};
use redis_atomic::{Client, ClientConfig, Delivery, Error, Keyspace, RetryPolicy};
use redis_atomic_testkit::{ClusterOptions, Fsync, RedisCluster, ServerOptions};
use std::time::Duration;

const HOUR: Duration = Duration::from_secs(3600);

fn policy() -> Policy {
    Policy::new(vec![
        Limit::gcra(10, HOUR).unwrap().named("rate").unwrap(),
        Limit::sliding_log(10, HOUR).unwrap().named("log").unwrap(),
        Limit::fixed_window(10, 366 * 24 * HOUR)
            .unwrap()
            .named("window")
            .unwrap(),
    ])
    .unwrap()
}

/// The limiter of the one call that must lose its reply: short timeout, no retries. Every other
/// call goes through a patient client, so a loaded machine cannot fail it.
fn lossy(client: &Client, keyspace: &Keyspace) -> RateLimiter {
    let client = impatient(client, Duration::from_millis(200), RetryPolicy::none());
    RateLimiter::new(client, keyspace.clone(), policy())
}

/// The `remaining` of one more unit-cost request (which it charges when admitted).
async fn remaining(limiter: &RateLimiter, key: &str) -> u64 {
    match limiter.consume(key, 1).await.unwrap() {
        Decision::Allowed { remaining, .. } => remaining,
        other => panic!("{other:?}"),
    }
}

async fn state(env: &Env, limiter: &RateLimiter, key: &str) -> Vec<redis::Value> {
    let mut out = Vec::new();
    for k in limiter.keys(key, None).unwrap().limits {
        out.push(env.raw(redis::cmd("DUMP").arg(&k)).await);
    }
    out
}

/// `SCRIPT FLUSH` / `FUNCTION FLUSH` between calls: recovered transparently, state intact, for the
/// single-limit and the policy scripts, in every mode.
#[tokio::test]
async fn script_cache_loss_is_recovered() {
    for mode in MODES {
        let env = flush_env(mode, "rl-flush", patient()).await;
        let single = RateLimiter::new(
            env.client.clone(),
            env.keyspace.clone(),
            Limit::gcra(10, HOUR).unwrap(),
        );
        let multi = RateLimiter::new(env.client.clone(), env.keyspace.clone(), policy());
        assert_eq!(remaining(&single, "a").await, 9);
        assert_eq!(remaining(&multi, "b").await, 9);
        let flush = match mode.delivery() {
            Delivery::Functions => redis::cmd("FUNCTION").arg("FLUSH").clone(),
            _ => redis::cmd("SCRIPT").arg("FLUSH").clone(),
        };
        env.raw(&flush).await;
        assert_eq!(remaining(&single, "a").await, 8, "{mode:?}");
        env.raw(&flush).await;
        assert_eq!(remaining(&multi, "b").await, 8, "{mode:?}");
    }
}

/// Down: a typed transport error. After a restart (AOF on) every acknowledged charge is still
/// there and the client recovers by itself.
#[tokio::test]
async fn restart_keeps_acknowledged_charges() {
    let opts = ServerOptions {
        appendonly: true,
        appendfsync: Some(Fsync::Always), // SIGKILL below: everysec may lose acked writes
        ..ServerOptions::default()
    };
    let mut env = standalone("rl-restart", opts, patient().retry(RetryPolicy::none())).await;
    let limiter = RateLimiter::new(env.client.clone(), env.keyspace.clone(), policy());
    let lossy = lossy(&env.client, &env.keyspace);
    for _ in 0..3 {
        limiter.consume("k", 1).await.unwrap();
    }
    let server = env.server.as_mut().unwrap();
    server.kill();
    let down = lossy.consume("k", 1).await;
    assert_down(&down);
    server.restart().unwrap();
    let recovering = RateLimiter::new(recovering(&env.client), env.keyspace.clone(), policy());
    // The pooled connections died with the server: the first sends on them fail with an unknown
    // outcome, which only a request id makes safe to resend (the binding does, by itself).
    let d = recovering
        .consume_with_id("k", 1, "after-restart")
        .await
        .unwrap();
    assert!(matches!(d, Decision::Allowed { remaining: 6, .. }), "{d:?}");
}

/// Over `maxmemory` (noeviction) every consume is refused before running (`OOM`, typed): no
/// limit's state changes, for one limit and for a policy, in both deliveries.
#[tokio::test]
async fn oom_is_refused_with_no_partial_write() {
    let opts = ServerOptions {
        maxmemory: Some(64 << 20),
        ..ServerOptions::default()
    };
    for delivery in [Delivery::Eval, Delivery::Functions] {
        let env = standalone(
            "rl-oom",
            opts.clone(),
            ClientConfig::default().delivery(delivery),
        )
        .await;
        env.client
            .load(redis_atomic::script::registry::ALL)
            .await
            .unwrap();
        let single = RateLimiter::new(
            env.client.clone(),
            env.keyspace.clone(),
            Limit::sliding_log(10, HOUR).unwrap(),
        );
        let multi = RateLimiter::new(env.client.clone(), env.keyspace.clone(), policy());
        single.consume("k", 2).await.unwrap();
        multi.consume_with_id("k", 2, "r0").await.unwrap();
        let before = (
            state(&env, &single, "k").await,
            state(&env, &multi, "k").await,
        );
        // Fill, then lower maxmemory below what is used: firmly over it, whatever a request's
        // own buffers weigh.
        let filler = "x".repeat(64 << 10);
        for i in 0..16 {
            let key = format!("{}:fill:{i}", env.keyspace.namespace());
            env.raw(redis::cmd("SET").arg(key).arg(&filler)).await;
        }
        let info: String =
            redis::from_redis_value(env.raw(redis::cmd("INFO").arg("memory")).await).unwrap();
        let used: u64 = info
            .lines()
            .find_map(|l| l.strip_prefix("used_memory:"))
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        env.raw(
            redis::cmd("CONFIG")
                .arg("SET")
                .arg("maxmemory")
                .arg(used - (512 << 10)),
        )
        .await;
        for r in [
            single.consume("k", 1).await,
            multi.consume("k", 1).await,
            multi.consume_with_id("k", 1, "r1").await,
        ] {
            assert!(
                matches!(r, Err(Error::Rejected { ref code, .. }) if code == "OOM"),
                "{delivery:?}: {r:?}"
            );
        }
        let after = (
            state(&env, &single, "k").await,
            state(&env, &multi, "k").await,
        );
        assert_eq!(before, after, "{delivery:?}: partial write under OOM");
    }
}

/// A reply lost after the script ran (server stalled past the client timeout): OutcomeUnknown;
/// resending the same request id replays the decision, and the request was charged once.
#[tokio::test]
async fn lost_reply_then_same_id_is_charged_once() {
    for mode in [Mode::StandaloneEval, Mode::StandaloneFunctions] {
        let env = own_env(mode, "rl-lost", patient()).await;
        env.client
            .load(redis_atomic::script::registry::ALL)
            .await
            .unwrap();
        let limiter = RateLimiter::new(env.client.clone(), env.keyspace.clone(), policy());
        let lossy = lossy(&env.client, &env.keyspace);
        let server = env.server.as_ref().unwrap();
        server.pause();
        let r = lossy.consume_with_id("k", 1, "req-1").await;
        server.resume();
        assert!(
            matches!(r, Err(Error::OutcomeUnknown { .. })),
            "{mode:?}: {r:?}"
        );
        resend_is_charged_once(&env.client, &limiter).await;
    }
}

/// Waits (bounded, 10 s; it ends once the charge is visible) until the lost request has run,
/// then resends it: the resend is a replay and the request was charged once.
async fn resend_is_charged_once(client: &Client, limiter: &RateLimiter) {
    let key = limiter.keys("k", None).unwrap().limits.remove(0);
    let mut ran = false;
    for _ in 0..1000 {
        let n = client
            .command(redis::cmd("EXISTS").arg(&key))
            .await
            .unwrap();
        if redis::from_redis_value::<i64>(n).unwrap() == 1 {
            ran = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(
        ran,
        "the lost request never ran: the test did not exercise a lost reply"
    );
    let v = limiter
        .consume_detailed("k", 1, Some("req-1"))
        .await
        .unwrap();
    assert!(v.replayed, "{v:?}");
    assert_eq!(remaining(limiter, "k").await, 8, "charged twice");
}

/// With retries on, the binding itself resends a request id after a timeout: one Ok, one charge.
#[tokio::test]
async fn request_id_is_resent_by_the_binding() {
    let env = standalone("rl-resend", ServerOptions::default(), patient()).await;
    env.client
        .load(redis_atomic::script::registry::ALL)
        .await
        .unwrap();
    let limiter = RateLimiter::new(env.client.clone(), env.keyspace.clone(), policy());
    // Only the stalled call is impatient (and retried by the binding).
    let retrying = RateLimiter::new(
        impatient(
            &env.client,
            Duration::from_millis(100),
            RetryPolicy::new(20, Duration::from_secs(10)),
        ),
        env.keyspace.clone(),
        policy(),
    );
    let server = env.server.as_ref().unwrap();
    let consume = retrying.consume_with_id("k", 1, "req-1");
    let d = stalled_for(server, Duration::from_millis(250), consume)
        .await
        .unwrap();
    assert!(d.is_allowed());
    assert_eq!(remaining(&limiter, "k").await, 8, "charged twice");
}

/// The same on a cluster, both deliveries: a dedicated 3-primary cluster is stalled for 300 ms
/// (under its node timeout: no failover) while a request id is sent.
#[tokio::test]
async fn lost_reply_on_cluster_then_same_id_is_charged_once() {
    let cluster = RedisCluster::start(ClusterOptions::primaries_only()).unwrap();
    for mode in CLUSTER_MODES {
        let (delivery, env) = (
            mode.delivery(),
            env_on(&cluster, mode, "rl-lost-cluster", patient()).await,
        );
        let (client, ks) = (env.client, env.keyspace);
        let lossy = lossy(&client, &ks);
        let limiter = RateLimiter::new(client.clone(), ks, policy());
        cluster.nodes().iter().for_each(|n| n.pause());
        let r = lossy.consume_with_id("k", 1, "req-1").await;
        tokio::time::sleep(Duration::from_millis(100)).await;
        cluster.nodes().iter().for_each(|n| n.resume());
        assert!(
            matches!(r, Err(Error::OutcomeUnknown { .. })),
            "{delivery:?}: {r:?}"
        );
        resend_is_charged_once(&client, &limiter).await;
    }
}
