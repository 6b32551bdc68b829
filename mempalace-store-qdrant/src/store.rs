//! `QdrantStore`: the `VectorStore` over one Qdrant collection.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use async_trait::async_trait;
use mempalace_core::lexical::query_terms;
use mempalace_core::store_health::StoreHealth;
use mempalace_core::validation::validate_vector_pairs;
use mempalace_core::{
    Drawer, DrawerFilter, DrawerMove, LexicalHit, Neighbour, Page, PalaceError, Result, RoomCount,
    VectorStore,
};
use mempalace_core::{rank_lexical_hits, rank_neighbours};
use qdrant_client::qdrant::point_id::PointIdOptions;
use qdrant_client::qdrant::{
    CollectionInfo, CollectionStatus, Condition, CountPointsBuilder, CreateCollection,
    CreateCollectionBuilder, CreateFieldIndexCollectionBuilder, CreateVectorNameRequestBuilder,
    DeletePointsBuilder, Distance, FacetCountsBuilder, FieldType, Filter, GetPointsBuilder,
    Modifier, NamedVectors, PayloadIncludeSelector, PointId, PointStruct, PointVectors,
    PointsIdsList, Query, QueryPointsBuilder, RetrievedPoint, ScrollPointsBuilder,
    SetPayloadPointsBuilder, SparseVectorParamsBuilder, SparseVectorsConfigBuilder,
    UpdateCollection, UpdateCollectionBuilder, UpdatePointVectorsBuilder, UpsertPointsBuilder,
    Value, VectorParamsBuilder,
};
use qdrant_client::{Payload, Qdrant, QdrantError};
use tracing::{debug, info, warn};

use crate::aggregate::{dedup_ids, facet_keyword, page_of, room_counts};
use crate::collection::check_collection;
use crate::errors::{
    BACKEND, MIN_SERVER_VERSION, describe, is_not_found, is_unimplemented, server_too_old,
    store_error, store_error_message,
};
use crate::filter::{to_qdrant_filter, within_wing};
use crate::ids::{point_id, point_uuid};
use crate::lexical::{SPARSE_VECTOR, bm25_document, sparse_creation_config};
use crate::options::QdrantOptions;
use crate::payload::{
    DRAWER_ID, ROOM, TEXT, WING, dense_vector, drawer_from_payload, drawer_id_of,
    drawer_to_payload, wing_room_of,
};
use crate::ranking::distance_from_score;

/// Points per upsert request.
const UPSERT_BATCH: usize = 256;
/// Point ids per retrieve or delete request.
const ID_BATCH: usize = 512;
/// Points per scroll page.
const SCROLL_PAGE: u32 = 1024;
/// First facet limit; doubled until the server returns fewer values than asked for.
const FACET_FIRST_LIMIT: u64 = 1024;
/// Query limits above this are first capped at the number of matching drawers, so an
/// "everything" limit does not make the server size its result heap by the request.
const LARGE_LIMIT: usize = 1024;

/// The key of the collection metadata naming the palace that owns the collection.
pub const OWNER_METADATA_KEY: &str = "mempalace_palace_id";

/// The palace id recorded in a collection's metadata, if any.
fn collection_owner(info: &qdrant_client::qdrant::CollectionInfo) -> Option<String> {
    use qdrant_client::qdrant::value::Kind;
    let value = info.config.as_ref()?.metadata.get(OWNER_METADATA_KEY)?;
    match &value.kind {
        Some(Kind::StringValue(s)) => Some(s.clone()),
        _ => None,
    }
}

/// A `VectorStore` over one Qdrant collection (gRPC). Cloning is cheap and clones share the
/// connection pool.
///
/// The collection is created on [`VectorStore::create_if_missing`] or the first upsert, with
/// cosine distance, the configured dimension and keyword indexes on `wing`, `room`,
/// `source_file` and `drawer_id`. An existing collection of another dimension or distance is
/// an error, never reused. Each drawer is one point whose id is a UUID v5 of the drawer id.
#[derive(Clone)]
pub struct QdrantStore {
    inner: Arc<Inner>,
}

