//! Your own scripts, called from Rust through bindings generated at build time (`build.rs`).
//!
//! ```sh
//! cargo run -p user-scripts-example                               # embedded redis-server
//! cargo run -p user-scripts-example -- --url redis://127.0.0.1:6379
//! ```
//! Each call goes through `redis_atomic::Client`, the path the built-in primitives take: the
//! compiler checks key and argument counts against each header (`Script<2, 3, _>`), the reply
//! arrives as an exhaustive enum, and the client retries only what the header's `retry:` allows.
//! The run is done twice: with `EVALSHA` (scripts loaded on `NOSCRIPT`) and with `FCALL` of the
//! Function library `user_scripts_v<N>` (loaded on first use, or deployed beforehand with
//! `redis-atomic functions deploy --library user_scripts --dir <folder>`).

use clap::Parser;
use redis_atomic::{Arg, Client, ClientConfig, Delivery};

/// The generated bindings: `SESSION_TOUCH`, `SessionTouchReply`, ..., `ALL` and `LIBRARY`
/// (every script gets a binding whether this program calls it or not).
#[allow(dead_code)]
mod scripts {
    include!(concat!(env!("OUT_DIR"), "/scripts.rs"));
}

use scripts::{SessionOwnerReply, SessionTouchReply, ZaddUnlessSmallerReply};

#[derive(Parser, Debug)]
struct Args {
    /// Redis URL; an embedded redis-server is started when absent.
    #[arg(long)]
    url: Option<String>,
}

/// What one run saw, in call order.
#[derive(Debug, PartialEq, Eq)]
struct Seen {
    touches: Vec<SessionTouchReply>,
    owner: SessionOwnerReply,
    raised: Vec<ZaddUnlessSmallerReply>,
}

/// Touches a session three times (twice by its user, once by another), asks who holds it, and
/// raises scores twice; prints and returns every reply.
async fn run(client: &Client, namespace: &str) -> anyhow::Result<Seen> {
    let session = format!("{namespace}:session:{{u1}}:s1");
    let index = format!("{namespace}:user-sessions:{{u1}}");
    let mut touches = Vec::new();
    for user in ["u1", "u1", "u2"] {
        let args = ["s1".into(), user.into(), Arg::Int(60_000)];
        let reply = client
            .call(&scripts::SESSION_TOUCH, [&session, &index], args)
            .await?;
        println!("  session_touch(s1, {user}) -> {reply:?}");
        touches.push(reply);
    }
    let owner = client.call(&scripts::SESSION_OWNER, [&session], []).await?;
    println!("  session_owner(s1) -> {owner:?}");
    let board = format!("{namespace}:board:{{daily}}");
    let mut raised = Vec::new();
    for pairs in [["alice", "5", "bob", "7"], ["alice", "3", "bob", "9"]] {
        let args: Vec<Arg> = pairs.iter().map(|p| Arg::from(*p)).collect();
        let reply = client
            .call_dyn(&scripts::ZADD_UNLESS_SMALLER, &[&board], &args)
            .await?;
        println!("  zadd_unless_smaller({pairs:?}) -> {reply:?}");
        raised.push(reply);
    }
    let scores = client
        .command(
            redis::cmd("ZRANGE")
                .arg(&board)
                .arg(0)
                .arg(-1)
                .arg("WITHSCORES"),
        )
        .await?;
    println!("  the board now: {scores:?}");
    Ok(Seen {
        touches,
        owner,
        raised,
    })
}

/// Connects with each delivery and runs the calls in a namespace of their own.
async fn run_both(url: &str) -> anyhow::Result<Vec<Seen>> {
    let mut seen = Vec::new();
    for delivery in [Delivery::Eval, Delivery::Functions] {
        println!("{delivery:?} (library {}):", scripts::LIBRARY.name);
        let client = Client::connect(url, ClientConfig::default().delivery(delivery)).await?;
        seen.push(run(&client, &format!("example-{delivery:?}")).await?);
    }
    Ok(seen)
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let _server;
    let url = match args.url {
        Some(url) => url,
        None => {
            let server = redis_atomic_testkit::RedisServer::start(Default::default())?;
            let url = server.url();
            _server = server;
            url
        }
    };
    run_both(&url).await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// Both deliveries see the same typed replies on an embedded server: created, refreshed,
    /// refused for another user; the owner with its TTL; two then one score raised.
    #[tokio::test]
    async fn runs_on_an_embedded_server() -> anyhow::Result<()> {
        let server = redis_atomic_testkit::RedisServer::start(Default::default())?;
        let minute = Duration::from_secs(60);
        for seen in run_both(&server.url()).await? {
            assert_eq!(
                seen.touches,
                [
                    SessionTouchReply::Created { ttl: minute },
                    SessionTouchReply::Refreshed { ttl: minute },
                    SessionTouchReply::OtherUser,
                ]
            );
            assert!(matches!(&seen.owner, SessionOwnerReply::Owner { user, .. } if user == "u1"));
            let changed = |changed| ZaddUnlessSmallerReply::Ok { changed };
            assert_eq!(seen.raised, [changed(2), changed(1)]);
        }
        Ok(())
    }
}
