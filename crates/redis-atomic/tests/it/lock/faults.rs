//! The lock under faults: lost replies, restarts, script-cache loss. Counters come from a real
//! metrics recorder of each test's own.

use crate::common::metrics::Recorded;
use crate::common::{
    assert_down, env_on, flush_env, impatient, own_env, patient, recovering, stalled_for,
    standalone, Mode, CLUSTER_MODES, MODES,
};
use redis_atomic::lease::{OwnerToken, Release};
use redis_atomic::lock::{Acquire, LockState, Locks};
use redis_atomic::script::registry::{self, LOCK_ACQUIRE};
use redis_atomic::{Client, Keyspace};
use redis_atomic::{Delivery, Error, RetryPolicy};
use redis_atomic_testkit::{ClusterOptions, Fsync, RedisCluster, ServerOptions};
use std::time::Duration;

/// Polls (bounded, 10 s: it ends as soon as the lock is held) until the lock is held; its fence.
async fn wait_held(locks: &Locks, resource: &str) -> Option<redis_atomic::lease::Fence> {
    for _ in 0..1000 {
        if let LockState::Locked { fence, .. } = locks.inspect(resource).await.unwrap() {
            return Some(fence);
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    None
}

/// The client of the one call that must lose its reply: short timeout, no retries. Every other
/// call of these tests goes through a patient client, so a loaded machine cannot fail them.
fn lossy(client: &Client, keyspace: &Keyspace) -> Locks {
    let client = impatient(client, Duration::from_millis(200), RetryPolicy::none());
    Locks::new(client, keyspace.clone())
}

/// `SCRIPT FLUSH` / `FUNCTION FLUSH` between calls is recovered transparently (one reload,
/// counted), in every mode; and the ops counters move with the outcome as label. (Lua forced:
/// on Valkey 9 a guard's release is otherwise `DELIFEQ`, which no flush touches.)
#[tokio::test]
async fn script_cache_loss_is_recovered_and_counted() {
    let m = Recorded::new();
    let _recording = m.on_this_thread();
    let counter = |name: &str, with: &[(&str, &str)]| m.counter(name, with);
    for mode in MODES {
        let env = flush_env(mode, "lock-flush", patient().force_lua(true)).await;
        let locks = Locks::new(env.client.clone(), env.keyspace.clone());
        let Acquire::Acquired(g) = locks.acquire("r", Duration::from_secs(5)).await.unwrap() else {
            panic!()
        };
        let before = counter(
            "redis_atomic_noscript_reloads_total",
            &[("script", "lock_release")],
        );
        let flush = match mode.delivery() {
            Delivery::Functions => redis::cmd("FUNCTION").arg("FLUSH").clone(),
            _ => redis::cmd("SCRIPT").arg("FLUSH").clone(),
        };
        env.raw(&flush).await;
        assert!(
            matches!(g.release().await.unwrap(), Release::Released { .. }),
            "{mode:?}"
        );
        let after = counter(
            "redis_atomic_noscript_reloads_total",
            &[("script", "lock_release")],
        );
        assert!(after > before, "{mode:?}: reload not counted");
    }
    assert!(
        counter(
            "redis_atomic_ops_total",
            &[
                ("primitive", "lock"),
                ("op", "acquire"),
                ("outcome", "acquired")
            ]
        ) >= 4
    );
    assert!(
        counter(
            "redis_atomic_ops_total",
            &[
                ("primitive", "lock"),
                ("op", "release"),
                ("outcome", "released")
            ]
        ) >= 4
    );
}

/// A reply lost after the script ran (server stalled past the client timeout): the caller sees
/// OutcomeUnknown, and retrying with the same owner token yields exactly one holder.
#[tokio::test]
async fn lost_reply_then_retry_yields_one_holder() {
    let m = Recorded::new();
    let _recording = m.on_this_thread();
    let counter = |name: &str, with: &[(&str, &str)]| m.counter(name, with);
    for mode in [Mode::StandaloneEval, Mode::StandaloneFunctions] {
        let env = own_env(mode, "lock-lost", patient()).await;
        let locks = Locks::new(env.client.clone(), env.keyspace.clone());
        let lossy = lossy(&env.client, &env.keyspace);
        // Every script cached: the stalled call cannot NOSCRIPT.
        env.client.load(registry::ALL).await.unwrap();
        let server = env.server.as_ref().unwrap();
        let token = OwnerToken::random();
        let before = counter(
            "redis_atomic_outcome_unknown_total",
            &[("primitive", "lock"), ("op", "acquire")],
        );
        server.pause(); // the request waits in the socket; the client gives up
        let r = lossy
            .acquire_with_token("r", &token, Duration::from_secs(30))
            .await;
        server.resume(); // ... and now the server runs it: executed, reply lost
        assert!(
            matches!(r, Err(Error::OutcomeUnknown { .. })),
            "{mode:?}: {r:?}"
        );
        assert!(
            counter(
                "redis_atomic_outcome_unknown_total",
                &[("primitive", "lock"), ("op", "acquire")]
            ) > before
        );
        // The lost request sits on a connection the pool dropped; the server runs it once it
        // reads that socket. Wait (bounded) until it has: otherwise nothing was lost.
        let fence = wait_held(&locks, "r").await.unwrap_or_else(|| {
            panic!("{mode:?}: the lost request never ran — the test did not exercise a lost reply")
        });
        let Acquire::Acquired(g) = locks
            .acquire_with_token("r", &token, Duration::from_secs(30))
            .await
            .unwrap()
        else {
            panic!("{mode:?}: retry with the same token refused")
        };
        assert_eq!(g.fence(), fence, "{mode:?}: retry issued a second fence");
        assert!(matches!(
            locks.acquire("r", Duration::from_secs(1)).await.unwrap(),
            Acquire::Held { .. }
        ));
    }
}

/// The same on a cluster, both deliveries: a dedicated 3-primary cluster (so stalling it
/// disturbs no other test) is stalled for 300 ms, well under its 1 s node timeout (no failover).
#[tokio::test]
async fn lost_reply_on_cluster_then_retry_yields_one_holder() {
    let cluster = RedisCluster::start(ClusterOptions::primaries_only()).unwrap();
    for mode in CLUSTER_MODES {
        let (delivery, env) = (
            mode.delivery(),
            env_on(&cluster, mode, "lock-lost-cluster", patient()).await,
        );
        let lossy = lossy(&env.client, &env.keyspace);
        let locks = Locks::new(env.client, env.keyspace);
        let token = OwnerToken::random();
        cluster.nodes().iter().for_each(|n| n.pause());
        let r = lossy
            .acquire_with_token("r", &token, Duration::from_secs(30))
            .await;
        cluster.nodes().iter().for_each(|n| n.resume());
        assert!(
            matches!(r, Err(Error::OutcomeUnknown { .. })),
            "{delivery:?}: {r:?}"
        );
        let fence = wait_held(&locks, "r")
            .await
            .unwrap_or_else(|| panic!("{delivery:?}: lost request never ran"));
        let Acquire::Acquired(g) = locks
            .acquire_with_token("r", &token, Duration::from_secs(30))
            .await
            .unwrap()
        else {
            panic!("{delivery:?}: retry with the same token refused")
        };
        assert_eq!(
            g.fence(),
            fence,
            "{delivery:?}: retry issued a second fence"
        );
        assert!(matches!(
            locks.acquire("r", Duration::from_secs(1)).await.unwrap(),
            Acquire::Held { .. }
        ));
    }
}

/// With retries on, a safe script retried after a timeout still ends with one holder and one
/// fence, and the retry is counted.
#[tokio::test]
async fn safe_script_retried_after_timeout() {
    let m = Recorded::new();
    let _recording = m.on_this_thread();
    let counter = |name: &str, with: &[(&str, &str)]| m.counter(name, with);
    let env = standalone("lock-retry", ServerOptions::default(), patient()).await;
    let locks = Locks::new(env.client.clone(), env.keyspace.clone());
    // Only the stalled acquire is impatient (and retried); the other calls are patient.
    let retrying = Locks::new(
        impatient(
            &env.client,
            Duration::from_millis(100),
            RetryPolicy::new(20, Duration::from_secs(10)),
        ),
        env.keyspace.clone(),
    );
    env.client.load(registry::ALL).await.unwrap();
    let server = env.server.as_ref().unwrap();
    let before = counter(
        "redis_atomic_retries_total",
        &[
            ("primitive", "lock"),
            ("op", "acquire"),
            ("reason", "timeout"),
        ],
    );
    let version = LOCK_ACQUIRE.def.version.to_string();
    let labels = [
        ("primitive", "lock"),
        ("op", "acquire"),
        ("version", version.as_str()),
    ];
    let timeouts = counter("redis_atomic_timeouts_total", &labels);
    let acquire = retrying.acquire("r", Duration::from_secs(30));
    let out = stalled_for(server, Duration::from_millis(250), acquire)
        .await
        .unwrap();
    let Acquire::Acquired(g) = out else {
        panic!("retry did not recognise its own lock")
    };
    assert!(
        counter(
            "redis_atomic_retries_total",
            &[
                ("primitive", "lock"),
                ("op", "acquire"),
                ("reason", "timeout")
            ]
        ) > before
    );
    let timed_out = counter("redis_atomic_timeouts_total", &labels);
    assert!(
        timed_out > timeouts,
        "timeouts counted: {timeouts} → {timed_out}"
    );
    assert!(
        matches!(locks.inspect("r").await.unwrap(), LockState::Locked { fence, .. } if fence == g.fence())
    );
}

/// While the server is down calls fail with a typed transport error; after a restart (AOF on)
/// the acknowledged lock is still there and the client recovers by itself.
#[tokio::test]
async fn restart_loses_nothing_acknowledged() {
    let opts = ServerOptions {
        appendonly: true,
        appendfsync: Some(Fsync::Always), // SIGKILL below: everysec may lose acked writes
        ..ServerOptions::default()
    };
    let mut env = standalone("lock-restart", opts, patient().retry(RetryPolicy::none())).await;
    let locks = Locks::new(env.client.clone(), env.keyspace.clone());
    let lossy = lossy(&env.client, &env.keyspace);
    let Acquire::Acquired(a) = locks.acquire("r", Duration::from_secs(60)).await.unwrap() else {
        panic!()
    };
    let server = env.server.as_mut().unwrap();
    server.kill();
    let down = lossy.acquire("r", Duration::from_secs(1)).await;
    assert_down(&down);
    server.restart().unwrap();
    let recovering = Locks::new(recovering(&env.client), env.keyspace.clone());
    assert!(matches!(
        recovering
            .acquire("r", Duration::from_secs(1))
            .await
            .unwrap(),
        Acquire::Held { .. }
    ));
    let fence = a.fence();
    assert_eq!(
        recovering.release("r", a.token(), fence).await.unwrap(),
        Release::Released { fence }
    );
}
