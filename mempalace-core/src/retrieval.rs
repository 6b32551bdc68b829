//! Finding drawers: the search request, and the fusion of the vector and lexical channels.
//!
//! A hybrid search asks the store for the nearest drawers by meaning and for the best
//! drawers by words (each channel pushed down into the backend, filters included), takes the
//! union of both candidate lists, and ranks it once, here, whatever the backend:
//!
//! ```text
//! score = vector_weight · max(0, 1 − cosine distance) + lexical_weight · BM25 / max BM25
//! ```
//!
//! (weights 0.8 and 0.2 by default, see [`Fusion::default`])
//!
//! with BM25 computed over the candidate set (MemPalace 3.11's re-rank, applied to a union
//! rather than to the vector list alone, so a drawer that only the words find still competes).
//! Unlike 3.11, the query's English stop words are left out of that BM25 by default
//! ([`crate::term_rules`]): otherwise a word like "are" in "how are artifacts signed", rare
//! among the candidates, gives the top BM25 to drawers that share nothing else with the query.

use std::collections::HashMap;
use std::str::FromStr;

use chrono::{DateTime, NaiveDate};
use serde::{Deserialize, Serialize};

use crate::drawer::Drawer;
use crate::error::{PalaceError, Result};
use crate::lexical::bm25_over;
use crate::temporal::parse_naive_timestamp;
use crate::term_rules::TermRules;

/// Which channels a search uses.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SearchMode {
    /// Both channels, fused (the default).
    #[default]
    Hybrid,
    /// Nearest drawers by meaning only (cosine distance of the embeddings).
    Vector,
    /// Drawers by their words only (the backend's BM25).
    Lexical,
}

impl SearchMode {
    /// The mode's name as the API spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            SearchMode::Hybrid => "hybrid",
            SearchMode::Vector => "vector",
            SearchMode::Lexical => "lexical",
        }
    }
}

impl FromStr for SearchMode {
    type Err = PalaceError;

    /// "hybrid", "vector" or "lexical".
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "hybrid" => Ok(SearchMode::Hybrid),
            "vector" => Ok(SearchMode::Vector),
            "lexical" => Ok(SearchMode::Lexical),
            other => Err(PalaceError::invalid(
                "mode",
                format!("{other:?} is not a search mode (hybrid, vector or lexical)"),
            )),
        }
    }
}

/// Where a hybrid search takes the candidates it ranks from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CandidateSource {
    /// Both channels' finds, so a drawer that only the words find still competes (the default).
    #[default]
    Union,
    /// The vector channel's finds only, re-ranked with BM25 (MemPalace 3.11's default).
    Vector,
}

impl CandidateSource {
    /// The source's name as MemPalace 3.11's `candidate_strategy` spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            CandidateSource::Union => "union",
            CandidateSource::Vector => "vector",
        }
    }
}

impl FromStr for CandidateSource {
    type Err = PalaceError;

    /// "union" or "vector".
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "union" => Ok(CandidateSource::Union),
            "vector" => Ok(CandidateSource::Vector),
            other => Err(PalaceError::invalid(
                "candidate_strategy",
                format!("{other:?} is not one of: vector, union"),
            )),
        }
    }
}

/// What to search for, and where.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchRequest {
    /// What to look for, in natural language or keywords.
    pub query: String,
    /// Only drawers in this wing.
    pub wing: Option<String>,
    /// Only drawers in this room.
    pub room: Option<String>,
    /// Only drawers from this source file (the full stored path).
    pub source_file: Option<String>,
    /// Only drawers filed at or after this date or time (ISO 8601).
    pub since: Option<String>,
    /// Only drawers filed before this date or time (ISO 8601).
    pub before: Option<String>,
    /// Drop hits whose cosine distance is above this (0 to 2; `None` keeps all).
    pub max_distance: Option<f64>,
    /// Most hits to return (capped at the palace's limit).
    pub limit: usize,
    /// Which channels to use.
    pub mode: SearchMode,
    /// Where a hybrid search's candidates come from (`None`: the palace's [`Fusion`]).
    #[serde(default)]
    pub candidates: Option<CandidateSource>,
}

impl SearchRequest {
    /// A hybrid search for `query` everywhere, 5 hits.
    pub fn new(query: impl Into<String>) -> Self {
        SearchRequest {
            query: query.into(),
            wing: None,
            room: None,
            source_file: None,
            since: None,
            before: None,
            max_distance: None,
            limit: 5,
            mode: SearchMode::Hybrid,
            candidates: None,
        }
    }

