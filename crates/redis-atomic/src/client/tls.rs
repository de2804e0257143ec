//! TLS (`rediss://`): the `redis` crate's rustls support, with the CA and the client certificate
//! given as [`TlsOptions`].
//!
//! Why rustls: nothing to link (no OpenSSL headers or versions to match), and one code path on
//! every platform. Trust: without a CA option the system's trust store is used (managed services
//! present certificates from public CAs); with one, only that CA (a private CA of a self-hosted
//! deployment). There is no "insecure" mode that skips verification: pass the CA instead.
//!
//! Errors are decided once, here: certificate and key files are read and parsed when the client
//! is built, so an unreadable or malformed PEM fails at once with [`Error::Tls`] naming the file;
//! a handshake that fails ("certificate verify failed", a server that wants a client certificate)
//! is [`Error::Tls`] too, not a transient [`Error::NotSent`]: retrying cannot fix a certificate.

use crate::Error;
use redis::RedisError;
use std::io::Read as _;
use std::path::{Path, PathBuf};

/// Largest PEM file read (a system CA bundle is a few hundred KiB).
const MAX_PEM_BYTES: u64 = 4 << 20;

/// PEM data: a file read when the client is built, or bytes.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Pem {
    /// A file.
    File(PathBuf),
    /// The PEM text itself.
    Bytes(Vec<u8>),
}

impl std::fmt::Debug for Pem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Pem::File(path) => write!(f, "File({})", path.display()),
            // Never the bytes: a private key may be among them.
            Pem::Bytes(b) => write!(f, "Bytes(<{} bytes>)", b.len()),
        }
    }
}

impl Pem {
    /// The bytes (a file is read, at most 4 MiB); `what` names it in errors.
    fn load(&self, what: &str) -> Result<Vec<u8>, Error> {
        match self {
            Pem::Bytes(b) => Ok(b.clone()),
            Pem::File(path) => read_bounded(path)
                .map_err(|e| Error::Tls(format!("{what} {}: {e}", path.display()))),
        }
    }

    fn name(&self, what: &str) -> String {
        match self {
            Pem::File(path) => format!("{what} {}", path.display()),
            Pem::Bytes(_) => format!("{what} (PEM bytes)"),
        }
    }
}

fn read_bounded(path: &Path) -> Result<Vec<u8>, String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("cannot read it: {e}"))?;
    if !meta.is_file() {
        return Err("not a regular file".into());
    }
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_PEM_BYTES + 1).read_to_end(&mut bytes))
        .map_err(|e| format!("cannot read it: {e}"))?;
    if bytes.len() as u64 > MAX_PEM_BYTES {
        return Err(format!("larger than {MAX_PEM_BYTES} bytes: not a PEM file"));
    }
    Ok(bytes)
}

/// TLS settings of a client: which CA to trust, and the client certificate for mutual TLS.
/// Used with `rediss://` URLs (standalone, cluster, `rediss+sentinel://`).
///
/// ```
/// use redis_atomic::{ClientConfig, TlsOptions};
/// let config = ClientConfig::default().tls(
///     TlsOptions::new()
///         .ca_file("/etc/redis/tls/ca.crt")
///         .client_cert_files("/etc/redis/tls/client.crt", "/etc/redis/tls/client.key"),
/// );
/// assert!(config.tls.is_some());
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct TlsOptions {
    /// CA certificates (PEM) the server's certificate must chain to; `None`: the system's
    /// trust store.
    pub ca: Option<Pem>,
    /// Client certificate chain and its private key (PEM), for servers that require clients to
    /// authenticate (`tls-auth-clients yes`).
    pub client_cert: Option<(Pem, Pem)>,
}

impl TlsOptions {
    /// The system trust store, no client certificate.
    pub fn new() -> Self {
        Self::default()
    }

