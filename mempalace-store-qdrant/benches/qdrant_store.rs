//! Qdrant store speed against the server at `QDRANT_URL`, printed as a table in the same shape
//! as the LanceDB bench: upsert throughput (batches of 1 and 1,000) and search p50/p95 with
//! and without a wing filter at 10k and 100k drawers. Vectors are precomputed random 384-d
//! unit vectors, so embedding cost is excluded. Each run uses fresh collections and deletes
//! them afterwards. Without `QDRANT_URL` it says so and measures nothing.
//! Run: `QDRANT_URL=http://localhost:6334 cargo bench --workspace --profile dev --bench qdrant_store`.

use std::time::{Duration, Instant};

use mempalace_conformance::corpus::{seeded, unit_vectors};
use mempalace_core::{DrawerFilter, VectorStore};
use mempalace_store_qdrant::{QdrantOptions, QdrantStore};
use qdrant_client::Qdrant;
use qdrant_client::qdrant::CollectionStatus;

const DIM: usize = 384;

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i].as_secs_f64() * 1e3
}

async fn search_latencies(store: &QdrantStore, filter: &DrawerFilter, n: usize) -> (f64, f64) {
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

/// True once every segment of the collection is optimised and indexed (status green).
async fn indexed(admin: &Qdrant, collection: &str) -> bool {
    let info = admin
        .collection_info(collection)
        .await
        .expect("collection info");
    info.result
        .is_some_and(|r| r.status == CollectionStatus::Green as i32)
}

/// A store on a collection of its own.
async fn fresh(url: &str, api_key: &Option<String>, tag: &str) -> QdrantStore {
    let mut options = QdrantOptions::new(url, DIM)
        .with_collection(&format!("mempalace_bench_{tag}_{}", std::process::id()));
    options.api_key = api_key.clone();
    QdrantStore::connect(options)
        .await
        .expect("connect to QDRANT_URL")
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let Ok(url) = std::env::var("QDRANT_URL") else {
        println!("SKIPPED: QDRANT_URL is not set; nothing was measured.");
        return;
    };
    let api_key = std::env::var("QDRANT_API_KEY")
        .ok()
        .filter(|k| !k.is_empty());
    let admin = Qdrant::from_url(&url)
        .api_key(api_key.clone())
        .skip_compatibility_check()
        .build()
        .expect("Qdrant client");
    let mut collections = Vec::new();

    println!("| operation | drawers | result |");
    println!("| --- | --- | --- |");
    let store = fresh(&url, &api_key, "upsert").await;
    collections.push(format!("mempalace_bench_upsert_{}", std::process::id()));
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

    for n in [10_000usize, 100_000] {
        let tag = format!("n{n}");
        let store = fresh(&url, &api_key, &tag).await;
        collections.push(format!("mempalace_bench_{tag}_{}", std::process::id()));
        let (drawers, vectors) = seeded(2, n, DIM);
        let t = Instant::now();
        for (d, v) in drawers.chunks(1_000).zip(vectors.chunks(1_000)) {
            store.upsert(d, v).await.unwrap();
        }
        let load = t.elapsed();
        // Qdrant builds its HNSW index in the background; search once it is done.
        let t = Instant::now();
        let name = format!("mempalace_bench_{tag}_{}", std::process::id());
        while !indexed(&admin, &name).await {
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        println!(
            "| load in batches of 1,000, then background indexing | {n} | {:.1}s ({:.0} drawers/s) + {:.1}s |",
            load.as_secs_f64(),
            n as f64 / load.as_secs_f64(),
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
    for name in collections {
        if let Err(e) = admin.delete_collection(name.as_str()).await {
            eprintln!("could not delete bench collection {name}: {e}");
        }
    }
}