    /// Within a wing.
    pub fn wing(mut self, wing: impl Into<String>) -> Self {
        self.wing = Some(wing.into());
        self
    }

    /// Within a room.
    pub fn room(mut self, room: impl Into<String>) -> Self {
        self.room = Some(room.into());
        self
    }

    /// From one source file.
    pub fn source_file(mut self, source_file: impl Into<String>) -> Self {
        self.source_file = Some(source_file.into());
        self
    }

    /// Filed at or after `since`.
    pub fn since(mut self, since: impl Into<String>) -> Self {
        self.since = Some(since.into());
        self
    }

    /// Filed before `before`.
    pub fn before(mut self, before: impl Into<String>) -> Self {
        self.before = Some(before.into());
        self
    }

    /// At most this cosine distance.
    pub fn max_distance(mut self, max_distance: f64) -> Self {
        self.max_distance = Some(max_distance);
        self
    }

    /// At most `limit` hits.
    pub fn limit(mut self, limit: usize) -> Self {
        self.limit = limit;
        self
    }

    /// With these channels.
    pub fn mode(mut self, mode: SearchMode) -> Self {
        self.mode = mode;
        self
    }

    /// A hybrid search's candidates from `source`.
    pub fn candidates(mut self, source: CandidateSource) -> Self {
        self.candidates = Some(source);
        self
    }
}

/// How the two channels are weighed and how many candidates each contributes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fusion {
    /// Weight of `max(0, 1 − distance)`.
    pub vector_weight: f64,
    /// Weight of the candidate-normalised BM25.
    pub lexical_weight: f64,
    /// Each channel contributes `limit × candidate_factor` candidates ...
    pub candidate_factor: usize,
    /// ... and at least this many.
    pub min_candidates: usize,
    /// The terms BM25 compares.
    pub terms: TermRules,
    /// Where the candidates come from.
    pub candidates: CandidateSource,
    /// Whether the palace's closets lift their files' drawers ([`crate::closets`]).
    pub closet_boost: bool,
}

impl Default for Fusion {
    /// 0.8 / 0.2, tuned on the `tune` split of `bench/retrieval` (MemPalace 3.11 uses 0.6 / 0.4,
    /// which scored R@5 0.615 there against 0.677 for 0.8 / 0.2); BM25 without stop words
    /// (R@1 / R@10 on the `report` split 0.495 / 0.832 with them, 0.505 / 0.868 without).
    fn default() -> Self {
        Fusion {
            vector_weight: 0.8,
            lexical_weight: 0.2,
            candidate_factor: 4,
            min_candidates: 40,
            terms: TermRules::WithoutStopWords,
            candidates: CandidateSource::Union,
            closet_boost: false,
        }
    }
}

impl Fusion {
    /// MemPalace 3.11's hybrid ranking: the 4 × `limit` nearest drawers by meaning, re-ranked
    /// by `0.6 · similarity + 0.4 · BM25 / max BM25` over their words as 3.11 splits them
    /// ([`TermRules::MemPalace311`]), with the closets
    /// of a migrated palace lifting their files' drawers and showing their best passage
    /// ([`crate::closets`]).
    pub fn mempalace_3_11() -> Self {
        Fusion {
            vector_weight: 0.6,
            lexical_weight: 0.4,
            candidate_factor: 4,
            min_candidates: 0,
            terms: TermRules::MemPalace311,
            candidates: CandidateSource::Vector,
            closet_boost: true,
        }
    }

    /// Candidates each channel contributes for a search of `limit` hits.
    pub fn candidates_for(&self, limit: usize) -> usize {
        limit
            .saturating_mul(self.candidate_factor)
            .max(self.min_candidates)
            .max(limit)
    }
}

/// A drawer found by one channel or both, before ranking.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    /// The drawer.
    pub drawer: Drawer,
    /// Its cosine distance to the query (`None` when it is not known).
    pub distance: Option<f32>,
    /// Whether the vector channel found it.
    pub by_vector: bool,
    /// Whether the lexical channel found it.
    pub by_lexical: bool,
}

/// A ranked candidate.
#[derive(Debug, Clone, PartialEq)]
pub struct Ranked {
    /// The candidate.
    pub candidate: Candidate,
    /// BM25 over the candidate set.
    pub bm25: f64,
    /// The fused score (higher first).
    pub score: f64,
}

