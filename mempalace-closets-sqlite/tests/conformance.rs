//! The `ClosetIndex` conformance suite against `SqliteClosets` and the in-process reference
//! `MemoryClosets`.

use std::sync::Arc;

use async_trait::async_trait;
use mempalace_closets_sqlite::SqliteClosets;
use mempalace_conformance::closet_index_suite::{ClosetFactory, ClosetFixture};
use mempalace_core::closets::MemoryClosets;

struct SqliteFactory;

#[async_trait]
impl ClosetFactory for SqliteFactory {
    async fn create(&self) -> ClosetFixture {
        let tmp = tempfile::tempdir().unwrap();
        ClosetFixture::new(Arc::new(SqliteClosets::in_palace(tmp.path()))).with_guard(tmp)
    }
}

struct MemoryFactory;

#[async_trait]
impl ClosetFactory for MemoryFactory {
    async fn create(&self) -> ClosetFixture {
        ClosetFixture::new(Arc::new(MemoryClosets::new()))
    }
}

mod sqlite {
    use super::*;
    mempalace_conformance::closet_index_conformance!(SqliteFactory);
}

mod memory {
    use super::*;
    mempalace_conformance::closet_index_conformance!(MemoryFactory);
}
