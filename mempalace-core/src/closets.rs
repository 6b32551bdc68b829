//! Closets: MemPalace 3.11's pointer index over source files, and the rank boost it gives a
//! search.
//!
//! When 3.11 mines a file it also files a *closet*: a short line naming the file's topic and
//! entities and pointing at its drawers, e.g.
//! `auth notes 2|GPT-4;Alice;Clerk|2026-12-04:L1-L7|→drawer_wing_alpha_auth_…,…`. Its search
//! matches the query's words against the closets in scope and lifts the drawers of the best
//! matching files: a drawer whose file's closet ranked `r` gets [`CLOSET_RANK_BOOSTS`]`[r]`
//! subtracted from its distance for the candidate order, and its text is replaced by the best
//! passage of its file ([`best_passage`]); passages shown twice that way are shown once
//! ([`drop_repeated_closet_passages`]). The final ranking still scores the raw distance.
//!
//! A palace migrated from 3.11 keeps its closets ([`ClosetIndex`]); [`crate::Fusion`]'s
//! `closet_boost` decides whether a search uses them (MemPalace 3.11's ranking does).
//! Palaces mined here have none, which is 3.11's own behaviour for a palace without closets.

use std::collections::{HashMap, HashSet};
use std::sync::RwLock;

use async_trait::async_trait;

use crate::error::Result;
use crate::filter::DrawerFilter;
use crate::lexical::{BM25_B, BM25_K1, word_runs as words};
use crate::retrieval::Ranked;

/// The distance taken off a drawer whose file's closet ranked 1st, 2nd, … (3.11's values).
pub const CLOSET_RANK_BOOSTS: [f64; 5] = [0.40, 0.25, 0.15, 0.08, 0.04];
/// Most closets an unscoped search reads, best matches first (3.11 reads 500).
pub const CLOSET_SCAN_CAP: usize = 500;
/// Longest passage shown for a closet hit, in characters (3.11's `_MAX_HYDRATION_CHARS`).
pub const MAX_PASSAGE_CHARS: usize = 10_000;
/// Characters of the closet line shown beside a hit.
pub const CLOSET_PREVIEW_CHARS: usize = 200;
/// Shortest query word used to find closets (3.11 matches words of three characters or more).
pub const MIN_CLOSET_WORD_CHARS: usize = 3;

/// One closet: a line about one source file and the drawers filed from it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Closet {
    /// Its id (3.11's `closet_{wing}_{room}_{hash}_{nn}`).
    pub id: String,
    /// The closet line.
    pub text: String,
    /// The wing of the file's drawers.
    pub wing: String,
    /// The room of the file's drawers.
    pub room: String,
    /// The source file, as its drawers store it.
    pub source_file: String,
}

/// A source file's closets in one wing (and, when `from_room` is given, one room) moving to a
/// new wing (and room): they follow the file's drawers when those move.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ClosetMove {
    /// The source file whose closets move.
    pub source_file: String,
    /// The wing they are in now (closets of the file in other wings stay).
    pub from_wing: String,
    /// Their new wing.
    pub wing: String,
    /// Only the closets in this room move (`None`: any room of `from_wing`).
    pub from_room: Option<String>,
    /// Their new room (`None`: they keep theirs).
    pub room: Option<String>,
}

/// Which closets a search may use: those of its wing, room and source file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClosetScope {
    /// Only this wing's closets.
    pub wing: Option<String>,
    /// Only this room's closets.
    pub room: Option<String>,
    /// Only this file's closets.
    pub source_file: Option<String>,
}

impl ClosetScope {
    /// The closet part of a drawer filter (its wing, room and source file).
    pub fn of(filter: &DrawerFilter) -> Self {
        ClosetScope {
            wing: filter.wing.clone(),
            room: filter.room.clone(),
            source_file: filter.source_file.clone(),
        }
    }

    /// Whether nothing narrows the scope.
    pub fn is_everything(&self) -> bool {
        self.wing.is_none() && self.room.is_none() && self.source_file.is_none()
    }

    /// Whether `closet` is in scope.
    pub fn admits(&self, closet: &Closet) -> bool {
        self.wing.as_ref().is_none_or(|w| *w == closet.wing)
            && self.room.as_ref().is_none_or(|r| *r == closet.room)
            && self
                .source_file
                .as_ref()
                .is_none_or(|s| *s == closet.source_file)
    }
}