/// Ranks candidates by the fused score (ties: smaller distance, then smaller id).
#[tracing::instrument(level = "debug", skip_all, fields(candidates = candidates.len()))]
pub fn fuse(query: &str, candidates: Vec<Candidate>, fusion: &Fusion) -> Vec<Ranked> {
    let texts: Vec<&str> = candidates.iter().map(|c| c.drawer.text.as_str()).collect();
    let bm25 = bm25_over(query, &texts, fusion.terms);
    let max_bm25 = bm25.iter().copied().fold(0.0f64, f64::max);
    let mut ranked: Vec<Ranked> = candidates
        .into_iter()
        .zip(bm25)
        .map(|(candidate, bm25)| {
            let similarity = candidate
                .distance
                .map_or(0.0, |d| (1.0 - f64::from(d)).max(0.0));
            let lexical = if max_bm25 > 0.0 { bm25 / max_bm25 } else { 0.0 };
            Ranked {
                score: fusion.vector_weight * similarity + fusion.lexical_weight * lexical,
                bm25,
                candidate,
            }
        })
        .collect();
    ranked.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then_with(|| {
                let d = |r: &Ranked| r.candidate.distance.unwrap_or(f32::INFINITY);
                d(a).total_cmp(&d(b))
            })
            .then_with(|| a.candidate.drawer.id.cmp(&b.candidate.drawer.id))
    });
    ranked
}

/// Merges the two channels' finds into one candidate list (a drawer found by both appears
/// once, with the vector channel's distance), in first-found order. A lexical find carries
/// its distance when the store returned its vector; the ids of those without one are
/// returned beside the list.
pub fn union(
    by_vector: Vec<(Drawer, f32)>,
    by_lexical: Vec<(Drawer, Option<f32>)>,
) -> (Vec<Candidate>, Vec<String>) {
    let mut position: HashMap<String, usize> = HashMap::new();
    let mut out: Vec<Candidate> = Vec::with_capacity(by_vector.len() + by_lexical.len());
    for (drawer, distance) in by_vector {
        if position.contains_key(&drawer.id) {
            continue;
        }
        position.insert(drawer.id.clone(), out.len());
        out.push(Candidate {
            drawer,
            distance: Some(distance),
            by_vector: true,
            by_lexical: false,
        });
    }
    let mut missing_distance = Vec::new();
    for (drawer, distance) in by_lexical {
        match position.get(&drawer.id) {
            Some(&i) => out[i].by_lexical = true,
            None => {
                position.insert(drawer.id.clone(), out.len());
                if distance.is_none() {
                    missing_distance.push(drawer.id.clone());
                }
                out.push(Candidate {
                    drawer,
                    distance,
                    by_vector: false,
                    by_lexical: true,
                });
            }
        }
    }
    (out, missing_distance)
}

