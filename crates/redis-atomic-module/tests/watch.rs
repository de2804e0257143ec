//! Modified-key signals (`WATCH`, client-side caching) as a script gives them: a native that
//! writes a key touches it, a refusal that writes nothing touches nothing (a script's `GET` does
//! not), though the native opened the key for writing.

mod common;

use common::server;
use redis::{Connection, Value};

/// `WATCH key` on `conn`, then `between` on `other` (the transaction follows: [`exec`]).
fn watch_then(conn: &mut Connection, other: &mut Connection, key: &str, between: &redis::Cmd) {
    let _: Value = redis::cmd("WATCH").arg(key).query(conn).expect("WATCH");
    let _: Value = between.query(other).expect("the native");
}

fn exec(conn: &mut Connection) -> Value {
    redis::pipe()
        .atomic()
        .cmd("SET")
        .arg("other")
        .arg("1")
        .query(conn)
        .expect("EXEC")
}

fn fixed_window(key: &str) -> redis::Cmd {
    let mut cmd = redis::cmd("RATOMIC.RL_FIXED_WINDOW");
    cmd.arg(&[key, "1", "1", "60000000", "1", ""]);
    cmd
}

#[test]
fn only_a_write_touches_a_watched_key() {
    let server = server(true, false);
    let (mut a, mut b) = (
        server.client().get_connection().expect("connect"),
        server.client().get_connection().expect("connect"),
    );
    // Admitted: the key is written, the watching transaction aborts (nil).
    watch_then(&mut a, &mut b, "fw", &fixed_window("fw"));
    assert_eq!(exec(&mut a), Value::Nil);
    // Refused (1 of 1 spent): nothing written, the transaction commits.
    watch_then(&mut a, &mut b, "fw", &fixed_window("fw"));
    assert_ne!(exec(&mut a), Value::Nil);
    // The anchored window's refusal with its window open writes nothing either.
    let mut aw = redis::cmd("RATOMIC.RL_ANCHORED_WINDOW");
    aw.arg(&["aw", "1", "1", "60000"]);
    watch_then(&mut a, &mut b, "aw", &aw);
    assert_eq!(exec(&mut a), Value::Nil);
    watch_then(&mut a, &mut b, "aw", &aw);
    assert_ne!(exec(&mut a), Value::Nil);
}
