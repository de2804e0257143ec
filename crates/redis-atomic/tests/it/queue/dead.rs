//! The queue's dead letters are bounded: at most `max_dead_letters`, none kept past
//! `dead_letter_retention`, trimmed by the scripts that bury jobs (nack, reap, claim), and
//! purged on demand; a trimmed or purged letter takes its record, payload and last error with
//! it. Standalone, EVALSHA and FCALL (the trim is script logic; topology does not change it).

use crate::common::{env, patient, queue, Env, Mode};
use redis_atomic::lease::OwnerToken;
use redis_atomic::queue::{Claim, Job, Nack, Purged, Queue, QueueConfig, RunAt};
use std::collections::HashSet;
use std::num::NonZeroU32;
use std::time::{Duration, Instant};

const MODES: [Mode; 2] = [Mode::StandaloneEval, Mode::StandaloneFunctions];

/// Bound of the polling waits: generous, they end as soon as their condition holds.
const WAIT: Duration = Duration::from_secs(10);

/// Jobs die on their first failed delivery.
fn fragile() -> QueueConfig {
    QueueConfig::default().max_deliveries(NonZeroU32::MIN)
}

async fn enqueue(q: &Queue, ids: impl IntoIterator<Item = String>) {
    for id in ids {
        q.enqueue(&id, id.as_bytes(), RunAt::Now).await.unwrap();
    }
}

async fn claim(q: &Queue, visibility: Duration, n: usize) -> Vec<Job> {
    match q.claim(&OwnerToken::random(), visibility, n).await.unwrap() {
        Claim::Claimed(jobs) => jobs,
        _ => Vec::new(),
    }
}

/// Members of a zset or fields of a hash.
async fn members(env: &Env, key: &str) -> HashSet<String> {
    let ty: String = redis::from_redis_value(env.raw(redis::cmd("TYPE").arg(key)).await).unwrap();
    let cmd = match ty.as_str() {
        "zset" => redis::cmd("ZRANGE").arg(key).arg(0).arg(-1).clone(),
        "hash" => redis::cmd("HKEYS").arg(key).clone(),
        _ => return HashSet::new(),
    };
    redis::from_redis_value(env.raw(&cmd).await).unwrap()
}

/// Every record, payload and last error the queue keeps belongs to a job it still has: the
/// dead letters plus `live`. Returns the dead letters.
async fn no_orphans(env: &Env, q: &Queue, live: &HashSet<String>) -> HashSet<String> {
    let k = q.keys();
    let dead = members(env, &k.dead).await;
    let kept: HashSet<String> = dead.union(live).cloned().collect();
    for hash in [&k.meta, &k.payload, &k.errors] {
        let fields = members(env, hash).await;
        assert!(
            fields.is_subset(&kept),
            "{hash}: {:?}",
            fields.difference(&kept)
        );
    }
    dead
}

/// 300 jobs die, by nack, by reap and inside claims, with `max_dead_letters` 20: after every
/// death there are at most 20 dead letters, the 20 kept are the last to die, and nothing of the
/// trimmed ones is left (record, payload, last error).
#[tokio::test]
async fn dead_letters_never_pass_max_count() {
    for mode in MODES {
        let env = env(mode, "dlq-count", patient()).await;
        let q = queue(
            &env,
            "dlq",
            fragile().max_dead_letters(NonZeroU32::new(20).unwrap()),
        );
        enqueue(&q, (0..200).map(|i| format!("n{i:03}"))).await;
        let mut order = Vec::new();
        for job in claim(&q, Duration::from_secs(60), 200).await {
            order.push(job.id().to_string());
            assert_eq!(job.nack(Duration::ZERO, "boom").await.unwrap(), Nack::Dead);
            let dead = q.dead_letters(0, 1).await.unwrap().total;
            assert!(dead <= 20, "{mode:?}: {dead} dead letters");
        }
        // Leases that expire on their last delivery: buried by reap and by the next claims.
        enqueue(&q, (0..100).map(|i| format!("x{i:03}"))).await;
        let expiring = claim(&q, Duration::from_millis(1), 100).await;
        order.extend(expiring.iter().map(|j| j.id().to_string()));
        drop(expiring);
        let deadline = Instant::now() + WAIT;
        while q.stats().await.unwrap().running > 0 {
            assert!(Instant::now() < deadline, "{mode:?}: leases did not expire");
            q.reap(7).await.unwrap();
            let dead = q.dead_letters(0, 1).await.unwrap().total;
            assert!(dead <= 20, "{mode:?}: {dead} dead letters");
            assert!(claim(&q, Duration::from_secs(60), 1).await.is_empty());
            let dead = q.dead_letters(0, 1).await.unwrap().total;
            assert!(dead <= 20, "{mode:?}: {dead} dead letters");
        }
        let dead = no_orphans(&env, &q, &HashSet::new()).await;
        assert_eq!(dead.len(), 20, "{mode:?}");
        assert_eq!(q.stats().await.unwrap().dead, 20);
        let expired_last: HashSet<String> = order.iter().rev().take(100).cloned().collect();
        assert!(dead.is_subset(&expired_last), "{mode:?}: {dead:?}");
    }
}