/// Storage of a palace's closets.
#[async_trait]
pub trait ClosetIndex: Send + Sync {
    /// Short backend name for messages.
    fn backend_name(&self) -> &'static str;

    /// Files `closets`, replacing any with the same id.
    async fn upsert(&self, closets: &[Closet]) -> Result<()>;

    /// Files the closets whose id is not stored yet, leaving stored ones as they are (import);
    /// returns how many were new.
    async fn insert_missing(&self, closets: &[Closet]) -> Result<usize>;

    /// The closets in `scope` whose text contains at least one of `words` (already
    /// lower-case, each at least [`MIN_CLOSET_WORD_CHARS`] long; matched case-insensitively
    /// anywhere in the text). A scoped search returns them all in filing order; an unscoped
    /// one at most `cap`, the index's best matches first where it ranks them (as ChromaDB's
    /// full-text index does for 3.11), else the first filed. No words, no closets.
    async fn containing_any(
        &self,
        words: &[String],
        scope: &ClosetScope,
        cap: usize,
    ) -> Result<Vec<Closet>>;

    /// Deletes the closets of these source files; returns how many went.
    async fn delete_for_sources(&self, sources: &[String]) -> Result<usize>;

    /// Number of closets.
    async fn count(&self) -> Result<u64>;

    /// Closets by id (byte order), those after `after_id` only, at most `limit` (export).
    async fn closet_rows(&self, after_id: Option<&str>, limit: usize) -> Result<Vec<Closet>>;

    /// Writes a consistent copy of the closets into the palace folder `palace_dir`
    /// (`backup`); `false` when there are none stored. The default refuses
    /// ([`crate::PalaceError::no_snapshot`]).
    async fn snapshot_into(&self, palace_dir: &std::path::Path) -> Result<bool> {
        let _ = palace_dir;
        Err(crate::PalaceError::no_snapshot(self.backend_name()))
    }

    /// Gives the closets of each move's source file in its `from_wing` (and `from_room`) the
    /// move's wing (and room); returns how many closets moved. The default refuses (when there
    /// is anything to move).
    async fn relocate_sources(&self, moves: &[ClosetMove]) -> Result<usize> {
        if moves.is_empty() {
            return Ok(0);
        }
        Err(crate::PalaceError::store(
            self.backend_name(),
            "relocate closets",
            "this closet index cannot move closets between wings or rooms",
        ))
    }
}

/// Closets held in memory, in filing order (a palace's default: none).
#[derive(Default)]
pub struct MemoryClosets {
    closets: RwLock<Vec<Closet>>,
}

impl MemoryClosets {
    /// An empty index.
    pub fn new() -> Self {
        MemoryClosets::default()
    }
}

