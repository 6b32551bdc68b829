//! Settings of a Lance-backed palace store.

use std::path::PathBuf;
use std::time::Duration;

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
    /// Old table versions are pruned by maintenance only once they are older than this...
    pub keep_versions_for: Duration,
    /// ...and this many newer versions exist: every read and write first finds the latest
    /// version by listing all that are kept, so an unpruned history slows every call.
    pub keep_versions: u64,
}

impl LanceOptions {
    /// The default table name.
    pub const DEFAULT_TABLE: &'static str = "mempalace_drawers";
    /// The default ANN threshold: from here the index answers in less than half the time of
    /// an exact scan (`benches/lance_store.rs`).
    pub const DEFAULT_INDEX_THRESHOLD: usize = 5_000;
    /// The default age before an old version may be pruned: far longer than any read takes.
    pub const DEFAULT_KEEP_VERSIONS_FOR: Duration = Duration::from_secs(10 * 60);
    /// The default count of newest versions never pruned, whatever their age: a reader in
    /// another process that opened one of them a moment ago still finds its files.
    pub const DEFAULT_KEEP_VERSIONS: u64 = 100;

    /// Defaults for a database folder and vector dimension.
    pub fn new(dir: impl Into<PathBuf>, dimension: usize) -> Self {
        LanceOptions {
            dir: dir.into(),
            table: Self::DEFAULT_TABLE.into(),
            dimension,
            index_threshold: Self::DEFAULT_INDEX_THRESHOLD,
            compaction_fragments: 32,
            refine_factor: 10,
            keep_versions_for: Self::DEFAULT_KEEP_VERSIONS_FOR,
            keep_versions: Self::DEFAULT_KEEP_VERSIONS,
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

    /// Sets how long and how many old table versions are kept before maintenance prunes them
    /// (a version is pruned only when it is both older and further back than these).
    pub fn with_version_retention(mut self, keep_for: Duration, keep_versions: u64) -> Self {
        self.keep_versions_for = keep_for;
        self.keep_versions = keep_versions.max(1);
        self
    }

    /// Sets the compaction trigger.
    pub fn with_compaction_fragments(mut self, fragments: usize) -> Self {
        self.compaction_fragments = fragments.max(2);
        self
    }
}
