//! Connection failures need no server: they must be typed `Store` errors naming the URL, and
//! bad options must be refused before any network traffic.

use std::time::{Duration, Instant};

use mempalace_core::PalaceError;
use mempalace_store_qdrant::{QdrantOptions, QdrantStore};

fn assert_store_error_naming(result: mempalace_core::Result<QdrantStore>, url: &str) {
    match result {
        Err(PalaceError::Store {
            backend,
            operation,
            message,
            ..
        }) => {
            assert_eq!(backend, "qdrant");
            assert_eq!(operation, "connect");
            assert!(
                message.contains(url),
                "message must name the URL: {message}"
            );
        }
        Err(other) => panic!("expected a Store error, got {other:?}"),
        Ok(store) => panic!("connected to {url} where nothing listens: {store:?}"),
    }
}

/// Nothing listens on port 1: the refusal is reported as a Store error with the URL.
#[tokio::test]
async fn refused_connection_is_a_store_error_naming_the_url() {
    let url = "http://127.0.0.1:1";
    let opts = QdrantOptions::new(url, 8).with_timeout(Duration::from_secs(2));
    assert_store_error_naming(QdrantStore::connect(opts).await, url);
}

/// A server that accepts TCP connections but never answers: the request times out within
/// the configured timeout (the client retries once), as a Store error naming the URL.
#[tokio::test]
async fn silent_server_times_out_as_a_store_error() {
    // Never accepted: the kernel completes the TCP handshake and then nothing is ever sent.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a local port");
    let url = format!("http://{}", listener.local_addr().expect("local address"));
    let opts = QdrantOptions::new(url.as_str(), 8).with_timeout(Duration::from_millis(300));
    let started = Instant::now();
    let result = QdrantStore::connect(opts).await;
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "took {:?}",
        started.elapsed()
    );
    assert_store_error_naming(result, &url);
    drop(listener);
}

/// Malformed options are InvalidInput, found before anything is sent.
#[tokio::test]
async fn bad_options_are_invalid_input() {
    for opts in [
        QdrantOptions::new("localhost:6334", 8),
        QdrantOptions::new("http://localhost:6334", 0),
        QdrantOptions::new("http://local host:6334", 8),
        QdrantOptions::new("http://localhost:6334", 8).with_collection(""),
    ] {
        match QdrantStore::connect(opts.clone()).await {
            Err(PalaceError::InvalidInput { .. }) => {}
            other => panic!("{opts:?}: expected InvalidInput, got {other:?}"),
        }
    }
}
