//! The lock's native rung (`DELIFEQ` release, `SET … IFEQ … PX` extend) decides exactly what its
//! scripts decide, and runs where the server has it: random sequences of acquire / extend /
//! release (guards old and new, tokens reused, other owners, expired leases, wrong types) run
//! side by side on a native client and a force-Lua client, compared outcome by outcome and state
//! by state; `INFO commandstats` shows which path ran. On Redis 7.0 (no native commands) the same
//! tests assert the fallback: capabilities say none, releases are `EVALSHA`.

use proptest::prelude::*;
use redis_atomic::client::NativeDelete;
use redis_atomic::lease::{Extend, Fence, Release};
use redis_atomic::lock::{Acquire, LockGuard, Locks};
use redis_atomic::script::registry;
use redis_atomic::{Client, ClientConfig, Error, Keyspace, OwnerToken};
use redis_atomic_testkit::{for_the_process, unique_prefix, RedisServer, ServerOptions};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

struct Fixture {
    /// A server of these tests' own: `INFO commandstats` counts are server-wide.
    _server: RedisServer,
    rt: tokio::runtime::Runtime,
    native: Client,
    lua: Client,
    /// Whether the server is a Valkey ≥ 9.0 (has `DELIFEQ` and `SET IFEQ`).
    has_native: bool,
    /// Held by each test that counts commands or sends many: the counts are server-wide.
    serial: std::sync::Mutex<()>,
}

fn fixture() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| {
        let rt = crate::common::fixture_runtime();
        let server = for_the_process(|| RedisServer::start(ServerOptions::default()).unwrap());
        let (native, lua, has_native) = rt.block_on(async {
            let native = Client::connect(&server.url(), ClientConfig::default())
                .await
                .unwrap();
            // Loaded up front: a first `NOSCRIPT` would count as an `EVALSHA` call.
            native.load(registry::ALL).await.unwrap();
            let lua = native.with_config(ClientConfig::default().force_lua(true));
            let info = native.command(redis::cmd("INFO").arg("server")).await;
            let info: String = redis::from_redis_value(info.unwrap()).unwrap();
            let major = info
                .lines()
                .find_map(|l| l.strip_prefix("valkey_version:"))
                .and_then(|v| v.split('.').next()?.trim().parse::<u32>().ok());
            (native, lua, major.is_some_and(|m| m >= 9))
        });
        Fixture {
            _server: server,
            rt,
            native,
            lua,
            has_native,
            serial: std::sync::Mutex::new(()),
        }
    })
}

/// Valkey 9.1 is detected as native (release `DELIFEQ`, extend `SET IFEQ`); Redis 7.0 as none;
/// a force-Lua client reports the same server but uses neither.
#[test]
fn capabilities_match_the_server() {
    let f = fixture();
    let (caps, forced) =
        f.rt.block_on(async { (f.native.capabilities().await, f.lua.capabilities().await) });
    if f.has_native {
        assert_eq!(
            caps.release_command(),
            Some(NativeDelete::Delifeq),
            "{caps:?}"
        );
        assert!(caps.extend_native(), "{caps:?}");
        assert!(caps.server.starts_with("valkey 9."), "{caps:?}");
    } else {
        assert_eq!(caps.release_command(), None, "{caps:?}");
        assert!(!caps.extend_native(), "{caps:?}");
        assert!(caps.server.starts_with("redis "), "{caps:?}");
    }
    assert!(forced.forced_lua);
    assert_eq!(
        (forced.release_command(), forced.extend_native()),
        (None, false)
    );
    assert!(caps.summary().contains(&caps.server));
}

/// `calls` of every command in `INFO commandstats` (`cmdstat_<name>:calls=N,...`).
async fn calls(client: &Client, name: &str) -> u64 {
    let v = client.command(redis::cmd("INFO").arg("commandstats")).await;
    let text: String = redis::from_redis_value(v.unwrap()).unwrap();
    let prefix = format!("cmdstat_{name}:calls=");
    text.lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .and_then(|rest| rest.split(',').next()?.parse().ok())
        .unwrap_or(0)
}

async fn held(locks: &Locks, resource: &str) -> LockGuard {
    match locks
        .acquire(resource, Duration::from_secs(60))
        .await
        .unwrap()
    {
        Acquire::Acquired(g) => g,
        other => panic!("{resource} not acquired: {other:?}"),
    }
}

