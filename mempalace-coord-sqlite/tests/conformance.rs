//! The coordination-log conformance suite on SQLite (a file per test, reopened as a second
//! instance for the multi-handle behaviours) and on core's in-memory reference log.

use std::sync::Arc;

use mempalace_conformance::coordination_log_conformance;
use mempalace_conformance::coordination_suite::{CoordFactory, CoordFixture};
use mempalace_coord_sqlite::SqliteCoordinationLog;
use mempalace_core::coordination::{CoordinationLog, MemoryCoordinationLog};

struct FileFactory;

#[async_trait::async_trait]
impl CoordFactory for FileFactory {
    async fn create(&self) -> CoordFixture {
        let dir = tempfile::tempdir().unwrap();
        let palace = dir.path().join("palace");
        let log = SqliteCoordinationLog::in_palace(&palace);
        let reopen = Arc::new(move || {
            Arc::new(SqliteCoordinationLog::in_palace(&palace)) as Arc<dyn CoordinationLog>
        });
        CoordFixture::with_reopen(Arc::new(log), reopen, dir)
    }
}

mod sqlite_file {
    use super::*;
    coordination_log_conformance!(FileFactory);
}

struct MemoryFactory;

#[async_trait::async_trait]
impl CoordFactory for MemoryFactory {
    async fn create(&self) -> CoordFixture {
        CoordFixture::new(Arc::new(MemoryCoordinationLog::new()))
    }
}

mod memory {
    use super::*;
    coordination_log_conformance!(MemoryFactory);
}
