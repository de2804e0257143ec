//! Connection flags shared by every command that takes `--url`: the TLS files (CA, client
//! certificate and key) and `--force-lua`, flattened into each command's arguments, so every
//! command reaches a `rediss://` (or `rediss+sentinel://`) deployment the same way and says the
//! same thing when a file is wrong.

use anyhow::Context as _;
use redis_atomic::{ClientConfig, TlsOptions};
use std::path::PathBuf;

/// `--tls-ca`, `--tls-cert`, `--tls-key`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ConnArgs {
    /// CA certificate(s), PEM, that signed the server's certificate (rediss:// URLs; default:
    /// the system's trust store).
    #[arg(long, value_name = "FILE")]
    pub tls_ca: Option<PathBuf>,
    /// Client certificate, PEM, for servers that require one (tls-auth-clients yes).
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// The client certificate's private key, PEM.
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
    /// Run every primitive on its Lua script even where the server has a native command
    /// (`DELIFEQ`, `SET … IFEQ`): `ClientConfig::force_lua`.
    #[arg(long)]
    pub force_lua: bool,
}

impl ConnArgs {
    /// Whether any TLS file was given.
    pub fn any(&self) -> bool {
        self.tls_ca.is_some() || self.tls_cert.is_some()
    }

    /// The TLS settings the flags give (None without flags).
    pub fn tls(&self) -> Option<TlsOptions> {
        if !self.any() {
            return None;
        }
        let mut tls = TlsOptions::new();
        if let Some(ca) = &self.tls_ca {
            tls = tls.ca_file(ca);
        }
        if let (Some(cert), Some(key)) = (&self.tls_cert, &self.tls_key) {
            tls = tls.client_cert_files(cert, key);
        }
        Some(tls)
    }

    /// `config` with the TLS settings.
    pub fn client_config(&self, config: ClientConfig) -> ClientConfig {
        let config = config.force_lua(self.force_lua);
        match self.tls() {
            Some(tls) => config.tls(tls),
            None => config,
        }
    }

    /// A `redis` client for `url` with the TLS settings (for raw connections).
    pub fn redis_client(&self, url: &str) -> anyhow::Result<redis::Client> {
        redis_atomic::client::redis_client(url, self.tls().as_ref()).context("connecting to --url")
    }

    /// Refuses TLS files without a `--url` to use them on (the embedded server has no TLS).
    pub fn require_url(&self, url: Option<&str>) -> anyhow::Result<()> {
        if self.any() && url.is_none() {
            anyhow::bail!(
                "--tls-ca/--tls-cert/--tls-key apply to --url (the embedded server speaks no TLS)"
            );
        }
        Ok(())
    }
}
