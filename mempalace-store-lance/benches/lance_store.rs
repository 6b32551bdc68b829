//! LanceDB store speed, printed as a table: upsert throughput (batches of 1 and 1,000),
//! search p50/p95 with and without a wing filter at 10k and 100k drawers (1M with
//! `MEMPALACE_BENCH_1M=1`) with the index build time, add_drawer's store work and status at
//! each size, and the lexical (BM25) channel and the whole hybrid
//! `Palace::search_with` on a text corpus at 10k drawers. Vectors are precomputed (random
//! unit vectors; for the text corpus, a hashing embedder), so MiniLM's cost is excluded: the
//! `embed` bench of mempalace-embed-candle measures it.
//! Run: `cargo bench --workspace --profile dev --bench lance_store` (add `--release` numbers
//! by running it with `--profile release`).

use std::sync::Arc;
use std::time::{Duration, Instant};

use mempalace_conformance::corpus::{seeded, unit_vectors};
use mempalace_conformance::hashing_embedder::HashingEmbedder;
use mempalace_core::wake_up::WakeUpRequest;
use mempalace_core::{DrawerFilter, Palace, SearchMode, SearchRequest, VectorStore};
use mempalace_kg_sqlite::SqliteKnowledgeGraph;
use mempalace_store_lance::{LanceOptions, LanceStore};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

const DIM: usize = 384;

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i].as_secs_f64() * 1e3
}

/// p50 and p95 in milliseconds of these times (sorted in place).
fn p50_p95(times: &mut [Duration]) -> (f64, f64) {
    times.sort();
    (percentile(times, 0.5), percentile(times, 0.95))
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
    p50_p95(&mut times)
}

/// Words of the text corpus's vocabulary.
const VOCABULARY: usize = 5_000;