    /// Trust the CA certificates in this PEM file (read when the client is built).
    pub fn ca_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.ca = Some(Pem::File(path.into()));
        self
    }

    /// Trust these CA certificates (PEM).
    pub fn ca_pem(mut self, pem: impl Into<Vec<u8>>) -> Self {
        self.ca = Some(Pem::Bytes(pem.into()));
        self
    }

    /// Present this certificate (chain) and key, both PEM files, to the server.
    pub fn client_cert_files(mut self, cert: impl Into<PathBuf>, key: impl Into<PathBuf>) -> Self {
        self.client_cert = Some((Pem::File(cert.into()), Pem::File(key.into())));
        self
    }

    /// Present this certificate (chain) and key (PEM) to the server.
    pub fn client_cert_pem(mut self, cert: impl Into<Vec<u8>>, key: impl Into<Vec<u8>>) -> Self {
        self.client_cert = Some((Pem::Bytes(cert.into()), Pem::Bytes(key.into())));
        self
    }

    /// Reads and checks every file: what the `redis` crate is given.
    pub(crate) fn certificates(&self) -> Result<redis::TlsCertificates, Error> {
        use rustls::pki_types::pem::PemObject as _;
        use rustls::pki_types::{CertificateDer, PrivateKeyDer};
        let certs = |pem: &Pem, what: &str| -> Result<Vec<u8>, Error> {
            let bytes = pem.load(what)?;
            let parsed: Result<Vec<_>, _> = CertificateDer::pem_slice_iter(&bytes).collect();
            match parsed {
                Ok(list) if !list.is_empty() => Ok(bytes),
                Ok(_) => Err(Error::Tls(format!(
                    "{}: no PEM certificate in it",
                    pem.name(what)
                ))),
                Err(e) => Err(Error::Tls(format!("{}: bad PEM: {e}", pem.name(what)))),
            }
        };
        let root_cert = self
            .ca
            .as_ref()
            .map(|ca| certs(ca, "CA file"))
            .transpose()?;
        let client_tls = match &self.client_cert {
            None => None,
            Some((cert, key)) => {
                let client_cert = certs(cert, "client certificate")?;
                let client_key = key.load("client key")?;
                PrivateKeyDer::from_pem_slice(&client_key).map_err(|e| {
                    Error::Tls(format!(
                        "{}: no usable private key: {e}",
                        key.name("client key")
                    ))
                })?;
                Some(redis::ClientTlsConfig {
                    client_cert,
                    client_key,
                })
            }
        };
        Ok(redis::TlsCertificates {
            client_tls,
            root_cert,
        })
    }
}

/// rustls needs one crypto provider per process: ring, unless the application installed its own
/// first (then that one is used; the error only says so).
pub(crate) fn ensure_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// A `redis::Client` for `url`, with `tls` applied (a `rediss://` URL needs none: it then trusts
/// the system store).
pub(crate) fn open(url: &str, tls: Option<&TlsOptions>) -> Result<redis::Client, Error> {
    ensure_provider();
    let Some(tls) = tls else {
        return redis::Client::open(url).map_err(Error::Connection);
    };
    let certs = tls.certificates()?;
    let info = redis::IntoConnectionInfo::into_connection_info(url).map_err(Error::Connection)?;
    if !matches!(info.addr(), redis::ConnectionAddr::TcpTls { .. }) {
        return Err(Error::Tls(
            "TLS options were given for a URL without TLS: use rediss://".into(),
        ));
    }
    redis::Client::build_with_tls(info, certs).map_err(Error::Connection)
}

/// Why a connection failed, when TLS is the reason: a sentence for [`Error::Tls`].
pub(crate) fn failure(err: &RedisError) -> Option<String> {
    let tls = rustls_error(err)?;
    use rustls::{AlertDescription as A, CertificateError as C, Error as E};
    Some(match tls {
        E::InvalidCertificate(C::UnknownIssuer | C::BadSignature) => format!(
            "certificate verify failed: the server's certificate is not signed by a trusted CA \
             ({tls}); trust the CA that signed it (TlsOptions::ca_file, --tls-ca)"
        ),
        E::InvalidCertificate(C::NotValidForName | C::NotValidForNameContext { .. }) => format!(
            "certificate verify failed: the server's certificate does not name the host in the \
             URL ({tls})"
        ),
        E::InvalidCertificate(_) => format!("certificate verify failed: {tls}"),
        E::AlertReceived(
            A::CertificateRequired | A::HandshakeFailure | A::BadCertificate | A::UnknownCA,
        ) => format!(
            "the server refused the TLS handshake ({tls}): it wants a client certificate its CA \
             signed (TlsOptions::client_cert_files, --tls-cert and --tls-key)"
        ),
        E::InvalidMessage(_) => {
            format!("TLS handshake failed ({tls}): is the server speaking TLS on this port?")
        }
        other => format!("TLS handshake failed: {other}"),
    })
}

/// The rustls error inside a `redis` error (an I/O error wrapping it), if any.
fn rustls_error(err: &RedisError) -> Option<&rustls::Error> {
    type Shared = std::sync::Arc<dyn std::error::Error + Send + Sync>;
    let source = std::error::Error::source(err)?;
    let io = match source.downcast_ref::<Shared>() {
        Some(shared) => shared.downcast_ref::<std::io::Error>()?,
        None => source.downcast_ref::<std::io::Error>()?,
    };
    io.get_ref()?.downcast_ref::<rustls::Error>()
}

/// A failed connection attempt as an error: [`Error::Tls`] naming `server` when TLS is why,
/// `otherwise` the error.
pub(crate) fn connect_error(
    err: RedisError,
    server: &str,
    otherwise: fn(RedisError) -> Error,
) -> Error {
    match failure(&err) {
        Some(why) => Error::Tls(format!("{server}: {why}")),
        None => otherwise(err),
    }
}