#[async_trait]
impl ClosetIndex for MemoryClosets {
    fn backend_name(&self) -> &'static str {
        "memory"
    }

    async fn upsert(&self, closets: &[Closet]) -> Result<()> {
        let mut held = self.closets.write().unwrap_or_else(|e| e.into_inner());
        for c in closets {
            match held.iter_mut().find(|h| h.id == c.id) {
                Some(h) => *h = c.clone(),
                None => held.push(c.clone()),
            }
        }
        Ok(())
    }

    async fn insert_missing(&self, closets: &[Closet]) -> Result<usize> {
        let mut held = self.closets.write().unwrap_or_else(|e| e.into_inner());
        let mut added = 0;
        for c in closets {
            if !held.iter().any(|h| h.id == c.id) {
                held.push(c.clone());
                added += 1;
            }
        }
        Ok(added)
    }

    async fn containing_any(
        &self,
        words: &[String],
        scope: &ClosetScope,
        cap: usize,
    ) -> Result<Vec<Closet>> {
        if words.is_empty() {
            return Ok(Vec::new());
        }
        let held = self.closets.read().unwrap_or_else(|e| e.into_inner());
        let mut found: Vec<Closet> = held
            .iter()
            .filter(|c| scope.admits(c))
            .filter(|c| {
                let lower = c.text.to_lowercase();
                words.iter().any(|w| lower.contains(w.as_str()))
            })
            .cloned()
            .collect();
        if scope.is_everything() {
            found.truncate(cap);
        }
        Ok(found)
    }

    async fn delete_for_sources(&self, sources: &[String]) -> Result<usize> {
        let mut held = self.closets.write().unwrap_or_else(|e| e.into_inner());
        let before = held.len();
        held.retain(|c| !sources.contains(&c.source_file));
        Ok(before - held.len())
    }

    async fn count(&self) -> Result<u64> {
        Ok(self.closets.read().unwrap_or_else(|e| e.into_inner()).len() as u64)
    }

    async fn closet_rows(&self, after_id: Option<&str>, limit: usize) -> Result<Vec<Closet>> {
        let held = self.closets.read().unwrap_or_else(|e| e.into_inner());
        let mut rows: Vec<&Closet> = held
            .iter()
            .filter(|c| after_id.is_none_or(|after| c.id.as_str() > after))
            .collect();
        rows.sort_by(|a, b| a.id.cmp(&b.id));
        Ok(rows.into_iter().take(limit).cloned().collect())
    }

    async fn relocate_sources(&self, moves: &[ClosetMove]) -> Result<usize> {
        let mut held = self.closets.write().unwrap_or_else(|e| e.into_inner());
        let mut moved = 0;
        for m in moves {
            for c in held.iter_mut().filter(|c| {
                c.source_file == m.source_file
                    && c.wing == m.from_wing
                    && m.from_room.as_ref().is_none_or(|r| *r == c.room)
            }) {
                c.wing = m.wing.clone();
                if let Some(room) = &m.room {
                    c.room = room.clone();
                }
                moved += 1;
            }
        }
        Ok(moved)
    }
}

/// The query words a closet search looks for: 3.11's words
/// ([`crate::lexical::word_runs`]) of at least
/// [`MIN_CLOSET_WORD_CHARS`] characters.
pub fn closet_search_words(query: &str) -> Vec<String> {
    words(query)
        .into_iter()
        .filter(|w| w.chars().count() >= MIN_CLOSET_WORD_CHARS)
        .collect()
}

/// Okapi BM25 of each document for the query's words ([`crate::lexical::word_runs`]), with the IDF taken over these
/// documents (3.11's closet scoring).
pub fn closet_bm25(query: &str, documents: &[&str]) -> Vec<f64> {
    let query_words: HashSet<String> = words(query).into_iter().collect();
    let n = documents.len();
    if query_words.is_empty() || n == 0 {
        return vec![0.0; n];
    }
    let tokenised: Vec<Vec<String>> = documents.iter().map(|d| words(d)).collect();
    let total: usize = tokenised.iter().map(Vec::len).sum();
    if total == 0 {
        return vec![0.0; n];
    }
    let average = total as f64 / n as f64;
    let mut document_frequency: HashMap<&str, usize> = HashMap::new();
    for toks in &tokenised {
        let seen: HashSet<&str> = toks
            .iter()
            .map(String::as_str)
            .filter(|t| query_words.contains(*t))
            .collect();
        for t in seen {
            *document_frequency.entry(t).or_default() += 1;
        }
    }
    tokenised
        .iter()
        .map(|toks| {
            if toks.is_empty() {
                return 0.0;
            }
            let mut tf: HashMap<&str, usize> = HashMap::new();
            for t in toks.iter().filter(|t| query_words.contains(t.as_str())) {
                *tf.entry(t.as_str()).or_default() += 1;
            }
            let length = toks.len() as f64;
            tf.into_iter()
                .map(|(term, f)| {
                    let df = document_frequency.get(term).copied().unwrap_or(0) as f64;
                    let idf = ((n as f64 - df + 0.5) / (df + 0.5) + 1.0).ln();
                    let f = f as f64;
                    idf * f * (BM25_K1 + 1.0)
                        / (f + BM25_K1 * (1.0 - BM25_B + BM25_B * length / average))
                })
                .sum()
        })
        .collect()
}

/// How a file's closet lifts the file's drawers in one search.
#[derive(Debug, Clone, PartialEq)]
pub struct ClosetMatch {
    /// The closet's rank among the matching closets (0 = best).
    pub rank: usize,
    /// The distance taken off for the candidate order.
    pub boost: f64,
    /// The start of the closet line.
    pub preview: String,
}

