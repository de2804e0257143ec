//! Sentinel: where the primary is, asked of Sentinel, and asked again after a failover.
//!
//! The `redis` crate's `SentinelClient` finds the primary: it asks each Sentinel in turn for the
//! service and checks, with `ROLE`, that the node named answers as a primary. What it does not do
//! is stay with the primary: its `ConnectionManager` reconnects to the address it was built with,
//! which after a failover is the old primary — a replica now (answering `READONLY` to every
//! write) or dead. So this client resolves for itself ([`Resolver`]): it keeps the address
//! Sentinel gave until a connection to it breaks or answers `READONLY`, and the next connection
//! asks Sentinel again. Every pooled connection made before that is then replaced on its next
//! use rather than tried first (a request on a dead connection would end as an unknown outcome).
//!
//! The URL: `redis+sentinel://[user:password@]host:port[,host:port...]/service[/db]`
//! (`rediss+sentinel://` for TLS to the Sentinels and the data nodes). Credentials in the URL
//! are the data nodes'; Sentinels with their own are set with [`SentinelConfig::sentinel_auth`].

use super::tls::TlsOptions;
use crate::Error;
use redis::sentinel::{SentinelClient, SentinelClientBuilder, SentinelServerType};
use redis::{ConnectionAddr, RedisResult};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// The port Sentinels listen on unless the URL says otherwise.
pub const DEFAULT_SENTINEL_PORT: u16 = 26379;

/// Where the Sentinels are, which service to ask them for, and how to log in.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SentinelConfig {
    /// Sentinel addresses (host, port), asked in this order.
    pub sentinels: Vec<(String, u16)>,
    /// The name the primary is monitored under (`sentinel monitor <name> ...`).
    pub service: String,
    /// TLS to the Sentinels and the data nodes (certificates from [`crate::ClientConfig::tls`]).
    pub tls: bool,
    /// The data nodes' user (ACL) and password.
    pub auth: Option<(Option<String>, String)>,
    /// The Sentinels' user and password, when they require one.
    pub sentinel_auth: Option<(Option<String>, String)>,
    /// Database number on the data nodes.
    pub db: i64,
}

impl std::fmt::Debug for SentinelConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the passwords.
        f.debug_struct("SentinelConfig")
            .field("sentinels", &self.sentinels)
            .field("service", &self.service)
            .field("tls", &self.tls)
            .field("auth", &self.auth.as_ref().map(|(u, _)| u))
            .field(
                "sentinel_auth",
                &self.sentinel_auth.as_ref().map(|(u, _)| u),
            )
            .field("db", &self.db)
            .finish()
    }
}

impl SentinelConfig {
    /// Sentinels at `sentinels`, monitoring the primary named `service`; no TLS, no auth.
    pub fn new(
        sentinels: impl IntoIterator<Item = (String, u16)>,
        service: impl Into<String>,
    ) -> Self {
        SentinelConfig {
            sentinels: sentinels.into_iter().collect(),
            service: service.into(),
            tls: false,
            auth: None,
            sentinel_auth: None,
            db: 0,
        }
    }

    /// With TLS to the Sentinels and the data nodes.
    pub fn tls(mut self, tls: bool) -> Self {
        self.tls = tls;
        self
    }

    /// The data nodes' credentials (`user` None: the default user).
    pub fn auth(mut self, user: Option<String>, password: impl Into<String>) -> Self {
        self.auth = Some((user, password.into()));
        self
    }

    /// The Sentinels' credentials.
    pub fn sentinel_auth(mut self, user: Option<String>, password: impl Into<String>) -> Self {
        self.sentinel_auth = Some((user, password.into()));
        self
    }

    /// Whether `url` is a Sentinel URL (`redis+sentinel://` or `rediss+sentinel://`).
    pub fn is_sentinel_url(url: &str) -> bool {
        url.starts_with("redis+sentinel://") || url.starts_with("rediss+sentinel://")
    }

