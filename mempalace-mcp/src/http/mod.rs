//! The MCP server over streamable HTTP: rmcp's transport mounted in axum at `/mcp`, with what
//! a shared server needs around it.
//!
//! - authentication: a bearer token from a file or the environment, compared in constant
//!   time; 401 with no detail; binding anything but loopback without a token is refused;
//! - DNS-rebinding defence: `Host` and `Origin` checked (403 for a foreign browser origin);
//! - read-only mode ([`MemPalaceServer::read_only`]);
//! - limits: request body size (413), requests in flight (503), a time limit on reads and on
//!   the arrival of a request body, header read timeout, idle session expiry;
//! - `GET /healthz` without authentication for load balancers; an access log without bodies;
//! - optional TLS (rustls) from PEM files;
//! - graceful shutdown: the tool calls in flight finish (writes are never cut) before the
//!   sessions and connections close.

mod access_log;
mod bearer;
mod connections;
mod in_flight;
mod origins;
mod status_codes;
mod tls;

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::routing::get;
use rmcp::transport::streamable_http_server::session::local::{LocalSessionManager, SessionConfig};
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio_rustls::TlsAcceptor;
use tokio_util::sync::CancellationToken;
use tower_http::timeout::RequestBodyTimeoutLayer;

pub use access_log::PeerAddr;
pub use bearer::{BearerToken, MIN_TOKEN_CHARS, TOKEN_ENV, TOKEN_FILE_ENV, TokenError};
pub use tls::{TlsError, TlsFiles};

use super::MemPalaceServer;
use super::call_gate::CallGate;

/// The path the MCP endpoint is served at (as 3.11).
pub const MCP_PATH: &str = "/mcp";
/// The unauthenticated liveness endpoint (as 3.11).
pub const HEALTH_PATH: &str = "/healthz";

/// Bounds on what clients can take from the server.
#[derive(Clone, Debug)]
pub struct HttpLimits {
    /// Largest request body accepted; larger ones get 413 (3.11: 16 MiB).
    pub max_body_bytes: usize,
    /// Most HTTP requests handled at once; more get 503 with `Retry-After`.
    pub max_requests_in_flight: usize,
    /// Time limit of a read tool call, and of a request body's arrival.
    pub request_timeout: Duration,
    /// Time a client has to send a request's headers (and to finish a TLS handshake).
    pub header_read_timeout: Duration,
    /// An MCP session without requests for this long is closed.
    pub session_idle: Duration,
    /// How long shutdown waits for the tool calls in flight.
    pub shutdown_grace: Duration,
}

impl Default for HttpLimits {
    fn default() -> Self {
        HttpLimits {
            max_body_bytes: 16 * 1024 * 1024,
            max_requests_in_flight: 256,
            request_timeout: Duration::from_secs(120),
            header_read_timeout: Duration::from_secs(10),
            session_idle: Duration::from_secs(300),
            shutdown_grace: Duration::from_secs(60),
        }
    }
}

/// Where and how the HTTP server listens.
#[derive(Clone, Debug)]
pub struct HttpOptions {
    /// The address to bind (port 0: any free port).
    pub bind: SocketAddr,
    /// The token clients must present; required unless `bind` is a loopback address.
    pub token: Option<BearerToken>,
    /// Serve HTTPS with these files.
    pub tls: Option<TlsFiles>,
    /// `Host` header values accepted (`name` or `name:port`). Empty: loopback names when
    /// bound to loopback; any host otherwise (the token is the guard).
    pub allowed_hosts: Vec<String>,
    /// Browser origins accepted besides the server's own (`scheme://host[:port]`: without a
    /// port, the scheme's default; `:*` for any port; `null` for `Origin: null`). A request whose `Origin` header is neither is
    /// refused with 403 (the MCP specification's defence against DNS rebinding); a request
    /// without one (every non-browser client) passes.
    pub allowed_origins: Vec<String>,
    /// Limits on clients.
    pub limits: HttpLimits,
}

/// Why the HTTP server did not start.
#[derive(Debug, thiserror::Error)]
pub enum HttpStartError {
    /// A non-loopback address without a token.
    #[error(
        "refusing to serve {bind} without a bearer token: set {TOKEN_ENV} or {TOKEN_FILE_ENV}, or pass --token-file (only a loopback address may go without one)"
    )]
    TokenRequired {
        /// The address asked for.
        bind: SocketAddr,
    },
    /// The address could not be bound.
    #[error("cannot listen on {bind}: {source}")]
    Bind {
        /// The address asked for.
        bind: SocketAddr,
        /// What the system said.
        source: std::io::Error,
    },
    /// The TLS files were not usable.
    #[error(transparent)]
    Tls(#[from] TlsError),
    /// An allowed origin that is not one.
    #[error(
        "--allowed-origin {0:?} is not an origin: give scheme://host[:port] (http or https; :* for any port) or null"
    )]
    Origin(String),
}

/// What shutting down did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShutdownReport {
    /// Tool calls still running when the grace period ended (0: every call finished).
    pub calls_unfinished: usize,
    /// Whether connections were still open when the server gave up waiting for them.
    pub connections_cut: bool,
}

/// An HTTP server bound to its address, ready to serve.
pub struct HttpServer {
    listener: TcpListener,
    tls: Option<TlsAcceptor>,
    app: Router,
    calls: Arc<CallGate>,
    sessions: CancellationToken,
    limits: HttpLimits,
    address: SocketAddr,
}

