//! `verify --url` on a server it does not own: it runs as the user `verify --acl`
//! prints (its own commands included), gives every key it writes a TTL, and leaves nothing
//! behind, on a standalone server and on every primary of a cluster.

use crate::{cli, stderr};
use redis::Commands as _;
use redis_atomic_testkit::{ClusterOptions, RedisCluster, RedisServer, ServerOptions};
use std::process::Output;

/// A short run: the checks' work is not the point here, their keys are.
fn verify(url: &str, extra: &[&str]) -> Output {
    let mut args = vec![
        "verify",
        "--url",
        url,
        "--seconds",
        "0.3",
        "--concurrency",
        "4",
    ];
    args.extend_from_slice(extra);
    cli(&args)
}

/// Creates user `verify` (password `pw`) with exactly the rules `verify --acl` prints; returns
/// the URL that logs in as it.
fn restricted_url(server: &RedisServer) -> String {
    let o = cli(&["verify", "--acl"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let line = String::from_utf8(o.stdout).unwrap();
    let rules = line
        .trim()
        .strip_prefix("ACL SETUSER verify on >PASSWORD ")
        .unwrap();
    let mut admin = server.client().get_connection().unwrap();
    let mut setuser = redis::cmd("ACL");
    setuser.arg("SETUSER").arg("verify").arg("on").arg(">pw");
    for rule in rules.split_whitespace() {
        setuser.arg(rule);
    }
    setuser.query::<()>(&mut admin).unwrap();
    server.url().replace("redis://", "redis://verify:pw@")
}

/// Every key on `conn`.
fn keys(conn: &mut redis::Connection) -> Vec<String> {
    conn.scan::<String>().unwrap().map(Result::unwrap).collect()
}

/// As the `--acl` user: a run exits 0 (no NOPERM: every command it sends is granted) and leaves
/// no key; with `--keep-keys` every key it wrote is under `verify-*` and has a TTL; a sabotaged
/// run (its other commands) exits 1 for its violations, not 2 for a refusal.
#[test]
fn verify_url_runs_as_its_acl_user_and_leaves_nothing() {
    let server = RedisServer::start(ServerOptions::default()).unwrap();
    let url = restricted_url(&server);
    let mut admin = server.client().get_connection().unwrap();

    let o = verify(&url, &["--keep-keys"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let kept = keys(&mut admin);
    assert!(kept.len() > 100, "{} keys", kept.len());
    for key in &kept {
        assert!(key.starts_with("verify-"), "{key}");
        let ttl: i64 = admin.pttl(key).unwrap();
        assert!(ttl > 0, "{key} has no TTL ({ttl})");
    }
    redis::cmd("FLUSHALL").query::<()>(&mut admin).unwrap();

    let o = verify(&url, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(keys(&mut admin), Vec::<String>::new());

    let o = verify(&url, &["--sabotage"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(keys(&mut admin), Vec::<String>::new());
}

/// On a cluster the clean-up scans every primary: none keeps a key of the run.
#[test]
fn verify_url_cleans_every_primary_of_a_cluster() {
    let cluster = RedisCluster::start(ClusterOptions::default()).unwrap();
    let o = verify(&cluster.urls()[0], &["--cluster"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    for url in cluster.primary_urls() {
        let mut conn = redis::Client::open(url.as_str())
            .unwrap()
            .get_connection()
            .unwrap();
        let size: u64 = redis::cmd("DBSIZE").query(&mut conn).unwrap();
        assert_eq!(size, 0, "{url}");
    }
}
