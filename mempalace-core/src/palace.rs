//! `Palace`: the service that implements MemPalace's behaviour once, over any backends.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::closets::MemoryClosets;
use crate::closets::{
    CLOSET_SCAN_CAP, Closet, ClosetIndex, ClosetMatch, ClosetScope, best_passage, closet_matches,
    closet_search_words, drop_repeated_closet_passages,
};
use crate::coordination::{Coordination, CoordinationLog, MemoryCoordinationLog};
use crate::drawer::{AddedBy, Drawer, DrawerMetadata};
use crate::drawer_chunks::{chunk_id, parent_of, split_content};
use crate::drawer_id::agent_drawer_id;
use crate::embedder::Embedder;
use crate::error::{PalaceError, Result};
use crate::filter::DrawerFilter;
use crate::knowledge_graph::{Direction, KnowledgeGraph, NewTriple, Supersede};
use crate::lexical::bm25_over;
use crate::palace_links::{MemoryLinks, PalaceLinks};
use crate::protocol::{AAAK_SPEC, PALACE_PROTOCOL};
use crate::reports::*;
use crate::retrieval::{
    Candidate, CandidateSource, Fusion, Ranked, SearchMode, SearchRequest, filing_bound, fuse,
    union,
};
use crate::similarity::{cosine_distance, similarity_from_distance};
use crate::temporal::{now_iso, today};
use crate::validation::{
    clamp_limit, validate_content, validate_name, validate_offset, validate_query,
    validate_source_file, validate_threshold,
};
use crate::vector_store::{Page, RoomCount, VectorStore};
use crate::write_lock::{FileWriteLock, WriteLock};

mod aaak_ops;
mod audit_ops;
mod backup_ops;
mod checkpoint;
mod conversation_filing;
mod coordination_ops;
mod cross_host_dedup;
mod drawer_batches;
mod drawer_moves;
mod drawer_update;
mod entity_links;
mod export_ops;
mod graph_ops;
mod health_ops;
mod mining_support;
mod reconnect;
mod room_reclassify;
mod sidecar_adoption;
mod source_cleanup;
mod verify_ops;
mod wake_up_ops;
mod wing_names;

pub use aaak_ops::{CompressReport, CompressedDrawer, ENTITY_CODES_FILE};
pub use backup_ops::BackupReport;
pub use checkpoint::{Checkpoint, CheckpointDiary, CheckpointItem, CheckpointReport};
pub use conversation_filing::ConversationsFiled;
pub use coordination_ops::{MeshPeers, MeshReplica};
use cross_host_dedup::AfterWrite;
pub use cross_host_dedup::DEFAULT_SETTLE;
pub use drawer_batches::{BULK_MAX_IDS, DrawerBatch, DrawersDeleted};
pub use drawer_moves::DrawersMoved;
pub use drawer_update::{DrawerUpdate, DrawerUpdated};
pub use entity_links::{HallwayRebuild, ProposalOutcome, WingHallways};
pub use graph_ops::{HallwayDeleted, TunnelDeleted};
pub use reconnect::Reconnected;
pub use room_reclassify::RoomPlan;
pub use sidecar_adoption::SidecarsAdopted;
pub use source_cleanup::{SourceDeletion, SyncReport, SyncRequest};
pub use wing_names::{WingNameMigration, WingRename};

/// The default duplicate threshold of `add_drawer` and `check_duplicate`.
pub const DUPLICATE_THRESHOLD: f64 = 0.9;
/// Name of the lock file inside the palace folder.
pub const WRITE_LOCK_FILE: &str = crate::PalaceLayout::WRITE_LOCK;

/// Bounds on what one call may ask for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PalaceLimits {
    /// Largest `limit` a search honours (larger ones are capped).
    pub max_search_results: usize,
    /// Largest page a listing or timeline returns.
    pub max_page: usize,
    /// How many nearest drawers the duplicate check inspects.
    pub duplicate_candidates: usize,
    /// Deepest offset a listing or timeline accepts (a deeper page sorts everything before it).
    pub max_offset: usize,
}

impl Default for PalaceLimits {
    fn default() -> Self {
        PalaceLimits {
            max_search_results: 100,
            max_page: 1000,
            duplicate_candidates: 5,
            max_offset: 100_000,
        }
    }
}

/// A drawer an agent wants to file.
#[derive(Debug, Clone, PartialEq)]
pub struct NewDrawer {
    /// Wing to file under.
    pub wing: String,
    /// Room to file under.
    pub room: String,
    /// Verbatim content.
    pub content: String,
    /// Where the content came from, if anywhere.
    pub source_file: Option<String>,
    /// Who files it.
    pub added_by: AddedBy,
}

impl NewDrawer {
    /// A drawer filed by an agent, with no source file.
    pub fn new(
        wing: impl Into<String>,
        room: impl Into<String>,
        content: impl Into<String>,
    ) -> Self {
        NewDrawer {
            wing: wing.into(),
            room: room.into(),
            content: content.into(),
            source_file: None,
            added_by: AddedBy::Mcp,
        }
    }
}

/// What `list_drawers` lists: optional wing, room and filing-time window, and the page.
#[derive(Debug, Clone, PartialEq)]
pub struct DrawerListRequest {
    /// Only drawers in this wing.
    pub wing: Option<String>,
    /// Only drawers in this room.
    pub room: Option<String>,
    /// Only drawers filed at or after this ISO date or date-time.
    pub since: Option<String>,
    /// Only drawers filed before this ISO date or date-time.
    pub before: Option<String>,
    /// Which page.
    pub page: Page,
}

/// The palace: an embedder, a vector store and a knowledge graph behind one API.
///
/// Reads of a palace that was never initialised fail with [`PalaceError::NoPalace`] and create
/// nothing; [`Palace::init`] or the first write (`add_drawer`, `kg_add`, `diary_write`,
/// `file_mined`) creates it. Writes that check before they write take the palace's
/// [`WriteLock`] (by default a [`FileWriteLock`] in the palace folder, so they are atomic
/// across processes too).
pub struct Palace {
    path: PathBuf,
    embedder: Arc<dyn Embedder>,
    store: Arc<dyn VectorStore>,
    kg: Arc<dyn KnowledgeGraph>,
    write_lock: Arc<dyn WriteLock>,
    limits: PalaceLimits,
    fusion: Fusion,
    coordination: Coordination,
    links: Arc<dyn PalaceLinks>,
    closets: Arc<dyn ClosetIndex>,
    cross_host_settle: Option<std::time::Duration>,
    creation_record: Option<Arc<dyn crate::creation_record::CreationRecord>>,
    /// Whether this process has already had the creation record written.
    recorded: Arc<std::sync::atomic::AtomicBool>,
}

impl Palace {
    /// Assembles a palace; the embedder's and the store's dimensions must agree.
    pub fn new(
        path: impl Into<PathBuf>,
        embedder: Arc<dyn Embedder>,
        store: Arc<dyn VectorStore>,
        kg: Arc<dyn KnowledgeGraph>,
    ) -> Result<Self> {
        if embedder.dimension() != store.dimension() {
            return Err(PalaceError::DimensionMismatch {
                expected: store.dimension(),
                actual: embedder.dimension(),
                context: format!(
                    "embedder {} against the {} store",
                    embedder.model_name(),
                    store.backend_name()
                ),
            });
        }
        let path = path.into();
        let write_lock = Arc::new(FileWriteLock::new(path.join(WRITE_LOCK_FILE)));
        Ok(Palace {
            path,
            embedder,
            store,
            kg,
            write_lock,
            limits: PalaceLimits::default(),
            fusion: Fusion::default(),
            coordination: Coordination::new(Arc::new(MemoryCoordinationLog::new())),
            links: Arc::new(MemoryLinks::new()),
            closets: Arc::new(MemoryClosets::new()),
            cross_host_settle: None,
            creation_record: None,
            recorded: Arc::new(std::sync::atomic::AtomicBool::new(false)),
        })
    }