/// The boost per source file for a search of `limit` hits, from the closets that contain the
/// query's words: they are scored with [`closet_bm25`] (zero scores dropped, ties kept in
/// filing order), the first `2 × limit` kept, and each file takes its best closet's rank.
/// Files whose best closet ranks past [`CLOSET_RANK_BOOSTS`] get no boost.
pub fn closet_matches(
    query: &str,
    closets: &[Closet],
    limit: usize,
) -> HashMap<String, ClosetMatch> {
    let texts: Vec<&str> = closets.iter().map(|c| c.text.as_str()).collect();
    let scores = closet_bm25(query, &texts);
    let mut scored: Vec<(f64, &Closet)> = scores
        .into_iter()
        .zip(closets)
        .filter(|(s, _)| *s > 0.0)
        .collect();
    // Stable: equal scores keep the index's order.
    scored.sort_by(|a, b| b.0.total_cmp(&a.0));
    let mut matches = HashMap::new();
    // Ranks past the boosts lift nothing, and a file's first closet is its best.
    let considered = (limit.max(1) * 2).min(CLOSET_RANK_BOOSTS.len());
    for (rank, (_, closet)) in scored.into_iter().take(considered).enumerate() {
        if closet.source_file.is_empty() || matches.contains_key(&closet.source_file) {
            continue;
        }
        matches.insert(
            closet.source_file.clone(),
            ClosetMatch {
                rank,
                boost: CLOSET_RANK_BOOSTS[rank],
                preview: closet.text.chars().take(CLOSET_PREVIEW_CHARS).collect(),
            },
        );
    }
    matches
}

/// The passage a closet hit shows: the chunk of its file that contains the most of the
/// query's words ([`crate::lexical::word_runs`]; the first such), with the chunks before and after it, joined by a
/// blank line and cut at [`MAX_PASSAGE_CHARS`]. `chunks` are the file's drawers as
/// `(chunk_index, text)`; a file of one chunk keeps the hit's own text (`None`).
pub fn best_passage(query: &str, chunks: &[(u32, &str)]) -> Option<String> {
    if chunks.len() <= 1 {
        return None;
    }
    let query_words: HashSet<String> = words(query).into_iter().collect();
    let mut ordered: Vec<&(u32, &str)> = chunks.iter().collect();
    ordered.sort_by_key(|(index, _)| *index);
    let mut best = (0usize, -1i64);
    for (i, (_, text)) in ordered.iter().enumerate() {
        let lower = text.to_lowercase();
        let score = query_words
            .iter()
            .filter(|w| lower.contains(w.as_str()))
            .count() as i64;
        if score > best.1 {
            best = (i, score);
        }
    }
    let start = best.0.saturating_sub(1);
    let end = (best.0 + 2).min(ordered.len());
    let passage = ordered[start..end]
        .iter()
        .map(|(_, t)| *t)
        .collect::<Vec<_>>()
        .join("\n\n");
    if passage.chars().count() <= MAX_PASSAGE_CHARS {
        return Some(passage);
    }
    let cut: String = passage.chars().take(MAX_PASSAGE_CHARS).collect();
    Some(format!(
        "{cut}\n\n[...truncated. {} total drawers. Use mempalace_get_drawer for full content.]",
        ordered.len()
    ))
}