    /// Parses `redis+sentinel://[user:password@]host[:port][,host[:port]...]/service[/db]`
    /// (`rediss+sentinel://`: TLS). User and password are percent-decoded.
    pub fn parse(url: &str) -> Result<SentinelConfig, Error> {
        let bad = |why: &str| Error::BadArgument(format!("sentinel URL: {why}"));
        let (tls, rest) = if let Some(rest) = url.strip_prefix("redis+sentinel://") {
            (false, rest)
        } else if let Some(rest) = url.strip_prefix("rediss+sentinel://") {
            (true, rest)
        } else {
            return Err(bad("expected redis+sentinel:// or rediss+sentinel://"));
        };
        let (authority, path) = rest
            .split_once('/')
            .ok_or_else(|| bad("no service name: end the URL with /<service>"))?;
        let (userinfo, hosts) = match authority.rsplit_once('@') {
            Some((u, h)) => (Some(u), h),
            None => (None, authority),
        };
        let sentinels = hosts
            .split(',')
            .map(|h| host_port(h).ok_or_else(|| bad(&format!("bad host:port `{h}`"))))
            .collect::<Result<Vec<_>, _>>()?;
        let (service, db) = match path.split_once('/') {
            Some((s, db)) => (s, db.parse().map_err(|_| bad("db must be a number"))?),
            None => (path, 0),
        };
        if service.is_empty() {
            return Err(bad("empty service name"));
        }
        let mut config = SentinelConfig::new(
            sentinels,
            decode(service).ok_or_else(|| bad("bad %-escape"))?,
        )
        .tls(tls);
        config.db = db;
        if let Some(info) = userinfo {
            let (user, password) = info.split_once(':').unwrap_or(("", info));
            let user = decode(user).ok_or_else(|| bad("bad %-escape"))?;
            let password = decode(password).ok_or_else(|| bad("bad %-escape"))?;
            config = config.auth((!user.is_empty()).then_some(user), password);
        }
        Ok(config)
    }

    /// "sentinel service <name>": how errors name the target.
    pub(crate) fn label(&self) -> String {
        format!("sentinel service {}", self.service)
    }

    /// The `redis` crate's client for the primary, with credentials and TLS.
    fn build(&self, tls: Option<&TlsOptions>) -> Result<SentinelClient, Error> {
        if tls.is_some() && !self.tls {
            return Err(Error::Tls(
                "TLS options were given for a URL without TLS: use rediss+sentinel://".into(),
            ));
        }
        let addrs = self.sentinels.iter().map(|(host, port)| {
            if self.tls {
                ConnectionAddr::TcpTls {
                    host: host.clone(),
                    port: *port,
                    insecure: false,
                    tls_params: None,
                }
            } else {
                ConnectionAddr::Tcp(host.clone(), *port)
            }
        });
        let mut b = SentinelClientBuilder::new(addrs, &self.service, SentinelServerType::Master)
            .map_err(Error::Connection)?
            .set_client_to_redis_db(self.db);
        if self.tls {
            super::tls::ensure_provider();
            b = b
                .set_client_to_redis_tls_mode(redis::TlsMode::Secure)
                .set_client_to_sentinel_tls_mode(redis::TlsMode::Secure);
            if let Some(tls) = tls {
                let certs = tls.certificates()?;
                b = b
                    .set_client_to_sentinel_certificates(certs.clone())
                    .set_client_to_redis_certificates(certs);
            }
        }
        if let Some((user, password)) = &self.auth {
            b = b.set_client_to_redis_password(password);
            if let Some(user) = user {
                b = b.set_client_to_redis_username(user);
            }
        }
        if let Some((user, password)) = &self.sentinel_auth {
            b = b.set_client_to_sentinel_password(password);
            if let Some(user) = user {
                b = b.set_client_to_sentinel_username(user);
            }
        }
        b.build().map_err(Error::Connection)
    }
}

/// `host`, `host:port` or `[v6]:port`.
fn host_port(s: &str) -> Option<(String, u16)> {
    let (host, port) = if let Some(rest) = s.strip_prefix('[') {
        let (host, after) = rest.split_once(']')?;
        match after {
            "" => (host, None),
            p => (host, Some(p.strip_prefix(':')?)),
        }
    } else {
        match s.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (s, None),
        }
    };
    if host.is_empty() {
        return None;
    }
    let port = match port {
        Some(p) => p.parse().ok()?,
        None => DEFAULT_SENTINEL_PORT,
    };
    Some((host.to_string(), port))
}

/// Percent-decoding (`%40` → `@`); None on a bad escape or bytes that are not UTF-8.
fn decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = s.get(i + 1..i + 3)?;
            if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                return None;
            }
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// Refusals that say the node may not be the primary to write to (any more): `READONLY` (it is a
/// replica now) and `NOREPLICAS` (with `min-replicas-to-write`, what a primary that a failover
/// left behind answers until Sentinel converts it, some 8 s later). Through Sentinel, the next
/// connection asks again; to a fixed address, it reconnects.
pub(crate) fn stale_primary(code: &str) -> bool {
    matches!(code, "READONLY" | "NOREPLICAS")
}

/// Where a standalone deployment's primary is: a fixed address, or whatever Sentinel says.
pub(crate) enum Resolver {
    /// One address, for good.
    Fixed(redis::Client),
    /// Asked of Sentinel; kept until [`Resolver::invalidate`].
    Sentinel {
        sentinel: Box<tokio::sync::Mutex<SentinelClient>>,
        current: Mutex<Option<redis::Client>>,
        /// Bumped by each invalidation: connections made before it are replaced on next use.
        generation: AtomicU64,
    },
}