    /// Has `record` written down how this palace was assembled as soon as it is created (by
    /// [`Palace::init`] or its first write), so a later open without options assembles it
    /// alike.
    pub fn with_creation_record(
        mut self,
        record: Arc<dyn crate::creation_record::CreationRecord>,
    ) -> Self {
        self.creation_record = Some(record);
        self
    }

    /// Replaces the write lock (e.g. a [`crate::ProcessWriteLock`] for a palace with no folder).
    pub fn with_write_lock(mut self, lock: Arc<dyn WriteLock>) -> Self {
        self.write_lock = lock;
        self
    }

    /// Keeps the agents' coordination log (events and artifacts) in `log` instead of in
    /// memory (e.g. `mempalace-coord-sqlite`'s file in the palace folder).
    pub fn with_coordination_log(mut self, log: Arc<dyn CoordinationLog>) -> Self {
        self.coordination = Coordination::new(log);
        self
    }

    /// Keeps the palace graph's explicit tunnels and hallways in `links` instead of in memory
    /// (e.g. `mempalace-links-json`'s files in the palace folder).
    pub fn with_links(mut self, links: Arc<dyn PalaceLinks>) -> Self {
        self.links = links;
        self
    }

    /// Keeps the palace's closets (MemPalace 3.11's pointer index, brought by a migration) in
    /// `closets` instead of in memory (e.g. `mempalace-closets-sqlite`'s file in the palace
    /// folder).
    pub fn with_closets(mut self, closets: Arc<dyn ClosetIndex>) -> Self {
        self.closets = closets;
        self
    }

    /// Keeps duplicates out of a store that other hosts write too (one Qdrant collection for
    /// a fleet), where the write lock, a file on this host, does not reach: after filing,
    /// `add_drawer` looks again, now and after `settle`, and withdraws its drawer when an
    /// earlier near-identical one exists (see `palace::cross_host_dedup`). `settle` must exceed
    /// the time from a drawer's stamp to its visibility on another host, clock skew included.
    pub fn with_cross_host_dedup(mut self, settle: std::time::Duration) -> Self {
        self.cross_host_settle = Some(settle);
        self
    }

    /// Replaces the call limits.
    pub fn with_limits(mut self, limits: PalaceLimits) -> Self {
        self.limits = limits;
        self
    }

    /// Replaces how hybrid search weighs its two channels.
    pub fn with_fusion(mut self, fusion: Fusion) -> Self {
        self.fusion = fusion;
        self
    }

    /// The palace folder.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The embedder.
    pub fn embedder(&self) -> &Arc<dyn Embedder> {
        &self.embedder
    }

    /// The vector store.
    pub fn store(&self) -> &Arc<dyn VectorStore> {
        &self.store
    }

    /// The knowledge graph.
    pub fn knowledge_graph(&self) -> &Arc<dyn KnowledgeGraph> {
        &self.kg
    }

    /// The call limits in force.
    pub fn limits(&self) -> PalaceLimits {
        self.limits
    }

    /// Whether the palace has been initialised.
    pub async fn is_initialised(&self) -> Result<bool> {
        self.store.exists().await
    }

    /// Creates the palace (store and graph) if missing; idempotent.
    pub async fn init(&self) -> Result<()> {
        self.create_if_missing().await
    }

    async fn require_palace(&self) -> Result<()> {
        if self.store.exists().await? {
            Ok(())
        } else {
            Err(PalaceError::NoPalace {
                palace_path: self.path.clone(),
            })
        }
    }

