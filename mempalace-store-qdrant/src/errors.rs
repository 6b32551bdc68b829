//! Qdrant client errors -> `PalaceError::Store`, with the server URL in every message.

use mempalace_core::PalaceError;
use qdrant_client::QdrantError;

/// The backend name used in errors and status.
pub const BACKEND: &str = "qdrant";

/// gRPC status code `NOT_FOUND` (Qdrant: the collection does not exist).
const GRPC_NOT_FOUND: i32 = 5;
/// gRPC status code `UNIMPLEMENTED` (an older server without this API).
const GRPC_UNIMPLEMENTED: i32 = 12;
/// gRPC status codes of transport trouble: `CANCELLED` (client timeout), `UNKNOWN`,
/// `DEADLINE_EXCEEDED`, `INTERNAL` (the client reports failed connects so), `UNAVAILABLE`.
const GRPC_TRANSPORT: [i32; 5] = [1, 2, 4, 13, 14];

/// The gRPC status code of a server or transport error, if it has one.
pub fn grpc_code(err: &QdrantError) -> Option<i32> {
    match err {
        QdrantError::ResponseError { status }
        | QdrantError::ResourceExhaustedError { status, .. } => Some(status.code() as i32),
        _ => None,
    }
}

/// Whether the error says the collection does not exist.
pub fn is_not_found(err: &QdrantError) -> bool {
    grpc_code(err) == Some(GRPC_NOT_FOUND)
}

/// Whether the server does not implement the call (e.g. facets before Qdrant 1.12).
pub fn is_unimplemented(err: &QdrantError) -> bool {
    grpc_code(err) == Some(GRPC_UNIMPLEMENTED)
}

/// A short label for a gRPC code, used to tell connection trouble from refusals.
pub fn code_label(code: i32) -> &'static str {
    match code {
        GRPC_NOT_FOUND => "not found",
        GRPC_UNIMPLEMENTED => "not supported by this server",
        3 => "rejected",
        7 | 16 => "permission denied (check the API key)",
        8 => "resource exhausted",
        c if GRPC_TRANSPORT.contains(&c) => "unreachable or timed out",
        _ => "server error",
    }
}

/// A readable one-line description of a client error (without the gRPC metadata dump).
pub fn describe(err: &QdrantError) -> String {
    match err {
        QdrantError::ResponseError { status } => {
            format!(
                "{} ({:?}): {}",
                code_label(status.code() as i32),
                status.code(),
                status.message()
            )
        }
        QdrantError::ResourceExhaustedError {
            status,
            retry_after_seconds,
        } => format!(
            "resource exhausted: {}; retry after {retry_after_seconds} s",
            status.message()
        ),
        other => other.to_string(),
    }
}

/// The `PalaceError::Store` for a failed `operation` on `collection` at `url`; the client's
/// error is kept as the source (a caller can tell a timeout or an unavailable server, worth a
/// retry, from a refusal).
pub fn store_error(
    operation: &'static str,
    url: &str,
    collection: &str,
    err: QdrantError,
) -> PalaceError {
    PalaceError::Store {
        backend: BACKEND,
        operation,
        message: format!(
            "{} [Qdrant at {url}, collection {collection:?}]",
            describe(&err)
        ),
        source: Box::new(err),
    }
}

/// The `PalaceError::Store` for a failed `operation`, from a message.
pub fn store_error_message(
    operation: &'static str,
    url: &str,
    collection: &str,
    message: &str,
) -> PalaceError {
    PalaceError::store(
        BACKEND,
        operation,
        format!("{message} [Qdrant at {url}, collection {collection:?}]"),
    )
}

/// The oldest Qdrant server with every API this store uses (universal query, facets).
pub const MIN_SERVER_VERSION: (u64, u64) = (1, 12);

/// Whether a server version string ("1.13.2", "v1.9.0-dev") is older than
/// [`MIN_SERVER_VERSION`]; unparseable versions are not judged.
pub fn server_too_old(version: &str) -> bool {
    let mut parts = version.trim().trim_start_matches('v').split(['.', '-']);
    let major = parts.next().and_then(|p| p.parse::<u64>().ok());
    let minor = parts.next().and_then(|p| p.parse::<u64>().ok());
    match (major, minor) {
        (Some(major), Some(minor)) => (major, minor) < MIN_SERVER_VERSION,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn old_servers_are_recognised() {
        assert!(server_too_old("1.11.5"));
        assert!(server_too_old("v1.9.0-dev"));
        assert!(server_too_old("0.11.0"));
        assert!(!server_too_old("1.12.0"));
        assert!(!server_too_old("1.16.3"));
        assert!(!server_too_old("2.0.0"));
        assert!(!server_too_old("dev"));
        assert!(!server_too_old(""));
    }

    #[test]
    fn store_errors_name_backend_operation_and_url() {
        let err = QdrantError::ConversionError("boom".into());
        assert!(!is_not_found(&err));
        assert!(!is_unimplemented(&err));
        assert_eq!(grpc_code(&err), None);
        match store_error("upsert", "http://q:6334", "palace", err) {
            PalaceError::Store {
                backend,
                operation,
                message,
                source,
            } => {
                assert_eq!(backend, "qdrant");
                assert_eq!(operation, "upsert");
                assert!(message.contains("boom"), "{message}");
                assert!(message.contains("http://q:6334"), "{message}");
                assert!(message.contains("\"palace\""), "{message}");
                // The client's error is kept, for a caller to inspect.
                assert!(source.downcast_ref::<QdrantError>().is_some());
            }
            other => panic!("expected a Store error, got {other:?}"),
        }
    }

    #[test]
    fn code_labels() {
        assert_eq!(code_label(5), "not found");
        assert_eq!(code_label(14), "unreachable or timed out");
        assert_eq!(code_label(1), "unreachable or timed out");
        assert_eq!(code_label(4), "unreachable or timed out");
        assert_eq!(code_label(16), "permission denied (check the API key)");
        assert_eq!(code_label(12), "not supported by this server");
        assert_eq!(code_label(3), "rejected");
        assert_eq!(code_label(99), "server error");
    }
}
