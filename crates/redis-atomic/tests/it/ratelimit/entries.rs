//! Entries (many identities, each its own hits) decided all or nothing under one hash tag, in
//! every mode; and request-id records scoped to the policy that wrote them.

use crate::common::{env, patient, MODES};
use redis_atomic::ratelimit::{
    Algorithm, Decision, Entry, EntryLimiter, EntryMode, Limit, Policy, RateLimiter,
};
use redis_atomic::Error;
use std::sync::Arc;
use std::time::Duration;

const HOUR: Duration = Duration::from_secs(3600);

fn fw(n: u64, name: &str) -> Limit {
    Limit::fixed_window(n, HOUR).unwrap().named(name).unwrap()
}

/// The gateway case: a request over its per-user limit charges nothing on its per-route and
/// global limits; hits 0 charges nothing anywhere; every algorithm keeps the all-or-nothing rule.
#[tokio::test]
async fn a_refused_entry_charges_no_other() {
    for mode in MODES {
        let env = env(mode, "rl-entries", patient()).await;
        let rl = EntryLimiter::new(env.client.clone(), env.keyspace.clone());
        let request = |user_hits| {
            vec![
                Entry::new(fw(2, "per-user"), "user=alice", user_hits),
                Entry::new(fw(100, "per-route"), "route=/pay", 1),
                Entry::new(fw(1000, "global"), "global", 1),
            ]
        };
        for _ in 0..2 {
            let v = rl.decide("tenant-a", &request(1)).await.unwrap();
            assert!(v.decision.is_allowed(), "{mode:?}: {v:?}");
        }
        let refused = rl.decide("tenant-a", &request(1)).await.unwrap();
        assert!(!refused.decision.is_allowed(), "{mode:?}: {refused:?}");
        let st = &refused.entries;
        assert!(!st[0].admits && st[1].admits && st[2].admits, "{st:?}");
        assert_eq!(
            (st[0].remaining, st[1].remaining, st[2].remaining),
            (0, 98, 998),
            "{mode:?}: the refusal charged something"
        );
        // A check only: decided as one unit, charged nothing.
        let check = vec![
            Entry::new(fw(100, "per-route"), "route=/pay", 0),
            Entry::new(fw(1000, "global"), "global", 0),
        ];
        for _ in 0..3 {
            let v = rl.decide("tenant-a", &check).await.unwrap();
            assert!(v.decision.is_allowed());
            assert_eq!((v.entries[0].remaining, v.entries[1].remaining), (98, 998));
        }
        let full = rl
            .decide(
                "tenant-a",
                &[Entry::new(fw(2, "per-user"), "user=alice", 0)],
            )
            .await
            .unwrap();
        assert!(
            !full.decision.is_allowed(),
            "check only on an exhausted limit"
        );
        // Another user of the same route still passes; the global count moves by its charge.
        let bob = vec![
            Entry::new(fw(2, "per-user"), "user=bob", 2),
            Entry::new(fw(100, "per-route"), "route=/pay", 2),
            Entry::new(fw(1000, "global"), "global", 2),
        ];
        let v = rl.decide("tenant-a", &bob).await.unwrap();
        assert!(v.decision.is_allowed());
        assert_eq!(v.entries[2].remaining, 996);
        // Every key of one decision is in the tag's slot.
        let keys = rl.keys("tenant-a", &bob).unwrap();
        let slot = redis_atomic::keys::slot(keys[0].as_bytes());
        assert!(keys
            .iter()
            .all(|k| redis_atomic::keys::slot(k.as_bytes()) == slot));
    }
}

/// Every algorithm admits exactly its limit among many concurrent decisions that also charge a
/// shared, roomy limit; the shared limit is charged exactly once per admitted decision.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_algorithm_admits_exactly_its_limit_all_or_nothing() {
    let env = env(MODES[0], "rl-entries-exact", patient()).await;
    let rl = Arc::new(EntryLimiter::new(env.client.clone(), env.keyspace.clone()));
    for algorithm in Algorithm::ALL {
        let tight = Limit::new(algorithm, 10, HOUR)
            .unwrap()
            .named("tight")
            .unwrap();
        let ident = format!("u-{}", algorithm.code());
        let tasks: Vec<_> = (0..40)
            .map(|_| {
                let (rl, tight, ident) = (rl.clone(), tight.clone(), ident.clone());
                tokio::spawn(async move {
                    let e = [
                        Entry::new(tight, ident.clone(), 1),
                        Entry::new(fw(1000, "shared"), format!("shared-{ident}"), 1),
                    ];
                    rl.decide("t", &e).await.unwrap().decision.is_allowed()
                })
            })
            .collect();
        let mut admitted = 0;
        for t in tasks {
            admitted += u64::from(t.await.unwrap());
        }
        assert_eq!(admitted, 10, "{algorithm}");
        let probe = [Entry::new(fw(1000, "shared"), format!("shared-{ident}"), 0)];
        let v = rl.decide("t", &probe).await.unwrap();
        assert_eq!(
            v.entries[0].remaining, 990,
            "{algorithm}: refused ones were charged"
        );
    }
}

