//! The semaphore under faults: a lost reply, script-cache loss, a restart. Typed outcomes, one
//! permit per holder, nothing acknowledged lost.

use crate::common::{flush_env, own_env, patient, sem, take, Mode};
use redis_atomic::lease::{OwnerToken, Release};
use redis_atomic::script::registry;
use redis_atomic::semaphore::{Acquire, Semaphore, SemaphoreConfig};
use redis_atomic::{Error, RetryPolicy};
use std::time::Duration;

/// A lost reply to an acquire (server stalled past the client timeout): OutcomeUnknown, and the
/// retry with the same holder finds its own permit: one permit, one fence.
#[tokio::test]
async fn lost_reply_then_retry_yields_one_permit() {
    for mode in [Mode::StandaloneEval, Mode::StandaloneFunctions] {
        let env = own_env(mode, "sem-lost", crate::common::patient()).await;
        env.client.load(registry::ALL).await.unwrap();
        let sem = sem(&env, "s", 1);
        // Only the stalled call is impatient: a loaded machine cannot fail the others.
        let lossy = Semaphore::new(
            crate::common::impatient(&env.client, Duration::from_millis(150), RetryPolicy::none()),
            &env.keyspace,
            "s",
            SemaphoreConfig::new(1),
        )
        .unwrap();
        let holder = OwnerToken::random();
        let server = env.server.as_ref().unwrap();
        server.pause();
        let r = lossy
            .acquire_with_token(&holder, Duration::from_secs(30))
            .await;
        server.resume();
        assert!(
            matches!(r, Err(Error::OutcomeUnknown { .. })),
            "{mode:?}: {r:?}"
        );
        let mut ran = false;
        for _ in 0..1000 {
            if sem.inspect().await.unwrap().live == 1 {
                ran = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert!(ran, "{mode:?}: the lost request never ran");
        let fence = sem.inspect().await.unwrap().last_fence;
        let p = take(&sem, &holder, Duration::from_secs(30)).await;
        assert_eq!(p.fence(), fence, "{mode:?}: retry issued a second permit");
        assert!(matches!(
            sem.acquire(Duration::from_secs(1)).await.unwrap(),
            Acquire::Full { .. }
        ));
    }
}

/// `SCRIPT FLUSH` / `FUNCTION FLUSH` between calls is recovered (one reload) for the semaphore's
/// and the fenced write's scripts, both deliveries. Standalone only (cluster reloads are the
/// client's, proven in `lock::faults`).
#[tokio::test]
async fn script_cache_loss_is_recovered() {
    for mode in [Mode::StandaloneEval, Mode::StandaloneFunctions] {
        let env = flush_env(mode, "sem-flush", patient()).await;
        let sem = sem(&env, "s", 1);
        let holder = OwnerToken::random();
        let permit = take(&sem, &holder, Duration::from_secs(30)).await;
        let fence = permit.fence();
        let flush = match mode.delivery() {
            redis_atomic::Delivery::Functions => redis::cmd("FUNCTION").arg("FLUSH").clone(),
            _ => redis::cmd("SCRIPT").arg("FLUSH").clone(),
        };
        env.raw(&flush).await;
        assert_eq!(
            permit.release().await.unwrap(),
            Release::Released { fence },
            "{mode:?}"
        );
        env.raw(&flush).await;
        let fenced =
            redis_atomic::fenced::FencedWrites::new(env.client.clone(), env.keyspace.clone());
        let key = fenced.key("r", "v").unwrap();
        let out = fenced
            .fenced_write("r", fence, &[redis_atomic::write::Write::set(&key, "1")])
            .await
            .unwrap();
        assert!(
            matches!(out, redis_atomic::fenced::Fenced::Applied { .. }),
            "{mode:?}"
        );
    }
}

/// After a restart (AOF on) an acknowledged permit is still held, its holder gets the same fence
/// back, and capacity still holds; while the server is down calls fail with a typed error.
#[tokio::test]
async fn restart_keeps_acknowledged_permits() {
    let opts = redis_atomic_testkit::ServerOptions {
        appendonly: true,
        ..Default::default()
    };
    let config = crate::common::patient().retry(RetryPolicy::none());
    let mut env = crate::common::standalone("sem-restart", opts, config).await;
    let sem = sem(&env, "s", 1);
    let lossy = Semaphore::new(
        crate::common::impatient(&env.client, Duration::from_millis(300), RetryPolicy::none()),
        &env.keyspace,
        "s",
        SemaphoreConfig::new(1),
    )
    .unwrap();
    let holder = OwnerToken::random();
    let permit = take(&sem, &holder, Duration::from_secs(60)).await;
    let server = env.server.as_mut().unwrap();
    server.kill();
    let down = lossy.acquire(Duration::from_secs(1)).await;
    crate::common::assert_down(&down);
    server.restart().unwrap();
    let patient = Semaphore::new(
        crate::common::recovering(&env.client),
        &env.keyspace,
        "s",
        SemaphoreConfig::new(1),
    )
    .unwrap();
    assert!(matches!(
        patient.acquire(Duration::from_secs(1)).await.unwrap(),
        Acquire::Full { .. }
    ));
    let again = take(&patient, &holder, Duration::from_secs(60)).await;
    assert_eq!(again.fence(), permit.fence());
}