/// With a retention of 200 ms, the next death after that trims every older dead letter (at
/// most 8 per death): only the new one is left, and nothing of the old ones.
#[tokio::test]
async fn dead_letters_past_retention_are_trimmed_by_the_next_death() {
    for mode in MODES {
        let env = env(mode, "dlq-retention", patient()).await;
        let retention = Duration::from_millis(200);
        let q = queue(&env, "dlq", fragile().dead_letter_retention(retention));
        enqueue(&q, (0..8).map(|i| format!("old{i}"))).await;
        for job in claim(&q, Duration::from_secs(60), 8).await {
            job.nack(Duration::ZERO, "boom").await.unwrap();
        }
        let newest = q.dead_letters(7, 1).await.unwrap().letters[0].dead_at_ms;
        // Poll the server's clock (it decides), bounded, until the old letters are past it.
        let deadline = Instant::now() + WAIT;
        while server_ms(&env).await < newest + 200 {
            assert!(Instant::now() < deadline, "server clock did not advance");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert_eq!(q.dead_letters(0, 1).await.unwrap().total, 8);
        enqueue(&q, ["new".to_string()]).await;
        let job = claim(&q, Duration::from_secs(60), 1).await.remove(0);
        job.nack(Duration::ZERO, "boom").await.unwrap();
        let dead = no_orphans(&env, &q, &HashSet::new()).await;
        assert_eq!(dead, HashSet::from(["new".to_string()]), "{mode:?}");
    }
}

async fn server_ms(env: &Env) -> u64 {
    let t: Vec<u64> = redis::from_redis_value(env.raw(&redis::cmd("TIME")).await).unwrap();
    t[0] * 1000 + t[1] / 1000
}

/// `purge_dead_letters` deletes at most `limit` per call, oldest first, only dead letters and
/// everything kept of them; the queue's live job is untouched, and with nothing left the dead
/// letters' keys are gone.
#[tokio::test]
async fn purge_removes_dead_letters_and_their_payloads() {
    for mode in MODES {
        let env = env(mode, "dlq-purge", patient()).await;
        let q = queue(&env, "dlq", fragile());
        enqueue(&q, (0..30).map(|i| format!("d{i:02}"))).await;
        for job in claim(&q, Duration::from_secs(60), 30).await {
            job.nack(Duration::ZERO, "boom").await.unwrap();
        }
        enqueue(&q, ["live".to_string()]).await;
        let live = HashSet::from(["live".to_string()]);
        let young = purge(&q, Duration::from_secs(3600), 10).await;
        assert_eq!(young, (0, 30), "{mode:?}: too young to purge");
        assert_eq!(purge(&q, Duration::ZERO, 8).await, (8, 22));
        let left = no_orphans(&env, &q, &live).await;
        let expected: HashSet<String> = (8..30).map(|i| format!("d{i:02}")).collect();
        assert_eq!(left, expected, "{mode:?}: the oldest go first");
        assert_eq!(purge(&q, Duration::ZERO, 1000).await, (22, 0));
        assert_eq!(purge(&q, Duration::ZERO, 1000).await, (0, 0));
        assert!(no_orphans(&env, &q, &live).await.is_empty());
        let k = q.keys();
        let exists = env
            .raw(redis::cmd("EXISTS").arg(&k.dead).arg(&k.errors))
            .await;
        assert_eq!(redis::from_redis_value::<u64>(exists).unwrap(), 0);
        assert_eq!(members(&env, &k.payload).await, live);
        assert!(q.purge_dead_letters(Duration::ZERO, 0).await.is_err());
    }
}

async fn purge(q: &Queue, older_than: Duration, limit: usize) -> (u64, u64) {
    let Purged {
        purged, remaining, ..
    } = q.purge_dead_letters(older_than, limit).await.unwrap();
    (purged, remaining)
}
