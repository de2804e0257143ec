//! Idempotency keys: exactly-once side effects under duplicates, takeover, lost replies and bad
//! input, in every mode (standalone and cluster × EVALSHA and FCALL).

use crate::common::{env, patient, Env, Mode, MODES};
use redis_atomic::idempotency::{
    Begin, Claim, Failure, Fingerprint, Idempotency, IdempotencyConfig, Outcome, Response, Stored,
};
use redis_atomic::lease::{Extend, Lease, OwnerToken};
use redis_atomic::{Error, Fence};
use std::sync::Arc;
use std::time::Duration;

pub(super) fn store(env: &Env, ttl: Duration) -> Idempotency {
    let config = IdempotencyConfig::default().ttl(ttl);
    let store = Idempotency::new(env.client.clone(), env.keyspace.clone());
    store.with_config(config).unwrap()
}

/// What names a claim by parts: its token and fence (read before an end verb consumes it).
pub(super) fn parts(claim: &Claim) -> (OwnerToken, Fence) {
    (claim.token().clone(), claim.fence())
}

pub(super) fn fp(s: &str) -> Fingerprint {
    Fingerprint::of(&[s.as_bytes()])
}

pub(super) fn tok(s: &str) -> OwnerToken {
    OwnerToken::new(s).unwrap()
}

pub(super) fn claimed(b: Begin) -> Claim {
    match b {
        Begin::Claimed(c) => c,
        other => panic!("expected a claim, got {other:?}"),
    }
}

/// 64 concurrent `begin` on one key → exactly one claim.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_claim_among_64() {
    for mode in MODES {
        let env = env(mode, "idem-64", patient()).await;
        let store = store(&env, Duration::from_secs(30));
        let mut tasks = Vec::new();
        for _ in 0..64 {
            let store = store.clone();
            tasks.push(tokio::spawn(async move {
                store.begin("t", b"k", fp("req")).await.unwrap()
            }));
        }
        let mut claims = 0;
        for t in tasks {
            match t.await.unwrap() {
                Begin::Claimed(_) => claims += 1,
                Begin::InProgress { .. } => {}
                other => panic!("{mode:?}: {other:?}"),
            }
        }
        assert_eq!(claims, 1, "{mode:?}");
    }
}

/// 1000 keys × 8 duplicates with random delays: the side effect happens exactly 1000 times and
/// every duplicate ends with the executor's response.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thousand_keys_eight_duplicates_exactly_once() {
    for mode in MODES {
        let env = Arc::new(env(mode, "idem-1000", patient()).await);
        let store = store(&env, Duration::from_secs(30));
        let effects = env.keyspace.key("test", 1, "effects", &[]).unwrap();
        let mut tasks = Vec::new();
        for dup in 0..8u64 {
            let (store, env, effects) = (store.clone(), env.clone(), effects.clone());
            tasks.push(tokio::spawn(async move {
                for k in 0..1000u32 {
                    if (k as u64 + dup) % 7 == 0 {
                        tokio::time::sleep(Duration::from_micros(rand::random_range(0..300))).await;
                    }
                    let key = format!("key-{k}");
                    let response = run_once(&store, &env, &effects, &key).await;
                    assert_eq!(response.body_bytes().unwrap(), key.as_bytes());
                }
            }));
        }
        for t in tasks {
            t.await.unwrap();
        }
        let n: i64 =
            redis::from_redis_value(env.raw(redis::cmd("GET").arg(&effects)).await).unwrap();
        assert_eq!(n, 1000, "{mode:?}: side effects");
    }
}

/// A duplicate request as a client would send it: begin, execute or wait, replay.
async fn run_once(store: &Idempotency, env: &Env, effects: &str, key: &str) -> Response {
    for _ in 0..2000 {
        match store
            .begin("tenant", key.as_bytes(), fp(key))
            .await
            .unwrap()
        {
            Begin::Claimed(claim) => {
                env.raw(redis::cmd("INCR").arg(effects)).await;
                let response = Response::new(200, key.as_bytes().to_vec());
                assert_eq!(claim.complete(&response).await.unwrap(), Outcome::Stored);
                return response;
            }
            Begin::InProgress { .. } => tokio::time::sleep(Duration::from_millis(1)).await,
            Begin::Replay(Stored::Completed(r)) => return r,
            other => panic!("{other:?}"),
        }
    }
    panic!("never finished");
}

