//! Settings of a Lance-backed palace store.

use std::path::PathBuf;

/// Where and how the Lance table is kept.
#[derive(Debug, Clone, PartialEq)]
pub struct LanceOptions {
    /// The LanceDB database folder (created on the first write).
    pub dir: PathBuf,
    /// The table holding the drawers.
    pub table: String,
    /// The vector dimension.
    pub dimension: usize,
    /// Row count from which an ANN index (and scalar indexes on wing and room) is built.
    pub index_threshold: usize,
    /// Fragment count above which the table is compacted in the background.
    pub compaction_fragments: usize,
    /// Most rows re-ranked with exact distances per result when the ANN index is used (large
    /// limits use fewer per result, at least 2).
    pub refine_factor: u32,
}

impl LanceOptions {
    /// The default table name.
    pub const DEFAULT_TABLE: &'static str = "mempalace_drawers";
    /// The default ANN threshold: from here the index answers in less than half the time of
    /// an exact scan (`benches/lance_store.rs`).
    pub const DEFAULT_INDEX_THRESHOLD: usize = 5_000;

    /// Defaults for a database folder and vector dimension.
    pub fn new(dir: impl Into<PathBuf>, dimension: usize) -> Self {
        LanceOptions {
            dir: dir.into(),
            table: Self::DEFAULT_TABLE.into(),
            dimension,
            index_threshold: Self::DEFAULT_INDEX_THRESHOLD,
            compaction_fragments: 32,
            refine_factor: 10,
        }
    }

    /// Sets the table name.
    pub fn with_table(mut self, table: &str) -> Self {
        self.table = table.to_string();
        self
    }

    /// Sets the ANN index threshold.
    pub fn with_index_threshold(mut self, rows: usize) -> Self {
        self.index_threshold = rows;
        self
    }

    /// Sets the compaction trigger.
    pub fn with_compaction_fragments(mut self, fragments: usize) -> Self {
        self.compaction_fragments = fragments.max(2);
        self
    }
}
