//! The library's choice of path: a client detects the module at connect and sends its natives
//! (counted on the server: `INFO commandstats` shows the natives, no `EVALSHA`); `force_lua`
//! keeps the scripts; a server that loses the module (unloaded, as after a restart without it)
//! answers `unknown command`, nothing ran, and the same call runs as the script — no call fails,
//! and the client stays on the scripts until it detects again.

mod common;

use common::module_path;
use redis::Value;
use redis_atomic::script::registry::{LOCK_ACQUIRE, RL_FIXED_WINDOW, RL_POLICY};
use redis_atomic::{Arg, Client, ClientConfig};
use redis_atomic_testkit::{command_calls, RedisServer, ServerOptions};

fn calls(server: &RedisServer, command: &str) -> u64 {
    let all = command_calls(&server.client()).expect("INFO commandstats");
    all.get(command).copied().unwrap_or(0)
}

async fn decide(client: &Client) -> String {
    let args = ["1", "3", "60000000", "1", ""].map(Arg::from);
    let reply = client
        .call(&RL_FIXED_WINDOW, ["rl"], args)
        .await
        .expect("a decision");
    format!("{reply:?}")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_client_uses_the_module_and_falls_back_without_it() {
    let server = RedisServer::start(ServerOptions {
        extra_config: vec![
            format!("loadmodule {}", module_path().display()),
            "enable-module-command yes".into(),
        ],
        ..Default::default()
    })
    .expect("a server");
    let client = Client::connect(&server.url(), ClientConfig::default())
        .await
        .expect("connect");
    let module = client
        .capabilities()
        .await
        .module
        .expect("the module detected");
    assert!(module.covers(&RL_FIXED_WINDOW.def), "{module:?}");

    let first = decide(&client).await;
    assert!(first.contains("Allowed"), "{first}");
    let token = [Arg::from("t1"), Arg::from("30000")];
    let acquired = client
        .call(&LOCK_ACQUIRE, ["{l}:lock", "{l}:fence"], token)
        .await
        .expect("acquire");
    assert!(format!("{acquired:?}").contains("Acquired"), "{acquired:?}");
    // A policy (variadic keys: their count follows the request key), replayed by its request id.
    let keys = ["{p}:req", "{p}:a", "{p}:b"];
    let spec = [
        "1", "req1", "60000000", "", "fw", "3", "60000000", "1", "sl", "3", "60000000", "1",
    ];
    let spec = spec.map(Arg::from);
    for word in ["Allowed", "Replayed"] {
        let reply = client
            .call(&RL_POLICY, &keys[..], &spec[..])
            .await
            .expect("a policy");
        assert!(format!("{reply:?}").contains(word), "{reply:?}");
    }
    assert_eq!(calls(&server, "ratomic.rl_fixed_window"), 1);
    assert_eq!(calls(&server, "ratomic.lock_acquire"), 1);
    assert_eq!(calls(&server, "ratomic.rl_policy"), 2);
    assert_eq!(calls(&server, "evalsha"), 0);

    // force_lua: the same decision through the script, on the same state.
    let lua = Client::connect(&server.url(), ClientConfig::default().force_lua(true))
        .await
        .expect("connect");
    let second = decide(&lua).await;
    assert!(second.contains("Allowed"), "{second}");
    assert_eq!(calls(&server, "ratomic.rl_fixed_window"), 1);
    let scripted = calls(&server, "evalsha");
    assert!(scripted >= 1, "{scripted}");

    // The module goes away: the cached client's native is refused, the script decides.
    let mut conn = server.client().get_connection().expect("connect");
    let () = redis::cmd("MODULE")
        .arg("UNLOAD")
        .arg("ratomic")
        .query(&mut conn)
        .expect("unload");
    let third = decide(&client).await;
    assert!(third.contains("Allowed"), "{third}: the third of 3");
    let fourth = decide(&client).await;
    assert!(fourth.contains("Limited"), "{fourth}: 3 of 3 spent");
    assert_eq!(client.capabilities().await.module, None);
    assert!(calls(&server, "evalsha") >= scripted + 2);

    // The module is back (a restart with it): once the client's connection drops, the client
    // detects again and the natives run. Its next calls may meet the dropped connection (an
    // unknown outcome, not resent: a rate-limit charge is not retry-safe); a detection on the
    // broken connection learns nothing and caches nothing.
    let path = module_path();
    let () = redis::cmd("MODULE")
        .arg("LOAD")
        .arg(path.to_string_lossy().as_ref())
        .query(&mut conn)
        .expect("load");
    let _: Value = redis::cmd("CLIENT")
        .arg(&["KILL", "TYPE", "normal", "SKIPME", "yes"])
        .query(&mut conn)
        .expect("kill the client's connections");
    let outcomes: Vec<String> = {
        let mut out = Vec::new();
        for _ in 0..3 {
            let args = ["1", "3", "60000000", "1", ""].map(Arg::from);
            out.push(format!(
                "{:?}",
                client.call(&RL_FIXED_WINDOW, ["rl2"], args).await
            ));
        }
        out
    };
    assert!(client.capabilities().await.module.is_some(), "{outcomes:?}");
    let args = ["1", "3", "60000000", "1", ""].map(Arg::from);
    let native = client.call(&RL_FIXED_WINDOW, ["rl2"], args).await;
    assert!(format!("{native:?}").contains("Allowed"), "{native:?}");
    assert_eq!(calls(&server, "ratomic.rl_fixed_window"), 1, "{outcomes:?}");
}