/// `n` texts of 40 words over [`VOCABULARY`] words, common words far more often than rare
/// ones (the square of a uniform draw), so BM25 meets both, as in real text.
fn corpus_texts(seed: u64, n: usize) -> Vec<String> {
    let mut rng = StdRng::seed_from_u64(seed);
    (0..n)
        .map(|_| {
            (0..40)
                .map(|_| {
                    let u: f64 = rng.random();
                    format!("w{}", (u * u * VOCABULARY as f64) as usize)
                })
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}

/// Three-word queries taken from random drawers' texts.
fn corpus_queries(texts: &[String], n: usize) -> Vec<String> {
    let mut rng = StdRng::seed_from_u64(99);
    (0..n)
        .map(|_| {
            let words: Vec<&str> = texts[rng.random_range(0..texts.len())].split(' ').collect();
            let at = rng.random_range(0..words.len() - 3);
            words[at..at + 3].join(" ")
        })
        .collect()
}

/// p50 and p95 in milliseconds of `run` over `queries`.
async fn latencies<F, Fut>(queries: &[String], mut run: F) -> (f64, f64)
where
    F: FnMut(String) -> Fut,
    Fut: std::future::Future<Output = usize>,
{
    let mut times = Vec::with_capacity(queries.len());
    for q in queries {
        let t = Instant::now();
        let hits = run(q.clone()).await;
        times.push(t.elapsed());
        assert!(hits > 0, "no hit for {q}");
    }
    p50_p95(&mut times)
}

/// The lexical channel and the hybrid search of `Palace` over `n` text drawers, with the
/// store's options from `opts`.
async fn text_corpus_searches(
    n: usize,
    label: &str,
    opts: impl FnOnce(LanceOptions) -> LanceOptions,
) {
    let dir = tempfile::tempdir().unwrap();
    let embedder = Arc::new(HashingEmbedder::new(DIM));
    let store = Arc::new(
        LanceStore::open(opts(LanceOptions::new(dir.path().join("lance"), DIM)))
            .await
            .unwrap(),
    );
    let texts = corpus_texts(3, n);
    let (mut drawers, _) = seeded(3, n, DIM);
    for (d, t) in drawers.iter_mut().zip(&texts) {
        d.text = t.clone();
    }
    let vectors: Vec<Vec<f32>> = texts.iter().map(|t| embedder.embed_one(t)).collect();
    for (d, v) in drawers.chunks(5_000).zip(vectors.chunks(5_000)) {
        store.upsert(d, v).await.unwrap();
    }
    store.optimize().await.unwrap();
    let kg = Arc::new(SqliteKnowledgeGraph::in_palace(dir.path()));
    let palace = Palace::new(dir.path(), embedder.clone(), store.clone(), kg).unwrap();
    let queries = corpus_queries(&texts, 100);
    let (p50, p95) = latencies(&queries, |q| {
        let store = store.clone();
        async move {
            store
                .lexical_query(&q, &DrawerFilter::all(), 120)
                .await
                .unwrap()
                .len()
        }
    })
    .await;
    println!(
        "| lexical (BM25) top 120, text corpus{label} | {n} | p50 {p50:.1} ms, p95 {p95:.1} ms |"
    );
    let query_vectors: Vec<Vec<f32>> = queries.iter().map(|q| embedder.embed_one(q)).collect();
    let mut times = Vec::with_capacity(queries.len());
    for v in &query_vectors {
        let t = Instant::now();
        let hits = store.query(v, &DrawerFilter::all(), 40).await.unwrap();
        times.push(t.elapsed());
        assert_eq!(hits.len(), 40);
    }
    let (p50, p95) = p50_p95(&mut times);
    println!("| vector top 40, text corpus{label} | {n} | p50 {p50:.1} ms, p95 {p95:.1} ms |");
    for (what, mode) in [
        ("Palace search, vector", SearchMode::Vector),
        ("Palace search, hybrid", SearchMode::Hybrid),
    ] {
        let (p50, p95) = latencies(&queries, |q| {
            let palace = &palace;
            async move {
                palace
                    .search_with(&SearchRequest::new(q).limit(5).mode(mode))
                    .await
                    .unwrap()
                    .results
                    .len()
            }
        })
        .await;
        println!(
            "| {what} (limit 5, embedding excluded), text corpus{label} | {n} | p50 {p50:.1} ms, p95 {p95:.1} ms |"
        );
    }
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

    text_corpus_searches(10_000, "", |o| o).await;
    text_corpus_searches(10_000, ", exact (no ANN index)", |o| {
        o.with_index_threshold(usize::MAX)
    })
    .await;

    for n in sizes {
        let dir = tempfile::tempdir().unwrap();
        let store = Arc::new(
            LanceStore::open(LanceOptions::new(dir.path().join("lance"), DIM))
                .await
                .unwrap(),
        );
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
        // Wake-up: the newest drawers ordered in the store, L1 chosen and fitted to its
        // budget (token counting excluded: the hashing embedder estimates).
        let palace = Palace::new(
            dir.path().join("palace"),
            Arc::new(HashingEmbedder::new(DIM)),
            store.clone(),
            Arc::new(SqliteKnowledgeGraph::in_memory()),
        )
        .unwrap();
        let mut times = Vec::new();
        for _ in 0..20 {
            let t = Instant::now();
            let woken = palace.wake_up(&WakeUpRequest::default()).await.unwrap();
            times.push(t.elapsed());
            assert!(!woken.drawer_ids.is_empty());
        }
        let (p50, p95) = p50_p95(&mut times);
        println!("| wake_up (L0 + L1) | {n} | p50 {p50:.1} ms, p95 {p95:.1} ms |");
        // The store's part of add_drawer: the duplicate check (the ids and distances of the
        // nearest 5) and the append of one new drawer (one commit). Then status after that
        // write: its room counts carried forward when this handle appended, counted again
        // when another handle did (as another process would); and status of an unchanged
        // table (answered from memory).
        let other = LanceStore::open(LanceOptions::new(dir.path().join("lance"), DIM))
            .await
            .unwrap();
        let (mut extra, extra_vectors) = seeded(9, 20, DIM);
        let (mut writes, mut status_after_own, mut status_after_other, mut status_unchanged) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for (i, (d, v)) in extra.iter_mut().zip(&extra_vectors).enumerate() {
            d.id = format!("added-{i}");
            let writer = if i % 2 == 0 { &*store } else { &other };
            let t = Instant::now();
            let near = writer
                .nearest_ids(v, &DrawerFilter::all(), 5)
                .await
                .unwrap();
            writer
                .insert_new(std::slice::from_ref(d), std::slice::from_ref(v))
                .await
                .unwrap();
            writes.push(t.elapsed());
            assert_eq!(near.len(), 5);
            let t = Instant::now();
            palace.status().await.unwrap();
            if i % 2 == 0 {
                status_after_own.push(t.elapsed());
            } else {
                status_after_other.push(t.elapsed());
            }
            let t = Instant::now();
            palace.status().await.unwrap();
            status_unchanged.push(t.elapsed());
        }
        for (label, times) in [
            (
                "add_drawer's store work (duplicate check + append of 1)",
                &mut writes,
            ),
            (
                "status after an append here (room counts carried forward)",
                &mut status_after_own,
            ),
            (
                "status after another handle's append (room counts counted again)",
                &mut status_after_other,
            ),
            ("status, table unchanged", &mut status_unchanged),
        ] {
            let (p50, p95) = p50_p95(times);
            println!("| {label} | {n} | p50 {p50:.1} ms, p95 {p95:.1} ms |");
        }
    }
}
