//! The rate-limit scripts decide exactly what the pure models in `model::ratelimit` decide:
//! random policies (1-3 limits of any algorithms) driven through random sequences of
//! (time step, cost, request id) on a real server, both deliveries, compared verdict by verdict.
//! Failing cases are kept in `proptest-regressions/` (committed) and replayed first.

use proptest::prelude::*;
use redis_atomic::model::ratelimit::PolicyModel;
use redis_atomic::ratelimit::{Algorithm, Limit, Policy, RateLimiter};
use redis_atomic::{Client, ClientConfig, Delivery, Keyspace};
use redis_atomic_testkit::{unique_prefix, RedisServer, ServerOptions};
use std::sync::OnceLock;
use std::time::Duration;

struct Fixture {
    rt: tokio::runtime::Runtime,
    clients: [Client; 2],
    _server: RedisServer,
}

fn fixture() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| {
        let rt = crate::common::fixture_runtime();
        let server = RedisServer::start(ServerOptions::default()).unwrap();
        let clients = rt.block_on(async {
            let eval = Client::connect(&server.url(), ClientConfig::default())
                .await
                .unwrap();
            let fcall = eval.with_config(ClientConfig::default().delivery(Delivery::Functions));
            [eval, fcall]
        });
        Fixture {
            rt,
            clients,
            _server: server,
        }
    })
}

/// Periods with awkward divisions (3.7 s / 3 units, 1.000003 s) so rounding paths are exercised.
const PERIODS: [u64; 5] = [1_000_000, 1_000_003, 2_500_000, 3_700_000, 10_000_000];

fn limit() -> impl Strategy<Value = Limit> {
    // The anchored window's clock is its key's expiry, not a test clock: ratelimit_anchored.rs.
    let timed: Vec<Algorithm> = Algorithm::ALL
        .into_iter()
        .filter(|a| a.takes_test_clock())
        .collect();
    (
        prop::sample::select(timed),
        1..=6u64,
        0..PERIODS.len(),
        1..=8u64,
    )
        .prop_map(|(algorithm, n, p, burst)| {
            let l = Limit::new(algorithm, n, Duration::from_micros(PERIODS[p])).unwrap();
            if algorithm.has_burst() {
                l.with_burst(burst).unwrap()
            } else {
                l
            }
        })
}

fn policy() -> impl Strategy<Value = Policy> {
    prop::collection::vec(limit(), 1..=3).prop_map(|limits| {
        let named = limits
            .into_iter()
            .enumerate()
            .map(|(i, l)| l.named(&format!("l{i}")).unwrap())
            .collect();
        Policy::new(named).unwrap()
    })
}

/// A time step (µs): none, tiny, around an interval, around a period, or long idle.
fn step() -> impl Strategy<Value = u64> {
    prop_oneof![
        3 => Just(0u64),
        2 => 0..2_000u64,
        3 => 0..1_500_000u64,
        1 => 2_000_000..12_000_000u64,
    ]
}

#[derive(Clone, Debug)]
struct Step {
    dt: u64,
    cost: u64,
    request: Option<u8>,
}

fn steps() -> impl Strategy<Value = Vec<Step>> {
    prop::collection::vec(
        (step(), 1..=8u64, prop::option::weighted(0.3, 0..4u8))
            .prop_map(|(dt, cost, request)| Step { dt, cost, request }),
        1..40,
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 160, ..ProptestConfig::default() })]

    /// Every verdict of the Lua equals the model's (decision, remaining, reset, retry, replay).
    #[test]
    fn lua_matches_model(policy in policy(), steps in steps(), start in 0..20_000_000u64, functions in any::<bool>()) {
        let f = fixture();
        let client = f.clients[usize::from(functions)].clone();
        let limiter = RateLimiter::new(client, Keyspace::new(unique_prefix("rl-model")).unwrap(), policy.clone());
        let ttl_us = u64::try_from(limiter.request_ttl().as_micros()).unwrap();
        let mut model = PolicyModel::new(policy.clone(), ttl_us);
        let mut now = 1_700_000_000_000_000 + start;
        for (i, s) in steps.iter().enumerate() {
            now += s.dt;
            let cost = s.cost.min(policy.max_cost());
            let id = s.request.map(|r| format!("req-{r}"));
            let lua = f.rt.block_on(limiter.consume_at("who", cost, id.as_deref(), now)).unwrap();
            let expected = model.consume(now, cost, id.as_deref());
            prop_assert_eq!(&lua, &expected, "step {} {:?} at {}", i, s, now);
        }
    }
}
