//! Helpers shared by this crate's integration tests.

use std::sync::atomic::{AtomicU64, Ordering};

use mempalace_kg_postgres::SchemaName;

/// A schema name no other test (of this run or an earlier one on the same server) uses.
pub fn fresh_schema(prefix: &str) -> SchemaName {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    SchemaName::new(&format!("{prefix}_{}_{nanos}_{n}", std::process::id())).unwrap()
}