struct Inner {
    client: Qdrant,
    url: String,
    collection: String,
    dimension: usize,
    /// The palace id recorded in the collection's metadata, if ownership is checked.
    owner: Option<String>,
    /// Set once the collection is known to exist with a compatible configuration and indexes;
    /// cleared whenever the server says it is gone. Only ever a cache: never set on failure.
    ready: AtomicBool,
    /// Serialises collection creation within this process.
    create_lock: tokio::sync::Mutex<()>,
}

impl fmt::Debug for QdrantStore {
    /// URL, collection and dimension (never the API key).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("QdrantStore")
            .field("url", &self.inner.url)
            .field("collection", &self.inner.collection)
            .field("dimension", &self.inner.dimension)
            .finish()
    }
}

impl QdrantStore {
    /// Connects (health check within the timeout); an existing collection is checked for
    /// dimension and distance and gets any missing payload index; a missing one is not created.
    pub async fn connect(opts: QdrantOptions) -> Result<QdrantStore> {
        opts.validate()?;
        let url = opts.url.trim().to_string();
        let api_key = opts.api_key.filter(|k| !k.is_empty());
        let client = Qdrant::from_url(&url)
            .api_key(api_key)
            .timeout(opts.timeout)
            .connect_timeout(opts.timeout)
            // The client's own check blocks a thread on a private runtime and prints to
            // stdout; the health check below does the same job asynchronously.
            .skip_compatibility_check()
            .build()
            .map_err(|e| match e {
                QdrantError::InvalidUri(_) => PalaceError::invalid("url", format!("{url:?}: {e}")),
                other => store_error("connect", &url, &opts.collection, other),
            })?;
        let store = QdrantStore {
            inner: Arc::new(Inner {
                client,
                url,
                collection: opts.collection,
                dimension: opts.dimension,
                owner: opts.owner.filter(|o| !o.is_empty()),
                ready: AtomicBool::new(false),
                create_lock: tokio::sync::Mutex::new(()),
            }),
        };
        let reply = store.inner.client.health_check().await.map_err(|e| {
            if is_unimplemented(&e) {
                // Typically the REST port (6333) or a non-Qdrant HTTP server.
                store_error_message(
                    "connect",
                    &store.inner.url,
                    &store.inner.collection,
                    &format!(
                        "{}; is this Qdrant's gRPC port (usually 6334, not the REST port 6333)?",
                        describe(&e)
                    ),
                )
            } else {
                store.fail("connect", e)
            }
        })?;
        debug!(url = %store.inner.url, server_version = %reply.version, "connected to Qdrant");
        if server_too_old(&reply.version) {
            warn!(
                url = %store.inner.url,
                server_version = %reply.version,
                "Qdrant server is older than {}.{}; queries or room counts may fail",
                MIN_SERVER_VERSION.0,
                MIN_SERVER_VERSION.1
            );
        }
        if store.collection_exists("connect").await? {
            store.ensure_collection("connect").await?;
        }
        Ok(store)
    }

    /// The server URL.
    pub fn url(&self) -> &str {
        &self.inner.url
    }

    /// The collection holding the drawers.
    pub fn collection(&self) -> &str {
        &self.inner.collection
    }

    /// Deletes the whole collection (every drawer of the palace); returns whether it existed.
    pub async fn delete_collection(&self) -> Result<bool> {
        let _guard = self.inner.create_lock.lock().await;
        self.inner.ready.store(false, Ordering::Release);
        if !self.collection_exists("delete_collection").await? {
            return Ok(false);
        }
        let reply = self
            .inner
            .client
            .delete_collection(self.inner.collection.as_str())
            .await
            .map_err(|e| self.fail("delete_collection", e))?;
        info!(collection = %self.inner.collection, url = %self.inner.url, "deleted Qdrant collection");
        Ok(reply.result)
    }

    fn fail(&self, operation: &'static str, err: QdrantError) -> PalaceError {
        debug!(operation, url = %self.inner.url, collection = %self.inner.collection, error = %err, "Qdrant call failed");
        store_error(operation, &self.inner.url, &self.inner.collection, err)
    }

    fn bad_payload(&self, operation: &'static str, err: impl fmt::Display) -> PalaceError {
        store_error_message(
            operation,
            &self.inner.url,
            &self.inner.collection,
            &format!("malformed point payload: {err}"),
        )
    }

