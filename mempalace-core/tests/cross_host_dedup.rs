//! Hosts sharing one store but not a write lock: each palace has its own folder (its own lock
//! file), all write one `MemoryStore`. With the cross-host duplicate check, the same memories
//! filed from every host at once are stored once, and each refusal names the drawer that
//! remains.

use std::sync::Arc;
use std::time::Duration;

use mempalace_conformance::HashingEmbedder;
use mempalace_core::reports::AddDrawerOutcome;
use mempalace_core::{DrawerFilter, MemoryStore, NewDrawer, Palace, VectorStore};
use mempalace_kg_sqlite::SqliteKnowledgeGraph;
use tokio::sync::Barrier;

const DIM: usize = 384;
const HOSTS: usize = 4;
const SHARED: usize = 12;

fn host(dir: &std::path::Path, store: Arc<MemoryStore>) -> Arc<Palace> {
    Arc::new(
        Palace::new(
            dir,
            Arc::new(HashingEmbedder::new(DIM)),
            store,
            Arc::new(SqliteKnowledgeGraph::in_memory()),
        )
        .unwrap()
        .with_cross_host_dedup(Duration::from_millis(50)),
    )
}

fn memory(i: usize) -> String {
    format!("Shared memory number {i}: the deploy key rotates every {i} days on host alpha{i}.")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn hosts_filing_the_same_memories_at_once_store_each_once() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(MemoryStore::new(DIM));
    let hosts: Vec<Arc<Palace>> = (0..HOSTS)
        .map(|h| host(&dir.path().join(format!("host{h}")), Arc::clone(&store)))
        .collect();
    let start = Arc::new(Barrier::new(HOSTS));
    let mut tasks = Vec::new();
    for (h, palace) in hosts.iter().enumerate() {
        let (palace, start) = (Arc::clone(palace), Arc::clone(&start));
        tasks.push(tokio::spawn(async move {
            start.wait().await;
            let mut outcomes = Vec::new();
            for i in 0..SHARED {
                let i = (i + h * 5) % SHARED;
                let outcome = palace
                    .add_drawer(NewDrawer::new("wing_shared", "facts", memory(i)))
                    .await
                    .unwrap();
                outcomes.push((i, outcome));
            }
            outcomes
        }));
    }
    let mut added = vec![0; SHARED];
    let mut named = Vec::new();
    for t in tasks {
        for (i, outcome) in t.await.unwrap() {
            match outcome {
                AddDrawerOutcome::Added(_) => added[i] += 1,
                AddDrawerOutcome::Duplicate(refused) => {
                    assert!(!refused.matches.is_empty(), "a refusal names a drawer");
                    named.push(refused.matches[0].id.clone());
                }
            }
        }
    }
    assert_eq!(added, vec![1; SHARED], "each memory filed once");
    assert_eq!(
        store.count(&DrawerFilter::all()).await.unwrap(),
        SHARED as u64
    );
    assert_eq!(named.len(), (HOSTS - 1) * SHARED);
    let present = store.get(&named).await.unwrap();
    for id in &named {
        assert!(
            present.iter().any(|d| &d.id == id),
            "the refusal names {id}, which remains"
        );
    }
}
