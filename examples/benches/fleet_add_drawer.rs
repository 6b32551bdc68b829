//! What `add_drawer` costs on a fleet palace: drawers in Qdrant with the graph in PostgreSQL
//! (the fleet's write lock on the server, no wait) against drawers in Qdrant with the graph in
//! SQLite (no shared lock: the look-after-write with its settle time, 300 ms by default), and
//! the embedded default for reference. One writer files distinct memories one after another;
//! then two hosts with two writers each file at once. Prints a table.
//!
//! Needs `QDRANT_URL` and `MEMPALACE_TEST_POSTGRES_URL` (scripts/postgres/start.sh). Run:
//! `cargo bench -p mempalace-cli --bench fleet_add_drawer` (MEMPALACE_BENCH_DRAWERS, default
//! 40, sets how many each writer files).

#[path = "../tests/support/palace_processes.rs"]
mod palace_processes;
#[path = "../tests/support/qdrant_collections.rs"]
mod qdrant_collections;

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mempalace::core::{Embedder, NewDrawer, Palace};
use mempalace::{BackendKind, PalaceBuilder};
use palace_processes::fact;
use qdrant_collections::{drop_collection, fresh_collection};

/// The stacks compared.
#[derive(Clone, Copy)]
enum Stack {
    QdrantPostgres,
    QdrantSqlite,
    Embedded,
}

impl Stack {
    fn label(self) -> &'static str {
        match self {
            Stack::QdrantPostgres => "Qdrant + PostgreSQL (fleet lock)",
            Stack::QdrantSqlite => "Qdrant + SQLite graph (settle 300 ms)",
            Stack::Embedded => "LanceDB + SQLite (one host, lock file)",
        }
    }
}

/// Opens (creating) the palace on `host`; the first host records palace.json, which the
/// others copy, as a fleet does.
async fn open(
    stack: Stack,
    host: &Path,
    collection: &str,
    embedder: &Arc<dyn Embedder>,
    qdrant: &str,
    pg: &str,
) -> Palace {
    let mut builder = PalaceBuilder::new(host).embedder(Arc::clone(embedder));
    builder = match stack {
        Stack::QdrantPostgres => builder
            .backend(BackendKind::Qdrant)
            .qdrant_url(qdrant)
            .collection(collection)
            .knowledge_graph_postgres(pg),
        Stack::QdrantSqlite => builder
            .backend(BackendKind::Qdrant)
            .qdrant_url(qdrant)
            .collection(collection),
        Stack::Embedded => builder,
    };
    builder.open_or_create().await.expect("open the palace")
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i].as_secs_f64() * 1000.0
}

/// Files `n` distinct memories from `writer` one after another; each call's time.
async fn file_sequentially(palace: &Palace, writer: u64, n: usize) -> Vec<Duration> {
    let mut times = Vec::with_capacity(n);
    for i in 0..n {
        let started = Instant::now();
        let outcome = palace
            .add_drawer(NewDrawer::new(
                "wing_bench",
                "facts",
                fact(50_000_000 + writer * 100_000 + i as u64),
            ))
            .await
            .expect("add_drawer");
        times.push(started.elapsed());
        assert!(outcome.drawer_id().is_some(), "distinct memories are filed");
    }
    times
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let (Ok(qdrant), Ok(pg)) = (
        std::env::var("QDRANT_URL"),
        std::env::var("MEMPALACE_TEST_POSTGRES_URL"),
    ) else {
        eprintln!("fleet_add_drawer needs QDRANT_URL and MEMPALACE_TEST_POSTGRES_URL");
        return;
    };
    let n: usize = std::env::var("MEMPALACE_BENCH_DRAWERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(40);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let embedder: Arc<dyn Embedder> = mempalace::minilm(None);
    println!("| stack | one writer p50 | p95 | 2 hosts × 2 writers: p50 | p95 | drawers/s |");
    println!("| --- | --- | --- | --- | --- | --- |");
    for stack in [Stack::QdrantPostgres, Stack::QdrantSqlite, Stack::Embedded] {
        let dir = tempfile::tempdir().expect("temp dir");
        let collection = fresh_collection("mempalace_bench_fleet");
        let hosts = [dir.path().join("host0"), dir.path().join("host1")];
        let (single, concurrent, rate) = rt.block_on(async {
            let first = open(stack, &hosts[0], &collection, &embedder, &qdrant, &pg).await;
            // Warm up: the model, the connections, the collection.
            file_sequentially(&first, 99, 3).await;
            if !matches!(stack, Stack::Embedded) {
                std::fs::create_dir_all(&hosts[1]).unwrap();
                std::fs::copy(hosts[0].join("palace.json"), hosts[1].join("palace.json")).unwrap();
            }
            let mut single = file_sequentially(&first, 0, n).await;
            single.sort();
            let second_host = if matches!(stack, Stack::Embedded) {
                &hosts[0]
            } else {
                &hosts[1]
            };
            let second = open(stack, second_host, &collection, &embedder, &qdrant, &pg).await;
            let started = Instant::now();
            let runs = futures::future::join_all((0..4u64).map(|w| {
                let palace = if w % 2 == 0 { &first } else { &second };
                file_sequentially(palace, w + 1, n)
            }))
            .await;
            let rate = (4 * n) as f64 / started.elapsed().as_secs_f64();
            let mut concurrent: Vec<Duration> = runs.into_iter().flatten().collect();
            concurrent.sort();
            (single, concurrent, rate)
        });
        println!(
            "| {} | {:.1} ms | {:.1} ms | {:.1} ms | {:.1} ms | {:.1} |",
            stack.label(),
            percentile(&single, 0.5),
            percentile(&single, 0.95),
            percentile(&concurrent, 0.5),
            percentile(&concurrent, 0.95),
            rate
        );
        if !matches!(stack, Stack::Embedded) {
            rt.block_on(drop_collection(&qdrant, &collection));
        }
    }
}
