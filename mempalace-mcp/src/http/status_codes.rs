//! HTTP status codes as clients of the MCP specification expect them, where rmcp's transport
//! answers otherwise: a body that is not JSON-RPC is a bad request (400 with a JSON-RPC parse
//! error), not an unsupported media type (415 stays for a wrong `Content-Type`); a DELETE
//! that ends a session answers 204 No Content, not 202 Accepted.

use axum::body::Body;
use axum::extract::Request;
use axum::http::{Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::Response;

/// Axum middleware around the MCP endpoint: corrects the two status codes above.
pub async fn conform(request: Request, next: Next) -> Response {
    let method = request.method().clone();
    let json_body = request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.split(';')
                .next()
                .is_some_and(|essence| essence.trim().eq_ignore_ascii_case("application/json"))
        });
    let response = next.run(request).await;
    match (method, response.status()) {
        // The Content-Type was right, so rmcp's 415 means the body did not parse.
        (Method::POST, StatusCode::UNSUPPORTED_MEDIA_TYPE) if json_body => parse_error(),
        (Method::DELETE, StatusCode::ACCEPTED) => {
            let (mut parts, _) = response.into_parts();
            parts.status = StatusCode::NO_CONTENT;
            parts.headers.remove(header::CONTENT_TYPE);
            parts.headers.remove(header::CONTENT_LENGTH);
            Response::from_parts(parts, Body::empty())
        }
        _ => response,
    }
}

/// 400 with JSON-RPC's parse error (-32700), as the specification answers a body that is not
/// a JSON-RPC message.
fn parse_error() -> Response {
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {"code": -32700, "message": "Parse error: the body is not a JSON-RPC message"}
    });
    let mut response = Response::new(Body::from(body.to_string()));
    *response.status_mut() = StatusCode::BAD_REQUEST;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("application/json"),
    );
    response
}
