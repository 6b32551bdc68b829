//! `LanceStore`: the `VectorStore` trait over one Lance table.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use arrow_array::cast::AsArray;
use arrow_array::types::Float32Type;
use arrow_array::{RecordBatch, RecordBatchIterator, RecordBatchReader};
use arrow_schema::SchemaRef;
use async_trait::async_trait;
use futures::TryStreamExt;
use lancedb::index::scalar::FullTextSearchQuery;
use lancedb::query::{ColumnOrdering, ExecutableQuery, QueryBase, Select};
use lancedb::{Connection, DistanceType, Table};
use mempalace_core::lexical::query_terms;
use mempalace_core::store_health::{IndexHealth, StoreHealth};
use mempalace_core::validation::validate_vector_pairs;
use mempalace_core::{
    Drawer, DrawerFilter, DrawerMove, LexicalHit, Neighbour, NeighbourId, Page, PalaceError,
    Result, RoomCount, VectorStore,
};
use mempalace_core::{rank_lexical_hits, rank_neighbour_ids, rank_neighbours};
use tokio::sync::{Mutex, OnceCell};

use crate::maintenance::{self, IndexMerge, MaintenanceReport};
use crate::options::LanceOptions;
use crate::predicate::{filter_predicate, ids_predicate, sql_string};
use crate::room_count_cache::RoomCountCache;
use crate::schema::{
    DISTANCE_COLUMN, ID_COLUMN, LaterColumns, SCORE_COLUMN, TEXT_COLUMN, VECTOR_COLUMN,
    batch_drawers, batch_ids, batch_vectors, batch_wing_rooms, drawer_columns, drawers_batch,
    drawers_schema, lexical_columns, neighbour_columns, rows_with_distances, vector_dimension,
};

/// What a nearest-neighbour query reads besides the distance.
#[derive(Clone, Copy)]
enum Columns {
    /// The whole drawer (not its vector).
    Drawer,
    /// The id alone.
    Id,
}

/// Ids per `IN (...)` predicate.
const IDS_PER_QUERY: usize = 500;
/// Writes between two background maintenance checks (each compacts the fragments the writes
/// added, when nothing more is due).
const WRITES_PER_MAINTENANCE_CHECK: usize = 8;

fn lance_err(operation: &'static str) -> impl Fn(lancedb::Error) -> PalaceError {
    move |e| PalaceError::store("lancedb", operation, e)
}

pub(crate) struct Shared {
    pub(crate) opts: LanceOptions,
    schema: SchemaRef,
    connection: OnceCell<Connection>,
    table: OnceCell<Table>,
    writes: AtomicUsize,
    pub(crate) maintenance: Mutex<()>,
    /// Set when a background check is asked for; the run in progress, if any, runs it next.
    check_requested: std::sync::atomic::AtomicBool,
    /// Set once the full-text index on the text column is known to exist.
    text_index: std::sync::atomic::AtomicBool,
    /// Set once the ANN index on the vector column is known to exist (indexes are never
    /// dropped, so a query need not list them again).
    vector_index: std::sync::atomic::AtomicBool,
    /// Set once the table is known to have every later column ([`LaterColumns`]).
    complete: std::sync::atomic::AtomicBool,
    /// Room counts of the latest table version seen.
    room_counts: RoomCountCache,
    /// The table version at this process's last pruning of old versions (0: none yet).
    pub(crate) pruned_at_version: std::sync::atomic::AtomicU64,
}

/// A palace's drawers in an embedded LanceDB table. Cheap to clone; safe to share between
/// tasks, and several processes may open the same folder (every read sees the latest commit).
#[derive(Clone)]
pub struct LanceStore {
    shared: Arc<Shared>,
}

