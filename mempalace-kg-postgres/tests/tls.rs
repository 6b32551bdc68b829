//! TLS to PostgreSQL, against a cluster of the test's own serving a self-signed certificate
//! (SKIPPED without PostgreSQL installed, and without `MEMPALACE_TEST_POSTGRES_URL`, which
//! says the servers are expected here): trusted through a CA file the connection is
//! encrypted and every adapter works over it; without it, or under another name, the server
//! is refused, never used unverified.

use std::sync::Arc;

use mempalace_conformance::live_service::postgres_url;
use mempalace_core::coordination::{Coordination, NewEvent};
use mempalace_core::{KnowledgeGraph, NewTriple, WriteLock};
use mempalace_kg_postgres::{
    PostgresCoordinationLog, PostgresKnowledgeGraph, PostgresTls, PostgresWriteLock,
};

mod common;
use common::fresh_schema;
use mempalace_conformance::throwaway_postgres::ThrowawayPostgres as OwnCluster;

/// A cluster serving TLS with a self-signed certificate for `localhost` only; the
/// certificate's PEM file.
fn cluster_with_tls(test: &str) -> Option<(OwnCluster, std::path::PathBuf)> {
    postgres_url(test)?;
    let cluster = OwnCluster::start(test)?;
    let key = rcgen::generate_simple_self_signed(vec!["localhost".into()]).unwrap();
    let cert_path = cluster.dir.join("server.crt");
    let key_path = cluster.dir.join("server.key");
    std::fs::write(&cert_path, key.cert.pem()).unwrap();
    std::fs::write(&key_path, key.signing_key.serialize_pem()).unwrap();
    cluster.hand_over(&cert_path);
    cluster.hand_over(&key_path);
    // The client's copy of the certificate, readable by the test.
    let trusted = cluster.dir.join("trusted-ca.pem");
    std::fs::write(&trusted, key.cert.pem()).unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let (client, connection) = tokio_postgres::connect(&cluster.url, tokio_postgres::NoTls)
            .await
            .unwrap();
        tokio::spawn(connection);
        // One statement at a time: ALTER SYSTEM refuses a transaction block.
        for statement in [
            format!("ALTER SYSTEM SET ssl_cert_file = '{}'", cert_path.display()),
            format!("ALTER SYSTEM SET ssl_key_file = '{}'", key_path.display()),
            "ALTER SYSTEM SET ssl = on".to_string(),
            "SELECT pg_reload_conf()".to_string(),
        ] {
            client.batch_execute(&statement).await.unwrap();
        }
        // The reload is asynchronous: wait until a new session is offered TLS.
        let config: tokio_postgres::Config = url(&cluster, "localhost", "require").parse().unwrap();
        for _ in 0..100 {
            let connector = tokio_postgres_rustls::MakeRustlsConnect::new(client_config(&trusted));
            if config.connect(connector).await.is_ok() {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        panic!("the server never offered TLS after the reload");
    });
    Some((cluster, trusted))
}

/// The cluster's URL with `host` and `sslmode` set.
fn url(cluster: &OwnCluster, host: &str, sslmode: &str) -> String {
    let port = cluster
        .url
        .rsplit(':')
        .next()
        .and_then(|p| p.split('/').next())
        .unwrap();
    format!("postgres://postgres@{host}:{port}/postgres?sslmode={sslmode}")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trusted_self_signed_server_is_used_encrypted_and_others_are_refused() {
    let Some((cluster, ca)) = tokio::task::spawn_blocking(|| {
        cluster_with_tls("a_trusted_self_signed_server_is_used_encrypted_and_others_are_refused")
    })
    .await
    .unwrap() else {
        return;
    };
    let tls = PostgresTls::with_ca_file(&ca);
    // Trusted: the graph, the log and the lock all work, over TLS.
    let schema = fresh_schema("tls");
    let graph = PostgresKnowledgeGraph::connect_with_tls(
        &url(&cluster, "localhost", "require"),
        schema,
        tls.clone(),
    )
    .unwrap();
    graph
        .add_triple(&NewTriple::new("Fleet", "uses", "TLS"))
        .await
        .expect("a graph write over TLS");
    assert_eq!(graph.stats().await.unwrap().triples, 1);
    let log = Arc::new(PostgresCoordinationLog::new(&graph, "rep_tls"));
    Coordination::new(log)
        .event_append(&NewEvent::new("hello", "fleet", "ops", "agent"))
        .await
        .expect("a log append over TLS");
    let lock = PostgresWriteLock::new(&graph, "palace-tls").unwrap();
    drop(lock.acquire().await.expect("the lock over TLS"));
    // The connection is encrypted (the server says so), also under the default sslmode.
    for sslmode in ["require", "prefer"] {
        let config: tokio_postgres::Config = url(&cluster, "localhost", sslmode).parse().unwrap();
        let (client, connection) = config
            .connect(tokio_postgres_rustls::MakeRustlsConnect::new(
                client_config(&ca),
            ))
            .await
            .unwrap();
        tokio::spawn(connection);
        let ssl: bool = client
            .query_one(
                "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
                &[],
            )
            .await
            .unwrap()
            .get(0);
        assert!(ssl, "sslmode={sslmode} uses TLS");
    }
    // Not trusted (system roots only), or trusted under another name: refused, not used.
    for (what, graph) in [
        (
            "an unknown issuer",
            PostgresKnowledgeGraph::connect(
                &url(&cluster, "localhost", "require"),
                fresh_schema("tls"),
            ),
        ),
        (
            "another name",
            PostgresKnowledgeGraph::connect_with_tls(
                &url(&cluster, "127.0.0.1", "require"),
                fresh_schema("tls"),
                tls.clone(),
            ),
        ),
    ] {
        let err = graph
            .unwrap()
            .add_triple(&NewTriple::new("Fleet", "uses", "TLS"))
            .await
            .expect_err(what)
            .to_string();
        assert!(
            err.to_lowercase().contains("certificate") || err.contains("invalid peer"),
            "{what}: {err}"
        );
    }
    // A CA file that is not a certificate is a clear error at once.
    std::fs::write(cluster.dir.join("junk.pem"), "not a certificate").unwrap();
    let err = PostgresKnowledgeGraph::connect_with_tls(
        &cluster.url,
        fresh_schema("tls"),
        PostgresTls::with_ca_file(cluster.dir.join("junk.pem")),
    )
    .err()
    .expect("a junk CA file is refused")
    .to_string();
    assert!(err.contains("junk.pem"), "{err}");
}

/// A rustls client trusting only `ca`.
fn client_config(ca: &std::path::Path) -> tokio_rustls::rustls::ClientConfig {
    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::pem::PemObject;
    use tokio_rustls::rustls;
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_file_iter(ca).unwrap() {
        roots.add(cert.unwrap()).unwrap();
    }
    rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth()
}
