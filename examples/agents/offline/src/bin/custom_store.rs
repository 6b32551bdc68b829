//! A `VectorStore` of your own: here a store that keeps drawers in memory and counts the
//! calls the palace makes, to show what a backend is asked to do. A real one would talk to
//! your database; every behaviour (result shaping, the 0.9 duplicate check, ids, validation)
//! stays in the palace, the store only translates. Check a new store with the conformance
//! suite (`tests/`, `vector_store_conformance!`).
//!
//! Run: `cargo run -p mempalace-agent-offline --bin custom_store`.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use mempalace::core::Result;
use mempalace::core::vector_store::{LexicalHit, Neighbour, Page, RoomCount};
use mempalace::prelude::*;
use mempalace::{MemoryStore, VectorStore};
use mempalace_agent_offline::WordHashEmbedder;

const DIMENSION: usize = 64;

/// Keeps drawers in a [`MemoryStore`] and counts each operation.
struct CountingStore {
    inner: MemoryStore,
    calls: Mutex<BTreeMap<&'static str, u64>>,
}

impl CountingStore {
    fn tally(&self, operation: &'static str) {
        if let Ok(mut calls) = self.calls.lock() {
            *calls.entry(operation).or_default() += 1;
        }
    }
}

#[mempalace::async_trait]
impl VectorStore for CountingStore {
    fn backend_name(&self) -> &'static str {
        "counting"
    }

    fn dimension(&self) -> usize {
        self.inner.dimension()
    }

    async fn exists(&self) -> Result<bool> {
        self.tally("exists");
        self.inner.exists().await
    }

    async fn create_if_missing(&self) -> Result<()> {
        self.tally("create_if_missing");
        self.inner.create_if_missing().await
    }

    async fn upsert(&self, drawers: &[Drawer], vectors: &[Vec<f32>]) -> Result<()> {
        self.tally("upsert");
        self.inner.upsert(drawers, vectors).await
    }

    async fn query(
        &self,
        vector: &[f32],
        filter: &DrawerFilter,
        limit: usize,
    ) -> Result<Vec<Neighbour>> {
        self.tally("query");
        self.inner.query(vector, filter, limit).await
    }

    async fn lexical_query(
        &self,
        text: &str,
        filter: &DrawerFilter,
        limit: usize,
    ) -> Result<Vec<LexicalHit>> {
        self.tally("lexical_query");
        self.inner.lexical_query(text, filter, limit).await
    }

    async fn get(&self, ids: &[String]) -> Result<Vec<Drawer>> {
        self.tally("get");
        self.inner.get(ids).await
    }

    async fn delete(&self, ids: &[String]) -> Result<usize> {
        self.tally("delete");
        self.inner.delete(ids).await
    }

    async fn count(&self, filter: &DrawerFilter) -> Result<u64> {
        self.tally("count");
        self.inner.count(filter).await
    }

    async fn room_counts(&self, filter: &DrawerFilter) -> Result<Vec<RoomCount>> {
        self.tally("room_counts");
        self.inner.room_counts(filter).await
    }

    async fn list(&self, filter: &DrawerFilter, page: Page) -> Result<Vec<Drawer>> {
        self.tally("list");
        self.inner.list(filter, page).await
    }
}

#[tokio::main]
async fn main() -> std::result::Result<(), Box<dyn std::error::Error>> {
    let folder = std::env::temp_dir().join(format!("custom-store-{}", std::process::id()));
    let store = Arc::new(CountingStore {
        inner: MemoryStore::new(DIMENSION),
        calls: Mutex::new(BTreeMap::new()),
    });
    let palace = PalaceBuilder::new(&folder)
        .store(store.clone())
        .embedder(Arc::new(WordHashEmbedder::new(DIMENSION)))
        .open_or_create()
        .await?;
    palace
        .add_drawer(NewDrawer::new(
            "wing_demo",
            "notes",
            "The cache is warmed at 06:00 every day.",
        ))
        .await?;
    let found = palace
        .search("when is the cache warmed", None, None, 1)
        .await?;
    assert_eq!(found.results.len(), 1);
    println!(
        "calls the palace made: {:?}",
        store.calls.lock().map(|c| c.clone()).unwrap_or_default()
    );
    std::fs::remove_dir_all(&folder)?;
    Ok(())
}