impl LanceStore {
    /// Opens the store. Nothing is created on disk until the first write; an existing table
    /// whose vectors have another dimension is an error naming both.
    pub async fn open(mut opts: LanceOptions) -> Result<Self> {
        if opts.dir.is_relative() {
            let cwd = std::env::current_dir().map_err(|e| PalaceError::Io {
                path: opts.dir.clone(),
                source: e,
            })?;
            opts.dir = cwd.join(&opts.dir);
        }
        let store = LanceStore {
            shared: Arc::new(Shared {
                schema: drawers_schema(opts.dimension),
                opts,
                connection: OnceCell::new(),
                table: OnceCell::new(),
                writes: AtomicUsize::new(0),
                maintenance: Mutex::new(()),
                check_requested: std::sync::atomic::AtomicBool::new(false),
                text_index: std::sync::atomic::AtomicBool::new(false),
                vector_index: std::sync::atomic::AtomicBool::new(false),
                complete: std::sync::atomic::AtomicBool::new(false),
                room_counts: RoomCountCache::default(),
                pruned_at_version: std::sync::atomic::AtomicU64::new(0),
            }),
        };
        store.existing_table().await?;
        Ok(store)
    }

    /// The options in force.
    pub fn options(&self) -> &LanceOptions {
        &self.shared.opts
    }

    async fn connection(&self) -> Result<&Connection> {
        let dir: PathBuf = self.shared.opts.dir.clone();
        self.shared
            .connection
            .get_or_try_init(|| async move {
                lancedb::connect(&dir.to_string_lossy())
                    .read_consistency_interval(Duration::ZERO)
                    .execute()
                    .await
                    .map_err(lance_err("connect"))
            })
            .await
    }

    /// The table if it exists (checking the disk again until it is found); creates nothing.
    async fn existing_table(&self) -> Result<Option<&Table>> {
        if let Some(t) = self.shared.table.get() {
            return Ok(Some(t));
        }
        if !self.shared.opts.dir.exists() {
            return Ok(None);
        }
        let db = self.connection().await?;
        match db.open_table(&self.shared.opts.table).execute().await {
            Ok(t) => {
                self.check_dimension(&t).await?;
                Ok(Some(self.shared.table.get_or_init(|| async { t }).await))
            }
            Err(lancedb::Error::TableNotFound { .. }) => Ok(None),
            Err(e) => Err(lance_err("open_table")(e)),
        }
    }

    async fn check_dimension(&self, table: &Table) -> Result<()> {
        let schema = table.schema().await.map_err(lance_err("open_table"))?;
        let found = vector_dimension(&schema).unwrap_or(0);
        if found != self.shared.opts.dimension {
            return Err(PalaceError::DimensionMismatch {
                expected: found,
                actual: self.shared.opts.dimension,
                context: format!(
                    "table {} in {} holds {found}-dimension vectors; this palace was opened for {}",
                    self.shared.opts.table,
                    self.shared.opts.dir.display(),
                    self.shared.opts.dimension
                ),
            });
        }
        Ok(())
    }

    /// The table, created if missing.
    pub(crate) async fn table(&self) -> Result<&Table> {
        if let Some(t) = self.existing_table().await? {
            return Ok(t);
        }
        let db = self.connection().await?;
        let name = &self.shared.opts.table;
        let table = match db
            .create_empty_table(name.as_str(), Arc::clone(&self.shared.schema))
            .execute()
            .await
        {
            Ok(t) => t,
            Err(lancedb::Error::TableAlreadyExists { .. }) => db
                .open_table(name.as_str())
                .execute()
                .await
                .map_err(lance_err("open_table"))?,
            Err(e) => return Err(lance_err("create_table")(e)),
        };
        self.check_dimension(&table).await?;
        let table = self.shared.table.get_or_init(|| async { table }).await;
        if let Err(e) = self.ensure_text_index(table).await {
            // Not fatal for writes: the next lexical query tries again.
            tracing::warn!(error = %e, "could not create the full-text index yet");
        }
        Ok(table)
    }