    /// A read's result, with "collection not found" turned into `None` (reads of a palace that
    /// does not exist yet see an empty store, like the reference store).
    fn read<T>(
        &self,
        operation: &'static str,
        result: std::result::Result<T, QdrantError>,
    ) -> Result<Option<T>> {
        match result {
            Ok(v) => Ok(Some(v)),
            Err(e) if is_not_found(&e) => {
                self.inner.ready.store(false, Ordering::Release);
                Ok(None)
            }
            Err(e) => Err(self.fail(operation, e)),
        }
    }

    fn check_dimension(&self, vector: &[f32], context: impl FnOnce() -> String) -> Result<()> {
        if vector.len() != self.inner.dimension {
            return Err(PalaceError::DimensionMismatch {
                expected: self.inner.dimension,
                actual: vector.len(),
                context: context(),
            });
        }
        Ok(())
    }

    async fn collection_exists(&self, operation: &'static str) -> Result<bool> {
        let exists = self
            .inner
            .client
            .collection_exists(self.inner.collection.as_str())
            .await
            .map_err(|e| self.fail(operation, e))?;
        if !exists {
            self.inner.ready.store(false, Ordering::Release);
        }
        Ok(exists)
    }

    /// Makes sure the collection exists with our configuration and indexes (idempotent,
    /// cached after the first success).
    async fn ensure_collection(&self, operation: &'static str) -> Result<()> {
        if self.inner.ready.load(Ordering::Acquire) {
            return Ok(());
        }
        let _guard = self.inner.create_lock.lock().await;
        if self.inner.ready.load(Ordering::Acquire) {
            return Ok(());
        }
        let name = self.inner.collection.as_str();
        if !self.collection_exists(operation).await? {
            let mut sparse = SparseVectorsConfigBuilder::default();
            sparse.add_named_vector_params(
                SPARSE_VECTOR,
                SparseVectorParamsBuilder::default().modifier(Modifier::Idf),
            );
            let mut request: CreateCollection = CreateCollectionBuilder::new(name)
                .vectors_config(VectorParamsBuilder::new(
                    self.inner.dimension as u64,
                    Distance::Cosine,
                ))
                .sparse_vectors_config(sparse)
                .build();
            if let Some(owner) = &self.inner.owner {
                request
                    .metadata
                    .insert(OWNER_METADATA_KEY.to_string(), owner.as_str().into());
            }
            match self.inner.client.create_collection(request).await {
                Ok(_) => info!(
                    collection = name,
                    url = %self.inner.url,
                    dimension = self.inner.dimension,
                    "created Qdrant collection (cosine)"
                ),
                // Another client may have created it in the meantime; then adopt it below.
                Err(e) => {
                    if !self.collection_exists(operation).await? {
                        return Err(self.fail(operation, e));
                    }
                    debug!(collection = name, "collection was created concurrently");
                }
            }
        }
        self.adopt_existing(operation).await?;
        self.inner.ready.store(true, Ordering::Release);
        Ok(())
    }

    /// The collection's info as the server reports it now.
    async fn collection_info_now(&self, operation: &'static str) -> Result<CollectionInfo> {
        let name = self.inner.collection.as_str();
        self.inner
            .client
            .collection_info(name)
            .await
            .map_err(|e| self.fail(operation, e))?
            .result
            .ok_or_else(|| {
                store_error_message(
                    operation,
                    &self.inner.url,
                    name,
                    "the server returned no collection info",
                )
            })
    }

