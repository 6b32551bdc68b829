//! The `VectorStore` trait: drawers with their vectors, searched by cosine distance and by
//! their words (the lexical channel).

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use crate::drawer::Drawer;
use crate::error::{PalaceError, Result};
use crate::filter::DrawerFilter;

/// One search result from a store: the drawer and its cosine distance to the query.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Neighbour {
    /// The drawer found.
    pub drawer: Drawer,
    /// Cosine distance `1 - cos` between the query and the drawer's vector.
    pub distance: f32,
}

/// A neighbour found by [`VectorStore::nearest_ids`]: its id and distance, not the drawer.
#[derive(Debug, Clone, PartialEq)]
pub struct NeighbourId {
    /// The drawer's id.
    pub id: String,
    /// Cosine distance `1 - cos` between the query and the drawer's vector.
    pub distance: f32,
}

/// One lexical search result from a store: the drawer and its relevance score.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LexicalHit {
    /// The drawer found.
    pub drawer: Drawer,
    /// The backend's BM25-style score: higher is more relevant; its scale is the backend's own
    /// (fusion in [`crate::retrieval`] rescores candidates itself).
    pub score: f32,
    /// The drawer's stored vector, when the backend reads it with the hit: search then computes
    /// the hit's distance itself instead of asking the store again. `None` otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vector: Option<Vec<f32>>,
}

/// Puts lexical hits in the order every store answers with (best score first, ties by id)
/// and keeps the first `limit`.
pub fn rank_lexical_hits(hits: &mut Vec<LexicalHit>, limit: usize) {
    hits.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then_with(|| a.drawer.id.cmp(&b.drawer.id))
    });
    hits.truncate(limit);
}

/// The order every store answers a nearest-neighbour query in: ascending distance, ties by
/// ascending drawer id.
fn nearest_first(
    (a_distance, a_id): (f32, &str),
    (b_distance, b_id): (f32, &str),
) -> std::cmp::Ordering {
    a_distance
        .total_cmp(&b_distance)
        .then_with(|| a_id.cmp(b_id))
}

/// Puts neighbours in the order every store answers with (nearest first, ties by id) and
/// keeps the first `limit`.
pub fn rank_neighbours(neighbours: &mut Vec<Neighbour>, limit: usize) {
    neighbours
        .sort_by(|a, b| nearest_first((a.distance, &a.drawer.id), (b.distance, &b.drawer.id)));
    neighbours.truncate(limit);
}

/// [`rank_neighbours`] for the ids and distances of [`VectorStore::nearest_ids`].
pub fn rank_neighbour_ids(neighbours: &mut Vec<NeighbourId>, limit: usize) {
    neighbours.sort_by(|a, b| nearest_first((a.distance, &a.id), (b.distance, &b.id)));
    neighbours.truncate(limit);
}

/// How many drawers one (wing, room) pair holds.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct RoomCount {
    /// The wing.
    pub wing: String,
    /// The room inside the wing.
    pub room: String,
    /// Number of drawers.
    pub count: u64,
}

/// A drawer's new place: the drawer `id` goes to `wing` / `room` (wing and room
/// maintenance: `migrate-wings`, `wings split`, `rooms apply`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct DrawerMove {
    /// The drawer's id.
    pub id: String,
    /// Its new wing.
    pub wing: String,
    /// Its new room.
    pub room: String,
}

/// A page of a listing: skip `offset` drawers, return at most `limit`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Page {
    /// Drawers to skip (in id order).
    pub offset: usize,
    /// Most drawers to return.
    pub limit: usize,
}

impl Page {
    /// The first `limit` drawers.
    pub fn first(limit: usize) -> Self {
        Page { offset: 0, limit }
    }
}

/// Storage of drawers and their vectors.
///
/// Implementations translate; policy (ids, duplicate checks, result shaping, validation of
/// names) lives in [`crate::Palace`]. Every implementation must pass the conformance suite
/// (`mempalace-conformance`). Contract highlights:
/// - `upsert` replaces a drawer with the same id; a vector whose length differs from
///   [`VectorStore::dimension`] is a [`crate::PalaceError::DimensionMismatch`] and nothing of
///   the batch is written.
/// - `query` filters inside the backend (never after the fact), returns at most `limit`
///   neighbours ordered by ascending distance, ties broken by ascending id.
/// - `lexical_query` finds drawers by the words of their text ([`crate::lexical`] terms:
///   case-insensitive, Unicode), inside the backend's own full-text index, filtered inside the
///   backend too; drawers sharing no term with the query are not returned.
/// - `list` orders by id so that paging is stable.
#[async_trait]
pub trait VectorStore: Send + Sync {
    /// A short backend name for errors and status, e.g. "memory", "lancedb", "qdrant".
    fn backend_name(&self) -> &'static str;