    /// Makes sure the full-text (BM25) index on the drawer text exists: tables made before
    /// the lexical channel get it on first use. Two processes may build it at once; the loser
    /// of that race finds it there.
    async fn ensure_text_index(&self, table: &Table) -> Result<()> {
        if self.shared.text_index.load(Ordering::Acquire) {
            return Ok(());
        }
        if !maintenance::has_text_index(table).await?
            && let Err(e) = maintenance::create_text_index(table).await
            && !maintenance::has_text_index(table).await?
        {
            return Err(e);
        }
        self.shared.text_index.store(true, Ordering::Release);
        Ok(())
    }

    /// A write's drawers as rows for the table (created if missing, given the later columns),
    /// after checking every vector, with the positions in `drawers` of the rows written;
    /// `None` for an empty write. The last occurrence of an id wins (Lance refuses ambiguous
    /// merges).
    async fn write_rows(
        &self,
        drawers: &[Drawer],
        vectors: &[Vec<f32>],
        operation: &str,
    ) -> Result<Option<(&Table, Box<dyn RecordBatchReader + Send>, Vec<usize>)>> {
        validate_vector_pairs(drawers, vectors)?;
        for (d, v) in drawers.iter().zip(vectors) {
            self.check_vector(v, &format!("{operation} of {}", d.id))?;
        }
        if drawers.is_empty() {
            self.create_if_missing().await?;
            return Ok(None);
        }
        let mut last: HashMap<&str, usize> = HashMap::new();
        for (i, d) in drawers.iter().enumerate() {
            last.insert(&d.id, i);
        }
        let mut keep: Vec<usize> = last.into_values().collect();
        keep.sort_unstable();
        let rows: Vec<&Drawer> = keep.iter().map(|&i| &drawers[i]).collect();
        let vecs: Vec<&Vec<f32>> = keep.iter().map(|&i| &vectors[i]).collect();
        let table = self.table().await?;
        self.ensure_later_columns(table).await?;
        let batch = drawers_batch(&self.shared.schema, &rows, &vecs)?;
        let reader: Box<dyn RecordBatchReader + Send> = Box::new(RecordBatchIterator::new(
            vec![Ok(batch)],
            Arc::clone(&self.shared.schema),
        ));
        Ok(Some((table, reader, keep)))
    }

    fn check_vector(&self, vector: &[f32], context: &str) -> Result<()> {
        if vector.len() != self.shared.opts.dimension {
            return Err(PalaceError::DimensionMismatch {
                expected: self.shared.opts.dimension,
                actual: vector.len(),
                context: context.to_string(),
            });
        }
        if vector.iter().any(|x| !x.is_finite()) {
            return Err(PalaceError::invalid(
                "vector",
                format!("{context}: contains NaN or infinity"),
            ));
        }
        Ok(())
    }

    /// Compacts small fragments, prunes old versions and builds or updates indexes now, each
    /// index merged into one part.
    pub async fn optimize(&self) -> Result<MaintenanceReport> {
        // One maintenance run at a time in this process: wait for a background one to finish.
        let _guard = self.shared.maintenance.lock().await;
        match self.existing_table().await? {
            Some(t) => maintenance::optimize(&self.shared, t, IndexMerge::Whole).await,
            None => Ok(MaintenanceReport::default()),
        }
    }

    /// Runs the maintenance that is due now (compaction past the fragment limit, the ANN
    /// index past the row threshold, rows the indexes do not cover yet folded in, an index in
    /// more than one part merged), after any background run in this process finishes.
    pub async fn maintain(&self) -> Result<MaintenanceReport> {
        let _guard = self.shared.maintenance.lock().await;
        match self.existing_table().await? {
            Some(t) => maintenance::maintain_if_due(&self.shared, t, 1, IndexMerge::Whole).await,
            None => Ok(MaintenanceReport::default()),
        }
    }

    /// The most rows one of the indexes does not cover yet: queries scan those without the
    /// index until maintenance folds them in.
    pub async fn unindexed_rows(&self) -> Result<usize> {
        match self.existing_table().await? {
            Some(t) => maintenance::unindexed_rows(t).await,
            None => Ok(0),
        }
    }

