//! Throwaway TLS material for test servers: a CA, a server certificate it signed and a client
//! certificate it signed, generated in-process (`rcgen`) and written as PEM files.
//!
//! Why generated and not checked in: a committed key expires, leaks into scanners' reports and
//! invites reuse outside tests; one generated per test binary costs a few milliseconds. The
//! server certificate names `127.0.0.1` (an IP SAN) and `localhost`, the addresses the testkit
//! listens on, so clients verify it exactly as they would in production — no "insecure" mode.

use crate::error::{io, TestkitError};
use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose, IsCa,
    KeyPair, KeyUsagePurpose,
};
use std::path::{Path, PathBuf};

/// Whether the server asks clients for a certificate (`tls-auth-clients`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum ClientAuth {
    /// Clients need no certificate (`no`).
    #[default]
    No,
    /// Clients must present one the CA signed (`yes`: mutual TLS).
    Required,
    /// A certificate is checked when presented (`optional`).
    Optional,
}

impl ClientAuth {
    fn directive(self) -> &'static str {
        match self {
            ClientAuth::No => "no",
            ClientAuth::Required => "yes",
            ClientAuth::Optional => "optional",
        }
    }
}

/// A CA and the certificates it signed, as PEM files in a temp dir (removed on drop).
#[derive(Debug)]
pub struct TlsMaterial {
    dir: tempfile::TempDir,
    ca_pem: String,
    client_cert_pem: String,
    client_key_pem: String,
}

const CA: &str = "ca.crt";
const SERVER_CERT: &str = "server.crt";
const SERVER_KEY: &str = "server.key";
const CLIENT_CERT: &str = "client.crt";
const CLIENT_KEY: &str = "client.key";

impl TlsMaterial {
    /// A fresh CA, a server certificate for `127.0.0.1`/`localhost` and a client certificate.
    pub fn generate() -> Result<TlsMaterial, TestkitError> {
        let tls = |e: rcgen::Error| TestkitError::Tls(e.to_string());
        let mut ca_params = CertificateParams::new(Vec::<String>::new()).map_err(tls)?;
        ca_params
            .distinguished_name
            .push(DnType::CommonName, "redis-atomic test CA");
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca_params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate().map_err(tls)?)
            .map_err(tls)?;
        let leaf = |names: Vec<String>, usage: ExtendedKeyUsagePurpose| {
            let mut params = CertificateParams::new(names).map_err(tls)?;
            params
                .distinguished_name
                .push(DnType::CommonName, "redis-atomic test");
            params.extended_key_usages = vec![usage];
            let key = KeyPair::generate().map_err(tls)?;
            let cert = params.signed_by(&key, &ca).map_err(tls)?;
            Ok::<_, TestkitError>((cert.pem(), key.serialize_pem()))
        };
        let (server_cert, server_key) = leaf(
            vec!["127.0.0.1".into(), "localhost".into()],
            ExtendedKeyUsagePurpose::ServerAuth,
        )?;
        let (client_cert, client_key) =
            leaf(vec!["client".into()], ExtendedKeyUsagePurpose::ClientAuth)?;
        let dir = tempfile::Builder::new()
            .prefix("redis-atomic-tls-")
            .tempdir()
            .map_err(io("create TLS temp dir"))?;
        let material = TlsMaterial {
            dir,
            ca_pem: ca.pem(),
            client_cert_pem: client_cert,
            client_key_pem: client_key,
        };
        for (name, pem) in [
            (CA, material.ca_pem.as_str()),
            (SERVER_CERT, &server_cert),
            (SERVER_KEY, &server_key),
            (CLIENT_CERT, &material.client_cert_pem),
            (CLIENT_KEY, &material.client_key_pem),
        ] {
            std::fs::write(material.path(name), pem).map_err(io(format!("write {name}")))?;
        }
        Ok(material)
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// The CA certificate file (PEM): what clients trust.
    pub fn ca_file(&self) -> PathBuf {
        self.path(CA)
    }

    /// The client certificate file (PEM), for mutual TLS.
    pub fn client_cert_file(&self) -> PathBuf {
        self.path(CLIENT_CERT)
    }

    /// The client key file (PEM), for mutual TLS.
    pub fn client_key_file(&self) -> PathBuf {
        self.path(CLIENT_KEY)
    }

    /// The CA certificate (PEM).
    pub fn ca_pem(&self) -> &[u8] {
        self.ca_pem.as_bytes()
    }

    /// The client certificate and key (PEM).
    pub fn client_identity_pem(&self) -> (&[u8], &[u8]) {
        (
            self.client_cert_pem.as_bytes(),
            self.client_key_pem.as_bytes(),
        )
    }

    /// What a `redis` client needs to reach a server using this material: the CA, and the
    /// client certificate (accepted whether or not the server asks for one).
    pub fn redis_certificates(&self) -> redis::TlsCertificates {
        // rustls needs a process-wide crypto provider; pick ring unless one is installed (an
        // error here only means someone else installed theirs first).
        let _ = rustls::crypto::ring::default_provider().install_default();
        redis::TlsCertificates {
            client_tls: Some(redis::ClientTlsConfig {
                client_cert: self.client_cert_pem.as_bytes().to_vec(),
                client_key: self.client_key_pem.as_bytes().to_vec(),
            }),
            root_cert: Some(self.ca_pem.as_bytes().to_vec()),
        }
    }

    /// The server's `tls-*` directives (the plain port is closed: `port 0`, set by the caller).
    pub(crate) fn server_directives(&self, auth: ClientAuth, port: u16) -> Vec<String> {
        let file = |name: &str| quoted(&self.path(name));
        vec![
            format!("tls-port {port}"),
            format!("tls-cert-file {}", file(SERVER_CERT)),
            format!("tls-key-file {}", file(SERVER_KEY)),
            format!("tls-ca-cert-file {}", file(CA)),
            format!("tls-auth-clients {}", auth.directive()),
            // Replicas and cluster peers connect with the server's own certificate, which is
            // marked for server use only: let the same files serve as their client identity.
            format!("tls-client-cert-file {}", file(CLIENT_CERT)),
            format!("tls-client-key-file {}", file(CLIENT_KEY)),
            "tls-replication yes".to_string(),
        ]
    }
}

fn quoted(path: &Path) -> String {
    format!("\"{}\"", path.display())
}

/// TLS settings of a test server: the material and whether clients need a certificate.
#[derive(Clone, Debug)]
pub struct ServerTls {
    /// CA and certificates (shared: every node of a cluster or Sentinel group uses the same).
    pub material: std::sync::Arc<TlsMaterial>,
    /// `tls-auth-clients`.
    pub auth: ClientAuth,
}

impl ServerTls {
    /// TLS with `material`, clients authenticated as `auth` says.
    pub fn new(material: std::sync::Arc<TlsMaterial>, auth: ClientAuth) -> ServerTls {
        ServerTls { material, auth }
    }
}