/// Shadow entries never refuse (and are not charged past their limit); quota entries refuse
/// only together; one identity's limit named twice is charged both hits in one check.
#[tokio::test]
async fn modes_and_merged_entries() {
    let env = env(MODES[0], "rl-entries-modes", patient()).await;
    let rl = EntryLimiter::new(env.client.clone(), env.keyspace.clone());
    let shadow = |hits| Entry::new(fw(1, "shadowed"), "s", hits).with_mode(EntryMode::Shadow);
    let open = |hits| Entry::new(fw(100, "open"), "o", hits);
    for i in 0..3 {
        let v = rl.decide("t", &[shadow(1), open(1)]).await.unwrap();
        assert!(v.decision.is_allowed(), "shadow refused the request");
        assert_eq!(v.entries[0].admits, i == 0);
        assert_eq!(v.entries[0].remaining, 0);
    }
    let quota = |name: &str, n| Entry::new(fw(n, name), "q", 1).with_mode(EntryMode::Quota);
    let v = rl
        .decide("t", &[quota("qa", 1), quota("qb", 2)])
        .await
        .unwrap();
    assert!(v.decision.is_allowed());
    let v = rl
        .decide("t", &[quota("qa", 1), quota("qb", 2)])
        .await
        .unwrap();
    assert!(
        v.decision.is_allowed(),
        "one quota entry still admits: {v:?}"
    );
    let v = rl
        .decide("t", &[quota("qa", 1), quota("qb", 2)])
        .await
        .unwrap();
    assert!(!v.decision.is_allowed(), "every quota entry refuses: {v:?}");
    // The same descriptor twice: one key, 1 + 1 hits checked together against 3, then 2 + 2
    // refused before anything is sent (more than the limit can ever admit at once).
    let twice = |hits| {
        [
            Entry::new(fw(3, "dup"), "d", hits),
            Entry::new(fw(3, "dup"), "d", hits),
        ]
    };
    let v = rl.decide("t", &twice(1)).await.unwrap();
    assert!(v.decision.is_allowed());
    assert_eq!(v.entries[0], v.entries[1]);
    assert_eq!(v.entries[0].remaining, 1);
    let v = rl.decide("t", &twice(1)).await.unwrap();
    assert!(!v.decision.is_allowed(), "2 more against 1 left: {v:?}");
    assert!(matches!(
        rl.decide("t", &twice(2)).await,
        Err(Error::CostExceedsBurst { cost: 4, burst: 3 })
    ));
}

/// Two policies over one identity with one request id: each decides, charges and records its
/// own; neither replays the other's record (it once did, and a policy with another number of
/// limits got a BadReply).
#[tokio::test]
async fn request_records_are_scoped_to_their_policy() {
    for mode in MODES {
        let env = env(mode, "rl-reqid-scope", patient()).await;
        let one = RateLimiter::new(env.client.clone(), env.keyspace.clone(), fw(10, "x"));
        let two = RateLimiter::new(
            env.client.clone(),
            env.keyspace.clone(),
            Policy::new(vec![fw(10, "x"), fw(5, "y")]).unwrap(),
        );
        let a = one.consume_detailed("k", 1, Some("req-1")).await.unwrap();
        let b = two.consume_detailed("k", 1, Some("req-1")).await.unwrap();
        assert!(!a.replayed && !b.replayed, "{mode:?}: {b:?}");
        assert_eq!(b.limits.len(), 2);
        // Both charged the shared limit x; each one's own repeat replays its own record.
        assert_eq!((b.limits[0].remaining, b.limits[1].remaining), (8, 4));
        let a2 = one.consume_detailed("k", 1, Some("req-1")).await.unwrap();
        let b2 = two.consume_detailed("k", 1, Some("req-1")).await.unwrap();
        assert!(a2.replayed && b2.replayed);
        assert!(matches!(
            a2.decision,
            Decision::Allowed { remaining: 9, .. }
        ));
        assert_eq!(b2.limits[1].remaining, 4);
        let (ka, kb) = (
            one.keys("k", Some("req-1")).unwrap().request,
            two.keys("k", Some("req-1")).unwrap().request,
        );
        assert_ne!(ka, kb);
    }
}