    /// Parts the ANN index is stored in, 0 without one: a query searches each part on its
    /// own. Background maintenance keeps at most two; `settle` and `optimize` merge them into one.
    pub async fn vector_index_parts(&self) -> Result<u32> {
        match self.existing_table().await? {
            Some(t) => Ok(maintenance::index_states(t)
                .await?
                .iter()
                .filter(|s| s.vector)
                .map(|s| s.parts)
                .sum()),
            None => Ok(0),
        }
    }

    /// Number of data fragments (grows with small writes until compaction).
    pub async fn fragment_count(&self) -> Result<usize> {
        match self.existing_table().await? {
            Some(t) => Ok(t
                .stats()
                .await
                .map_err(lance_err("stats"))?
                .fragment_stats
                .num_fragments),
            None => Ok(0),
        }
    }

    /// Whether the ANN index exists.
    pub async fn has_vector_index(&self) -> Result<bool> {
        match self.existing_table().await? {
            Some(t) => self.vector_index_exists(t).await,
            None => Ok(false),
        }
    }

    /// The nearest `limit` rows to `vector` within `filter` (with `_distance`), through the
    /// vector index when there is one; `None` when the table does not exist yet.
    async fn nearest(
        &self,
        vector: &[f32],
        filter: &DrawerFilter,
        limit: usize,
        columns: Columns,
    ) -> Result<Option<Vec<RecordBatch>>> {
        self.check_vector(vector, "query")?;
        let Some(table) = self.existing_table().await? else {
            return Ok(None);
        };
        if limit == 0 {
            return Ok(Some(Vec::new()));
        }
        let later = self.later_columns(table).await?;
        let selected = match columns {
            Columns::Drawer => neighbour_columns(later),
            Columns::Id => vec![ID_COLUMN, DISTANCE_COLUMN],
        };
        let mut q = table
            .query()
            .nearest_to(vector)
            .map_err(lance_err("query"))?
            .distance_type(DistanceType::Cosine)
            .select(Select::columns(&selected))
            .limit(limit);
        if self.vector_index_exists(table).await? {
            let refine = maintenance::refine_factor(limit, self.shared.opts.refine_factor);
            q = q
                .refine_factor(refine)
                .ef(maintenance::hnsw_ef(limit, refine))
                .nprobes(maintenance::NPROBES)
                .map_err(lance_err("query"))?;
        } else {
            q = q.bypass_vector_index();
        }
        if let Some(p) = filter_predicate(filter, later.dated) {
            q = q.only_if(p);
        }
        let batches = q
            .execute()
            .await
            .map_err(lance_err("query"))?
            .try_collect()
            .await
            .map_err(lance_err("query"))?;
        Ok(Some(batches))
    }

    /// Whether `table` has the ANN index, listing the indexes only until it is found (this
    /// process or another may build it at any time).
    async fn vector_index_exists(&self, table: &Table) -> Result<bool> {
        if self.shared.vector_index.load(Ordering::Acquire) {
            return Ok(true);
        }
        let found = maintenance::has_vector_index(table).await?;
        if found {
            self.shared.vector_index.store(true, Ordering::Release);
        }
        Ok(found)
    }

    /// The later columns `table` has: a table made by an earlier release lacks some until its
    /// first write here (or in another process) adds them; reads meanwhile leave them out
    /// (and date drawers by `filed_at`).
    async fn later_columns(&self, table: &Table) -> Result<LaterColumns> {
        if self.shared.complete.load(Ordering::Acquire) {
            return Ok(LaterColumns::ALL);
        }
        let schema = table.schema().await.map_err(lance_err("schema"))?;
        let later = LaterColumns::of(&schema);
        if later.complete() {
            self.shared.complete.store(true, Ordering::Release);
        }
        Ok(later)
    }