/// An expired claim is taken over with a larger fence; the stale executor's complete and extend
/// are refused, and the replay is the new executor's response.
#[tokio::test]
async fn takeover_after_lease_expiry() {
    for mode in MODES {
        let env = env(mode, "idem-takeover", patient()).await;
        // A long lease (so "in progress" cannot be a slow machine's accident), then shortened
        // to 1 ms by the executor's own extend (leases are absolute on the server's clock).
        let store = store(&env, Duration::from_secs(30));
        let mut old = claimed(store.begin("t", b"k", fp("r")).await.unwrap());
        assert!(matches!(
            store.begin("t", b"k", fp("r")).await.unwrap(),
            Begin::InProgress { .. }
        ));
        assert_eq!(
            old.extend(Duration::from_millis(1)).await.unwrap(),
            Extend::Extended {
                fence: old.fence(),
                ttl: Duration::from_millis(1)
            }
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
        let new = claimed(store.begin("t", b"k", fp("r")).await.unwrap());
        assert!(new.is_takeover() && new.fence() > old.fence(), "{mode:?}");
        assert_eq!(
            old.extend(Duration::from_secs(1)).await.unwrap(),
            Extend::Lost
        );
        let (old_token, old_fence) = parts(&old);
        let stale = Response::new(200, "stale");
        assert_eq!(old.complete(&stale).await.unwrap(), Outcome::Lost);
        assert_eq!(
            new.complete(&Response::new(201, "fresh")).await.unwrap(),
            Outcome::Stored
        );
        assert_eq!(
            store
                .complete("t", b"k", &old_token, old_fence, &stale)
                .await
                .unwrap(),
            Outcome::Lost
        );
        match store.begin("t", b"k", fp("r")).await.unwrap() {
            Begin::Replay(Stored::Completed(r)) => {
                assert_eq!((r.status, r.body_bytes().unwrap()), (201, &b"fresh"[..]))
            }
            other => panic!("{mode:?}: {other:?}"),
        }
    }
}

/// Mismatch, replay of completed and of final failures, retryable failure frees the key, and a
/// repeated complete is idempotent.
#[tokio::test]
async fn state_machine() {
    for mode in MODES {
        let env = env(mode, "idem-states", patient()).await;
        let store = store(&env, Duration::from_secs(30));
        let c = claimed(store.begin("t", b"a", fp("x")).await.unwrap());
        assert!(matches!(
            store.begin("t", b"a", fp("other")).await.unwrap(),
            Begin::Mismatch
        ));
        let resp = Response::new(201, vec![0u8, 255, 10, 13])
            .header("content-type", "application/octet-stream");
        let (token, fence) = parts(&c);
        assert_eq!(c.complete(&resp).await.unwrap(), Outcome::Stored);
        assert_eq!(
            store
                .complete("t", b"a", &token, fence, &resp)
                .await
                .unwrap(),
            Outcome::Stored,
            "{mode:?}: repeat not idempotent"
        );
        assert!(
            matches!(store.begin("t", b"a", fp("x")).await.unwrap(), Begin::Replay(Stored::Completed(r)) if r == resp)
        );
        assert!(matches!(
            store.begin("t", b"a", fp("other")).await.unwrap(),
            Begin::Mismatch
        ));
        // Scopes isolate tenants.
        assert!(matches!(
            store.begin("u", b"a", fp("other")).await.unwrap(),
            Begin::Claimed(_)
        ));

        let first = claimed(store.begin("t", b"b", fp("x")).await.unwrap());
        let (first_token, first_fence) = parts(&first);
        assert_eq!(
            first.fail(&Failure::Retryable).await.unwrap(),
            Outcome::Stored
        );
        let second = claimed(store.begin("t", b"b", fp("x")).await.unwrap());
        assert!(second.fence() > first_fence);
        assert_eq!(
            store
                .complete("t", b"b", &first_token, first_fence, &resp)
                .await
                .unwrap(),
            Outcome::Lost
        );
        let failure = Response::new(402, "declined");
        assert_eq!(
            second.fail(&Failure::Final(failure.clone())).await.unwrap(),
            Outcome::Stored
        );
        assert!(
            matches!(store.begin("t", b"b", fp("x")).await.unwrap(), Begin::Replay(Stored::Failed(r)) if r == failure)
        );
    }
}

/// `begin` with the same token returns the same claim (fence) — the retry after a lost reply.
#[tokio::test]
async fn begin_same_token_is_idempotent() {
    for mode in MODES {
        let env = env(mode, "idem-token", patient()).await;
        let store = store(&env, Duration::from_secs(30));
        let a = claimed(
            store
                .begin_with_token("t", b"k", fp("r"), &tok("tok-1"))
                .await
                .unwrap(),
        );
        let b = claimed(
            store
                .begin_with_token("t", b"k", fp("r"), &tok("tok-1"))
                .await
                .unwrap(),
        );
        assert_eq!((a.fence(), a.token()), (b.fence(), b.token()));
        assert!(matches!(
            store
                .begin_with_token("t", b"k", fp("r"), &tok("tok-2"))
                .await
                .unwrap(),
            Begin::InProgress { .. }
        ));
    }
}

/// Bad input: typed errors, nothing overwritten.
#[tokio::test]
async fn bad_input() {
    let env = env(Mode::StandaloneEval, "idem-bad", patient()).await;
    let store = store(&env, Duration::from_secs(30));
    assert!(matches!(
        store.begin("t", b"", fp("r")).await,
        Err(Error::BadArgument(_))
    ));
    assert!(matches!(
        store.begin("", b"k", fp("r")).await,
        Err(Error::BadArgument(_))
    ));
    assert!(matches!(
        store.begin("t", &[b'x'; 513], fp("r")).await,
        Err(Error::BadArgument(_))
    ));
    // Bad tokens cannot be built; the script refuses an empty one all the same.
    for bad in ["", "a\nb"] {
        assert!(matches!(OwnerToken::new(bad), Err(Error::BadArgument(_))));
    }
    let record = store.keys("t", b"k").unwrap().record;
    let raw = env
        .client
        .call(
            &redis_atomic::script::registry::IDEM_BEGIN,
            [&record],
            ["".into(), "00ff".into(), 1000.into(), 1000.into()],
        )
        .await;
    assert!(matches!(raw, Err(Error::BadArgument(_))), "{raw:?}");
    let zero = IdempotencyConfig::default().ttl(Duration::ZERO);
    assert!(matches!(
        Idempotency::new(env.client.clone(), env.keyspace.clone()).with_config(zero),
        Err(Error::BadArgument(_))
    ));
    // Binary keys are fine (hashed into the key name).
    assert!(matches!(
        store
            .begin("t", &[0, 255, b'{', b'}'], fp("r"))
            .await
            .unwrap(),
        Begin::Claimed(_)
    ));
    // Wrong type and foreign data at the record key.
    let key = store.keys("t", b"wrong").unwrap().record;
    env.raw(redis::cmd("LPUSH").arg(&key).arg("x")).await;
    assert!(matches!(
        store.begin("t", b"wrong", fp("r")).await,
        Err(Error::WrongType(_))
    ));
    let key2 = store.keys("t", b"foreign").unwrap().record;
    env.raw(redis::cmd("SET").arg(&key2).arg("not a record"))
        .await;
    assert!(matches!(
        store.begin("t", b"foreign", fp("r")).await,
        Err(Error::WrongType(_))
    ));
    let v: String = redis::from_redis_value(env.raw(redis::cmd("GET").arg(&key2)).await).unwrap();
    assert_eq!(v, "not a record");
    // Oversized response: refused before sending, claim still live.
    let small = Idempotency::new(env.client.clone(), env.keyspace.clone())
        .with_config(IdempotencyConfig::default().max_response_bytes(100))
        .unwrap();
    let c = claimed(small.begin("t", b"big", fp("r")).await.unwrap());
    assert!(matches!(
        c.complete(&Response::new(200, vec![0u8; 200])).await,
        Err(Error::BadArgument(_))
    ));
    assert!(matches!(
        small.begin("t", b"big", fp("r")).await.unwrap(),
        Begin::InProgress { .. }
    ));
}

/// A completed record with a 512-byte body takes at most 848 bytes (a lock key plus a result key
/// took more).
#[tokio::test]
async fn completed_record_memory() {
    let env = env(Mode::StandaloneEval, "idem-mem", patient()).await;
    let store = store(&env, Duration::from_secs(30));
    let c = claimed(
        store
            .begin("tenant-1", b"a-typical-uuid-4b1c-9f0e-7a2d", fp("r"))
            .await
            .unwrap(),
    );
    c.complete(&Response::new(201, vec![b'x'; 512]))
        .await
        .unwrap();
    let key = store
        .keys("tenant-1", b"a-typical-uuid-4b1c-9f0e-7a2d")
        .unwrap()
        .record;
    let bytes: i64 =
        redis::from_redis_value(env.raw(redis::cmd("MEMORY").arg("USAGE").arg(&key)).await)
            .unwrap();
    println!("MEMORY USAGE of a completed record with a 512-byte body: {bytes}");
    assert!(bytes <= 848, "{bytes} bytes");
}

/// Extends any lease through the `Lease` trait; returns what the trait reads back.
async fn extend_via_trait(lease: &mut impl Lease, ttl: Duration) -> (Extend, Fence, OwnerToken) {
    let outcome = lease.extend(ttl).await.unwrap();
    (outcome, lease.fence(), lease.token().clone())
}

/// A `Claim` is a `Lease`, and the by-parts methods act on the same claim: extend through the
/// trait and by parts, complete by parts (repeatable, and the same as the handle's), then the
/// trait's extend answers `Lost`; a wrong fence or token changes nothing.
#[tokio::test]
async fn claim_works_through_the_lease_trait_and_by_parts() {
    let env = env(Mode::StandaloneEval, "idem-lease", patient()).await;
    let store = store(&env, Duration::from_secs(5));
    let mut claim = claimed(store.begin("t", b"k", fp("r")).await.unwrap());
    let (fence, token) = (claim.fence(), claim.token().clone());
    let before = Lease::expires_by(&claim);
    let ttl = Duration::from_secs(60);
    let (outcome, f, t) = extend_via_trait(&mut claim, ttl).await;
    assert_eq!(outcome, Extend::Extended { fence, ttl });
    assert_eq!((f, &t), (fence, &token));
    let extended = Lease::expires_by(&claim);
    assert!(extended >= before + Duration::from_secs(55));
    assert_eq!(
        store.extend("t", b"k", &token, fence, ttl).await.unwrap(),
        Extend::Extended { fence, ttl }
    );
    let stale = Fence(fence.0 - 1);
    assert_eq!(
        store.extend("t", b"k", &token, stale, ttl).await.unwrap(),
        Extend::Lost
    );
    let other = OwnerToken::random();
    let resp = Response::new(200, "by parts");
    assert_eq!(
        store
            .complete("t", b"k", &other, fence, &resp)
            .await
            .unwrap(),
        Outcome::Lost
    );
    assert_eq!(
        store
            .fail("t", b"k", &token, stale, &Failure::Retryable)
            .await
            .unwrap(),
        Outcome::Lost
    );
    for _ in 0..2 {
        assert_eq!(
            store
                .complete("t", b"k", &token, fence, &resp)
                .await
                .unwrap(),
            Outcome::Stored
        );
    }
    let (outcome, ..) = extend_via_trait(&mut claim, ttl).await;
    assert_eq!(outcome, Extend::Lost);
    assert_eq!(Lease::expires_by(&claim), extended);
    assert_eq!(claim.complete(&resp).await.unwrap(), Outcome::Stored);
    assert!(
        matches!(store.begin("t", b"k", fp("r")).await.unwrap(), Begin::Replay(Stored::Completed(r)) if r == resp)
    );
}
