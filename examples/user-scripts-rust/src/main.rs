//! Your own scripts, called from Rust through bindings generated at build time (`build.rs`).
//!
//! ```sh
//! cargo run -p user-scripts-example                               # embedded redis-server
//! cargo run -p user-scripts-example -- --url redis://127.0.0.1:6379
//! ```
//! The scripts are `examples/user-scripts` (session touch, ZADD-unless-smaller, stock reserve).
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

use scripts::{SessionTouchReply, StockReserveReply, ZaddUnlessSmallerReply};

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
    raised: Vec<ZaddUnlessSmallerReply>,
    reserved: Vec<StockReserveReply>,
}

/// Touches two sessions of one user and one of them as another user, raises scores twice, and
/// reserves stock (a resend, a changed resend, too much, an unknown item); prints and returns
/// every reply.
async fn run(client: &Client, namespace: &str) -> anyhow::Result<Seen> {
    let index = format!("{namespace}:user-sessions:{{u1}}");
    let mut touches = Vec::new();
    for (session, user) in [("s1", "u1"), ("s2", "u1"), ("s1", "u2")] {
        let key = format!("{namespace}:session:{{u1}}:{session}");
        let args = [session.into(), user.into(), Arg::Int(3600)];
        let reply = client
            .call(&scripts::SESSION_TOUCH, [&key, &index], args)
            .await?;
        println!("  session_touch({session}, {user}) -> {reply:?}");
        touches.push(reply);
    }
    let board = format!("{namespace}:board:{{daily}}");
    let mut raised = Vec::new();
    for batch in [
        ["3600", "5", "alice", "7", "bob"],
        ["3600", "3", "alice", "9", "bob"],
    ] {
        let args: Vec<Arg> = batch.iter().map(|p| Arg::from(*p)).collect();
        let reply = client
            .call(&scripts::ZADD_UNLESS_SMALLER, &[&board], &args)
            .await?;
        println!("  zadd_unless_smaller({batch:?}) -> {reply:?}");
        raised.push(reply);
    }
    let stock = format!("{namespace}:stock:{{sku-42}}");
    client
        .command(redis::cmd("SET").arg(&stock).arg(10))
        .await?;
    let mut reserved = Vec::new();
    for (item, request, qty) in [
        ("sku-42", "r1", 3),
        ("sku-42", "r1", 3),
        ("sku-42", "r1", 4),
        ("sku-42", "r2", 20),
        ("sku-7", "r3", 1),
    ] {
        let stock = format!("{namespace}:stock:{{{item}}}");
        let request_key = format!("{namespace}:reservation:{{{item}}}:{request}");
        let args = [Arg::Int(qty), Arg::Int(600)];
        let reply = client
            .call(&scripts::STOCK_RESERVE, [&stock, &request_key], args)
            .await?;
        println!("  stock_reserve({item}, {request}, {qty}) -> {reply:?}");
        reserved.push(reply);
    }
    Ok(Seen {
        touches,
        raised,
        reserved,
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

    /// Both deliveries see the same typed replies on an embedded server: two sessions indexed,
    /// another user refused naming the owner; two then one score raised; stock reserved once
    /// per request id, never below zero.
    #[tokio::test]
    async fn runs_on_an_embedded_server() -> anyhow::Result<()> {
        let server = redis_atomic_testkit::RedisServer::start(Default::default())?;
        for seen in run_both(&server.url()).await? {
            assert_eq!(
                seen.touches,
                [
                    SessionTouchReply::Touched { sessions: 1 },
                    SessionTouchReply::Touched { sessions: 2 },
                    SessionTouchReply::OtherUser { owner: "u1".into() },
                ]
            );
            let changed = |count| ZaddUnlessSmallerReply::Changed { count };
            assert_eq!(seen.raised, [changed(2), changed(1)]);
            assert_eq!(
                seen.reserved,
                [
                    StockReserveReply::Reserved { remaining: 7 },
                    StockReserveReply::Replay { remaining: 7 },
                    StockReserveReply::Mismatch { reserved: 3 },
                    StockReserveReply::Insufficient { available: 7 },
                    StockReserveReply::UnknownItem,
                ]
            );
        }
        Ok(())
    }
}