    /// Before a write: gives an older table the later columns it lacks (all null; a
    /// metadata-only commit). Two writers may race; the loser finds them there.
    async fn ensure_later_columns(&self, table: &Table) -> Result<()> {
        let later = self.later_columns(table).await?;
        if later.complete() {
            return Ok(());
        }
        let added = table
            .add_columns()
            .transform(lancedb::table::NewColumnTransform::AllNulls(
                later.missing(),
            ))
            .execute()
            .await;
        if let Err(e) = added
            && !self.later_columns(table).await?.complete()
        {
            return Err(lance_err("add_columns")(e));
        }
        self.shared.complete.store(true, Ordering::Release);
        Ok(())
    }

    /// After a write: every few writes, run the background check (indexing when due, else
    /// compaction of the new fragments), one run at a time. A check asked for while a run is
    /// in progress runs right after it, so none is lost.
    fn after_write(&self) {
        let n = self.shared.writes.fetch_add(1, Ordering::Relaxed) + 1;
        if !n.is_multiple_of(WRITES_PER_MAINTENANCE_CHECK) {
            return;
        }
        self.shared.check_requested.store(true, Ordering::Release);
        let this = self.clone();
        tokio::spawn(async move {
            let Ok(_guard) = this.shared.maintenance.try_lock() else {
                return;
            };
            while this.shared.check_requested.swap(false, Ordering::AcqRel) {
                if let Ok(Some(t)) = this.existing_table().await
                    && let Err(e) = maintenance::maintain_in_background(&this.shared, t).await
                {
                    tracing::warn!(error = %e, "background Lance maintenance failed; it will be retried");
                }
            }
        });
    }

    async fn scan(
        &self,
        table: &Table,
        predicate: Option<String>,
        columns: &[&str],
        page: Option<Page>,
    ) -> Result<Vec<RecordBatch>> {
        let mut q = table.query().select(Select::columns(columns));
        if let Some(p) = predicate {
            q = q.only_if(p);
        }
        if let Some(page) = page {
            q = q
                .order_by(Some(vec![ColumnOrdering::asc_nulls_last(
                    ID_COLUMN.to_string(),
                )]))
                .offset(page.offset)
                .limit(page.limit);
        }
        q.execute()
            .await
            .map_err(lance_err("scan"))?
            .try_collect()
            .await
            .map_err(lance_err("scan"))
    }
}

