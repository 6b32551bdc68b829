//! The conformance suite run on the reference store.

use std::sync::Arc;

use mempalace_conformance::{Ranking, StoreFactory, StoreFixture, vector_store_conformance};
use mempalace_core::MemoryStore;

struct MemoryFactory;

#[async_trait::async_trait]
impl StoreFactory for MemoryFactory {
    async fn create(&self, dimension: usize) -> StoreFixture {
        StoreFixture::new(Arc::new(MemoryStore::new(dimension)))
    }
}

vector_store_conformance!(MemoryFactory, Ranking::Exact);
