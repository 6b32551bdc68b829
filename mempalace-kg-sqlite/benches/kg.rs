//! Knowledge-graph speed: query_entity (both directions) at 10k and 100k triples, and
//! add_triple throughput one by one and in one transaction batch.
//! Run: `cargo bench --workspace --profile dev --bench kg` (the dev profile reuses
//! the optimised dependency build; see README).

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use mempalace_core::{Direction, KnowledgeGraph, NewTriple};
use mempalace_kg_sqlite::SqliteKnowledgeGraph;

/// `n` triples over `n / 10` entities, a quarter of them closed.
fn triples(n: usize, salt: &str) -> Vec<NewTriple> {
    (0..n)
        .map(|i| {
            let t = NewTriple::new(
                format!("entity{}", i % (n / 10)),
                format!("rel{}", i % 7),
                format!("{salt}object{i}"),
            )
            .valid_from(format!("20{:02}-01-01", 10 + i % 15));
            if i % 4 == 0 {
                t.valid_to("2030-12-31")
            } else {
                t
            }
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let mut group = c.benchmark_group("query_entity_both");
    for n in [10_000usize, 100_000] {
        let dir = tempfile::tempdir().unwrap();
        let kg = SqliteKnowledgeGraph::in_palace(dir.path());
        rt.block_on(async {
            for chunk in triples(n, "").chunks(10_000) {
                kg.add_triples(chunk).await.unwrap();
            }
        });
        group.bench_with_input(BenchmarkId::new("triples", n), &n, |b, _| {
            let mut i = 0usize;
            b.to_async(&rt).iter(|| {
                i += 1;
                let name = format!("entity{}", i % (n / 10));
                let kg = &kg;
                async move {
                    kg.query_entity(&name, Some("2020-06-01"), Direction::Both)
                        .await
                        .unwrap()
                }
            });
        });
    }
    group.finish();

    let mut group = c.benchmark_group("add_triple");
    group.sample_size(10);
    let per_iter = 1_000usize;
    group.throughput(Throughput::Elements(per_iter as u64));
    let dir = tempfile::tempdir().unwrap();
    let kg = SqliteKnowledgeGraph::in_palace(dir.path());
    let mut round = 0usize;
    group.bench_function("one_by_one_x1000", |b| {
        b.to_async(&rt).iter(|| {
            round += 1;
            let batch = triples(per_iter, &format!("a{round}_"));
            let kg = &kg;
            async move {
                for t in &batch {
                    kg.add_triple(t).await.unwrap();
                }
            }
        });
    });
    group.bench_function("one_transaction_x1000", |b| {
        b.to_async(&rt).iter(|| {
            round += 1;
            let batch = triples(per_iter, &format!("b{round}_"));
            let kg = &kg;
            async move { kg.add_triples(&batch).await.unwrap() }
        });
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