#[async_trait]
impl VectorStore for LanceStore {
    fn backend_name(&self) -> &'static str {
        "lancedb"
    }

    fn dimension(&self) -> usize {
        self.shared.opts.dimension
    }

    async fn exists(&self) -> Result<bool> {
        Ok(self.existing_table().await?.is_some())
    }

    async fn create_if_missing(&self) -> Result<()> {
        self.table().await.map(|_| ())
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn upsert(&self, drawers: &[Drawer], vectors: &[Vec<f32>]) -> Result<()> {
        let Some((table, rows, _)) = self.write_rows(drawers, vectors, "upsert").await? else {
            return Ok(());
        };
        let mut merge = table.merge_insert(&[ID_COLUMN]);
        merge
            .when_matched_update_all(None)
            .when_not_matched_insert_all();
        merge.execute(rows).await.map_err(lance_err("upsert"))?;
        self.after_write();
        Ok(())
    }

    /// An append: no join against the table's ids, which is most of a one-drawer upsert's
    /// commit.
    #[tracing::instrument(level = "debug", skip_all)]
    async fn insert_new(&self, drawers: &[Drawer], vectors: &[Vec<f32>]) -> Result<()> {
        let Some((table, rows, written)) = self.write_rows(drawers, vectors, "insert_new").await?
        else {
            return Ok(());
        };
        let added = table
            .add(rows)
            .execute()
            .await
            .map_err(lance_err("insert_new"))?;
        let rooms: Vec<(&str, &str)> = written
            .iter()
            .map(|&i| {
                (
                    drawers[i].metadata.wing.as_str(),
                    drawers[i].metadata.room.as_str(),
                )
            })
            .collect();
        self.shared.room_counts.after_append(added.version, &rooms);
        self.after_write();
        Ok(())
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn query(
        &self,
        vector: &[f32],
        filter: &DrawerFilter,
        limit: usize,
    ) -> Result<Vec<Neighbour>> {
        let Some(batches) = self.nearest(vector, filter, limit, Columns::Drawer).await? else {
            return Ok(Vec::new());
        };
        let mut out: Vec<Neighbour> = rows_with_distances(&batches, batch_drawers)?
            .into_iter()
            .map(|(drawer, distance)| Neighbour { drawer, distance })
            .collect();
        rank_neighbours(&mut out, limit);
        Ok(out)
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn nearest_ids(
        &self,
        vector: &[f32],
        filter: &DrawerFilter,
        limit: usize,
    ) -> Result<Vec<NeighbourId>> {
        let Some(batches) = self.nearest(vector, filter, limit, Columns::Id).await? else {
            return Ok(Vec::new());
        };
        let mut out: Vec<NeighbourId> = rows_with_distances(&batches, batch_ids)?
            .into_iter()
            .map(|(id, distance)| NeighbourId { id, distance })
            .collect();
        rank_neighbour_ids(&mut out, limit);
        Ok(out)
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn lexical_query(
        &self,
        text: &str,
        filter: &DrawerFilter,
        limit: usize,
    ) -> Result<Vec<LexicalHit>> {
        let Some(table) = self.existing_table().await? else {
            return Ok(Vec::new());
        };
        if limit == 0 || query_terms(text).is_empty() {
            return Ok(Vec::new());
        }
        if let Err(e) = self.ensure_text_index(table).await {
            // A read-only palace made before the lexical channel: the query below still runs,
            // as a flat scan with the plain tokenizer.
            tracing::warn!(error = %e, "no full-text index on the drawer text; scanning instead");
        }
        let fts = FullTextSearchQuery::new(text.to_string())
            .with_column(TEXT_COLUMN.to_string())
            .map_err(|e| PalaceError::store("lancedb", "lexical_query", e))?;
        let later = self.later_columns(table).await?;
        let mut q = table
            .query()
            .full_text_search(fts)
            .select(Select::columns(&lexical_columns(later)))
            .limit(limit);
        if let Some(p) = filter_predicate(filter, later.dated) {
            q = q.only_if(p);
        }
        let batches: Vec<RecordBatch> = q
            .execute()
            .await
            .map_err(lance_err("lexical_query"))?
            .try_collect()
            .await
            .map_err(lance_err("lexical_query"))?;
        let mut out = Vec::new();
        for batch in &batches {
            let scores = batch
                .column_by_name(SCORE_COLUMN)
                .and_then(|c| c.as_primitive_opt::<Float32Type>())
                .ok_or_else(|| {
                    PalaceError::store("lancedb", "lexical_query", "no _score column in the result")
                })?;
            let vectors = batch_vectors(batch)?;
            for ((i, drawer), vector) in batch_drawers(batch)?.into_iter().enumerate().zip(vectors)
            {
                out.push(LexicalHit {
                    drawer,
                    score: scores.value(i),
                    vector: Some(vector),
                });
            }
        }
        rank_lexical_hits(&mut out, limit);
        Ok(out)
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn get(&self, ids: &[String]) -> Result<Vec<Drawer>> {
        let Some(table) = self.existing_table().await? else {
            return Ok(Vec::new());
        };
        let columns = drawer_columns(self.later_columns(table).await?);
        let mut found: HashMap<String, Drawer> = HashMap::new();
        for chunk in ids.chunks(IDS_PER_QUERY) {
            for batch in self
                .scan(table, Some(ids_predicate(chunk)), &columns, None)
                .await?
            {
                found.extend(
                    batch_drawers(&batch)?
                        .into_iter()
                        .map(|d| (d.id.clone(), d)),
                );
            }
        }
        Ok(ids.iter().filter_map(|id| found.remove(id)).collect())
    }

    async fn delete(&self, ids: &[String]) -> Result<usize> {
        let Some(table) = self.existing_table().await? else {
            return Ok(0);
        };
        let mut deleted = 0;
        for chunk in ids.chunks(IDS_PER_QUERY) {
            let r = table
                .delete(&ids_predicate(chunk))
                .await
                .map_err(lance_err("delete"))?;
            deleted += r.num_deleted_rows as usize;
        }
        if deleted > 0 {
            self.after_write();
        }
        Ok(deleted)
    }

    async fn vectors(&self, ids: &[String]) -> Result<Vec<(String, Vec<f32>)>> {
        let Some(table) = self.existing_table().await? else {
            return Ok(Vec::new());
        };
        let mut found: HashMap<String, Vec<f32>> = HashMap::new();
        for chunk in ids.chunks(IDS_PER_QUERY) {
            for batch in self
                .scan(
                    table,
                    Some(ids_predicate(chunk)),
                    &[ID_COLUMN, VECTOR_COLUMN],
                    None,
                )
                .await?
            {
                found.extend(batch_ids(&batch)?.into_iter().zip(batch_vectors(&batch)?));
            }
        }
        Ok(ids
            .iter()
            .filter_map(|id| found.get(id).map(|v| (id.clone(), v.clone())))
            .collect())
    }

    /// One `UPDATE … SET wing, room WHERE id IN (…)` per destination and id chunk: the rows
    /// keep their vectors and the other columns.
    async fn relocate(&self, moves: &[DrawerMove]) -> Result<usize> {
        let Some(table) = self.existing_table().await? else {
            return Ok(0);
        };
        let mut by_place: BTreeMap<(&str, &str), Vec<String>> = BTreeMap::new();
        for m in moves {
            by_place
                .entry((m.wing.as_str(), m.room.as_str()))
                .or_default()
                .push(m.id.clone());
        }
        let mut moved = 0;
        for ((wing, room), ids) in by_place {
            for chunk in ids.chunks(IDS_PER_QUERY) {
                let r = table
                    .update()
                    .only_if(ids_predicate(chunk))
                    .column("wing", sql_string(wing))
                    .column("room", sql_string(room))
                    .execute()
                    .await
                    .map_err(lance_err("relocate"))?;
                moved += r.rows_updated as usize;
            }
        }
        if moved > 0 {
            self.after_write();
        }
        Ok(moved)
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn count(&self, filter: &DrawerFilter) -> Result<u64> {
        let Some(table) = self.existing_table().await? else {
            return Ok(0);
        };
        Ok(table
            .count_rows(filter_predicate(
                filter,
                self.later_columns(table).await?.dated,
            ))
            .await
            .map_err(lance_err("count"))? as u64)
    }

    async fn health(&self) -> Result<StoreHealth> {
        let mut health = StoreHealth {
            backend: self.backend_name().to_string(),
            ..StoreHealth::default()
        };
        let Some(table) = self.existing_table().await? else {
            return Ok(health);
        };
        health.rows = table.count_rows(None).await.map_err(lance_err("count"))? as u64;
        health.indexes = maintenance::index_states(table)
            .await?
            .into_iter()
            .map(|s| IndexHealth {
                kind: s.kind().to_string(),
                name: s.name,
                unindexed_rows: s.unindexed_rows as u64,
                parts: s.parts,
            })
            .collect();
        health.fragments = Some(
            table
                .stats()
                .await
                .map_err(lance_err("stats"))?
                .fragment_stats
                .num_fragments as u64,
        );
        Ok(health)
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn room_counts(&self, filter: &DrawerFilter) -> Result<Vec<RoomCount>> {
        let Some(table) = self.existing_table().await? else {
            return Ok(Vec::new());
        };
        // The version check is the read of the latest commit every query makes anyway; an
        // unchanged table answers from memory.
        let version = table.version().await.map_err(lance_err("room_counts"))?;
        let predicate = filter_predicate(filter, self.later_columns(table).await?.dated);
        if let Some(counts) = self.shared.room_counts.get(version, &predicate) {
            return Ok(counts);
        }
        let mut counts: BTreeMap<(String, String), u64> = BTreeMap::new();
        // Only the two columns are read, never the vectors.
        for batch in self
            .scan(table, predicate.clone(), &["wing", "room"], None)
            .await?
        {
            for key in batch_wing_rooms(&batch)? {
                *counts.entry(key).or_default() += 1;
            }
        }
        let counts: Vec<RoomCount> = counts
            .into_iter()
            .map(|((wing, room), count)| RoomCount { wing, room, count })
            .collect();
        self.shared.room_counts.put(version, predicate, &counts);
        Ok(counts)
    }

    async fn list(&self, filter: &DrawerFilter, page: Page) -> Result<Vec<Drawer>> {
        let Some(table) = self.existing_table().await? else {
            return Ok(Vec::new());
        };
        if page.limit == 0 {
            return Ok(Vec::new());
        }
        let later = self.later_columns(table).await?;
        let mut out = Vec::new();
        for batch in self
            .scan(
                table,
                filter_predicate(filter, later.dated),
                &drawer_columns(later),
                Some(page),
            )
            .await?
        {
            out.extend(batch_drawers(&batch)?);
        }
        Ok(out)
    }

    async fn recent(&self, filter: &DrawerFilter, limit: usize) -> Result<Vec<Drawer>> {
        let Some(table) = self.existing_table().await? else {
            return Ok(Vec::new());
        };
        if limit == 0 {
            return Ok(Vec::new());
        }
        // Order the two small columns only, then read the chosen drawers whole.
        let later = self.later_columns(table).await?;
        let mut q = table
            .query()
            .select(Select::columns(&[ID_COLUMN, "filed_at"]))
            .order_by(Some(vec![
                ColumnOrdering::desc_nulls_last("filed_at".to_string()),
                ColumnOrdering::asc_nulls_last(ID_COLUMN.to_string()),
            ]))
            .limit(limit);
        if let Some(p) = filter_predicate(filter, later.dated) {
            q = q.only_if(p);
        }
        let batches: Vec<RecordBatch> = q
            .execute()
            .await
            .map_err(lance_err("recent"))?
            .try_collect()
            .await
            .map_err(lance_err("recent"))?;
        let mut ids = Vec::new();
        for batch in &batches {
            ids.extend(batch_ids(batch)?);
        }
        self.get(&ids).await
    }

    async fn settle(&self) -> Result<()> {
        self.maintain().await.map(|_| ())
    }

    async fn snapshot_into(&self, palace_dir: &std::path::Path) -> Result<bool> {
        let Some(table) = self.existing_table().await? else {
            return Ok(false);
        };
        let Some(wrapper) = table.dataset() else {
            return Err(PalaceError::no_snapshot(self.backend_name()));
        };
        let mut dataset = (*wrapper.get().await.map_err(lance_err("snapshot"))?).clone();
        // The newest commit on disk, whoever wrote it: the copy is that version, file for
        // file (data, deletions, indexes), whatever writers commit meanwhile.
        let version = dataset
            .latest_version_id()
            .await
            .map_err(|e| PalaceError::store("lancedb", "snapshot", e))?;
        let target = palace_dir
            .join(mempalace_core::PalaceLayout::LANCE_DIR)
            .join(format!("{}.lance", self.shared.opts.table));
        let uri = target.to_str().ok_or_else(|| {
            PalaceError::invalid(
                "backup folder",
                format!("{} is not UTF-8", target.display()),
            )
        })?;
        dataset
            .deep_clone(uri, version, None)
            .await
            .map_err(|e| PalaceError::store("lancedb", "snapshot", e))?;
        Ok(true)
    }

    async fn rebuild_indexes(&self) -> Result<()> {
        let _guard = self.shared.maintenance.lock().await;
        if let Some(table) = self.existing_table().await? {
            // Until the full-text index is back, writes check for it again.
            self.shared.text_index.store(false, Ordering::Release);
            maintenance::rebuild_indexes(&self.shared, table).await?;
            self.shared.text_index.store(true, Ordering::Release);
        }
        Ok(())
    }
}
