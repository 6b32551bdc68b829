//! The access log: one tracing event per HTTP request (target `mempalace::http::access`) with
//! method, path, status, duration and peer address; never headers, query strings or bodies,
//! which carry tokens and memories.

use std::net::SocketAddr;
use std::time::Instant;

use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;

/// The client's address, put into each request's extensions by the connection loop.
#[derive(Clone, Copy, Debug)]
pub struct PeerAddr(pub SocketAddr);

/// Axum middleware: logs the request once its response has started.
pub async fn log_access(request: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = request.method().clone();
    let path = request.uri().path().chars().take(200).collect::<String>();
    let peer = request.extensions().get::<PeerAddr>().map(|p| p.0);
    let response = next.run(request).await;
    tracing::info!(
        target: "mempalace::http::access",
        %method,
        path,
        status = response.status().as_u16(),
        ms = started.elapsed().as_secs_f64() * 1000.0,
        peer = peer.map(|p| p.to_string()).unwrap_or_default(),
        "request"
    );
    response
}
