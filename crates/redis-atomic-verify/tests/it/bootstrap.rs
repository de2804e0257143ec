//! The one embedded-server bootstrap: without a URL a server is started for the caller and
//! stopped when its guard drops; with one, nothing is started.

use redis_atomic::ClientConfig;
use redis_atomic_testkit::RedisServer;
use redis_atomic_verify::{connect_or_embed, url_or_embed};

fn ping(url: &str) -> redis::RedisResult<String> {
    redis::Client::open(url)?
        .get_connection()
        .and_then(|mut c| redis::cmd("PING").query(&mut c))
}

#[tokio::test]
async fn embeds_without_a_url_and_stops_on_drop() {
    let (client, embedded) = connect_or_embed(None, false, ClientConfig::default())
        .await
        .unwrap();
    assert!(embedded.is_embedded());
    let described = embedded.describe().unwrap();
    assert!(
        described.starts_with("embedded redis-server "),
        "{described}"
    );
    let pong = client.command(&redis::cmd("PING")).await.unwrap();
    assert_eq!(pong, redis::Value::SimpleString("PONG".into()));
    let url = embedded.urls().remove(0);
    assert_eq!(ping(&url).unwrap(), "PONG");
    drop(embedded);
    assert!(
        ping(&url).is_err(),
        "the embedded server outlived its guard"
    );

    let (url, embedded) = url_or_embed(None, false).unwrap();
    assert_eq!(ping(&url).unwrap(), "PONG");
    drop(embedded);
    assert!(ping(&url).is_err());
}

#[tokio::test]
async fn a_url_starts_nothing() {
    let shared = RedisServer::shared().url();
    let (client, embedded) = connect_or_embed(Some(&shared), false, ClientConfig::default())
        .await
        .unwrap();
    assert!(!embedded.is_embedded() && embedded.describe().is_none());
    assert!(embedded.urls().is_empty());
    client.command(&redis::cmd("PING")).await.unwrap();
    let (url, embedded) = url_or_embed(Some(&shared), false).unwrap();
    assert_eq!((url, embedded.is_embedded()), (shared, false));
    let refused =
        connect_or_embed(Some("redis://127.0.0.1:1"), false, ClientConfig::default()).await;
    assert!(refused.is_err());
}