    /// Checks an existing collection and adds the keyword indexes it lacks.
    async fn adopt_existing(&self, operation: &'static str) -> Result<()> {
        let name = self.inner.collection.as_str();
        let info = self.collection_info_now(operation).await?;
        let check = check_collection(&info, name, self.inner.dimension)?;
        if let Some(owner) = &self.inner.owner {
            match collection_owner(&info) {
                Some(recorded) if recorded == *owner => {}
                Some(recorded) => {
                    return Err(PalaceError::invalid(
                        "collection",
                        format!(
                            "Qdrant collection {name:?} belongs to another palace ({recorded}), not to this one ({owner}); \
                             each palace needs a collection of its own"
                        ),
                    ));
                }
                None => {
                    // A collection made before owners were recorded: this palace claims it.
                    let mut claim: UpdateCollection = UpdateCollectionBuilder::new(name).build();
                    claim
                        .metadata
                        .insert(OWNER_METADATA_KEY.to_string(), owner.as_str().into());
                    self.inner
                        .client
                        .update_collection(claim)
                        .await
                        .map_err(|e| self.fail(operation, e))?;
                    info!(collection = name, owner = %owner, "claimed Qdrant collection for this palace");
                }
            }
        }
        for field in check.non_keyword_indexes {
            warn!(
                collection = name,
                field, "payload index is not a keyword index; filters on it may not match exactly"
            );
        }
        let has_sparse = info
            .config
            .as_ref()
            .and_then(|c| c.params.as_ref())
            .and_then(|p| p.sparse_vectors_config.as_ref())
            .is_some_and(|sv| sv.map.contains_key(SPARSE_VECTOR));
        if !has_sparse {
            // A collection made before the lexical channel: add it (idempotent for the same
            // configuration, so racing processes are fine).
            self.inner
                .client
                .create_vector_name(
                    CreateVectorNameRequestBuilder::new(
                        name,
                        SPARSE_VECTOR,
                        sparse_creation_config(),
                    )
                    .wait(true),
                )
                .await
                .map_err(|e| self.fail(operation, e))?;
            info!(
                collection = name,
                "added the BM25 sparse vector to the collection"
            );
        }
        self.backfill_lexical(operation).await?;
        for field in check.missing_indexes {
            self.inner
                .client
                .create_field_index(
                    CreateFieldIndexCollectionBuilder::new(name, field, FieldType::Keyword)
                        .wait(true),
                )
                .await
                .map_err(|e| self.fail(operation, e))?;
            debug!(collection = name, field, "created keyword payload index");
        }
        Ok(())
    }

    /// Gives every point that lacks one its BM25 sparse vector, from its stored text (points
    /// written before the lexical channel existed; resumable: it looks for what is missing).
    async fn backfill_lexical(&self, operation: &'static str) -> Result<()> {
        let name = self.inner.collection.as_str();
        let mut filled = 0usize;
        // Never more passes than the collection has points (a guard, should the server keep
        // reporting a point as lacking its vector).
        let mut budget: Option<u64> = None;
        loop {
            let page = self
                .inner
                .client
                .scroll(
                    ScrollPointsBuilder::new(name)
                        .filter(Filter::must_not([Condition::has_vector(SPARSE_VECTOR)]))
                        .limit(UPSERT_BATCH as u32)
                        .with_payload(PayloadIncludeSelector::new(vec![TEXT.to_string()]))
                        .with_vectors(false),
                )
                .await
                .map_err(|e| self.fail(operation, e))?;
            if page.result.is_empty() {
                break;
            }
            let total = match budget {
                Some(t) => t,
                None => {
                    let t = self.count_matching(&DrawerFilter::all()).await?;
                    budget = Some(t);
                    t
                }
            };
            if filled as u64 > total {
                warn!(
                    collection = name,
                    "BM25 back-fill did not converge; stopping"
                );
                break;
            }
            let updates: Vec<PointVectors> = page
                .result
                .iter()
                .map(|p| PointVectors {
                    id: p.id.clone(),
                    vectors: Some(
                        NamedVectors::default()
                            .add_vector(
                                SPARSE_VECTOR,
                                bm25_document(
                                    p.payload
                                        .get(TEXT)
                                        .and_then(Value::as_str)
                                        .map_or("", String::as_str),
                                ),
                            )
                            .into(),
                    ),
                })
                .collect();
            filled += updates.len();
            self.inner
                .client
                .update_vectors(UpdatePointVectorsBuilder::new(name, updates).wait(true))
                .await
                .map_err(|e| self.fail(operation, e))?;
        }
        if filled > 0 {
            info!(
                collection = name,
                points = filled,
                "back-filled BM25 vectors"
            );
        }
        Ok(())
    }

    async fn upsert_points(
        &self,
        points: Vec<PointStruct>,
    ) -> std::result::Result<(), QdrantError> {
        self.inner
            .client
            .upsert_points(
                UpsertPointsBuilder::new(self.inner.collection.as_str(), points).wait(true),
            )
            .await
            .map(|_| ())
    }

