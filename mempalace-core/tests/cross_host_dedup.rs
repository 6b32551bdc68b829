//! Hosts sharing one store but not a write lock: each palace has its own folder (its own lock
//! file), all write one `MemoryStore`. With the cross-host duplicate check, the same memories
//! filed from every host at once are stored once, and each refusal names the drawer that
//! remains.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use mempalace_conformance::HashingEmbedder;
use mempalace_core::reports::AddDrawerOutcome;
use mempalace_core::{
    AddedBy, Drawer, DrawerFilter, DrawerMetadata, LexicalHit, MemoryStore, Neighbour, NewDrawer,
    Page, Palace, RoomCount, VectorStore,
};
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

/// A shared store as another host's writes make it look: right after this host's first write
/// an earlier near-identical drawer from elsewhere appears, and it is gone again (that host
/// withdrew it for a third drawer) by the time this host withdraws its own.
struct ShiftingStore {
    inner: MemoryStore,
    other_host: Mutex<Option<(Drawer, Vec<f32>)>>,
}

#[async_trait::async_trait]
impl VectorStore for ShiftingStore {
    fn backend_name(&self) -> &'static str {
        "shifting-memory"
    }
    fn dimension(&self) -> usize {
        self.inner.dimension()
    }
    async fn exists(&self) -> mempalace_core::Result<bool> {
        self.inner.exists().await
    }
    async fn create_if_missing(&self) -> mempalace_core::Result<()> {
        self.inner.create_if_missing().await
    }
    async fn upsert(&self, d: &[Drawer], v: &[Vec<f32>]) -> mempalace_core::Result<()> {
        self.inner.upsert(d, v).await?;
        // After this host's first write, the other host's earlier drawer becomes visible.
        let appearing = self.other_host.lock().unwrap().take();
        if let Some((mut other, _)) = appearing {
            other.metadata.filed_at = "2000-01-01T00:00:00".into();
            self.inner.upsert(&[other], &v[..1]).await?;
        }
        Ok(())
    }
    async fn query(
        &self,
        v: &[f32],
        f: &DrawerFilter,
        limit: usize,
    ) -> mempalace_core::Result<Vec<Neighbour>> {
        self.inner.query(v, f, limit).await
    }
    async fn lexical_query(
        &self,
        text: &str,
        f: &DrawerFilter,
        limit: usize,
    ) -> mempalace_core::Result<Vec<LexicalHit>> {
        self.inner.lexical_query(text, f, limit).await
    }
    async fn get(&self, ids: &[String]) -> mempalace_core::Result<Vec<Drawer>> {
        self.inner.get(ids).await
    }
    async fn delete(&self, ids: &[String]) -> mempalace_core::Result<usize> {
        // This host withdraws its drawer; meanwhile the other host has withdrawn its own.
        self.inner.delete(&["drawer_elsewhere".to_string()]).await?;
        self.inner.delete(ids).await
    }
    async fn count(&self, f: &DrawerFilter) -> mempalace_core::Result<u64> {
        self.inner.count(f).await
    }
    async fn room_counts(&self, f: &DrawerFilter) -> mempalace_core::Result<Vec<RoomCount>> {
        self.inner.room_counts(f).await
    }
    async fn list(&self, f: &DrawerFilter, page: Page) -> mempalace_core::Result<Vec<Drawer>> {
        self.inner.list(f, page).await
    }
}

#[tokio::test]
async fn a_drawer_that_yielded_to_one_that_went_away_is_filed_again() {
    let dir = tempfile::tempdir().unwrap();
    let content = memory(7);
    let other = Drawer {
        id: "drawer_elsewhere".into(),
        text: content.clone(),
        metadata: DrawerMetadata {
            wing: "wing_shared".into(),
            room: "facts".into(),
            source_file: String::new(),
            chunk_index: 0,
            added_by: AddedBy::Mcp,
            filed_at: String::new(),
            authored_at: None,
            conversation: None,
            entities: Vec::new(),
        },
    };
    let store = Arc::new(ShiftingStore {
        inner: MemoryStore::new(DIM),
        other_host: Mutex::new(Some((other, Vec::new()))),
    });
    let palace = Palace::new(
        dir.path(),
        Arc::new(HashingEmbedder::new(DIM)),
        Arc::clone(&store) as Arc<dyn VectorStore>,
        Arc::new(SqliteKnowledgeGraph::in_memory()),
    )
    .unwrap()
    .with_cross_host_dedup(Duration::from_millis(10));
    let outcome = palace
        .add_drawer(NewDrawer::new("wing_shared", "facts", content.clone()))
        .await
        .unwrap();
    let AddDrawerOutcome::Added(added) = outcome else {
        panic!("filed again after withdrawing, not refused: {outcome:?}");
    };
    let stored = store
        .get(std::slice::from_ref(&added.drawer_id))
        .await
        .unwrap();
    assert_eq!(stored.len(), 1, "the id reported as added is stored");
    assert_eq!(stored[0].text, content);
    assert_eq!(store.count(&DrawerFilter::all()).await.unwrap(), 1);
}
