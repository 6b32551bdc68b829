//! `MemoryStore`: the exact, in-process reference `VectorStore`.

use std::collections::{BTreeMap, HashSet};
use std::sync::RwLock;

use async_trait::async_trait;

use crate::drawer::Drawer;
use crate::error::{PalaceError, Result};
use crate::filter::DrawerFilter;
use crate::lexical::{idf, query_terms, term_weight, terms};
use crate::similarity::cosine_distance;
use crate::validation::validate_vector_pairs;
use crate::vector_store::{
    DrawerMove, LexicalHit, Neighbour, Page, RoomCount, VectorStore, rank_lexical_hits,
    rank_neighbours,
};

/// What the store holds once created.
#[derive(Default)]
struct Contents {
    created: bool,
    rows: BTreeMap<String, (Drawer, Vec<f32>)>,
}

/// An exact (brute-force cosine, exact BM25) vector store held in memory.
///
/// It is the ground truth of the conformance suite: ranking is exact, ties are broken by id,
/// filters are applied before ranking, and it is safe to share between threads. Small apps and
/// tests can use it directly; it does not persist anything.
pub struct MemoryStore {
    dimension: usize,
    contents: RwLock<Contents>,
}

impl MemoryStore {
    /// An empty, not yet created store for vectors of `dimension`.
    pub fn new(dimension: usize) -> Self {
        MemoryStore {
            dimension,
            contents: RwLock::new(Contents::default()),
        }
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Contents> {
        self.contents
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, Contents> {
        self.contents
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn check_dimension(&self, vector: &[f32], context: &str) -> Result<()> {
        if vector.len() != self.dimension {
            return Err(PalaceError::DimensionMismatch {
                expected: self.dimension,
                actual: vector.len(),
                context: context.to_string(),
            });
        }
        Ok(())
    }
}

#[async_trait]
impl VectorStore for MemoryStore {
    fn backend_name(&self) -> &'static str {
        "memory"
    }

    fn dimension(&self) -> usize {
        self.dimension
    }

    async fn exists(&self) -> Result<bool> {
        Ok(self.read().created)
    }

    async fn create_if_missing(&self) -> Result<()> {
        self.write().created = true;
        Ok(())
    }

    async fn upsert(&self, drawers: &[Drawer], vectors: &[Vec<f32>]) -> Result<()> {
        validate_vector_pairs(drawers, vectors)?;
        for (drawer, vector) in drawers.iter().zip(vectors) {
            self.check_dimension(vector, &format!("upsert of {}", drawer.id))?;
        }
        let mut contents = self.write();
        contents.created = true;
        for (drawer, vector) in drawers.iter().zip(vectors) {
            contents
                .rows
                .insert(drawer.id.clone(), (drawer.clone(), vector.clone()));
        }
        Ok(())
    }

    async fn query(
        &self,
        vector: &[f32],
        filter: &DrawerFilter,
        limit: usize,
    ) -> Result<Vec<Neighbour>> {
        self.check_dimension(vector, "query")?;
        let contents = self.read();
        let mut scored: Vec<Neighbour> = contents
            .rows
            .values()
            .filter(|(drawer, _)| filter.matches(drawer))
            .map(|(drawer, v)| Neighbour {
                drawer: drawer.clone(),
                distance: cosine_distance(vector, v),
            })
            .collect();
        rank_neighbours(&mut scored, limit);
        Ok(scored)
    }

    /// Exact BM25 with statistics (document count, document frequencies, average length) over
    /// every drawer in the store, as a full-text index would keep them.
    async fn lexical_query(
        &self,
        text: &str,
        filter: &DrawerFilter,
        limit: usize,
    ) -> Result<Vec<LexicalHit>> {
        let wanted = query_terms(text);
        if wanted.is_empty() || limit == 0 {
            return Ok(Vec::new());
        }
        let contents = self.read();
        let n = contents.rows.len();
        let mut total_length = 0usize;
        let mut document_frequency = vec![0usize; wanted.len()];
        // (drawer, vector, length, term frequencies) of the drawers the filter keeps.
        let mut kept = Vec::new();
        for (drawer, vector) in contents.rows.values() {
            let ts = terms(&drawer.text);
            total_length += ts.len();
            let tf: Vec<usize> = wanted
                .iter()
                .map(|w| ts.iter().filter(|t| *t == w).count())
                .collect();
            for (df, f) in document_frequency.iter_mut().zip(&tf) {
                *df += usize::from(*f > 0);
            }
            if filter.matches(drawer) && tf.iter().any(|f| *f > 0) {
                kept.push((drawer, vector, ts.len(), tf));
            }
        }
        let average = total_length as f64 / n.max(1) as f64;
        let idfs: Vec<f64> = document_frequency.iter().map(|df| idf(n, *df)).collect();
        let mut hits: Vec<LexicalHit> = kept
            .into_iter()
            .map(|(drawer, vector, length, tf)| LexicalHit {
                drawer: drawer.clone(),
                vector: Some(vector.clone()),
                score: tf
                    .iter()
                    .zip(&idfs)
                    .map(|(f, idf)| idf * term_weight(*f, length, average))
                    .sum::<f64>() as f32,
            })
            .collect();
        rank_lexical_hits(&mut hits, limit);
        Ok(hits)
    }

    async fn get(&self, ids: &[String]) -> Result<Vec<Drawer>> {
        let contents = self.read();
        let mut seen = HashSet::new();
        Ok(ids
            .iter()
            .filter(|id| seen.insert(id.as_str()))
            .filter_map(|id| contents.rows.get(id).map(|(d, _)| d.clone()))
            .collect())
    }

    async fn delete(&self, ids: &[String]) -> Result<usize> {
        let mut contents = self.write();
        Ok(ids
            .iter()
            .filter(|id| contents.rows.remove(*id).is_some())
            .count())
    }

    async fn vectors(&self, ids: &[String]) -> Result<Vec<(String, Vec<f32>)>> {
        let contents = self.read();
        Ok(ids
            .iter()
            .filter_map(|id| contents.rows.get(id).map(|(_, v)| (id.clone(), v.clone())))
            .collect())
    }

    async fn relocate(&self, moves: &[DrawerMove]) -> Result<usize> {
        let mut contents = self.write();
        let mut moved = 0;
        for m in moves {
            if let Some((drawer, _)) = contents.rows.get_mut(&m.id) {
                drawer.metadata.wing = m.wing.clone();
                drawer.metadata.room = m.room.clone();
                moved += 1;
            }
        }
        Ok(moved)
    }

    async fn count(&self, filter: &DrawerFilter) -> Result<u64> {
        Ok(self
            .read()
            .rows
            .values()
            .filter(|(d, _)| filter.matches(d))
            .count() as u64)
    }

    async fn room_counts(&self, filter: &DrawerFilter) -> Result<Vec<RoomCount>> {
        let mut counts: BTreeMap<(String, String), u64> = BTreeMap::new();
        for (drawer, _) in self.read().rows.values().filter(|(d, _)| filter.matches(d)) {
            *counts
                .entry((drawer.metadata.wing.clone(), drawer.metadata.room.clone()))
                .or_default() += 1;
        }
        Ok(counts
            .into_iter()
            .map(|((wing, room), count)| RoomCount { wing, room, count })
            .collect())
    }

    async fn list(&self, filter: &DrawerFilter, page: Page) -> Result<Vec<Drawer>> {
        Ok(self
            .read()
            .rows
            .values()
            .filter(|(d, _)| filter.matches(d))
            .skip(page.offset)
            .take(page.limit)
            .map(|(d, _)| d.clone())
            .collect())
    }
}
