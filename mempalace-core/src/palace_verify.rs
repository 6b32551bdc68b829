//! What `verify` finds and what `repair` did: one check per part of a palace (store, indexes,
//! vectors, embedder, chunks, knowledge graph, closets), each with its problems.

use std::path::PathBuf;

use serde::Serialize;

/// Drawers whose text `verify` embeds again to compare with their stored vectors.
pub const EMBEDDER_SAMPLE: usize = 3;

/// Lowest cosine similarity between a stored vector and its text embedded again that counts
/// as the same embedder (the same model gives about 1.0; another model far less).
pub const SAME_EMBEDDER_SIMILARITY: f32 = 0.95;

/// One part of the palace and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VerifyCheck {
    /// The part checked: `store`, `indexes`, `vectors`, `embedder`, `chunks`,
    /// `knowledge_graph` or `closets`.
    pub name: String,
    /// What is wrong (empty: sound).
    pub problems: Vec<String>,
    /// What is worth knowing but not wrong (e.g. rows an index does not cover yet).
    pub notes: Vec<String>,
}

impl VerifyCheck {
    /// A check of `name` with nothing found yet.
    pub fn new(name: &str) -> Self {
        VerifyCheck {
            name: name.to_string(),
            problems: Vec::new(),
            notes: Vec::new(),
        }
    }
}

/// What `verify` found: read-only.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VerifyReport {
    /// The palace folder.
    pub palace_path: PathBuf,
    /// Drawers (chunks as stored) read.
    pub drawers: u64,
    /// Every check, in order.
    pub checks: Vec<VerifyCheck>,
    /// Whether no check found a problem.
    pub sound: bool,
}

impl VerifyReport {
    /// The check named `name`.
    pub fn check(&self, name: &str) -> Option<&VerifyCheck> {
        self.checks.iter().find(|c| c.name == name)
    }

    /// Every problem, prefixed with its check's name.
    pub fn problems(&self) -> Vec<String> {
        self.checks
            .iter()
            .flat_map(|c| c.problems.iter().map(move |p| format!("{}: {p}", c.name)))
            .collect()
    }
}

/// What `repair` did: the palace verified before, what was rebuilt, what could not be, and
/// the palace verified after.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RepairReport {
    /// `verify` before the repair.
    pub before: VerifyReport,
    /// What was rebuilt from the data.
    pub repaired: Vec<String>,
    /// Problems repair cannot mend from the data, each with what to do.
    pub not_repaired: Vec<String>,
    /// `verify` after the repair.
    pub after: VerifyReport,
}

/// The drawer ids a closet line points at (after its `→`, comma-separated).
pub fn closet_pointers(text: &str) -> Vec<String> {
    match text.rsplit_once('→') {
        Some((_, ids)) => ids
            .split(',')
            .map(str::trim)
            .filter(|id| !id.is_empty())
            .map(str::to_string)
            .collect(),
        None => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closet_lines_name_their_drawers() {
        assert_eq!(
            closet_pointers("auth notes|GPT-4;Alice|2026-12-04:L1-L7|→drawer_a, drawer_b"),
            vec!["drawer_a", "drawer_b"]
        );
        assert!(closet_pointers("no pointers here").is_empty());
    }
}