impl Resolver {
    pub(crate) fn sentinel(
        config: &SentinelConfig,
        tls: Option<&TlsOptions>,
    ) -> Result<Resolver, Error> {
        Ok(Resolver::Sentinel {
            sentinel: Box::new(tokio::sync::Mutex::new(config.build(tls)?)),
            current: Mutex::new(None),
            generation: AtomicU64::new(0),
        })
    }

    /// The client for the primary as last resolved (asking Sentinel when nothing is known).
    pub(crate) async fn client(&self) -> RedisResult<redis::Client> {
        let (sentinel, current) = match self {
            Resolver::Fixed(client) => return Ok(client.clone()),
            Resolver::Sentinel {
                sentinel, current, ..
            } => (sentinel, current),
        };
        let cached = || current.lock().unwrap_or_else(|p| p.into_inner()).clone();
        if let Some(client) = cached() {
            return Ok(client);
        }
        // One resolution at a time; whoever waited finds the answer cached.
        let mut sentinel = sentinel.lock().await;
        if let Some(client) = cached() {
            return Ok(client);
        }
        let client = sentinel.async_get_client().await?;
        *current.lock().unwrap_or_else(|p| p.into_inner()) = Some(client.clone());
        Ok(client)
    }

    /// What was resolved may be stale (a connection to it broke, or it answered `READONLY`):
    /// the next connection asks Sentinel again, and older connections are replaced.
    pub(crate) fn invalidate(&self) {
        if let Resolver::Sentinel {
            current,
            generation,
            ..
        } = self
        {
            *current.lock().unwrap_or_else(|p| p.into_inner()) = None;
            generation.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// Changes whenever [`Resolver::invalidate`] runs (always 0 for a fixed address).
    pub(crate) fn generation(&self) -> u64 {
        match self {
            Resolver::Fixed(_) => 0,
            Resolver::Sentinel { generation, .. } => generation.load(Ordering::SeqCst),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hosts, default port, service, db, percent-decoded credentials, TLS scheme.
    #[test]
    fn parses_sentinel_urls() {
        let c = SentinelConfig::parse("redis+sentinel://a:1,b,[::1]:3/mymaster").unwrap();
        assert_eq!(
            c.sentinels,
            vec![
                ("a".into(), 1),
                ("b".into(), DEFAULT_SENTINEL_PORT),
                ("::1".into(), 3)
            ]
        );
        assert_eq!((c.service.as_str(), c.db, c.tls), ("mymaster", 0, false));
        assert!(c.auth.is_none());
        let c = SentinelConfig::parse("rediss+sentinel://app:p%40ss@h:9/m/2").unwrap();
        assert_eq!((c.tls, c.db), (true, 2));
        assert_eq!(c.auth, Some((Some("app".into()), "p@ss".into())));
        assert!(!format!("{c:?}").contains("p@ss"), "password in Debug");
        let c = SentinelConfig::parse("redis+sentinel://:secret@h/m").unwrap();
        assert_eq!(c.auth, Some((None, "secret".into())));
    }

    /// `READONLY` and `NOREPLICAS` send the client back to Sentinel; other refusals do not.
    #[test]
    fn stale_primary_codes() {
        assert!(stale_primary("READONLY") && stale_primary("NOREPLICAS"));
        assert!(!stale_primary("BUSY") && !stale_primary("MOVED"));
    }

    /// Malformed URLs are typed errors, never panics.
    #[test]
    fn refuses_bad_sentinel_urls() {
        for url in [
            "redis://h:1/m",
            "redis+sentinel://h:1",
            "redis+sentinel://h:1/",
            "redis+sentinel://h:x/m",
            "redis+sentinel://h:1,/m",
            "redis+sentinel://[::1/m",
            "redis+sentinel://h/m/x",
            "redis+sentinel://u:%4@h/m",
            "redis+sentinel://u:%+1@h/m",
            "redis+sentinel://u:%ff@h/m",
            "redis+sentinel://h:99999/m",
        ] {
            assert!(
                matches!(SentinelConfig::parse(url), Err(Error::BadArgument(_))),
                "{url}"
            );
        }
    }

    /// A raw node client cannot be made from a Sentinel URL: a typed error that says why.
    #[test]
    fn a_sentinel_url_is_no_node_url() {
        for url in ["redis+sentinel://h:1/m", "rediss+sentinel://h:1/m"] {
            match crate::client::redis_client(url, None) {
                Err(Error::BadArgument(why)) => assert!(why.contains("Sentinel URL"), "{why}"),
                other => panic!("{url}: {other:?}"),
            }
        }
    }
}
