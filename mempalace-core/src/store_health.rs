//! What `repair-status` reports about a palace: the store's rows, its indexes and what they do
//! not cover yet, and the knowledge graph's size, read without changing anything, so that an
//! operator sees a lagging or damaged index before searches slow down or fail (3.11's
//! `repair-status` compares its SQLite rows with its HNSW index in the same spirit).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::knowledge_graph::KgStats;

/// Index parts beyond which searches pay for searching each part on its own.
pub const MAX_HEALTHY_INDEX_PARTS: u32 = 2;

/// One index of the store.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IndexHealth {
    /// Its name.
    pub name: String,
    /// What it indexes: `vector`, `full_text` or `scalar`.
    pub kind: String,
    /// Rows it does not cover yet: searched without it until maintenance folds them in.
    pub unindexed_rows: u64,
    /// Parts it is stored in (each searched on its own).
    pub parts: u32,
}

/// The store's own account of itself.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoreHealth {
    /// The backend (`lancedb`, `qdrant`, `memory`).
    pub backend: String,
    /// Rows the store holds (a long drawer's chunks count one each).
    pub rows: u64,
    /// Its indexes (none for a store that keeps no index of its own).
    pub indexes: Vec<IndexHealth>,
    /// Data fragments or segments, where the backend has them (small writes add them until
    /// compaction).
    pub fragments: Option<u64>,
    /// Problems the backend itself reports (e.g. a Qdrant collection that is not green).
    pub problems: Vec<String>,
}

/// `repair-status`'s verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HealthVerdict {
    /// Nothing to do.
    Ok,
    /// The palace exists and holds no drawers.
    Empty,
    /// Something needs a look: see the findings.
    Attention,
}

/// `repair-status`: the store's and the graph's health, with findings in words.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RepairStatus {
    /// The palace folder.
    pub palace_path: PathBuf,
    /// The verdict.
    pub status: HealthVerdict,
    /// The store.
    pub store: StoreHealth,
    /// The knowledge graph's counts (none when it could not be read: see the findings).
    pub knowledge_graph: Option<KgStats>,
    /// What needs a look, one sentence each (empty when the verdict is `ok`).
    pub findings: Vec<String>,
}

/// The findings of a store's health: index lag past a tenth of the rows (at least 1,000
/// rows), indexes in more than [`MAX_HEALTHY_INDEX_PARTS`] parts, the backend's own problems.
pub fn store_findings(store: &StoreHealth) -> Vec<String> {
    let mut findings = store.problems.clone();
    let lag_limit = (store.rows / 10).max(1000);
    for index in &store.indexes {
        if index.unindexed_rows > lag_limit {
            findings.push(format!(
                "the {} index `{}` does not cover {} of {} rows yet: searches scan those directly until maintenance (after the next write, `mine` or `migrate`) folds them in",
                index.kind, index.name, index.unindexed_rows, store.rows
            ));
        }
        if index.parts > MAX_HEALTHY_INDEX_PARTS {
            findings.push(format!(
                "the {} index `{}` is in {} parts (each searched on its own); maintenance merges them",
                index.kind, index.name, index.parts
            ));
        }
    }
    findings
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index(unindexed_rows: u64, parts: u32) -> IndexHealth {
        IndexHealth {
            name: "vector_idx".into(),
            kind: "vector".into(),
            unindexed_rows,
            parts,
        }
    }

    #[test]
    fn lag_and_split_indexes_are_findings_and_small_lag_is_not() {
        let mut store = StoreHealth {
            backend: "lancedb".into(),
            rows: 50_000,
            indexes: vec![index(4_000, 2)],
            ..StoreHealth::default()
        };
        assert!(store_findings(&store).is_empty());
        store.indexes = vec![index(6_000, 3)];
        let findings = store_findings(&store);
        assert_eq!(findings.len(), 2, "{findings:?}");
        assert!(findings[0].contains("does not cover 6000 of 50000 rows"));
        store.indexes.clear();
        store.problems = vec!["collection status is red".into()];
        assert_eq!(store_findings(&store), ["collection status is red"]);
    }
}