/// On Valkey 9.1, N guard releases are N `DELIFEQ` calls and no
/// `EVALSHA`, N extends are N `SET`s; on Redis 7.0 (and with force-Lua) they are `EVALSHA`s.
#[test]
fn releases_run_delifeq_on_valkey_and_lua_elsewhere() {
    const N: u64 = 25;
    let f = fixture();
    let _serial = f.serial.lock().unwrap_or_else(|p| p.into_inner());
    f.rt.block_on(async {
        for (client, native) in [(&f.native, f.has_native), (&f.lua, false)] {
            let ks = Keyspace::new(unique_prefix("stats")).unwrap();
            let locks = Locks::new(client.clone(), ks);
            let mut guards = Vec::new();
            for i in 0..N {
                guards.push(held(&locks, &format!("r{i}")).await);
            }
            let before = [
                calls(client, "delifeq").await,
                calls(client, "evalsha").await,
            ];
            let set_before = calls(client, "set").await;
            for g in &mut guards {
                let r = g.extend(Duration::from_secs(30)).await.unwrap();
                assert!(matches!(r, Extend::Extended { .. }), "{r:?}");
            }
            let set_delta = calls(client, "set").await - set_before;
            for g in guards {
                let r = g.release().await.unwrap();
                assert!(matches!(r, Release::Released { .. }), "{r:?}");
            }
            let after = [
                calls(client, "delifeq").await,
                calls(client, "evalsha").await,
            ];
            let (delifeq, evalsha) = (after[0] - before[0], after[1] - before[1]);
            if native {
                assert_eq!((delifeq, evalsha, set_delta), (N, 0, N));
            } else {
                assert_eq!((delifeq, evalsha, set_delta), (0, 2 * N, 0));
            }
        }
    });
}

/// One step of a random history.
#[derive(Clone, Debug)]
enum Step {
    /// Acquire with token `t` (tokens are reused: the same token re-acquires after expiry).
    Acquire { t: usize },
    /// Release the guard in slot `g` (if any; a guard is consumed).
    Release { g: usize },
    /// Extend the guard in slot `g` to one of the ttls.
    Extend { g: usize, ttl: usize },
    /// Release by parts (`Locks::release`) with token `t` and the fence of the guard in slot `g`
    /// (a fence no lease has when the slot is empty).
    ReleaseParts { t: usize, g: usize },
    /// The lease expires (`PEXPIRE 1`, then wait for the key to be gone).
    Expire,
    /// Someone else's lock value, or data that is no lock at all.
    Foreign { lock_like: bool },
    /// A key of another type at the lock key.
    WrongType,
    /// The key is deleted.
    Delete,
}

const TTLS: [u64; 3] = [20_000, 40_000, 80_000];
const TOKENS: usize = 3;
const SLOTS: usize = 4;

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        4 => (0..TOKENS).prop_map(|t| Step::Acquire { t }),
        4 => (0..SLOTS).prop_map(|g| Step::Release { g }),
        3 => (0..SLOTS, 0..TTLS.len()).prop_map(|(g, ttl)| Step::Extend { g, ttl }),
        1 => (0..TOKENS, 0..SLOTS).prop_map(|(t, g)| Step::ReleaseParts { t, g }),
        2 => Just(Step::Expire),
        1 => any::<bool>().prop_map(|lock_like| Step::Foreign { lock_like }),
        1 => Just(Step::WrongType),
        1 => Just(Step::Delete),
    ]
}

/// What one side observed, with fences replaced by their issue order on that side (fences are
/// server time, so the two sides' numbers differ; their roles must not).
#[derive(Debug, PartialEq, Eq)]
enum Seen {
    Acquired(usize),
    Held,
    Released(usize),
    Extended(usize, u64),
    Lost,
    NoGuard,
    WrongType,
    Failed(String),
}

/// One side of the comparison: a client, its own resource, its guards and fences.
struct Side {
    locks: Locks,
    client: Client,
    key: String,
    guards: Vec<Option<LockGuard>>,
    fences: Vec<u64>,
}

impl Side {
    fn new(client: &Client) -> Side {
        let ks = Keyspace::new(unique_prefix("eq")).unwrap();
        let locks = Locks::new(client.clone(), ks);
        let key = locks.keys("res").unwrap().lock;
        Side {
            locks,
            client: client.clone(),
            key,
            guards: (0..SLOTS).map(|_| None).collect(),
            fences: Vec::new(),
        }
    }

    fn fence(&mut self, fence: u64) -> usize {
        match self.fences.iter().position(|f| *f == fence) {
            Some(i) => i,
            None => {
                self.fences.push(fence);
                self.fences.len() - 1
            }
        }
    }

    async fn raw(&self, cmd: &redis::Cmd) -> redis::Value {
        self.client.command(cmd).await.unwrap()
    }