    /// Points by drawer id (payload as asked, no vectors); `None` when the collection is missing.
    async fn retrieve(
        &self,
        operation: &'static str,
        ids: &[&str],
        with_payload: bool,
    ) -> Result<Option<Vec<RetrievedPoint>>> {
        let mut points = Vec::with_capacity(ids.len());
        for chunk in ids.chunks(ID_BATCH) {
            let point_ids: Vec<PointId> = chunk.iter().map(|id| point_id(id)).collect();
            let request = GetPointsBuilder::new(self.inner.collection.as_str(), point_ids)
                .with_payload(with_payload)
                .with_vectors(false);
            match self.read(operation, self.inner.client.get_points(request).await)? {
                Some(reply) => points.extend(reply.result),
                None => return Ok(None),
            }
        }
        Ok(Some(points))
    }

    /// Payloads (only `fields`) of every point matching `filter`; `None` when the collection is
    /// missing.
    async fn scroll_payloads(
        &self,
        operation: &'static str,
        filter: &DrawerFilter,
        fields: &[&str],
    ) -> Result<Option<Vec<HashMap<String, Value>>>> {
        let qfilter = to_qdrant_filter(filter);
        let selector =
            PayloadIncludeSelector::new(fields.iter().map(|f| f.to_string()).collect::<Vec<_>>());
        let mut out = Vec::new();
        let mut offset: Option<PointId> = None;
        loop {
            let mut request = ScrollPointsBuilder::new(self.inner.collection.as_str())
                .limit(SCROLL_PAGE)
                .with_payload(selector.clone())
                .with_vectors(false);
            if let Some(f) = &qfilter {
                request = request.filter(f.clone());
            }
            if let Some(o) = offset.take() {
                request = request.offset(o);
            }
            let Some(reply) = self.read(operation, self.inner.client.scroll(request).await)? else {
                return Ok(None);
            };
            out.extend(reply.result.into_iter().map(|p| p.payload));
            match reply.next_page_offset {
                Some(next) => offset = Some(next),
                None => return Ok(Some(out)),
            }
        }
    }

    /// Every keyword value of `key` among points matching `filter`, with exact counts.
    async fn facet(
        &self,
        key: &str,
        filter: Option<Filter>,
    ) -> std::result::Result<Vec<(String, u64)>, QdrantError> {
        let mut limit = FACET_FIRST_LIMIT;
        loop {
            let mut request = FacetCountsBuilder::new(self.inner.collection.as_str(), key)
                .limit(limit)
                .exact(true);
            if let Some(f) = &filter {
                request = request.filter(f.clone());
            }
            let reply = self.inner.client.facet(request).await?;
            if (reply.hits.len() as u64) < limit {
                return Ok(reply.hits.iter().filter_map(facet_keyword).collect());
            }
            limit = limit.saturating_mul(4);
        }
    }

    /// Room counts aggregated client-side from a payload-only scroll (servers without facets).
    async fn room_counts_by_scroll(&self, filter: &DrawerFilter) -> Result<Vec<RoomCount>> {
        let Some(payloads) = self
            .scroll_payloads("room_counts", filter, &[WING, ROOM])
            .await?
        else {
            return Ok(Vec::new());
        };
        let pairs = payloads
            .iter()
            .map(|p| wing_room_of(p).map(|pair| (pair, 1)))
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(|e| self.bad_payload("room_counts", e))?;
        Ok(room_counts(pairs))
    }

    async fn count_matching(&self, filter: &DrawerFilter) -> Result<u64> {
        let mut request = CountPointsBuilder::new(self.inner.collection.as_str()).exact(true);
        if let Some(f) = to_qdrant_filter(filter) {
            request = request.filter(f);
        }
        Ok(self
            .read("count", self.inner.client.count(request).await)?
            .and_then(|reply| reply.result)
            .map_or(0, |r| r.count))
    }
}