    /// The vector dimension this store holds.
    fn dimension(&self) -> usize;

    /// Whether the store's table/collection exists (the palace has been initialised).
    async fn exists(&self) -> Result<bool>;

    /// Creates the table/collection if missing (idempotent).
    async fn create_if_missing(&self) -> Result<()>;

    /// Inserts or replaces drawers with their vectors (`drawers[i]` goes with `vectors[i]`).
    async fn upsert(&self, drawers: &[Drawer], vectors: &[Vec<f32>]) -> Result<()>;

    /// Files drawers whose ids are new to the store and to each other, as
    /// [`crate::Palace::add_drawer`]'s are (a fresh id, written under the palace write lock
    /// after the duplicate check). A store may then skip the look-up for existing ids that an
    /// upsert makes; the default is [`VectorStore::upsert`].
    async fn insert_new(&self, drawers: &[Drawer], vectors: &[Vec<f32>]) -> Result<()> {
        self.upsert(drawers, vectors).await
    }

    /// The `limit` nearest drawers to `vector` by cosine distance, within `filter`.
    async fn query(
        &self,
        vector: &[f32],
        filter: &DrawerFilter,
        limit: usize,
    ) -> Result<Vec<Neighbour>>;

    /// The ids and distances of the `limit` nearest drawers, the ones [`VectorStore::query`]
    /// finds and in its order, without reading their text or metadata: the duplicate check's
    /// first look, which reads drawers only when one is close enough. The default runs
    /// `query`; a store that can leave the other columns unread overrides it.
    async fn nearest_ids(
        &self,
        vector: &[f32],
        filter: &DrawerFilter,
        limit: usize,
    ) -> Result<Vec<NeighbourId>> {
        Ok(self
            .query(vector, filter, limit)
            .await?
            .into_iter()
            .map(|n| NeighbourId {
                id: n.drawer.id,
                distance: n.distance,
            })
            .collect())
    }

    /// The `limit` drawers within `filter` whose text best matches `text` by BM25 (or the
    /// backend's equivalent), best first, ties broken by ascending id.
    async fn lexical_query(
        &self,
        text: &str,
        filter: &DrawerFilter,
        limit: usize,
    ) -> Result<Vec<LexicalHit>>;

    /// The drawers with these ids (missing ids are skipped), in the order of `ids`.
    async fn get(&self, ids: &[String]) -> Result<Vec<Drawer>>;

    /// Deletes drawers by id; returns how many existed.
    async fn delete(&self, ids: &[String]) -> Result<usize>;

