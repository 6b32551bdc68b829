//! Connections to the server: the pool every adapter of one palace shares, TLS, and the
//! mapping of the driver's errors.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod, Runtime};
use mempalace_core::{PalaceError, Result};
use tokio_postgres_rustls::MakeRustlsConnect;
use tokio_rustls::rustls;

/// Connections the pool keeps at most (per process).
const POOL_SIZE: usize = 16;
/// How long a call waits for a free connection, or for a new one to open.
pub(crate) const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);
/// How long the client waits for a TCP connection to open.
const TCP_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// TCP keepalive: a silent server (a cut network) is noticed within about 30 s of idleness.
const KEEPALIVE_IDLE: Duration = Duration::from_secs(15);
/// Between keepalive probes.
const KEEPALIVE_INTERVAL: Duration = Duration::from_secs(5);
/// Lost probes before the connection is given up.
const KEEPALIVE_RETRIES: u32 = 3;

/// How connections to PostgreSQL are secured.
///
/// TLS is used whenever the server offers it (the URL's `sslmode`: `prefer`, the default, or
/// `require`, which refuses a server without TLS; `disable` never uses it), and the server's
/// certificate is always verified, chain and host name, against the system's roots and the
/// [`PostgresTls::ca_file`] if one is given: a server whose certificate does not verify is
/// refused, never used without verification. (Under `prefer` a server that offers no TLS is
/// used in the clear, so across an untrusted network say `sslmode=require`.)
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PostgresTls {
    /// A PEM file of certificates to trust besides the system's (a private CA, or a
    /// self-signed server certificate).
    pub ca_file: Option<PathBuf>,
}

impl PostgresTls {
    /// Trusts the certificates in the PEM file `path` as well as the system's.
    pub fn with_ca_file(path: impl Into<PathBuf>) -> Self {
        PostgresTls {
            ca_file: Some(path.into()),
        }
    }

    /// The connector: rustls (ring) with the system roots and the CA file.
    pub(crate) fn connector(&self) -> Result<MakeRustlsConnect> {
        let mut roots = rustls::RootCertStore::empty();
        // The system's roots; a machine without any still reaches a server whose CA is given.
        let native = rustls_native_certs::load_native_certs();
        roots.add_parsable_certificates(native.certs);
        if let Some(path) = &self.ca_file {
            use rustls::pki_types::CertificateDer;
            use rustls::pki_types::pem::PemObject;
            let bad = |why: String| {
                PalaceError::invalid("postgres_ca_file", format!("{}: {why}", path.display()))
            };
            let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(path)
                .map_err(|e| bad(format!("cannot read it ({e})")))?
                .collect::<std::result::Result<_, _>>()
                .map_err(|e| bad(format!("not a PEM certificate file ({e})")))?;
            if certs.is_empty() {
                return Err(bad("holds no certificate".into()));
            }
            for cert in certs {
                roots
                    .add(cert)
                    .map_err(|e| bad(format!("a certificate was refused ({e})")))?;
            }
        }
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| PalaceError::invalid("postgres_tls", e.to_string()))?
            .with_root_certificates(roots)
            .with_no_client_auth();
        Ok(MakeRustlsConnect::new(config))
    }
}

/// A checked connection configuration: the URL parsed, with the client's timeouts and
/// keepalives set.
pub(crate) fn config(url: &str) -> Result<tokio_postgres::Config> {
    let mut config: tokio_postgres::Config = url
        .parse()
        .map_err(|e| PalaceError::invalid("postgres_url", format!("not a PostgreSQL URL: {e}")))?;
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(TCP_CONNECT_TIMEOUT);
    }
    config
        .keepalives(true)
        .keepalives_idle(KEEPALIVE_IDLE)
        .keepalives_interval(KEEPALIVE_INTERVAL)
        .keepalives_retries(KEEPALIVE_RETRIES);
    Ok(config)
}

/// A pool of up to [`POOL_SIZE`] connections to `url`.
pub(crate) fn pool(url: &str, tls: &PostgresTls) -> Result<Pool> {
    let manager = Manager::from_config(
        config(url)?,
        tls.connector()?,
        ManagerConfig {
            recycling_method: RecyclingMethod::Fast,
        },
    );
    Pool::builder(manager)
        .max_size(POOL_SIZE)
        .runtime(Runtime::Tokio1)
        .wait_timeout(Some(CONNECT_TIMEOUT))
        .create_timeout(Some(CONNECT_TIMEOUT))
        .build()
        .map_err(|e| PalaceError::kg("connect", e))
}

/// The server's message for a driver error (with its SQLSTATE), else the driver's with its
/// causes (a TLS handshake failure says which certificate check failed).
pub(crate) fn detail(e: &tokio_postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => format!("{} ({})", db.message(), db.code().code()),
        None => with_causes(e),
    }
}

/// `e` and every cause below it, joined with ": "; a refused server certificate says what to
/// do about it.
pub(crate) fn with_causes(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        let next = c.to_string();
        if !text.contains(&next) {
            text.push_str(": ");
            text.push_str(&next);
        }
        cause = c.source();
    }
    if text.contains("certificate") {
        text.push_str(
            " (the server's TLS certificate was not accepted: trust its CA with \
             --kg-postgres-ca-file / MEMPALACE_KG_POSTGRES_CA_FILE, or put sslmode=disable in the \
             URL to connect without TLS)",
        );
    }
    text
}

/// A knowledge-graph error with the server's message, for `operation`; the driver's error is
/// kept as the source (its SQLSTATE tells a serialisation failure or a lost connection, which
/// a caller may retry).
pub(crate) fn pg(operation: &'static str) -> impl Fn(tokio_postgres::Error) -> PalaceError {
    move |e| PalaceError::KnowledgeGraph {
        operation,
        message: detail(&e),
        source: Box::new(e),
    }
}

/// A sidecar's (coordination log, links, closets, lock) storage error, as [`pg`].
pub(crate) fn pg_store(operation: &'static str) -> impl Fn(tokio_postgres::Error) -> PalaceError {
    move |e| PalaceError::Store {
        backend: "postgres",
        operation,
        message: detail(&e),
        source: Box::new(e),
    }
}

/// The schema handle's errors (connecting, creating the tables, checking the owner) as a
/// sidecar's: a storage error of the `postgres` backend rather than a graph error.
pub(crate) fn sidecar_error(e: PalaceError) -> PalaceError {
    match e {
        PalaceError::KnowledgeGraph {
            operation,
            message,
            source,
        } => PalaceError::Store {
            backend: "postgres",
            operation,
            message,
            source,
        },
        other => other,
    }
}

/// A sidecar's failure to get a connection.
pub(crate) fn no_connection(
    operation: &'static str,
    e: deadpool_postgres::PoolError,
) -> PalaceError {
    PalaceError::store(
        "postgres",
        operation,
        format!("connecting to PostgreSQL: {}", with_causes(&e)),
    )
}