    /// Overview: drawer counts per wing and room, the protocol and the AAAK spec; the
    /// no-palace payload when the palace does not exist.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn status(&self) -> Result<Status> {
        if !self.store.exists().await? {
            return Ok(Status::NoPalace(NoPalaceReport::new(&self.path)));
        }
        let counts = self.store.room_counts(&DrawerFilter::all()).await?;
        let mut wings = BTreeMap::new();
        let mut rooms = BTreeMap::new();
        for c in &counts {
            *wings.entry(c.wing.clone()).or_insert(0) += c.count;
            *rooms.entry(c.room.clone()).or_insert(0) += c.count;
        }
        Ok(Status::Ready(StatusReport {
            total_drawers: counts.iter().map(|c| c.count).sum(),
            wings,
            rooms,
            palace_path: self.path.display().to_string(),
            protocol: PALACE_PROTOCOL.to_string(),
            aaak_dialect: AAAK_SPEC.to_string(),
        }))
    }

    /// Embeds several texts in one call, checking each vector's dimension.
    #[tracing::instrument(level = "debug", skip_all, fields(texts = texts.len()))]
    async fn embed_all(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
        let vectors = self.embedder.embed(texts).await?;
        if vectors.len() != texts.len() {
            return Err(PalaceError::Embedder(format!(
                "the embedder returned {} vectors for {} texts",
                vectors.len(),
                texts.len()
            )));
        }
        for v in &vectors {
            if v.len() != self.store.dimension() {
                return Err(PalaceError::DimensionMismatch {
                    expected: self.store.dimension(),
                    actual: v.len(),
                    context: format!("vector from {}", self.embedder.model_name()),
                });
            }
        }
        Ok(vectors)
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn embed_one(&self, text: &str) -> Result<Vec<f32>> {
        self.embed_all(&[text.to_string()])
            .await?
            .pop()
            .ok_or_else(|| PalaceError::Embedder("the embedder returned no vector".into()))
    }

    fn search_filter(wing: Option<&str>, room: Option<&str>) -> Result<DrawerFilter> {
        let mut filter = DrawerFilter::all();
        if let Some(w) = wing {
            validate_name("wing", w)?;
            filter.wing = Some(w.to_string());
        }
        if let Some(r) = room {
            validate_name("room", r)?;
            filter.room = Some(r.to_string());
        }
        Ok(filter)
    }

    /// Search, optionally within a wing and/or room; at most `limit` hits (capped at
    /// [`PalaceLimits::max_search_results`]). Hybrid: see [`Palace::search_with`].
    pub async fn search(
        &self,
        query: &str,
        wing: Option<&str>,
        room: Option<&str>,
        limit: usize,
    ) -> Result<SearchResponse> {
        let mut request = SearchRequest::new(query).limit(limit);
        request.wing = wing.map(str::to_string);
        request.room = room.map(str::to_string);
        self.search_with(&request).await
    }

    /// Runs a [`SearchRequest`]: the vector channel (nearest by meaning), the lexical channel
    /// (best by words), or both fused ([`crate::retrieval`]). Every filter is pushed down into
    /// the store. A wing or room that holds no drawer at all is an error naming the ones that
    /// exist, so a typo is not mistaken for "nothing found". Hits with identical text are
    /// folded into the first (`also_in`).
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn search_with(&self, request: &SearchRequest) -> Result<SearchResponse> {
        let query = request.query.as_str();
        validate_query(query)?;
        let limit = clamp_limit(request.limit, self.limits.max_search_results)?;
        let mut filter = Self::search_filter(request.wing.as_deref(), request.room.as_deref())?;
        if let Some(source) = &request.source_file {
            validate_source_file(source)?;
            filter.source_file = Some(source.clone());
        }
        let since = request
            .since
            .as_deref()
            .map(|v| filing_bound("since", v))
            .transpose()?;
        let before = request
            .before
            .as_deref()
            .map(|v| filing_bound("before", v))
            .transpose()?;
        if let (Some(s), Some(b)) = (&since, &before)
            && s >= b
        {
            return Err(PalaceError::invalid(
                "since",
                format!("since ({s}) must be earlier than before ({b})"),
            ));
        }
        filter = filter.filed_between(since.clone(), before.clone());
        if let Some(max) = request.max_distance
            && !(0.0..=2.0).contains(&max)
        {
            return Err(PalaceError::invalid(
                "max_distance",
                format!("{max} is outside [0, 2]"),
            ));
        }
        self.require_palace().await?;

        let fusion = self.fusion;
        let mut closet_lifts: HashMap<String, ClosetMatch> = HashMap::new();
        let ranked: Vec<Ranked> = match request.mode {
            SearchMode::Vector => {
                let vector = self.embed_one(query).await?;
                let neighbours = self.store.query(&vector, &filter, limit).await?;
                let texts: Vec<&str> = neighbours.iter().map(|n| n.drawer.text.as_str()).collect();
                let bm25 = bm25_over(query, &texts, fusion.terms);
                neighbours
                    .into_iter()
                    .zip(bm25)
                    .map(|(n, bm25)| Ranked {
                        score: (1.0 - f64::from(n.distance)).max(0.0),
                        bm25,
                        candidate: Candidate {
                            drawer: n.drawer,
                            distance: Some(n.distance),
                            by_vector: true,
                            by_lexical: false,
                        },
                    })
                    .collect()
            }
            SearchMode::Lexical => {
                let hits = self.store.lexical_query(query, &filter, limit).await?;
                let vector = if hits.is_empty() {
                    Vec::new()
                } else {
                    self.embed_one(query).await?
                };
                let missing: Vec<String> = hits
                    .iter()
                    .filter(|h| h.vector.is_none())
                    .map(|h| h.drawer.id.clone())
                    .collect();
                let distances = self.distances_of(&vector, &filter, missing).await?;
                hits.into_iter()
                    .map(|h| Ranked {
                        score: f64::from(h.score),
                        bm25: f64::from(h.score),
                        candidate: Candidate {
                            distance: match &h.vector {
                                Some(v) => Some(cosine_distance(&vector, v)),
                                None => distances.get(&h.drawer.id).copied(),
                            },
                            drawer: h.drawer,
                            by_vector: false,
                            by_lexical: true,
                        },
                    })
                    .collect()
            }
            SearchMode::Hybrid => {
                let wanted = fusion.candidates_for(limit);
                // The words need no embedding: the lexical channel runs while the query is
                // embedded and the vector channel searched.
                let vector_channel = async {
                    let vector = self.embed_one(query).await?;
                    let neighbours = self.store.query(&vector, &filter, wanted).await?;
                    Ok::<_, PalaceError>((vector, neighbours))
                };
                let lexical_channel = async {
                    match request.candidates.unwrap_or(fusion.candidates) {
                        CandidateSource::Union => {
                            self.store.lexical_query(query, &filter, wanted).await
                        }
                        CandidateSource::Vector => Ok(Vec::new()),
                    }
                };
                let (vector_side, lexical) = tokio::join!(vector_channel, lexical_channel);
                let (vector, neighbours) = vector_side?;
                let (mut candidates, missing) = union(
                    neighbours
                        .into_iter()
                        .map(|n| (n.drawer, n.distance))
                        .collect(),
                    lexical?
                        .into_iter()
                        .map(|h| {
                            let distance = h.vector.as_deref().map(|v| cosine_distance(&vector, v));
                            (h.drawer, distance)
                        })
                        .collect(),
                );
                let distances = self.distances_of(&vector, &filter, missing).await?;
                for c in &mut candidates {
                    if c.distance.is_none() {
                        c.distance = distances.get(&c.drawer.id).copied();
                    }
                }
                if fusion.closet_boost {
                    // Closets are a signal, never a gate: without them (as in 3.11) the
                    // search goes on with the drawers alone.
                    closet_lifts = match self.closet_matches_for(query, &filter, limit).await {
                        Ok(lifts) => lifts,
                        Err(e) => {
                            tracing::warn!(error = %e, "closets unavailable; searching without them");
                            HashMap::new()
                        }
                    };
                    if !closet_lifts.is_empty() {
                        candidates = self
                            .show_closet_passages(query, candidates, &closet_lifts)
                            .await?;
                    }
                }
                let ranked = fuse(query, candidates, &fusion);
                if closet_lifts.is_empty() {
                    ranked
                } else {
                    let through: std::collections::HashSet<String> = ranked
                        .iter()
                        .filter(|r| {
                            closet_lifts.contains_key(&r.candidate.drawer.metadata.source_file)
                        })
                        .map(|r| r.candidate.drawer.id.clone())
                        .collect();
                    drop_repeated_closet_passages(ranked, &through)
                }
            }
        };
        let ranked: Vec<Ranked> = ranked
            .into_iter()
            .filter(|r| match (request.max_distance, r.candidate.distance) {
                (Some(max), Some(d)) => f64::from(d) <= max,
                (Some(_), None) => false,
                (None, _) => true,
            })
            .collect();
        let results = fold_identical_texts(ranked, limit, &closet_lifts);
        if results.is_empty() {
            self.check_known(request.wing.as_deref(), request.room.as_deref())
                .await?;
        }
        Ok(SearchResponse {
            query: query.to_string(),
            mode: request.mode.as_str().to_string(),
            filters: SearchFilters {
                wing: request.wing.clone(),
                room: request.room.clone(),
                source_file: request.source_file.clone(),
                since,
                before,
            },
            results,
        })
    }

    /// Which files' closets lift their drawers in a search of `limit` hits within `filter`.
    #[tracing::instrument(level = "debug", skip_all)]
    async fn closet_matches_for(
        &self,
        query: &str,
        filter: &DrawerFilter,
        limit: usize,
    ) -> Result<HashMap<String, ClosetMatch>> {
        let words = closet_search_words(query);
        if words.is_empty() {
            return Ok(HashMap::new());
        }
        let closets = self
            .closets
            .containing_any(&words, &ClosetScope::of(filter), CLOSET_SCAN_CAP.max(limit))
            .await?;
        Ok(closet_matches(query, &closets, limit))
    }

    /// Shows each lifted candidate's file through its best passage. (3.11 also orders its
    /// candidates by distance less the boost before its re-rank; with every candidate kept
    /// and the re-rank's ties broken by distance and id, that order changes nothing here.)
    #[tracing::instrument(level = "debug", skip_all)]
    async fn show_closet_passages(
        &self,
        query: &str,
        mut candidates: Vec<Candidate>,
        lifts: &HashMap<String, ClosetMatch>,
    ) -> Result<Vec<Candidate>> {
        let mut passages: HashMap<String, Option<String>> = HashMap::new();
        for c in &mut candidates {
            let source = &c.drawer.metadata.source_file;
            if !lifts.contains_key(source) {
                continue;
            }
            if !passages.contains_key(source) {
                let mut chunks: Vec<Drawer> = Vec::new();
                self.scan(&DrawerFilter::all().with_source_file(source.clone()), |d| {
                    chunks.push(d)
                })
                .await?;
                let indexed: Vec<(u32, &str)> = chunks
                    .iter()
                    .map(|d| (d.metadata.chunk_index, d.text.as_str()))
                    .collect();
                passages.insert(source.clone(), best_passage(query, &indexed));
            }
            if let Some(Some(passage)) = passages.get(source) {
                c.drawer.text = passage.clone();
            }
        }
        Ok(candidates)
    }

    /// Files MemPalace 3.11's closets brought by a migration, replacing any with the same id.
    pub async fn import_closets(&self, closets: &[Closet]) -> Result<usize> {
        for c in closets {
            crate::validation::validate_closet(c)?;
        }
        let _guard = self.write_lock.acquire().await?;
        self.closets.upsert(closets).await?;
        Ok(closets.len())
    }

    /// Number of closets in the palace.
    pub async fn closet_count(&self) -> Result<u64> {
        self.closets.count().await
    }

    /// Cosine distances of the query vector to these drawers (those still within `filter`),
    /// read from the store.
    #[tracing::instrument(level = "debug", skip_all)]
    async fn distances_of(
        &self,
        vector: &[f32],
        filter: &DrawerFilter,
        ids: Vec<String>,
    ) -> Result<std::collections::HashMap<String, f32>> {
        if ids.is_empty() {
            return Ok(Default::default());
        }
        let n = ids.len();
        Ok(self
            .store
            .query(vector, &filter.clone().with_ids(ids), n)
            .await?
            .into_iter()
            .map(|n| (n.drawer.id, n.distance))
            .collect())
    }

    /// Errors when a named wing or room holds no drawers.
    async fn check_known(&self, wing: Option<&str>, room: Option<&str>) -> Result<()> {
        let counts = self.store.room_counts(&DrawerFilter::all()).await?;
        if let Some(w) = wing
            && !counts.iter().any(|c| c.wing == w)
        {
            return Err(PalaceError::UnknownWing {
                wing: w.to_string(),
                known: distinct(counts.iter().map(|c| c.wing.as_str())),
            });
        }
        if let Some(r) = room
            && !counts.iter().any(|c| c.room == r)
        {
            return Err(PalaceError::UnknownRoom {
                room: r.to_string(),
                known: distinct(counts.iter().map(|c| c.room.as_str())),
            });
        }
        Ok(())
    }

    /// The drawers whose similarity to `content` is at least `threshold` (MemPalace inspects the
    /// 5 nearest).
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn check_duplicate(&self, content: &str, threshold: f64) -> Result<DuplicateCheck> {
        validate_content(content)?;
        validate_threshold(threshold)?;
        self.require_palace().await?;
        let vector = self.embed_one(content).await?;
        self.duplicates_of(&vector, threshold).await
    }

    /// The drawers at `threshold` similarity or more among the nearest few: ids and distances
    /// first, then the drawers themselves only when one is that close (rarely).
    async fn duplicates_of(&self, vector: &[f32], threshold: f64) -> Result<DuplicateCheck> {
        let close: Vec<(String, f64)> = self
            .store
            .nearest_ids(
                vector,
                &DrawerFilter::all(),
                self.limits.duplicate_candidates,
            )
            .await?
            .into_iter()
            .map(|n| (n.id, similarity_from_distance(n.distance)))
            .filter(|(_, similarity)| *similarity >= threshold)
            .collect();
        if close.is_empty() {
            return Ok(DuplicateCheck {
                is_duplicate: false,
                matches: Vec::new(),
            });
        }
        let ids: Vec<String> = close.iter().map(|(id, _)| id.clone()).collect();
        let mut drawers: HashMap<String, Drawer> = self
            .store
            .get(&ids)
            .await?
            .into_iter()
            .map(|d| (d.id.clone(), d))
            .collect();
        // A drawer deleted between the two reads is no longer a duplicate.
        let matches: Vec<DuplicateMatch> = close
            .into_iter()
            .filter_map(|(id, similarity)| {
                let d = drawers.remove(&id)?;
                Some(DuplicateMatch {
                    id: d.id,
                    wing: d.metadata.wing,
                    room: d.metadata.room,
                    similarity,
                    content: preview(&d.text, 200),
                })
            })
            .collect();
        Ok(DuplicateCheck {
            is_duplicate: !matches.is_empty(),
            matches,
        })
    }

    /// Files a drawer unless a semantic duplicate (similarity ≥ 0.9) exists. The check and the
    /// write happen under the palace write lock, so concurrent adds of the same content
    /// (from tasks or processes) store it once.
    ///
    /// Content longer than one chunk is filed as several chunk drawers (see
    /// [`crate::drawer_chunks`]), so every part of it is searchable by meaning; the returned id
    /// names the whole for [`Palace::get_drawer`], [`Palace::delete_drawer`] and search.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn add_drawer(&self, new: NewDrawer) -> Result<AddDrawerOutcome> {
        validate_name("wing", &new.wing)?;
        validate_name("room", &new.room)?;
        validate_content(&new.content)?;
        let source_file = new.source_file.unwrap_or_default();
        validate_source_file(&source_file)?;
        let pieces = split_content(&new.content);
        let vectors = self.embed_all(&pieces).await?;
        // On a shared store a round can end with this drawer withdrawn for an earlier one
        // that has gone too (near-duplicates are not transitive): then it is filed again.
        let mut rounds = 0;
        let (drawer_id, drawers) = loop {
            rounds += 1;
            let checked_at = std::time::Instant::now();
            let mut looks = 0;
            let guard = loop {
                let guard = self.write_lock.acquire().await?;
                self.create_if_missing().await?;
                // Long content: the first piece stands for it, as the whole content's
                // embedding (which only sees the first 256 tokens) did before.
                let duplicates = self.duplicates_of(&vectors[0], DUPLICATE_THRESHOLD).await?;
                if !duplicates.is_duplicate {
                    break guard;
                }
                let Some(settle) = self.cross_host_settle else {
                    return Ok(AddDrawerOutcome::Duplicate(DuplicateRefused {
                        success: false,
                        reason: "duplicate".into(),
                        matches: duplicates.matches,
                    }));
                };
                // On a shared store the drawer seen may be another host's that is about to
                // withdraw: name the ones that remain once the writers have settled; if none
                // does, look again (at most three times), then file.
                drop(guard);
                if let Some(refused) = self.remaining_duplicates(&vectors[0], settle).await? {
                    return Ok(AddDrawerOutcome::Duplicate(refused));
                }
                looks += 1;
                if looks == 3 {
                    break self.write_lock.acquire().await?;
                }
            };
            let filed_at = now_iso();
            let drawer_id = agent_drawer_id(&new.wing, &new.room, &new.content, &filed_at);
            let chunked = pieces.len() > 1;
            let drawers: Vec<Drawer> = pieces
                .iter()
                .enumerate()
                .map(|(i, text)| Drawer {
                    id: if chunked {
                        chunk_id(&drawer_id, i)
                    } else {
                        drawer_id.clone()
                    },
                    text: text.clone(),
                    metadata: DrawerMetadata {
                        wing: new.wing.clone(),
                        room: new.room.clone(),
                        source_file: source_file.clone(),
                        chunk_index: i as u32,
                        added_by: new.added_by,
                        filed_at: filed_at.clone(),
                        authored_at: None,
                        conversation: None,
                        entities: Vec::new(),
                    },
                })
                .collect();
            self.store.insert_new(&drawers, &vectors).await?;
            drop(guard);
            let Some(settle) = self.cross_host_settle else {
                break (drawer_id, drawers);
            };
            // Another host's write races this one about as long as this one took from its
            // check to its write; under load that can exceed the configured settle time.
            let settle = settle.max(checked_at.elapsed() * 2);
            match self
                .yield_to_earlier_duplicate(&vectors[0], &drawers, settle)
                .await?
            {
                AfterWrite::Stays => break (drawer_id, drawers),
                AfterWrite::Refused(refused) => return Ok(AddDrawerOutcome::Duplicate(refused)),
                AfterWrite::WithdrawnAlone if rounds < 3 => continue,
                AfterWrite::WithdrawnAlone => {
                    return Err(PalaceError::store(
                        self.store.backend_name(),
                        "add_drawer",
                        "the drawer kept yielding to near-duplicates that then went away; nothing was filed, try again",
                    ));
                }
            }
        };
        let chunked = drawers.len() > 1;
        Ok(AddDrawerOutcome::Added(DrawerAdded {
            success: true,
            drawer_id,
            wing: new.wing,
            room: new.room,
            chunks: drawers.len(),
            chunk_ids: if chunked {
                drawers.into_iter().map(|d| d.id).collect()
            } else {
                Vec::new()
            },
        }))
    }

    /// The drawers filed for one `add_drawer` call under `drawer_id`: the drawer itself, else
    /// its chunks in order (see [`crate::drawer_chunks`]); empty when there are none.
    async fn drawer_group(&self, drawer_id: &str) -> Result<Vec<Drawer>> {
        if let Some(d) = self.store.get(&[drawer_id.to_string()]).await?.pop() {
            return Ok(vec![d]);
        }
        /// Chunk ids asked for per store round trip.
        const PROBE: usize = 256;
        let mut chunks: Vec<Drawer> = Vec::new();
        loop {
            let from = chunks.len();
            let ids: Vec<String> = (from..from + PROBE)
                .map(|i| chunk_id(drawer_id, i))
                .collect();
            let mut found = self.store.get(&ids).await?;
            let complete = found.len() == PROBE;
            found.sort_by_key(|d| d.metadata.chunk_index);
            chunks.extend(found);
            if !complete {
                return Ok(chunks);
            }
        }
    }

    async fn create_if_missing(&self) -> Result<()> {
        self.store.create_if_missing().await?;
        self.kg.create_if_missing().await?;
        self.write_creation_record()
    }

    /// Writes the creation record once per process (see [`Palace::with_creation_record`]).
    fn write_creation_record(&self) -> Result<()> {
        use std::sync::atomic::Ordering;
        if let Some(record) = &self.creation_record
            && !self.recorded.load(Ordering::Acquire)
        {
            record.record()?;
            self.recorded.store(true, Ordering::Release);
        }
        Ok(())
    }

    /// Files a batch of mined chunks with their vectors, without the duplicate check (mined
    /// ids are deterministic, so re-filing replaces), and deletes `stale_ids` (chunks of the
    /// same files that no longer exist). Takes the write lock for this batch only.
    pub async fn file_mined(
        &self,
        drawers: &[Drawer],
        vectors: &[Vec<f32>],
        stale_ids: &[String],
    ) -> Result<()> {
        for d in drawers {
            validate_name("wing", &d.metadata.wing)?;
            validate_name("room", &d.metadata.room)?;
            validate_content(&d.text)?;
            validate_source_file(&d.metadata.source_file)?;
        }
        let _guard = self.write_lock.acquire().await?;
        self.create_if_missing().await?;
        // A closet (3.11's, from a migration) points at the drawers the file had then: the
        // closets of every file re-filed here, or losing chunks, go.
        let mut sources: Vec<String> = drawers
            .iter()
            .map(|d| d.metadata.source_file.clone())
            .collect();
        if !stale_ids.is_empty() && self.closets.count().await? > 0 {
            sources.extend(
                self.store
                    .get(stale_ids)
                    .await?
                    .into_iter()
                    .map(|d| d.metadata.source_file),
            );
        }
        sources.retain(|s| !s.is_empty());
        if !drawers.is_empty() {
            self.store.upsert(drawers, vectors).await?;
        }
        if !stale_ids.is_empty() {
            self.store.delete(stale_ids).await?;
        }
        sources.sort();
        sources.dedup();
        if !sources.is_empty() {
            self.closets.delete_for_sources(&sources).await?;
        }
        Ok(())
    }

    /// Files drawers brought from another palace (a MemPalace 3.11 migration) under their own
    /// ids and metadata, embedded here; drawers whose id is already stored are left as they
    /// are, so an interrupted import re-run finishes without duplicates. Every drawer is
    /// checked first: one bad drawer files none of the batch.
    pub async fn import_drawers(&self, drawers: &[Drawer]) -> Result<ImportedBatch> {
        let vectors = vec![None; drawers.len()];
        Ok(self.import_drawers_with_vectors(drawers, vectors).await?.0)
    }

    /// [`Palace::import_drawers`] with a vector for each drawer where one is known (from this
    /// palace's embedder; the others are embedded here); also returns how many were embedded.
    pub async fn import_drawers_with_vectors(
        &self,
        drawers: &[Drawer],
        vectors: Vec<Option<Vec<f32>>>,
    ) -> Result<(ImportedBatch, u64)> {
        if vectors.len() != drawers.len() {
            return Err(PalaceError::invalid(
                "vectors",
                format!("{} vectors for {} drawers", vectors.len(), drawers.len()),
            ));
        }
        let dimension = self.embedder.dimension();
        if let Some(v) = vectors.iter().flatten().find(|v| v.len() != dimension) {
            return Err(PalaceError::DimensionMismatch {
                expected: dimension,
                actual: v.len(),
                context: "an imported drawer's vector".into(),
            });
        }
        if vectors
            .iter()
            .flatten()
            .any(|v| v.iter().any(|x| !x.is_finite()) || v.iter().all(|x| *x == 0.0))
        {
            return Err(PalaceError::invalid(
                "vector",
                "an imported drawer's vector is not finite or is all zeros",
            ));
        }
        for d in drawers {
            crate::validation::validate_drawer(d)?;
        }
        let ids: Vec<String> = drawers.iter().map(|d| d.id.clone()).collect();
        let _guard = self.write_lock.acquire().await?;
        self.create_if_missing().await?;
        let present: std::collections::HashSet<String> = self
            .store
            .get(&ids)
            .await?
            .into_iter()
            .map(|d| d.id)
            .collect();
        let mut fresh: Vec<Drawer> = Vec::new();
        let mut fresh_vectors: Vec<Option<Vec<f32>>> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for (d, v) in drawers.iter().zip(vectors) {
            if !present.contains(&d.id) && seen.insert(d.id.clone()) {
                fresh.push(d.clone());
                fresh_vectors.push(v);
            }
        }
        let missing: Vec<usize> = (0..fresh.len())
            .filter(|&i| fresh_vectors[i].is_none())
            .collect();
        if !missing.is_empty() {
            let texts: Vec<String> = missing.iter().map(|&i| fresh[i].text.clone()).collect();
            for (i, v) in missing.iter().zip(self.embed_all(&texts).await?) {
                fresh_vectors[*i] = Some(v);
            }
        }
        if !fresh.is_empty() {
            let vectors: Vec<Vec<f32>> = fresh_vectors.into_iter().flatten().collect();
            self.store.upsert(&fresh, &vectors).await?;
        }
        Ok((
            ImportedBatch {
                imported: fresh.len() as u64,
                already_present: (drawers.len() - fresh.len()) as u64,
            },
            missing.len() as u64,
        ))
    }

    /// Finishes the store's deferred upkeep after bulk filing (e.g. the end of a mine): on
    /// LanceDB, compaction and the ANN index once the palace has grown past its threshold.
    /// Takes no write lock: other writers carry on meanwhile.
    pub async fn settle(&self) -> Result<()> {
        self.store.settle().await
    }

    /// One drawer in full.
    /// A drawer filed in chunks comes back whole, under the id `add_drawer` returned.
    pub async fn get_drawer(&self, drawer_id: &str) -> Result<DrawerView> {
        self.require_palace().await?;
        let group = self.drawer_group(drawer_id).await?;
        whole_drawer(drawer_id, group)
            .ok_or_else(|| PalaceError::DrawerNotFound(drawer_id.to_string()))
    }

    /// Drawers by wing and/or room, in id order, one page at a time.
    pub async fn list_drawers(
        &self,
        wing: Option<&str>,
        room: Option<&str>,
        page: Page,
    ) -> Result<DrawerListing> {
        self.list_drawers_with(&DrawerListRequest {
            wing: wing.map(str::to_string),
            room: room.map(str::to_string),
            since: None,
            before: None,
            page,
        })
        .await
    }

    /// Drawers by wing, room and filing time (`since` inclusive, `before` exclusive), in id
    /// order, one page at a time, with the total over all pages.
    pub async fn list_drawers_with(&self, request: &DrawerListRequest) -> Result<DrawerListing> {
        let page = request.page;
        let since = request
            .since
            .as_deref()
            .map(|v| filing_bound("since", v))
            .transpose()?;
        let before = request
            .before
            .as_deref()
            .map(|v| filing_bound("before", v))
            .transpose()?;
        if let (Some(s), Some(b)) = (&since, &before)
            && s >= b
        {
            return Err(PalaceError::invalid(
                "since",
                format!("since ({s}) must be earlier than before ({b})"),
            ));
        }
        let filter = Self::search_filter(request.wing.as_deref(), request.room.as_deref())?
            .filed_between(since, before);
        let limit = clamp_limit(page.limit, self.limits.max_page)?;
        validate_offset(page.offset, self.limits.max_offset)?;
        self.require_palace().await?;
        let total = self.store.count(&filter).await?;
        let drawers = self
            .store
            .list(
                &filter,
                Page {
                    offset: page.offset,
                    limit,
                },
            )
            .await?;
        let drawers: Vec<DrawerSummary> = drawers
            .into_iter()
            .map(|d| DrawerSummary {
                content_preview: preview(&d.text, 200),
                drawer_id: d.id,
                wing: d.metadata.wing,
                room: d.metadata.room,
                filed_at: d.metadata.filed_at,
            })
            .collect();
        Ok(DrawerListing {
            count: drawers.len(),
            total,
            drawers,
            offset: page.offset,
            limit,
        })
    }

    /// Deletes a drawer (facts citing it keep their source_closet: the deletion was on purpose).
    pub async fn delete_drawer(&self, drawer_id: &str) -> Result<DrawerDeleted> {
        self.require_palace().await?;
        let _guard = self.write_lock.acquire().await?;
        let ids: Vec<String> = self
            .drawer_group(drawer_id)
            .await?
            .into_iter()
            .map(|d| d.id)
            .collect();
        if ids.is_empty() {
            return Err(PalaceError::DrawerNotFound(drawer_id.to_string()));
        }
        match self.store.delete(&ids).await? {
            0 => Err(PalaceError::DrawerNotFound(drawer_id.to_string())),
            _ => Ok(DrawerDeleted {
                success: true,
                drawer_id: drawer_id.to_string(),
                chunks_deleted: ids.iter().filter(|id| parent_of(id).is_some()).count(),
                deleted_ids: ids,
            }),
        }
    }

    async fn room_counts(&self, filter: &DrawerFilter) -> Result<Vec<RoomCount>> {
        self.require_palace().await?;
        self.store.room_counts(filter).await
    }

    /// Drawer counts per wing.
    pub async fn list_wings(&self) -> Result<WingList> {
        let mut wings = BTreeMap::new();
        for c in self.room_counts(&DrawerFilter::all()).await? {
            *wings.entry(c.wing).or_insert(0) += c.count;
        }
        Ok(WingList { wings })
    }

    /// Drawer counts per room, in one wing or in all; an unknown wing is an error.
    pub async fn list_rooms(&self, wing: Option<&str>) -> Result<RoomList> {
        let filter = Self::search_filter(wing, None)?;
        let counts = self.room_counts(&filter).await?;
        if counts.is_empty() {
            self.check_known(wing, None).await?;
        }
        let mut rooms = BTreeMap::new();
        for c in counts {
            *rooms.entry(c.room).or_insert(0) += c.count;
        }
        Ok(RoomList {
            wing: wing.unwrap_or("all").to_string(),
            rooms,
        })
    }

    /// wing → room → drawer count.
    pub async fn taxonomy(&self) -> Result<Taxonomy> {
        let mut taxonomy: BTreeMap<String, BTreeMap<String, u64>> = BTreeMap::new();
        for c in self.room_counts(&DrawerFilter::all()).await? {
            taxonomy.entry(c.wing).or_default().insert(c.room, c.count);
        }
        Ok(Taxonomy { taxonomy })
    }

    /// Facts about an entity, optionally as of a date, in the given direction(s).
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn kg_query(
        &self,
        entity: &str,
        as_of: Option<&str>,
        direction: Direction,
    ) -> Result<KgQueryResult> {
        self.require_palace().await?;
        let entity = entity.trim();
        let as_of = as_of
            .map(|d| crate::temporal::canonical_date("as_of", d))
            .transpose()?;
        let facts = self
            .kg
            .query_entity(entity, as_of.as_deref(), direction)
            .await?;
        let (mut active, mut historical, mut future) = (Vec::new(), Vec::new(), Vec::new());
        if as_of.is_some() {
            active = facts.clone();
        } else {
            let now = chrono::Utc::now().format("%Y-%m-%dT%H:%M:%SZ").to_string();
            for f in &facts {
                match crate::temporal::interval_bucket(
                    f.valid_from.as_deref(),
                    f.valid_to.as_deref(),
                    &now,
                ) {
                    crate::temporal::Bucket::Future => future.push(f.clone()),
                    crate::temporal::Bucket::Historical => historical.push(f.clone()),
                    crate::temporal::Bucket::Active => active.push(f.clone()),
                }
            }
        }
        let mut result = KgQueryResult {
            entity: entity.to_string(),
            as_of,
            active_facts: active,
            historical_facts: historical,
            future_facts: future,
            count: facts.len(),
            facts,
            resolved_from: None,
            candidates: None,
        };
        if result.facts.is_empty() {
            let candidates = self.kg.entity_candidates(entity).await?;
            if !candidates.is_empty() {
                result.candidates = Some(candidates);
            }
        } else {
            // As 3.11: facts all about one other entity name say which name they resolved to.
            let names: std::collections::BTreeSet<&str> = result
                .facts
                .iter()
                .map(|f| match f.direction {
                    Some(Direction::Incoming) => f.object.as_str(),
                    _ => f.subject.as_str(),
                })
                .collect();
            if let [resolved] = names.into_iter().collect::<Vec<_>>().as_slice()
                && *resolved != entity
            {
                result.resolved_from = Some(entity.to_string());
                result.entity = resolved.to_string();
            }
        }
        Ok(result)
    }

    /// Adds a fact. A `source_closet` or `source_drawer_id` must name an existing drawer, so
    /// the graph never points at a drawer that is not there.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn kg_add(&self, triple: NewTriple) -> Result<KgAdded> {
        let triple = triple.validated()?;
        let _guard = self.write_lock.acquire().await?;
        self.create_if_missing().await?;
        for (field, drawer) in [
            ("source_closet", &triple.source_closet),
            ("source_drawer_id", &triple.source_drawer_id),
        ] {
            // A drawer filed in chunks counts under the id add_drawer returned.
            if let Some(id) = drawer
                && self.drawer_group(id).await?.is_empty()
            {
                return Err(PalaceError::invalid(
                    field,
                    format!("drawer {id} does not exist in this palace"),
                ));
            }
        }
        let triple_id = self.kg.add_triple(&triple).await?;
        Ok(KgAdded {
            success: true,
            triple_id,
            fact: arrow_fact(&triple.subject, &triple.predicate, &triple.object),
        })
    }

    /// Closes a current fact at `ended` (default today); it stays in the graph as history.
    pub async fn kg_invalidate(
        &self,
        subject: &str,
        predicate: &str,
        object: &str,
        ended: Option<&str>,
    ) -> Result<KgInvalidated> {
        self.require_palace().await?;
        let _guard = self.write_lock.acquire().await?;
        let closed = self
            .kg
            .invalidate(subject, predicate, object, ended)
            .await?;
        Ok(KgInvalidated {
            success: closed > 0,
            fact: arrow_fact(subject, predicate, object),
            ended: ended.map(str::to_string).unwrap_or_else(today),
            closed,
        })
    }

    /// Replaces a single-valued fact: the old value ends just before `at`, the new one starts
    /// at `at`, in one transaction.
    pub async fn kg_supersede(&self, change: Supersede) -> Result<KgSuperseded> {
        self.require_palace().await?;
        let _guard = self.write_lock.acquire().await?;
        let done = self.kg.supersede(&change).await?;
        Ok(KgSuperseded {
            success: true,
            fact: arrow_fact(&change.subject, &change.predicate, &change.new_object),
            replaced: arrow_fact(&change.subject, &change.predicate, &change.old_object),
            triple_id: done.new_triple_id,
            ended: done.old_valid_to,
            started: done.new_valid_from,
        })
    }

    /// Facts in chronological order, of one entity or of all.
    pub async fn kg_timeline(&self, entity: Option<&str>, page: Page) -> Result<KgTimeline> {
        let limit = clamp_limit(page.limit, self.limits.max_page)?;
        validate_offset(page.offset, self.limits.max_offset)?;
        self.require_palace().await?;
        let timeline = self
            .kg
            .timeline(
                entity,
                Page {
                    offset: page.offset,
                    limit,
                },
            )
            .await?;
        let total = self.kg.timeline_total(entity).await?;
        Ok(KgTimeline {
            entity: entity.unwrap_or("all").to_string(),
            count: timeline.len(),
            timeline,
            total,
            offset: page.offset,
            limit,
        })
    }

    /// Entity and fact counts.
    pub async fn kg_stats(&self) -> Result<crate::knowledge_graph::KgStats> {
        self.require_palace().await?;
        self.kg.stats().await
    }

    /// Writes an agent's diary entry: a drawer in `wing_<agent>` / `diary`, topic kept in its
    /// source_file as `diary/<topic>`. Diary entries skip the duplicate check (two days can
    /// read alike).
    ///
    /// With `wing`, the entry goes to that wing's `diary` room instead (a project's shared
    /// diary), its source_file `diary/<agent>/<topic>` so each agent reads back its own.
    pub async fn diary_write(
        &self,
        agent_name: &str,
        entry: &str,
        topic: Option<&str>,
        wing: Option<&str>,
    ) -> Result<DiaryWritten> {
        let own_wing = diary_wing(agent_name)?;
        validate_content(entry)?;
        let topic = topic
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .unwrap_or("general");
        validate_name("topic", topic)?;
        let (wing, source_file) = match shared_diary_wing(wing)? {
            Some(w) => (w, format!("diary/{}/{topic}", diary_agent(agent_name))),
            None => (own_wing, format!("diary/{topic}")),
        };
        let vector = self.embed_one(entry).await?;
        let _guard = self.write_lock.acquire().await?;
        self.create_if_missing().await?;
        let timestamp = now_iso();
        let drawer = Drawer {
            id: agent_drawer_id(&wing, DIARY_ROOM, entry, &timestamp),
            text: entry.to_string(),
            metadata: DrawerMetadata {
                wing,
                room: DIARY_ROOM.into(),
                source_file,
                chunk_index: 0,
                added_by: AddedBy::Mcp,
                filed_at: timestamp.clone(),
                authored_at: None,
                conversation: None,
                entities: Vec::new(),
            },
        };
        self.store
            .upsert(std::slice::from_ref(&drawer), &[vector])
            .await?;
        Ok(DiaryWritten {
            success: true,
            entry_id: drawer.id,
            agent: agent_name.to_string(),
            topic: topic.to_string(),
            timestamp,
        })
    }

    /// The agent's newest `last_n` diary entries, newest first; with `wing`, its entries in
    /// that wing's shared diary (see [`Palace::diary_write`]).
    pub async fn diary_read(
        &self,
        agent_name: &str,
        last_n: usize,
        wing: Option<&str>,
    ) -> Result<DiaryRead> {
        let own_wing = diary_wing(agent_name)?;
        let last_n = clamp_limit(last_n, self.limits.max_page)?;
        let shared = shared_diary_wing(wing)?;
        self.require_palace().await?;
        let agent_prefix = format!("diary/{}/", diary_agent(agent_name));
        let (filter, prefix) = match shared {
            Some(w) => (
                DrawerFilter::wing(w).with_room(DIARY_ROOM),
                Some(agent_prefix.as_str()),
            ),
            None => (DrawerFilter::wing(own_wing).with_room(DIARY_ROOM), None),
        };
        let mine = |d: &Drawer| prefix.is_none_or(|p| d.metadata.source_file.starts_with(p));
        let mut total = if prefix.is_none() {
            self.store.count(&filter).await?
        } else {
            0
        };
        // Pages through the diary keeping only the newest `last_n` (a min-heap on
        // (filed_at, reversed id)): memory stays bounded by `last_n` however long the diary.
        let mut newest: BinaryHeap<Reverse<NewestFirst>> = BinaryHeap::with_capacity(last_n + 1);
        let page_size = self.limits.max_page;
        let mut offset = 0;
        loop {
            let page = self
                .store
                .list(
                    &filter,
                    Page {
                        offset,
                        limit: page_size,
                    },
                )
                .await?;
            let done = page.len() < page_size;
            offset += page.len();
            for drawer in page.into_iter().filter(|d| mine(d)) {
                if prefix.is_some() {
                    total += 1;
                }
                newest.push(Reverse(NewestFirst(drawer)));
                if newest.len() > last_n {
                    newest.pop();
                }
            }
            if done {
                break;
            }
        }
        let mut drawers: Vec<Drawer> = newest.into_iter().map(|Reverse(n)| n.0).collect();
        drawers.sort_by(|a, b| NewestFirst::key(b).cmp(&NewestFirst::key(a)));
        let entries: Vec<DiaryEntry> = drawers
            .into_iter()
            .map(|d| DiaryEntry {
                date: d.metadata.filed_at.chars().take(10).collect(),
                topic: d
                    .metadata
                    .source_file
                    .strip_prefix(prefix.unwrap_or("diary/"))
                    .unwrap_or("general")
                    .to_string(),
                timestamp: d.metadata.filed_at,
                content: d.text,
            })
            .collect();
        Ok(DiaryRead {
            agent: agent_name.to_string(),
            showing: entries.len(),
            total,
            entries,
        })
    }
}

