//! Natural batching on a 3+3 cluster behind the testkit's fault proxies ([`ProxiedCluster`]):
//!
//! * a batch whose reply is lost ([`super::faults`]' scenario on the node serving two quotas of
//!   one slot): `OutcomeUnknown` for each decision, request ids resent, every decision ran once;
//! * a batch holds one slot's decisions: decisions of two slots queued together on one node
//!   leave as one batch per slot, never as one call (the node would refuse it, `CROSSSLOT`).
//!   So with many identities and no hash tag shared between them, decisions batch only with
//!   others of their own slot: the same identity's, or one that happens to hash alike.
//!
//! The two tests share one cluster (started on first use) and take turns on it: one pauses a
//! node's writes, the other swallows its replies.

use super::faults::{counter, eager, lose_a_batch_reply, waited, Site};
use redis_atomic::keys::slot;
use redis_atomic::quota::{Bounded, Bounds, Quotas};
use redis_atomic::{Client, Keyspace};
use redis_atomic_testkit::proxy::ProxiedCluster;
use redis_atomic_testkit::{for_the_process, unique_prefix, ClusterOptions};
use std::sync::OnceLock;

/// This module's cluster, started on first use.
fn proxied() -> &'static ProxiedCluster {
    static CLUSTER: OnceLock<ProxiedCluster> = OnceLock::new();
    CLUSTER.get_or_init(|| {
        for_the_process(|| ProxiedCluster::start(ClusterOptions::default()).unwrap())
    })
}

/// A test's turn on [`proxied`].
async fn turn() -> tokio::sync::MutexGuard<'static, ()> {
    static TURN: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
    TURN.lock().await
}

/// The first of `base0`, `base1`, … (each its own hash tag as a quota name) whose slot is `want`.
fn name_where(base: &str, want: impl Fn(u16) -> bool) -> String {
    (0..1_000_000)
        .map(|i| format!("{base}{i}"))
        .find(|name| want(slot(name.as_bytes())))
        .expect("some name has such a slot")
}

/// The library's script calls a node has served (`EVALSHA`, `FCALL` and their `_RO` forms).
fn script_calls(node: &redis::Client) -> u64 {
    let calls = redis_atomic_testkit::command_calls(node).unwrap();
    ["evalsha", "evalsha_ro", "fcall", "fcall_ro"]
        .iter()
        .filter_map(|c| calls.get(*c))
        .sum()
}

/// A node's writes paused (`CLIENT PAUSE … WRITE`: script calls wait) until dropped, also when
/// the test fails: the other test on this cluster must not find it paused.
struct Paused(redis::Client);

impl Paused {
    fn new(node: &redis::Client) -> Paused {
        command(node, &["CLIENT", "PAUSE", "30000", "WRITE"]);
        Paused(node.clone())
    }
}

impl Drop for Paused {
    fn drop(&mut self) {
        // No unwrap: a panic here while a failed test unwinds would abort every test.
        if let Ok(mut conn) = self.0.get_connection() {
            let _: redis::RedisResult<()> = redis::cmd("CLIENT").arg("UNPAUSE").query(&mut conn);
        }
    }
}

fn command(node: &redis::Client, args: &[&str]) {
    let mut conn = node.get_connection().unwrap();
    let mut cmd = redis::cmd(args[0]);
    for arg in &args[1..] {
        cmd.arg(*arg);
    }
    let () = cmd.query(&mut conn).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lost_batch_reply_on_a_cluster_is_unknown_per_decision_and_request_ids_are_resent() {
    let _turn = turn().await;
    let proxied = proxied();
    let plain = "plain";
    let ided = name_where("ided", |s| s == slot(plain.as_bytes()));
    let owner = proxied.owner_of(slot(plain.as_bytes())).unwrap();
    let client = Client::connect_cluster(&proxied.urls(), eager())
        .await
        .unwrap();
    lose_a_batch_reply(Site {
        client,
        proxy: &proxied.proxies()[owner],
        node: proxied.cluster().nodes()[owner].client(),
        keyspace: Keyspace::new(unique_prefix("batch-lost-cluster")).unwrap(),
        names: [plain, &ided],
    })
    .await;
}

/// Two quotas of two slots served by one node: while that node's writes are paused, one decision
/// of each is in flight and two more of each queue. Once it resumes, each slot's two leave as a
/// batch of their own: two batches, four script calls on the node for six decisions (one lane
/// per node would have sent one batch of four, which the node refuses).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn decisions_of_different_slots_never_share_a_batch() {
    let _turn = turn().await;
    let proxied = proxied();
    let a = "slot-a";
    let owner = proxied.owner_of(slot(a.as_bytes())).unwrap();
    let b = (0..1000)
        .map(|i| format!("slot-b{i}"))
        .find(|b| {
            let s = slot(b.as_bytes());
            s != slot(a.as_bytes()) && proxied.owner_of(s).unwrap() == owner
        })
        .expect("a name of another slot on the same node");
    let node = proxied.cluster().nodes()[owner].client();
    let client = Client::connect_cluster(&proxied.urls(), eager())
        .await
        .unwrap();
    client
        .load(redis_atomic::script::registry::ALL)
        .await
        .unwrap();
    let quotas = Quotas::new(
        client.clone(),
        Keyspace::new(unique_prefix("batch-slots")).unwrap(),
    );
    let bounds = Bounds::up_to(100).unwrap();
    let add = |name: &str| {
        let (quotas, name) = (quotas.clone(), name.to_string());
        async move { quotas.add(&name, 1, bounds, None).await.unwrap() }
    };

    let stats = client.batch_stats();
    command(&node, &["CONFIG", "RESETSTAT"]);
    let paused = Paused::new(&node);
    let first = [tokio::spawn(add(a)), tokio::spawn(add(&b))];
    waited("one decision of each slot is in flight", || {
        client.batch_stats().since(&stats).alone == 2
    });
    let mut queued = std::pin::pin!(futures::future::join_all([
        add(a),
        add(&b),
        add(a),
        add(&b)
    ]));
    // One poll queues all four: neither slot's call in flight can finish.
    assert!(futures::poll!(queued.as_mut()).is_pending());
    let sent = client.batch_stats().since(&stats);
    assert_eq!((sent.decisions, sent.alone, sent.batches), (6, 2, 0));
    drop(paused);

    let mut replies = Vec::new();
    for handle in first {
        replies.push(handle.await.unwrap());
    }
    replies.extend(queued.await);
    let replies: Vec<i64> = replies
        .into_iter()
        .map(|r| match r {
            Bounded::Applied { value } => value,
            other => panic!("{other:?}"),
        })
        .collect();
    // Each slot's first decision ran first, its queued two after it.
    let (mut of_a, mut of_b) = (vec![replies[0]], vec![replies[1]]);
    of_a.extend([replies[2], replies[4]]);
    of_b.extend([replies[3], replies[5]]);
    for values in [&mut of_a, &mut of_b] {
        assert_eq!(values[0], 1);
        values.sort_unstable();
        assert_eq!(*values, [1, 2, 3]);
    }
    let sent = client.batch_stats().since(&stats);
    assert_eq!(
        (sent.alone, sent.batches, sent.batched, sent.separate),
        (2, 2, 4, 0),
        "{sent:?}"
    );
    assert_eq!(script_calls(&node), 4, "two alone, one batch per slot");
    assert_eq!(counter(&node, &quotas, a).await, 3);
    assert_eq!(counter(&node, &quotas, &b).await, 3);
}