/// A `since` / `before` bound as the canonical text stores compare `filed_at` with:
/// `YYYY-MM-DDTHH:MM:SS[.ffffff]`. A date means its midnight; a time zone is dropped (filing
/// times are local wall-clock times, as MemPalace compares them).
pub fn filing_bound(field: &'static str, value: &str) -> Result<String> {
    let v = value.trim();
    let bad = || {
        PalaceError::invalid(
            field,
            format!(
                "{value:?} is not an ISO 8601 date or date-time (e.g. 2026-01-15 or 2026-01-15T09:30:00)"
            ),
        )
    };
    let b = v.as_bytes();
    if b.len() < 10 || !b[..4].iter().all(u8::is_ascii_digit) || b[4] != b'-' {
        return Err(bad());
    }
    if v.len() == 10 {
        let d = NaiveDate::parse_from_str(v, "%Y-%m-%d").map_err(|_| bad())?;
        return Ok(d.format("%Y-%m-%dT00:00:00").to_string());
    }
    if let Ok(dt) = DateTime::parse_from_rfc3339(v) {
        return Ok(dt.naive_local().format("%Y-%m-%dT%H:%M:%S%.f").to_string());
    }
    parse_naive_timestamp(v)
        .map(|dt| dt.format("%Y-%m-%dT%H:%M:%S%.f").to_string())
        .ok_or_else(bad)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::drawer::{AddedBy, DrawerMetadata};

    fn drawer(id: &str, text: &str) -> Drawer {
        Drawer {
            id: id.into(),
            text: text.into(),
            metadata: DrawerMetadata {
                wing: "w".into(),
                room: "r".into(),
                source_file: String::new(),
                chunk_index: 0,
                added_by: AddedBy::Mcp,
                filed_at: "2026-01-01T00:00:00".into(),
                authored_at: None,
                conversation: None,
                entities: Vec::new(),
            },
        }
    }

    #[test]
    fn union_keeps_each_drawer_once_and_names_those_without_distance() {
        let (c, missing) = union(
            vec![(drawer("a", "x"), 0.1), (drawer("b", "y"), 0.2)],
            vec![
                (drawer("b", "y"), None),
                (drawer("c", "z"), None),
                (drawer("d", "w"), Some(0.4)),
            ],
        );
        assert_eq!(c.len(), 4);
        assert!(c[1].by_vector && c[1].by_lexical);
        assert_eq!(
            c[1].distance,
            Some(0.2),
            "the vector channel's distance is kept"
        );
        assert_eq!(c[2].distance, None);
        assert_eq!(c[3].distance, Some(0.4));
        assert_eq!(
            missing,
            vec!["c".to_string()],
            "only c still needs its distance"
        );
    }

    #[test]
    fn words_lift_a_drawer_that_meaning_alone_ranks_lower() {
        let candidates = vec![
            Candidate {
                drawer: drawer("near", "we talked about the weather and holidays"),
                distance: Some(0.30),
                by_vector: true,
                by_lexical: false,
            },
            Candidate {
                drawer: drawer("named", "Caroline went to the LGBTQ support group"),
                distance: Some(0.40),
                by_vector: true,
                by_lexical: true,
            },
        ];
        let ranked = fuse(
            "LGBTQ support group",
            candidates.clone(),
            &Fusion::default(),
        );
        assert_eq!(ranked[0].candidate.drawer.id, "named");
        let vector_only = Fusion {
            vector_weight: 1.0,
            lexical_weight: 0.0,
            ..Fusion::default()
        };
        assert_eq!(
            fuse("LGBTQ support group", candidates, &vector_only)[0]
                .candidate
                .drawer
                .id,
            "near"
        );
    }

    #[test]
    fn stop_words_in_the_query_do_not_decide_the_ranking() {
        // MemPalace 3.11's fixture: the query shares only "are" with the billing note, and
        // only meaning with the deploy note ("signs", "artifact").
        let candidates = vec![
            Candidate {
                drawer: drawer("deploy", "The pipeline signs every artifact with cosign."),
                distance: Some(0.6585),
                by_vector: true,
                by_lexical: false,
            },
            Candidate {
                drawer: drawer(
                    "billing",
                    "Stripe webhooks are retried for three days. Invoices are issued monthly.",
                ),
                distance: Some(0.8549),
                by_vector: true,
                by_lexical: true,
            },
        ];
        let query = "how are artifacts signed";
        let ranked = fuse(query, candidates.clone(), &Fusion::default());
        assert_eq!(ranked[0].candidate.drawer.id, "deploy");
        assert_eq!(ranked[1].bm25, 0.0, "\"are\" scores nothing");
        let with_stop_words = Fusion {
            terms: TermRules::Words,
            ..Fusion::default()
        };
        let ranked = fuse(query, candidates, &with_stop_words);
        assert_eq!(ranked[0].candidate.drawer.id, "billing");
    }

    #[test]
    fn filing_bounds_are_canonical() {
        assert_eq!(
            filing_bound("since", "2026-01-15").unwrap(),
            "2026-01-15T00:00:00"
        );
        assert_eq!(
            filing_bound("since", "2026-01-15T09:30:00Z").unwrap(),
            "2026-01-15T09:30:00"
        );
        assert_eq!(
            filing_bound("since", "2026-01-15 09:30:00.25").unwrap(),
            "2026-01-15T09:30:00.250"
        );
        assert_eq!(
            filing_bound("since", "2026-01-15T09:30:00+02:00").unwrap(),
            "2026-01-15T09:30:00"
        );
        for bad in ["yesterday", "-2026-01-01", "2026-13-01", "20260101", ""] {
            assert!(filing_bound("since", bad).is_err(), "{bad}");
        }
        assert!("x".parse::<SearchMode>().is_err());
        assert_eq!(
            "lexical".parse::<SearchMode>().unwrap(),
            SearchMode::Lexical
        );
    }
}