    async fn run(&mut self, step: &Step) -> Seen {
        let tok = |t: usize| OwnerToken::new(format!("owner-{t}")).unwrap();
        match step {
            Step::Acquire { t } => {
                let r = self
                    .locks
                    .acquire_with_token("res", &tok(*t), Duration::from_secs(60))
                    .await;
                match r {
                    Ok(Acquire::Acquired(g)) => {
                        let i = self.fence(g.fence().0);
                        let slot = self.guards.iter().position(Option::is_none).unwrap_or(0);
                        self.guards[slot] = Some(g);
                        Seen::Acquired(i)
                    }
                    Ok(_) => Seen::Held,
                    Err(e) => seen_err(e),
                }
            }
            Step::Release { g } => match self.guards[*g].take() {
                Some(guard) => self.released(guard.release().await),
                None => Seen::NoGuard,
            },
            Step::ReleaseParts { t, g } => {
                let fence = self.guards[*g].as_ref().map_or(Fence(1), LockGuard::fence);
                let r = self.locks.release("res", &tok(*t), fence).await;
                self.released(r)
            }
            Step::Extend { g, ttl } => {
                let Some(guard) = self.guards[*g].as_mut() else {
                    return Seen::NoGuard;
                };
                match guard.extend(Duration::from_millis(TTLS[*ttl])).await {
                    Ok(Extend::Extended { fence, ttl }) => {
                        Seen::Extended(self.fence(fence.0), ttl.as_millis() as u64)
                    }
                    Ok(_) => Seen::Lost,
                    Err(e) => seen_err(e),
                }
            }
            Step::Expire => {
                self.raw(redis::cmd("PEXPIRE").arg(&self.key).arg(1)).await;
                let deadline = Instant::now() + Duration::from_secs(10);
                while self.raw(redis::cmd("EXISTS").arg(&self.key)).await != redis::Value::Int(0) {
                    assert!(Instant::now() < deadline, "the lease did not expire");
                    tokio::task::yield_now().await;
                }
                Seen::NoGuard
            }
            Step::Foreign { lock_like } => {
                let v = if *lock_like {
                    "1:someone-else"
                } else {
                    "plain data"
                };
                self.raw(
                    redis::cmd("SET")
                        .arg(&self.key)
                        .arg(v)
                        .arg("PX")
                        .arg(60_000),
                )
                .await;
                Seen::NoGuard
            }
            Step::WrongType => {
                self.raw(redis::cmd("DEL").arg(&self.key)).await;
                self.raw(redis::cmd("HSET").arg(&self.key).arg("f").arg("v"))
                    .await;
                Seen::NoGuard
            }
            Step::Delete => {
                self.raw(redis::cmd("DEL").arg(&self.key)).await;
                Seen::NoGuard
            }
        }
    }

    fn released(&mut self, r: Result<Release, Error>) -> Seen {
        match r {
            Ok(Release::Released { fence }) => Seen::Released(self.fence(fence.0)),
            Ok(_) => Seen::Lost,
            Err(e) => seen_err(e),
        }
    }

    /// The lock key's state: its type, its value with the fence as an issue index, and which
    /// of the ttls its remaining lease is closest to (the sides run moments apart).
    async fn state(&mut self) -> (String, String, Option<usize>) {
        let ty = self.raw(redis::cmd("TYPE").arg(&self.key)).await;
        let ty: String = redis::from_redis_value(ty).unwrap();
        if ty != "string" {
            return (ty, String::new(), None);
        }
        let v: String =
            redis::from_redis_value(self.raw(redis::cmd("GET").arg(&self.key)).await).unwrap();
        let value = match v.split_once(':') {
            Some((f, owner)) => match f.parse::<u64>() {
                Ok(n) if self.fences.contains(&n) => format!("#{}:{owner}", self.fence(n)),
                _ => v.clone(),
            },
            None => v.clone(),
        };
        let pttl = self.raw(redis::cmd("PTTL").arg(&self.key)).await;
        let pttl: i64 = redis::from_redis_value(pttl).unwrap();
        let bucket = [60_000u64, TTLS[0], TTLS[1], TTLS[2]]
            .iter()
            .enumerate()
            .min_by_key(|(_, t)| (**t as i64 - pttl).unsigned_abs())
            .map(|(i, _)| i);
        (ty, value, bucket)
    }
}

fn seen_err(e: Error) -> Seen {
    match e {
        Error::WrongType(_) => Seen::WrongType,
        other => Seen::Failed(other.to_string()),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Native and Lua paths: the same outcome at every step and the same lock state after it.
    #[test]
    fn native_and_lua_paths_agree(steps in prop::collection::vec(step(), 1..24)) {
        let f = fixture();
        let _serial = f.serial.lock().unwrap_or_else(|p| p.into_inner());
        f.rt.block_on(async {
            let mut native = Side::new(&f.native);
            let mut lua = Side::new(&f.lua);
            for (i, s) in steps.iter().enumerate() {
                let (a, b) = (native.run(s).await, lua.run(s).await);
                assert_eq!(a, b, "step {i} {s:?}: native vs Lua outcome");
                assert!(!matches!(a, Seen::Failed(_)), "step {i} {s:?}: {a:?}");
                let (sa, sb) = (native.state().await, lua.state().await);
                assert_eq!(sa, sb, "step {i} {s:?}: native vs Lua state");
            }
        });
    }
}