impl HttpServer {
    /// Checks the options and binds; nothing is served until [`HttpServer::serve`].
    pub async fn bind(
        server: MemPalaceServer,
        options: HttpOptions,
    ) -> Result<Self, HttpStartError> {
        let loopback = options.bind.ip().is_loopback();
        if !loopback && options.token.is_none() {
            return Err(HttpStartError::TokenRequired { bind: options.bind });
        }
        let mut allowed_origins = Vec::with_capacity(options.allowed_origins.len());
        for origin in &options.allowed_origins {
            match origins::normalized_origin(origin) {
                Some(o) => allowed_origins.push(o),
                None => return Err(HttpStartError::Origin(origin.clone())),
            }
        }
        let tls = options.tls.as_ref().map(tls::acceptor).transpose()?;
        let limits = options.limits.clone();
        let server = server.with_read_time_limit(limits.request_timeout);
        let calls = server.call_gate();
        let sessions = CancellationToken::new();

        // Bound first: the server's own origins name the port it got.
        let listener =
            TcpListener::bind(options.bind)
                .await
                .map_err(|source| HttpStartError::Bind {
                    bind: options.bind,
                    source,
                })?;
        let address = listener
            .local_addr()
            .map_err(|source| HttpStartError::Bind {
                bind: options.bind,
                source,
            })?;
        let mut origins = origins::own_origins(address, tls.is_some(), &options.allowed_hosts);
        origins.extend(allowed_origins);

        let mut config = StreamableHttpServerConfig::default()
            .with_cancellation_token(sessions.clone())
            .with_max_request_body_bytes(limits.max_body_bytes)
            .with_allowed_origins(origins)
            .enforce_origin_validation();
        if !options.allowed_hosts.is_empty() {
            config = config.with_allowed_hosts(options.allowed_hosts.clone());
        } else if !loopback {
            config = config.disable_allowed_hosts();
        }
        let mut session_config = SessionConfig::default();
        session_config.keep_alive = Some(limits.session_idle);
        let mut session_manager = LocalSessionManager::default();
        session_manager.session_config = session_config;
        let mcp = StreamableHttpService::new(
            move || Ok(server.clone()),
            Arc::new(session_manager),
            config,
        );

        let mut protected = Router::new()
            .route_service(MCP_PATH, mcp)
            .route_layer(axum::middleware::from_fn(status_codes::conform));
        if let Some(token) = options.token {
            protected = protected.route_layer(axum::middleware::from_fn_with_state(
                Arc::new(token),
                bearer::require_bearer,
            ));
        }
        let app = protected
            .route(HEALTH_PATH, get(|| async { "ok\n" }))
            .layer(RequestBodyTimeoutLayer::new(limits.request_timeout))
            .layer(axum::middleware::from_fn_with_state(
                Arc::new(Semaphore::new(limits.max_requests_in_flight.max(1))),
                in_flight::limit_in_flight,
            ))
            .layer(axum::middleware::from_fn(access_log::log_access));

        Ok(HttpServer {
            listener,
            tls,
            app,
            calls,
            sessions,
            limits,
            address,
        })
    }

    /// The address the server listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.address
    }

    /// The MCP endpoint's URL, e.g. `http://127.0.0.1:8765/mcp`.
    pub fn url(&self) -> String {
        let scheme = if self.tls.is_some() { "https" } else { "http" };
        format!("{scheme}://{}{MCP_PATH}", self.address)
    }

    /// Serves until `shutdown` completes, then stops accepting, lets the tool calls in
    /// flight finish (new ones are refused), and closes sessions and connections.
    pub async fn serve(self, shutdown: impl Future<Output = ()>) -> ShutdownReport {
        let connections = connections::accept_until(
            self.listener,
            self.tls,
            self.app,
            self.limits.header_read_timeout,
            shutdown,
        )
        .await;
        tracing::info!(
            calls = self.calls.in_flight(),
            "shutting down: finishing the tool calls in flight"
        );
        let calls_unfinished = self.calls.drain(self.limits.shutdown_grace).await;
        // Answers already produced reach their clients while the connections close; open
        // event streams end when their sessions are cancelled.
        let closing = connections.shutdown();
        tokio::pin!(closing);
        let mut connections_cut = false;
        if tokio::time::timeout(Duration::from_secs(2), &mut closing)
            .await
            .is_err()
        {
            self.sessions.cancel();
            connections_cut = tokio::time::timeout(Duration::from_secs(5), closing)
                .await
                .is_err();
        }
        self.sessions.cancel();
        ShutdownReport {
            calls_unfinished,
            connections_cut,
        }
    }
}

/// Completes on SIGTERM or Ctrl-C (SIGINT).
pub async fn termination_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = tokio::signal::ctrl_c() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

/// Serves `server` over HTTP as `options` say until SIGTERM or Ctrl-C; `on_listening` gets
/// the endpoint URL once bound.
pub async fn serve_http(
    server: MemPalaceServer,
    options: HttpOptions,
    on_listening: impl FnOnce(&str),
) -> Result<ShutdownReport, HttpStartError> {
    let http = HttpServer::bind(server, options).await?;
    on_listening(&http.url());
    Ok(http.serve(termination_signal()).await)
}