/// Drops a ranked hit that repeats an earlier hit's file and text when either was shown
/// through its closet (both then show the same passage of the same file); plain drawers
/// that repeat are left to the usual folding.
pub fn drop_repeated_closet_passages(
    ranked: Vec<Ranked>,
    through_closet: &HashSet<String>,
) -> Vec<Ranked> {
    let mut first: HashMap<(String, String), bool> = HashMap::new();
    let mut kept = Vec::with_capacity(ranked.len());
    for r in ranked {
        let d = &r.candidate.drawer;
        let closet = through_closet.contains(&d.id);
        if d.metadata.source_file.is_empty() {
            kept.push(r);
            continue;
        }
        let key = (d.metadata.source_file.clone(), d.text.clone());
        match first.get(&key) {
            None => {
                first.insert(key, closet);
                kept.push(r);
            }
            Some(&earlier_closet) if earlier_closet || closet => {}
            Some(_) => kept.push(r),
        }
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    fn closet(id: &str, text: &str, source: &str) -> Closet {
        Closet {
            id: id.into(),
            text: text.into(),
            wing: "w".into(),
            room: "r".into(),
            source_file: source.into(),
        }
    }

    #[test]
    fn closet_search_words_are_3_11_words_of_three_letters_or_more() {
        assert_eq!(
            words("GPT-4 and drawer_wing_a_b, x é1"),
            vec!["gpt", "and", "drawer_wing_a_b", "é1"]
        );
        assert_eq!(closet_search_words("how do we go on"), vec!["how"]);
    }

    #[test]
    fn the_best_closet_per_file_sets_its_boost() {
        let closets = vec![
            closet("c1", "garden notes|Tomatoes", "/a.md"),
            closet("c2", "garden notes|Tomatoes;Tomatoes;Staking", "/b.md"),
            closet("c3", "garden notes|Compost", "/c.md"),
            closet("c4", "garden notes|Tomatoes", "/a.md"),
        ];
        let m = closet_matches("when do tomatoes need staking", &closets, 3);
        assert_eq!(m["/b.md"].rank, 0);
        assert_eq!(m["/b.md"].boost, 0.40);
        assert_eq!(m["/a.md"].rank, 1);
        assert_eq!(m["/a.md"].boost, 0.25);
        assert!(!m.contains_key("/c.md"), "no word in common, no boost");
        assert_eq!(m["/b.md"].preview, "garden notes|Tomatoes;Tomatoes;Staking");
    }

    #[test]
    fn only_the_first_two_times_limit_closets_count() {
        let closets: Vec<Closet> = (0..10)
            .map(|i| closet(&format!("c{i}"), "tomatoes", &format!("/{i}.md")))
            .collect();
        let m = closet_matches("tomatoes", &closets, 1);
        assert_eq!(m.len(), 2);
        assert_eq!(m["/0.md"].boost, 0.40);
        assert_eq!(m["/1.md"].boost, 0.25);
    }

    #[test]
    fn the_passage_is_the_best_chunk_with_its_neighbours() {
        let chunks = [
            (2, "c tomatoes staking"),
            (0, "a"),
            (1, "b tomatoes"),
            (3, "d"),
        ];
        assert_eq!(
            best_passage("tomatoes staking", &chunks).unwrap(),
            "b tomatoes\n\nc tomatoes staking\n\nd"
        );
        assert_eq!(best_passage("x", &[(0, "only")]), None);
        let long = "x".repeat(6000);
        let p = best_passage("x", &[(0, &long), (1, &long)]).unwrap();
        let shown: String = p.chars().take(MAX_PASSAGE_CHARS).collect();
        assert_eq!(
            shown,
            format!("{long}\n\n{}", &long[..MAX_PASSAGE_CHARS - 6002])
        );
        assert_eq!(p.chars().nth(MAX_PASSAGE_CHARS), Some('\n'));
        assert!(p.ends_with("2 total drawers. Use mempalace_get_drawer for full content.]"));
    }

    #[tokio::test]
    async fn memory_closets_match_words_within_scope() {
        let index = MemoryClosets::new();
        let mut other = closet("c2", "Tomatoes", "/b.md");
        other.wing = "x".into();
        index
            .upsert(&[closet("c1", "Tomatoes|Staking", "/a.md"), other])
            .await
            .unwrap();
        index
            .upsert(&[closet("c1", "TOMATOES again", "/a.md")])
            .await
            .unwrap();
        assert_eq!(index.count().await.unwrap(), 2);
        let words = vec!["tomatoes".to_string()];
        let all = index
            .containing_any(&words, &ClosetScope::default(), 10)
            .await
            .unwrap();
        assert_eq!(all.len(), 2);
        assert_eq!(all[0].text, "TOMATOES again");
        let scope = ClosetScope {
            wing: Some("w".into()),
            ..ClosetScope::default()
        };
        assert_eq!(
            index
                .containing_any(&words, &scope, 10)
                .await
                .unwrap()
                .len(),
            1
        );
        assert!(
            index
                .containing_any(&[], &ClosetScope::default(), 10)
                .await
                .unwrap()
                .is_empty()
        );
        assert_eq!(
            index
                .delete_for_sources(&["/a.md".to_string()])
                .await
                .unwrap(),
            1
        );
        assert_eq!(index.count().await.unwrap(), 1);
    }
}
