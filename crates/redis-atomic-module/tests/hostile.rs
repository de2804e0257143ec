//! Hostile input: every native command called with random argument lists — wrong counts, huge,
//! negative, fractional and non-numeric numbers, non-UTF-8 bytes, NULs, long strings — on keys
//! holding every type and malformed state. The server must answer each call (a value or an error
//! reply, never a dropped connection) and stay up; the module's arguments are validated as the
//! scripts validate them, so nothing reaches a panic or the server's own assertions. The
//! policy's key positions (`COMMAND GETKEYS`, the getkeys API) are asked with the same arguments.

mod common;

use common::server;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use redis::Value;
use redis_atomic_module::NATIVES;

/// Argument values that broke parsers before.
fn pool() -> Vec<Vec<u8>> {
    let text = [
        "",
        "0",
        "-0",
        "1",
        "-1",
        "2",
        "1.5",
        "1e3",
        "1e308",
        "-1e308",
        "inf",
        "-inf",
        "nan",
        "0x10",
        "0x",
        " 7 ",
        "9007199254740993",
        "9223372036854775807",
        "9223372036854775808",
        "-9223372036854775809",
        "99999999999999999999999",
        "604800001",
        "31622400000001",
        "t1",
        ":",
        "1:t1",
        "k0",
        "k1",
        "k2",
        "k3",
        "k4",
        "k5",
        "k6",
        "fw",
        "sl",
        "aw",
        "gcra",
        "q",
    ];
    let mut pool: Vec<Vec<u8>> = text.iter().map(|s| s.as_bytes().to_vec()).collect();
    pool.push(b"\xff\xfe\x00\x01".to_vec());
    pool.push(b"5\x00junk".to_vec());
    pool.push(vec![b'9'; 400]);
    pool.push(vec![b'a'; 70_000]);
    pool
}

/// `RATOMIC.RL_POLICY request 1 limit` and 4 + 4 arguments.
const POLICY_ARITY: usize = 11;

/// The pool's "1".
const ONE: usize = 3;

/// Keys of every type and of malformed state, under the names the pool uses.
fn seed(conn: &mut redis::Connection) {
    let cmds: [&[&str]; 7] = [
        &["RPUSH", "k0", "x"],
        &["HSET", "k1", "f", "v"],
        &["ZADD", "k2", "1", "m"],
        &["SADD", "k3", "m"],
        &["SET", "k4", "99999999999999999999:99999999999999999999"],
        &["SET", "k5", "9223372036854775807"],
        &["SET", "k6", "1e308:t1"],
    ];
    for args in cmds {
        let mut cmd = redis::cmd(args[0]);
        cmd.arg(&args[1..]);
        let _: Value = cmd.query(conn).expect("seed");
    }
}

#[test]
fn hostile_arguments_never_crash_the_server() {
    let server = server(true, false);
    let mut conn = server.client().get_connection().expect("connect");
    seed(&mut conn);
    let pool = pool();
    // (command, its arity): mostly called with the right count, so calls reach the decisions.
    let mut names: Vec<(String, usize)> = NATIVES
        .iter()
        .map(|(n, _)| {
            let def = redis_atomic::script::registry::ALL
                .iter()
                .find(|d| d.name == *n)
                .expect("a native's script");
            (
                format!("RATOMIC.{}", n.to_uppercase()),
                def.keys.len() + def.args.len(),
            )
        })
        .collect();
    names.push(("RATOMIC.VERSION".to_string(), 0));
    let call = (
        proptest::sample::select(names),
        proptest::collection::vec(0..pool.len(), 0..12),
        proptest::bool::weighted(0.8),
    )
        .prop_map(|((name, arity), mut picks, exact)| {
            if exact && name == "RATOMIC.RL_POLICY" {
                // request, one limit key, four arguments and one limit of four: the count "1".
                picks.resize(POLICY_ARITY, 1);
                picks[1] = ONE;
            } else if exact {
                picks.resize(arity, 1);
            }
            (name, picks)
        });
    let mut runner = TestRunner::new(Config {
        cases: 3000,
        failure_persistence: None,
        ..Config::default()
    });
    let (values, errors) = (std::cell::Cell::new(0u32), std::cell::Cell::new(0u32));
    let conn = std::cell::RefCell::new(conn);
    runner
        .run(&call, |(name, picks)| {
            let mut cmd = redis::cmd(&name);
            // The policy's key positions are asked of the module too (the getkeys API).
            let mut getkeys = redis::cmd("COMMAND");
            getkeys.arg("GETKEYS").arg(&name);
            for p in &picks {
                cmd.arg(pool[*p].as_slice());
                getkeys.arg(pool[*p].as_slice());
            }
            let mut calls = vec![cmd];
            if name == "RATOMIC.RL_POLICY" {
                calls.push(getkeys);
            }
            for cmd in calls {
                match cmd.query::<Value>(&mut *conn.borrow_mut()) {
                    Ok(_) => values.set(values.get() + 1),
                    // A server error reply has a code; a broken connection has none.
                    Err(e) if e.code().is_some() => errors.set(errors.get() + 1),
                    Err(e) => prop_assert!(false, "{name} {picks:?}: {e}"),
                }
            }
            Ok(())
        })
        .expect("every hostile call answered");
    let pong: String = redis::cmd("PING")
        .query(&mut *conn.borrow_mut())
        .expect("the server is up");
    let (values, errors) = (values.get(), errors.get());
    assert_eq!(pong, "PONG");
    // Both kinds of answer happened: the calls reached the decisions, not only the arity check.
    assert!(values > 0 && errors > 0, "{values} values, {errors} errors");
    assert!(server.log().contains("ratomic"), "the module was loaded");
}
