//! The bound on HTTP requests in flight: one more than the bound is answered 503 at once
//! (with `Retry-After`) instead of queueing without end.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use tokio::sync::Semaphore;

/// Axum middleware: runs the request while a permit is free, else answers 503.
pub async fn limit_in_flight(
    State(permits): State<Arc<Semaphore>>,
    request: Request,
    next: Next,
) -> Response {
    match permits.try_acquire() {
        Ok(_permit) => next.run(request).await,
        Err(_) => (
            StatusCode::SERVICE_UNAVAILABLE,
            [(header::RETRY_AFTER, "1")],
            "too many requests in flight\n",
        )
            .into_response(),
    }
}