    /// The stored vectors of these drawers, as `(id, vector)` in the order of `ids` (missing
    /// ids are skipped): what `rooms apply` compares, without embedding again. The default
    /// refuses; a backend that can read its vectors back overrides it.
    async fn vectors(&self, ids: &[String]) -> Result<Vec<(String, Vec<f32>)>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        Err(PalaceError::store(
            self.backend_name(),
            "vectors",
            "this backend cannot read stored vectors back",
        ))
    }

    /// Moves drawers to new wings and rooms, keeping their text, vector and other metadata
    /// (no re-embedding); ids not stored are skipped. Returns how many drawers it moved. The
    /// default refuses: a backend that can rewrite a row's wing and room in place overrides it.
    async fn relocate(&self, moves: &[DrawerMove]) -> Result<usize> {
        if moves.is_empty() {
            return Ok(0);
        }
        Err(PalaceError::store(
            self.backend_name(),
            "relocate",
            "this backend cannot move drawers between wings or rooms",
        ))
    }

    /// Number of drawers matching `filter`.
    async fn count(&self, filter: &DrawerFilter) -> Result<u64>;

    /// Drawer counts per (wing, room), aggregated by the backend, sorted by wing then room.
    async fn room_counts(&self, filter: &DrawerFilter) -> Result<Vec<RoomCount>>;

    /// Drawers matching `filter`, ordered by id, one page at a time.
    async fn list(&self, filter: &DrawerFilter, page: Page) -> Result<Vec<Drawer>>;

    /// The `limit` most recently filed drawers matching `filter`, newest first (ties by id).
    /// The default pages through [`VectorStore::list`] keeping only the newest; a backend
    /// that can order by filing time itself should answer directly.
    async fn recent(&self, filter: &DrawerFilter, limit: usize) -> Result<Vec<Drawer>> {
        use std::cmp::Reverse;
        use std::collections::BinaryHeap;
        /// Drawers read per page.
        const PAGE: usize = 1000;
        if limit == 0 {
            return Ok(Vec::new());
        }
        let mut newest: BinaryHeap<Reverse<(String, Reverse<String>, usize)>> = BinaryHeap::new();
        let mut kept: std::collections::HashMap<usize, Drawer> = Default::default();
        let (mut offset, mut seq) = (0, 0usize);
        loop {
            let page = self
                .list(
                    filter,
                    Page {
                        offset,
                        limit: PAGE,
                    },
                )
                .await?;
            let done = page.len() < PAGE;
            offset += page.len();
            for d in page {
                newest.push(Reverse((
                    d.metadata.filed_at.clone(),
                    Reverse(d.id.clone()),
                    seq,
                )));
                kept.insert(seq, d);
                seq += 1;
                if newest.len() > limit
                    && let Some(Reverse((_, _, dropped))) = newest.pop()
                {
                    kept.remove(&dropped);
                }
            }
            if done {
                break;
            }
        }
        let mut order: Vec<(String, Reverse<String>, usize)> =
            newest.into_iter().map(|Reverse(k)| k).collect();
        order.sort_by(|a, b| b.cmp(a));
        Ok(order
            .into_iter()
            .filter_map(|(_, _, i)| kept.remove(&i))
            .collect())
    }

    /// Brings upkeep that writes defer up to date (compaction, an index now due by size), so
    /// the next reads are fast; called after bulk filing. A no-op where nothing is deferred.
    async fn settle(&self) -> Result<()> {
        Ok(())
    }

    /// Builds the store's indexes again from its rows (`repair`), so an index whose files
    /// were lost or damaged answers again. Where the server keeps its own indexes, as
    /// [`VectorStore::settle`].
    async fn rebuild_indexes(&self) -> Result<()> {
        self.settle().await
    }

    /// Writes a consistent copy of the drawers as they are now into the palace folder
    /// `palace_dir`, in the store's own layout there (`backup`); `false` when nothing is stored
    /// yet. The default refuses ([`PalaceError::no_snapshot`]): a server's data is copied with
    /// export.
    async fn snapshot_into(&self, palace_dir: &std::path::Path) -> Result<bool> {
        let _ = palace_dir;
        Err(PalaceError::no_snapshot(self.backend_name()))
    }

    /// Rows, indexes and what they do not cover yet, read without changing anything
    /// (`repair-status`). The default counts rows and names no index.
    async fn health(&self) -> Result<crate::store_health::StoreHealth> {
        Ok(crate::store_health::StoreHealth {
            backend: self.backend_name().to_string(),
            rows: self.count(&DrawerFilter::default()).await?,
            ..Default::default()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{AddedBy, DrawerMetadata};

    fn n(id: &str, distance: f32) -> Neighbour {
        Neighbour {
            drawer: Drawer {
                id: id.into(),
                text: String::new(),
                metadata: DrawerMetadata {
                    wing: "w".into(),
                    room: "r".into(),
                    source_file: String::new(),
                    chunk_index: 0,
                    added_by: AddedBy::Mcp,
                    filed_at: String::new(),
                    authored_at: None,
                    conversation: None,
                    entities: Vec::new(),
                },
            },
            distance,
        }
    }

    #[test]
    fn neighbours_are_sorted_by_distance_then_id_and_truncated() {
        let mut v = vec![
            n("c", 0.5),
            n("b", 0.1),
            n("a", 0.5),
            n("d", 0.0),
            n("e", 0.9),
        ];
        let mut ids: Vec<NeighbourId> = v
            .iter()
            .map(|x| NeighbourId {
                id: x.drawer.id.clone(),
                distance: x.distance,
            })
            .collect();
        rank_neighbours(&mut v, 4);
        let order: Vec<_> = v.iter().map(|x| x.drawer.id.as_str()).collect();
        assert_eq!(order, ["d", "b", "a", "c"]);
        rank_neighbours(&mut v, 10);
        assert_eq!(v.len(), 4);
        rank_neighbours(&mut v, 0);
        assert!(v.is_empty());
        rank_neighbour_ids(&mut ids, 4);
        let order: Vec<_> = ids.iter().map(|x| x.id.as_str()).collect();
        assert_eq!(order, ["d", "b", "a", "c"], "the same order for ids alone");
    }
}