/// A drawer ordered by recency: later `filed_at` is greater; among equal times the smaller
/// id is greater (it comes first in a newest-first listing).
struct NewestFirst(Drawer);

impl NewestFirst {
    fn key(d: &Drawer) -> (&str, Reverse<&str>) {
        (d.metadata.filed_at.as_str(), Reverse(d.id.as_str()))
    }
}

impl PartialEq for NewestFirst {
    fn eq(&self, other: &Self) -> bool {
        Self::key(&self.0) == Self::key(&other.0)
    }
}

impl Eq for NewestFirst {}

impl PartialOrd for NewestFirst {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for NewestFirst {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        Self::key(&self.0).cmp(&Self::key(&other.0))
    }
}

/// The room diary entries live in.
pub const DIARY_ROOM: &str = "diary";

/// The wing of an agent's diary: `wing_` + the agent's name in lower case, spaces to `_`.
pub fn diary_wing(agent_name: &str) -> Result<String> {
    validate_name("agent_name", agent_name)?;
    Ok(format!(
        "wing_{}",
        agent_name.to_lowercase().replace(' ', "_")
    ))
}

/// The drawer `add_drawer` filed under `drawer_id`, put back together from its stored `group`
/// (the drawer itself, or its chunks in order); `None` when the group is empty.
fn whole_drawer(drawer_id: &str, group: Vec<Drawer>) -> Option<DrawerView> {
    let chunk_ids: Vec<String> = group
        .iter()
        .filter(|d| parent_of(&d.id).is_some())
        .map(|d| d.id.clone())
        .collect();
    let mut group = group.into_iter();
    let mut whole = group.next()?;
    for chunk in group {
        whole.text.push_str(&chunk.text);
    }
    whole.id = drawer_id.to_string();
    let mut view = DrawerView::from(whole);
    if !chunk_ids.is_empty() {
        view.chunks = Some(chunk_ids.len());
        view.chunk_ids = chunk_ids;
    }
    Some(view)
}

