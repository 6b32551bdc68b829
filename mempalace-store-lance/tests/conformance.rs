//! The vector-store conformance suite on LanceDB (exact search: below the index threshold).

use std::sync::Arc;

use mempalace_conformance::{Ranking, StoreFactory, StoreFixture, vector_store_conformance};
use mempalace_store_lance::{LanceOptions, LanceStore};

struct LanceFactory;

#[async_trait::async_trait]
impl StoreFactory for LanceFactory {
    async fn create(&self, dimension: usize) -> StoreFixture {
        let dir = tempfile::tempdir().unwrap();
        let store = LanceStore::open(LanceOptions::new(dir.path().join("lance"), dimension))
            .await
            .unwrap();
        StoreFixture::with_guard(Arc::new(store), dir)
    }
}

vector_store_conformance!(LanceFactory, Ranking::Exact);
