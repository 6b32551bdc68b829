//! The connection loop: accepts TCP connections (TLS handshakes in their own tasks, so a slow
//! client holds up nobody), serves each over HTTP/1.1 with a header read timeout, and closes
//! them all gracefully at shutdown.

use std::future::Future;
use std::time::Duration;

use axum::Router;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::{GracefulShutdown, Watcher};
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;
use tower::ServiceExt;

use super::access_log::PeerAddr;

/// Accepts and serves connections until `stop` completes; returns the connections' graceful
/// shutdown handle, for the caller to close them when its own work is done.
pub async fn accept_until(
    listener: TcpListener,
    tls: Option<TlsAcceptor>,
    app: Router,
    header_read_timeout: Duration,
    stop: impl Future<Output = ()>,
) -> GracefulShutdown {
    let graceful = GracefulShutdown::new();
    tokio::pin!(stop);
    loop {
        let (tcp, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Out of file descriptors and the like: back off instead of spinning.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
            () = &mut stop => break,
        };
        let _ = tcp.set_nodelay(true);
        let service = app
            .clone()
            .map_request(move |mut request: hyper::Request<Incoming>| {
                request.extensions_mut().insert(PeerAddr(peer));
                request
            });
        let watcher = graceful.watcher();
        match &tls {
            None => {
                tokio::spawn(serve(tcp, service, watcher, header_read_timeout));
            }
            Some(acceptor) => {
                let acceptor = acceptor.clone();
                tokio::spawn(async move {
                    match tokio::time::timeout(header_read_timeout, acceptor.accept(tcp)).await {
                        Ok(Ok(tls)) => serve(tls, service, watcher, header_read_timeout).await,
                        Ok(Err(e)) => tracing::debug!(%peer, error = %e, "TLS handshake failed"),
                        Err(_) => tracing::debug!(%peer, "TLS handshake timed out"),
                    }
                });
            }
        }
    }
    graceful
}

/// Serves one connection until the client closes it, it idles out, or shutdown closes it.
async fn serve<IO, S>(io: IO, service: S, watcher: Watcher, header_read_timeout: Duration)
where
    IO: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    S: tower::Service<hyper::Request<Incoming>, Response = axum::response::Response>
        + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
    S::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(header_read_timeout);
    let connection = builder.serve_connection(TokioIo::new(io), TowerToHyperService::new(service));
    if let Err(e) = watcher.watch(connection).await {
        tracing::debug!(error = %e, "connection ended with an error");
    }
}