#[async_trait]
impl VectorStore for QdrantStore {
    fn backend_name(&self) -> &'static str {
        BACKEND
    }

    fn dimension(&self) -> usize {
        self.inner.dimension
    }

    async fn exists(&self) -> Result<bool> {
        self.collection_exists("exists").await
    }

    /// Points and segments, and what the server says is wrong. Qdrant searches small
    /// segments exactly and indexes them only past its threshold, so vectors not in an HNSW
    /// graph yet are not reported as lag.
    async fn health(&self) -> Result<StoreHealth> {
        let mut health = StoreHealth {
            backend: BACKEND.to_string(),
            ..StoreHealth::default()
        };
        if !self.collection_exists("health").await? {
            return Ok(health);
        }
        let info = self.collection_info_now("health").await?;
        health.rows = info.points_count.unwrap_or(0);
        health.fragments = Some(info.segments_count);
        match CollectionStatus::try_from(info.status) {
            Ok(CollectionStatus::Red) => health.problems.push(format!(
                "the collection {} is red (the server's own verdict: something went wrong)",
                self.inner.collection
            )),
            Ok(_) => {}
            Err(_) => health.problems.push(format!(
                "the collection's status {} is unknown",
                info.status
            )),
        }
        if let Some(optimizer) = info.optimizer_status.filter(|o| !o.ok) {
            health.problems.push(format!(
                "the collection's optimizer failed: {}",
                optimizer.error
            ));
        }
        health.problems.extend(
            info.warnings
                .into_iter()
                .map(|w| format!("the server warns: {}", w.message)),
        );
        Ok(health)
    }

    async fn create_if_missing(&self) -> Result<()> {
        self.ensure_collection("create").await
    }

    async fn upsert(&self, drawers: &[Drawer], vectors: &[Vec<f32>]) -> Result<()> {
        validate_vector_pairs(drawers, vectors)?;
        for (drawer, vector) in drawers.iter().zip(vectors) {
            self.check_dimension(vector, || format!("upsert of {} into Qdrant", drawer.id))?;
        }
        self.ensure_collection("upsert").await?;
        // The last occurrence of a repeated id wins, as with one upsert after another.
        let mut seen = HashSet::with_capacity(drawers.len());
        let mut order: Vec<usize> = (0..drawers.len())
            .rev()
            .filter(|i| seen.insert(drawers[*i].id.as_str()))
            .collect();
        order.reverse();
        let points_of = |chunk: &[usize]| -> Vec<PointStruct> {
            chunk
                .iter()
                .map(|&i| {
                    PointStruct::new(
                        point_id(&drawers[i].id),
                        NamedVectors::default()
                            .add_vector("", vectors[i].clone())
                            .add_vector(SPARSE_VECTOR, bm25_document(&drawers[i].text)),
                        drawer_to_payload(&drawers[i]),
                    )
                })
                .collect()
        };
        for chunk in order.chunks(UPSERT_BATCH) {
            match self.upsert_points(points_of(chunk)).await {
                Ok(()) => {}
                Err(e) if is_not_found(&e) => {
                    // The collection was dropped behind our back: recreate it and retry once.
                    self.inner.ready.store(false, Ordering::Release);
                    self.ensure_collection("upsert").await?;
                    self.upsert_points(points_of(chunk))
                        .await
                        .map_err(|e| self.fail("upsert", e))?;
                }
                Err(e) => return Err(self.fail("upsert", e)),
            }
        }
        debug!(collection = %self.inner.collection, points = order.len(), "upserted drawers");
        Ok(())
    }

    async fn query(
        &self,
        vector: &[f32],
        filter: &DrawerFilter,
        limit: usize,
    ) -> Result<Vec<Neighbour>> {
        self.check_dimension(vector, || "Qdrant query vector".to_string())?;
        if limit == 0 {
            return Ok(Vec::new());
        }
        let mut limit = limit;
        if limit > LARGE_LIMIT {
            let matching =
                usize::try_from(self.count_matching(filter).await?).unwrap_or(usize::MAX);
            if matching == 0 {
                return Ok(Vec::new());
            }
            limit = limit.min(matching);
        }
        let mut request = QueryPointsBuilder::new(self.inner.collection.as_str())
            .query(Query::new_nearest(vector.to_vec()))
            .limit(u64::try_from(limit).unwrap_or(u64::MAX))
            .with_payload(true)
            .with_vectors(false);
        if let Some(f) = to_qdrant_filter(filter) {
            request = request.filter(f);
        }
        let Some(reply) = self.read("query", self.inner.client.query(request).await)? else {
            return Ok(Vec::new());
        };
        let mut neighbours = reply
            .result
            .into_iter()
            .map(|p| {
                drawer_from_payload(&p.payload).map(|drawer| Neighbour {
                    drawer,
                    distance: distance_from_score(p.score),
                })
            })
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(|e| self.bad_payload("query", e))?;
        rank_neighbours(&mut neighbours, limit);
        Ok(neighbours)
    }

    async fn lexical_query(
        &self,
        text: &str,
        filter: &DrawerFilter,
        limit: usize,
    ) -> Result<Vec<LexicalHit>> {
        if limit == 0 || query_terms(text).is_empty() {
            return Ok(Vec::new());
        }
        let mut request = QueryPointsBuilder::new(self.inner.collection.as_str())
            .query(Query::new_nearest(bm25_document(text)))
            .using(SPARSE_VECTOR)
            .limit(u64::try_from(limit.min(LARGE_LIMIT)).unwrap_or(u64::MAX))
            .with_payload(true)
            // The dense vector comes along, so search computes the hit's distance itself.
            .with_vectors(true);
        if let Some(f) = to_qdrant_filter(filter) {
            request = request.filter(f);
        }
        let Some(reply) = self.read("lexical_query", self.inner.client.query(request).await)?
        else {
            return Ok(Vec::new());
        };
        let mut hits = reply
            .result
            .into_iter()
            .map(|p| {
                drawer_from_payload(&p.payload).map(|drawer| LexicalHit {
                    drawer,
                    score: p.score,
                    vector: dense_vector(p.vectors.as_ref()),
                })
            })
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(|e| self.bad_payload("lexical_query", e))?;
        rank_lexical_hits(&mut hits, limit);
        Ok(hits)
    }

    async fn get(&self, ids: &[String]) -> Result<Vec<Drawer>> {
        let wanted = dedup_ids(ids);
        if wanted.is_empty() {
            return Ok(Vec::new());
        }
        let Some(points) = self.retrieve("get", &wanted, true).await? else {
            return Ok(Vec::new());
        };
        let mut found: HashMap<String, Drawer> = HashMap::with_capacity(points.len());
        for p in points {
            let drawer = drawer_from_payload(&p.payload).map_err(|e| self.bad_payload("get", e))?;
            found.insert(drawer.id.clone(), drawer);
        }
        Ok(wanted.iter().filter_map(|id| found.remove(*id)).collect())
    }

    async fn delete(&self, ids: &[String]) -> Result<usize> {
        let wanted = dedup_ids(ids);
        if wanted.is_empty() {
            return Ok(0);
        }
        let Some(points) = self.retrieve("delete", &wanted, false).await? else {
            return Ok(0);
        };
        let existing: Vec<PointId> = points.into_iter().filter_map(|p| p.id).collect();
        for chunk in existing.chunks(ID_BATCH) {
            let request = DeletePointsBuilder::new(self.inner.collection.as_str())
                .points(PointsIdsList {
                    ids: chunk.to_vec(),
                })
                .wait(true);
            self.read("delete", self.inner.client.delete_points(request).await)?;
        }
        debug!(collection = %self.inner.collection, deleted = existing.len(), "deleted drawers");
        Ok(existing.len())
    }

    async fn vectors(&self, ids: &[String]) -> Result<Vec<(String, Vec<f32>)>> {
        let wanted = dedup_ids(ids);
        let mut found: HashMap<String, Vec<f32>> = HashMap::with_capacity(wanted.len());
        for chunk in wanted.chunks(ID_BATCH) {
            let point_ids: Vec<PointId> = chunk.iter().map(|id| point_id(id)).collect();
            let request = GetPointsBuilder::new(self.inner.collection.as_str(), point_ids)
                .with_payload(PayloadIncludeSelector {
                    fields: vec![DRAWER_ID.to_string()],
                })
                .with_vectors(true);
            let Some(reply) = self.read("vectors", self.inner.client.get_points(request).await)?
            else {
                return Ok(Vec::new());
            };
            for p in reply.result {
                let id = drawer_id_of(&p.payload).map_err(|e| self.bad_payload("vectors", e))?;
                if let Some(v) = dense_vector(p.vectors.as_ref()) {
                    found.insert(id, v);
                }
            }
        }
        Ok(ids
            .iter()
            .filter_map(|id| found.get(id).map(|v| (id.clone(), v.clone())))
            .collect())
    }

    /// Sets the `wing` and `room` payload fields of the stored points, one request per
    /// destination and id batch; vectors and the other fields stay.
    async fn relocate(&self, moves: &[DrawerMove]) -> Result<usize> {
        let ids: Vec<String> = moves.iter().map(|m| m.id.clone()).collect();
        let wanted = dedup_ids(&ids);
        if wanted.is_empty() {
            return Ok(0);
        }
        let Some(points) = self.retrieve("relocate", &wanted, false).await? else {
            return Ok(0);
        };
        let existing: HashSet<String> = points
            .into_iter()
            .filter_map(|p| match p.id?.point_id_options? {
                PointIdOptions::Uuid(uuid) => Some(uuid),
                PointIdOptions::Num(_) => None,
            })
            .collect();
        // The last move of an id wins, as it would applied one by one.
        let mut by_place: BTreeMap<(&str, &str), Vec<PointId>> = BTreeMap::new();
        let mut seen = HashSet::new();
        for m in moves.iter().rev() {
            let uuid = point_uuid(&m.id).to_string();
            if seen.insert(m.id.as_str()) && existing.contains(&uuid) {
                by_place
                    .entry((m.wing.as_str(), m.room.as_str()))
                    .or_default()
                    .push(PointId::from(uuid));
            }
        }
        let mut moved = 0;
        for ((wing, room), ids) in by_place {
            let mut payload = Payload::with_capacity(2);
            payload.insert(WING, wing);
            payload.insert(ROOM, room);
            for chunk in ids.chunks(ID_BATCH) {
                let request =
                    SetPayloadPointsBuilder::new(self.inner.collection.as_str(), payload.clone())
                        .points_selector(PointsIdsList {
                            ids: chunk.to_vec(),
                        })
                        .wait(true);
                self.read("relocate", self.inner.client.set_payload(request).await)?;
                moved += chunk.len();
            }
        }
        debug!(collection = %self.inner.collection, moved, "relocated drawers");
        Ok(moved)
    }

    async fn count(&self, filter: &DrawerFilter) -> Result<u64> {
        self.count_matching(filter).await
    }

    async fn room_counts(&self, filter: &DrawerFilter) -> Result<Vec<RoomCount>> {
        let wings = match self.facet(WING, to_qdrant_filter(filter)).await {
            Ok(wings) => wings,
            Err(e) if is_unimplemented(&e) => {
                debug!("server has no facet API; counting rooms from a payload scroll");
                return self.room_counts_by_scroll(filter).await;
            }
            Err(e) => return self.read::<()>("room_counts", Err(e)).map(|_| Vec::new()),
        };
        let mut entries = Vec::new();
        for (wing, count) in wings {
            if count == 0 {
                continue;
            }
            let rooms = match self.read(
                "room_counts",
                self.facet(ROOM, Some(within_wing(filter, &wing))).await,
            )? {
                Some(rooms) => rooms,
                None => return Ok(Vec::new()),
            };
            entries.extend(rooms.into_iter().map(|(room, n)| ((wing.clone(), room), n)));
        }
        Ok(room_counts(entries))
    }

    async fn list(&self, filter: &DrawerFilter, page: Page) -> Result<Vec<Drawer>> {
        if page.limit == 0 {
            return Ok(Vec::new());
        }
        // Qdrant orders scrolls only by numeric/datetime payload indexes, not keywords: fetch
        // the matching ids (payload-only), order them here, then fetch the one page.
        let Some(payloads) = self.scroll_payloads("list", filter, &[DRAWER_ID]).await? else {
            return Ok(Vec::new());
        };
        let ids = payloads
            .iter()
            .map(drawer_id_of)
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(|e| self.bad_payload("list", e))?;
        let page_ids = page_of(ids, page);
        if page_ids.is_empty() {
            return Ok(Vec::new());
        }
        self.get(&page_ids).await
    }
}