/// An agent's name as its shared-diary entries record it: lower case, spaces to `_`.
fn diary_agent(agent_name: &str) -> String {
    agent_name.trim().to_lowercase().replace(' ', "_")
}

/// The validated wing of a shared diary, when one is asked for (an empty name means none).
fn shared_diary_wing(wing: Option<&str>) -> Result<Option<String>> {
    match wing.map(str::trim).filter(|w| !w.is_empty()) {
        Some(w) => {
            validate_name("wing", w)?;
            Ok(Some(w.to_string()))
        }
        None => Ok(None),
    }
}

/// "subject → predicate → object".
fn arrow_fact(subject: &str, predicate: &str, object: &str) -> String {
    format!("{subject} → {predicate} → {object}")
}

/// The last component of a path ("?" when the path is empty), like Python's `Path(p).name`.
fn file_name(path: &str) -> String {
    if path.is_empty() {
        return "?".into();
    }
    Path::new(path)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.to_string())
}

/// The first `limit` hits, each text shown once: a later hit whose text equals an earlier
/// one's is folded into it (its id listed in `also_in`).
fn fold_identical_texts(
    ranked: Vec<Ranked>,
    limit: usize,
    closet_lifts: &HashMap<String, ClosetMatch>,
) -> Vec<SearchHit> {
    let mut hits: Vec<SearchHit> = Vec::with_capacity(limit);
    let mut by_text: std::collections::HashMap<String, usize> = Default::default();
    let mut drawers_shown: std::collections::HashSet<String> = Default::default();
    for r in ranked {
        let mut c = r.candidate;
        // A chunk of a drawer filed in pieces stands for that drawer, once: its best chunk.
        if let Some(parent) = parent_of(&c.drawer.id).map(str::to_string) {
            c.drawer.id = parent;
        }
        if drawers_shown.contains(&c.drawer.id) {
            continue;
        }
        let key = c.drawer.text.trim().to_string();
        if let Some(&i) = by_text.get(&key) {
            drawers_shown.insert(c.drawer.id.clone());
            hits[i].also_in.push(c.drawer.id);
            continue;
        }
        if hits.len() == limit {
            continue;
        }
        drawers_shown.insert(c.drawer.id.clone());
        by_text.insert(key, hits.len());
        let distance = c.distance.unwrap_or(1.0);
        let m = c.drawer.metadata;
        let lift = closet_lifts.get(&m.source_file);
        let channels = match (c.by_vector, c.by_lexical) {
            (true, true) => "vector+lexical",
            (false, true) => "lexical",
            _ => "vector",
        };
        hits.push(SearchHit {
            drawer_id: c.drawer.id,
            source_file: file_name(&m.source_file),
            source_path: m.source_file,
            text: c.drawer.text,
            wing: m.wing,
            room: m.room,
            chunk_index: m.chunk_index,
            filed_at: m.filed_at,
            authored_at: m.authored_at,
            conversation: m.conversation,
            similarity: similarity_from_distance(distance),
            distance: (f64::from(distance) * 10_000.0).round() / 10_000.0,
            bm25_score: (r.bm25 * 1000.0).round() / 1000.0,
            score: (r.score * 10_000.0).round() / 10_000.0,
            matched_via: match lift {
                Some(_) => format!("{channels}+closet"),
                None => channels.to_string(),
            },
            closet_boost: lift.map_or(0.0, |l| l.boost),
            closet_preview: lift.map(|l| l.preview.clone()),
            also_in: Vec::new(),
        });
    }
    hits
}

/// Sorted distinct values.
fn distinct<'a>(values: impl Iterator<Item = &'a str>) -> Vec<String> {
    let mut v: Vec<String> = values.map(str::to_string).collect();
    v.sort();
    v.dedup();
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_name_keeps_only_the_last_component() {
        assert_eq!(file_name("/home/u/proj/src/auth.rs"), "auth.rs");
        assert_eq!(file_name("notes.md"), "notes.md");
        assert_eq!(file_name(""), "?");
        assert_eq!(file_name("diary/standup"), "standup");
    }

    #[test]
    fn diary_wing_is_normalised() {
        assert_eq!(diary_wing("Claude Code").unwrap(), "wing_claude_code");
        assert!(diary_wing(" ").is_err());
    }
}
