//! LanceDB store speed, printed as a table: upsert throughput (batches of 1 and 1,000) and
//! search p50/p95 with and without a wing filter at 10k and 100k drawers (1M with
//! `MEMPALACE_BENCH_1M=1`). Vectors are precomputed random 384-d unit vectors, so embedding
//! cost is excluded.
//! Run: `cargo bench --workspace --profile dev --bench lance_store`.

use std::time::{Duration, Instant};

use mempalace_conformance::corpus::{seeded, unit_vectors};
use mempalace_core::{DrawerFilter, VectorStore};
use mempalace_store_lance::{LanceOptions, LanceStore};

const DIM: usize = 384;

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i].as_secs_f64() * 1e3
}

async fn search_latencies(store: &LanceStore, filter: &DrawerFilter, n: usize) -> (f64, f64) {
    let queries = unit_vectors(777, n, DIM);
    let mut times = Vec::with_capacity(n);
    for q in &queries {
        let t = Instant::now();
        let hits = store.query(q, filter, 5).await.unwrap();
        times.push(t.elapsed());
        assert!(!hits.is_empty());
    }
    times.sort();
    (percentile(&times, 0.5), percentile(&times, 0.95))
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let mut sizes = vec![10_000usize, 100_000];
    if std::env::var("MEMPALACE_BENCH_1M").is_ok() {
        sizes.push(1_000_000);
    }
    println!("| operation | drawers | result |");
    println!("| --- | --- | --- |");

    // Upsert throughput.
    let dir = tempfile::tempdir().unwrap();
    let store = LanceStore::open(LanceOptions::new(dir.path().join("lance"), DIM))
        .await
        .unwrap();
    let (drawers, vectors) = seeded(1, 2_000, DIM);
    let t = Instant::now();
    for (d, v) in drawers[..200].iter().zip(&vectors[..200]) {
        store
            .upsert(std::slice::from_ref(d), std::slice::from_ref(v))
            .await
            .unwrap();
    }
    println!(
        "| upsert, batch of 1 | 200 | {:.0} drawers/s |",
        200.0 / t.elapsed().as_secs_f64()
    );
    let t = Instant::now();
    store
        .upsert(&drawers[1_000..2_000], &vectors[1_000..2_000])
        .await
        .unwrap();
    println!(
        "| upsert, batch of 1,000 | 1,000 | {:.0} drawers/s |",
        1_000.0 / t.elapsed().as_secs_f64()
    );

    for n in sizes {
        let dir = tempfile::tempdir().unwrap();
        let store = LanceStore::open(LanceOptions::new(dir.path().join("lance"), DIM))
            .await
            .unwrap();
        let (drawers, vectors) = seeded(2, n, DIM);
        let t = Instant::now();
        for (d, v) in drawers.chunks(5_000).zip(vectors.chunks(5_000)) {
            store.upsert(d, v).await.unwrap();
        }
        let load = t.elapsed();
        let t = Instant::now();
        let report = store.optimize().await.unwrap();
        println!(
            "| load + optimize{} | {n} | {:.1}s + {:.1}s |",
            if report.built_vector_index || store.has_vector_index().await.unwrap() {
                " (ANN index built)"
            } else {
                ""
            },
            load.as_secs_f64(),
            t.elapsed().as_secs_f64()
        );
        for (label, filter) in [
            ("search, no filter", DrawerFilter::all()),
            ("search, wing filter", DrawerFilter::wing("wing_code")),
        ] {
            let (p50, p95) = search_latencies(&store, &filter, 100).await;
            println!("| {label} | {n} | p50 {p50:.1} ms, p95 {p95:.1} ms |");
        }
    }
}
