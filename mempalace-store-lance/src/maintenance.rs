//! Keeping a Lance table fast: compaction of small fragments, the ANN index once the table is
//! large, scalar indexes on wing and room.

use std::sync::atomic::Ordering;

use lance::dataset::cleanup::CleanupPolicyBuilder;
use lancedb::index::Index;
use lancedb::index::scalar::{BitmapIndexBuilder, FtsIndexBuilder};
use lancedb::index::vector::IvfHnswSqIndexBuilder;
use lancedb::table::{CompactionOptions, OptimizeAction, OptimizeOptions};
use lancedb::{DistanceType, Table};
use mempalace_core::{PalaceError, Result};
use serde::Serialize;

use crate::schema::{TEXT_COLUMN, VECTOR_COLUMN};
use crate::store::Shared;

/// IVF partitions probed per query when the ANN index is used.
pub(crate) const NPROBES: usize = 20;
/// Rows re-ranked with exact distances per query: enough to correct the 8-bit quantisation.
const REFINE_ROWS: usize = 120;

/// The re-rank factor for a query of `limit` rows: `max_factor` for small limits, less for
/// large ones (at least 2), so about [`REFINE_ROWS`] rows are read back exactly, not
/// `limit × max_factor` of them.
pub(crate) fn refine_factor(limit: usize, max_factor: u32) -> u32 {
    let wanted = REFINE_ROWS.div_ceil(limit.max(1)).max(2);
    (wanted.min(max_factor.max(1) as usize)) as u32
}

/// Smallest HNSW search breadth.
const HNSW_EF: usize = 128;

/// HNSW search breadth for a query of `limit` rows re-ranked from `limit × refine` candidates:
/// Lance refuses a breadth below the candidate count, and a breadth of 1.5 × the candidates
/// keeps recall at large limits.
pub(crate) fn hnsw_ef(limit: usize, refine: u32) -> usize {
    let candidates = limit.saturating_mul(refine as usize);
    HNSW_EF.max(candidates.saturating_add(candidates / 2))
}

/// What a maintenance run did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct MaintenanceReport {
    /// Fragments before.
    pub fragments_before: usize,
    /// Fragments after.
    pub fragments_after: usize,
    /// Whether the ANN index was created in this run.
    pub built_vector_index: bool,
    /// Old table versions deleted in this run.
    pub versions_pruned: u64,
}

fn lance_err(operation: &'static str) -> impl Fn(lancedb::Error) -> PalaceError {
    move |e| PalaceError::store("lancedb", operation, e)
}

/// Whether the table has an index covering `column`.
async fn has_index_on(table: &Table, column: &str) -> Result<bool> {
    let indices = table
        .list_indices()
        .await
        .map_err(lance_err("list_indices"))?;
    Ok(indices
        .iter()
        .any(|i| i.columns.iter().any(|c| c == column)))
}

/// Whether the table has an index on the vector column.
pub(crate) async fn has_vector_index(table: &Table) -> Result<bool> {
    has_index_on(table, VECTOR_COLUMN).await
}

/// Whether the table has the full-text index on the drawer text.
pub(crate) async fn has_text_index(table: &Table) -> Result<bool> {
    has_index_on(table, TEXT_COLUMN).await
}

/// Builds the full-text (BM25) index on the drawer text: Unicode words, lower-cased, English
/// stems, stop words dropped, accents folded. Rows written later are searched before they are
/// indexed and folded into the index by [`optimize`].
pub(crate) async fn create_text_index(table: &Table) -> Result<()> {
    let params = FtsIndexBuilder::default()
        .base_tokenizer("simple".to_string())
        .lower_case(true)
        .stem(true)
        .remove_stop_words(true)
        .ascii_folding(true)
        .with_position(false)
        .max_token_length(Some(40));
    table
        .create_index(&[TEXT_COLUMN], Index::FTS(params))
        .replace(false)
        .execute()
        .await
        .map_err(lance_err("create_text_index"))
}

/// Rows written since the indexes were last updated above which a background run folds them
/// in: until then every query scans them without the index (the full-text channel tokenises
/// each of them per query).
pub(crate) const UNINDEXED_ROWS_LIMIT: usize = 1_000;

/// How far a maintenance run folds each index's parts together. Lance adds the rows an index
/// does not cover yet as a new part (a delta), and a query searches every part on its own: a
/// vector index in seven parts made a query at 10k drawers about twice as slow as one part.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum IndexMerge {
    /// Into one part, rebuilding the whole index: at the end of batch work (`settle`, after
    /// `mine` or `migrate`) and on an explicit `optimize`.
    Whole,
    /// Into at most two parts, the base and one delta holding every row added since: a
    /// background run then costs what was written since the base, not the whole table.
    KeepBase,
}

impl IndexMerge {
    /// The most parts `index` may have after a run with this policy.
    fn max_parts(self, index: &IndexState) -> u32 {
        match self {
            IndexMerge::KeepBase if index.vector => 2,
            _ => 1,
        }
    }

    /// Lance's optimize options for `index`: with `num_indices_to_merge = N` Lance merges the
    /// newest N parts and the uncovered rows into one. Scalar indexes (wing, room, full text)
    /// are cheap to rebuild and are always merged whole, as Lance's default does.
    fn options(self, index: &IndexState) -> OptimizeOptions {
        let merge = match self {
            // The base stays; the delta (if any) absorbs the new rows.
            IndexMerge::KeepBase if index.vector => index.parts.saturating_sub(1),
            _ => index.parts,
        };
        OptimizeOptions::merge(merge as usize).index_names(vec![index.name.clone()])
    }
}

/// What one of the table's indexes covers and how many parts it has.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct IndexState {
    /// The index's name.
    pub(crate) name: String,
    /// Rows the index does not cover yet.
    pub(crate) unindexed_rows: usize,
    /// Parts the index is stored in (each searched separately).
    pub(crate) parts: u32,
    /// Whether it indexes the vector column.
    pub(crate) vector: bool,
    /// Whether it is the full-text index of the text column.
    pub(crate) full_text: bool,
}

impl IndexState {
    /// What it indexes, as `repair-status` names it.
    pub(crate) fn kind(&self) -> &'static str {
        if self.vector {
            "vector"
        } else if self.full_text {
            "full_text"
        } else {
            "scalar"
        }
    }
}

/// The state of each of the table's indexes.
pub(crate) async fn index_states(table: &Table) -> Result<Vec<IndexState>> {
    let mut states = Vec::new();
    for index in table
        .list_indices()
        .await
        .map_err(lance_err("list_indices"))?
    {
        if let Some(stats) = table
            .index_stats(&index.name)
            .await
            .map_err(lance_err("index_stats"))?
        {
            states.push(IndexState {
                vector: index.columns.iter().any(|c| c == VECTOR_COLUMN),
                full_text: index.columns.iter().any(|c| c == TEXT_COLUMN),
                name: index.name,
                unindexed_rows: stats.num_unindexed_rows,
                parts: stats.num_indices.unwrap_or(1).max(1),
            });
        }
    }
    Ok(states)
}

/// The most rows that one of the table's indexes does not cover yet.
pub(crate) async fn unindexed_rows(table: &Table) -> Result<usize> {
    Ok(index_states(table)
        .await?
        .iter()
        .map(|s| s.unindexed_rows)
        .max()
        .unwrap_or(0))
}

/// What a look at the table before maintenance found.
struct TableCheck {
    /// Whether maintenance is due.
    due: bool,
    /// The table's fragments.
    fragments: usize,
}

/// Whether maintenance is due: the table has more than `compaction_fragments` fragments, has
/// outgrown exact search, has at least `unindexed_limit` rows (at least 1) that its indexes
/// do not cover yet, or has an index in more parts than `merge` leaves.
async fn check(
    shared: &Shared,
    table: &Table,
    unindexed_limit: usize,
    merge: IndexMerge,
) -> Result<TableCheck> {
    let stats = table.stats().await.map_err(lance_err("stats"))?;
    let indexes = index_states(table).await?;
    let fragments = stats.fragment_stats.num_fragments;
    let due = fragments > shared.opts.compaction_fragments
        || (stats.num_rows >= shared.opts.index_threshold && !indexes.iter().any(|s| s.vector))
        || indexes
            .iter()
            .any(|s| s.unindexed_rows >= unindexed_limit.max(1) || s.parts > merge.max_parts(s));
    Ok(TableCheck { due, fragments })
}

/// Runs maintenance when it is [due](check).
pub(crate) async fn maintain_if_due(
    shared: &Shared,
    table: &Table,
    unindexed_limit: usize,
    merge: IndexMerge,
) -> Result<MaintenanceReport> {
    if check(shared, table, unindexed_limit, merge).await?.due {
        optimize(shared, table, merge).await
    } else {
        Ok(MaintenanceReport::default())
    }
}

/// The check a writer runs in the background every few writes: the maintenance that is due
/// (new rows folded in from [`UNINDEXED_ROWS_LIMIT`] on, the vector index kept in at most two
/// parts), or else [`compact_new_fragments`].
pub(crate) async fn maintain_in_background(
    shared: &Shared,
    table: &Table,
) -> Result<MaintenanceReport> {
    let found = check(shared, table, UNINDEXED_ROWS_LIMIT, IndexMerge::KeepBase).await?;
    if found.due {
        // A full run prunes as well.
        return optimize(shared, table, IndexMerge::KeepBase).await;
    }
    let mut report = compact_new_fragments(table, found.fragments).await?;
    report.versions_pruned = prune_if_history_grew(shared, table).await?;
    Ok(report)
}

/// [`prune_old_versions`] once the table has gained twice `keep_versions` versions since
/// this process last pruned (or, in a new process, has that many at all): a server that
/// only files notes rarely needs the full maintenance run that prunes too, and its history
/// would otherwise grow between those runs.
async fn prune_if_history_grew(shared: &Shared, table: &Table) -> Result<u64> {
    let latest = table.version().await.map_err(lance_err("version"))?;
    let last = shared.pruned_at_version.load(Ordering::Acquire);
    if latest < last.saturating_add(shared.opts.keep_versions.saturating_mul(2)) {
        return Ok(0);
    }
    prune_old_versions(shared, table).await
}

/// Attempts of a maintenance run that lost a commit race to another writer (a process building
/// the same index, or compacting, at the same moment).
const CONFLICT_ATTEMPTS: u32 = 5;

/// Whether a Lance error is a commit conflict that a retry on the latest version resolves.
/// lancedb wraps Lance's `RetryableCommitConflict` without a matchable variant, so this reads
/// the message.
fn is_retryable_conflict(e: &PalaceError) -> bool {
    let text = e.to_string();
    text.contains("Retryable commit conflict") || text.contains("preempted by concurrent")
}

/// Runs `attempt` again (up to [`CONFLICT_ATTEMPTS`] times, on the latest table version) when
/// another writer's maintenance commits first: the indexes it built are then seen and not
/// built twice, the fragments it merged are not merged again.
async fn retrying_conflicts<T, F>(mut attempt: impl FnMut() -> F) -> Result<T>
where
    F: std::future::Future<Output = Result<T>>,
{
    let mut tries = 1;
    loop {
        match attempt().await {
            Err(e) if tries < CONFLICT_ATTEMPTS && is_retryable_conflict(&e) => {
                tracing::debug!(attempt = tries, error = %e, "Lance maintenance lost a commit race; retrying");
                tokio::time::sleep(std::time::Duration::from_millis(50 * u64::from(tries))).await;
                tries += 1;
            }
            other => return other,
        }
    }
}

/// Merges neighbouring small fragments that the same indexes cover (Lance keeps fragments
/// covered by different indexes apart) and remaps the indexes; returns how many fragments
/// fewer the table has.
async fn compact(table: &Table) -> Result<usize> {
    let stats = table
        .optimize(OptimizeAction::Compact {
            options: CompactionOptions::default(),
            remap_options: None,
        })
        .await
        .map_err(lance_err("compact"))?;
    Ok(stats
        .compaction
        .map_or(0, |m| m.fragments_removed.saturating_sub(m.fragments_added)))
}

/// Deletes the table versions (and the files only they use) that are both older than
/// [`LanceOptions::keep_versions_for`](crate::LanceOptions) and further back than
/// `keep_versions`. Lance's own default keeps every version for a week: each `add_drawer`
/// makes one, and every read or write lists them all to find the latest (measured with the
/// release server at 10k drawers, 3,354 versions against 108: add_drawer p50 2–5 ms slower,
/// status 2.0–2.3 ms against 0.55–0.60). The newest versions stay however old,
/// so a reader in another process that opened one a moment before still finds its files.
async fn prune_old_versions(shared: &Shared, table: &Table) -> Result<u64> {
    let Some(dataset) = table.dataset() else {
        return Ok(0);
    };
    let dataset = dataset.get().await.map_err(lance_err("prune"))?;
    let latest = dataset.version().version;
    let Some(before) = chrono::Duration::from_std(shared.opts.keep_versions_for)
        .ok()
        .and_then(|age| chrono::Utc::now().checked_sub_signed(age))
    else {
        return Ok(0);
    };
    let mut policy = CleanupPolicyBuilder::default()
        .before_timestamp(before)
        .error_if_tagged_old_versions(false)
        .build();
    policy.before_version = Some(latest.saturating_sub(shared.opts.keep_versions).max(1));
    let removed = dataset
        .cleanup_with_policy(policy)
        .await
        .map_err(|e| PalaceError::store("lancedb", "prune", e))?;
    shared.pruned_at_version.fetch_max(latest, Ordering::AcqRel);
    Ok(removed.old_versions)
}

/// [`optimize_once`], retried when another writer's maintenance commits first.
pub(crate) async fn optimize(
    shared: &Shared,
    table: &Table,
    merge: IndexMerge,
) -> Result<MaintenanceReport> {
    retrying_conflicts(|| optimize_once(shared, table, merge)).await
}

/// Drops every index of the table and builds them again from its rows: the full-text index,
/// and the vector and scalar indexes once the table has reached the threshold (`repair`: an
/// index whose files were deleted or damaged answers again).
pub(crate) async fn rebuild_indexes(shared: &Shared, table: &Table) -> Result<MaintenanceReport> {
    for index in table
        .list_indices()
        .await
        .map_err(lance_err("list_indices"))?
    {
        table
            .drop_index(&index.name)
            .await
            .map_err(lance_err("drop_index"))?;
    }
    create_text_index(table).await?;
    optimize(shared, table, IndexMerge::Whole).await
}

/// Merges the small fragments that writes have added since the indexes were last updated,
/// without updating the indexes. Each write adds a fragment (one row for one `add_drawer`),
/// and every query opens each of them on its own: twenty one-row fragments made a search at
/// 10k drawers about a third slower. Lance merges only neighbouring fragments that the same
/// indexes cover, so this rewrites the rows the indexes do not cover yet (fewer than
/// [`UNINDEXED_ROWS_LIMIT`] in a background run), not the table.
/// `fragments` is the table's count from the check that led here.
pub(crate) async fn compact_new_fragments(
    table: &Table,
    fragments: usize,
) -> Result<MaintenanceReport> {
    let merged = retrying_conflicts(|| compact(table)).await?;
    Ok(MaintenanceReport {
        fragments_before: fragments,
        fragments_after: fragments.saturating_sub(merged),
        built_vector_index: false,
        versions_pruned: 0,
    })
}

/// Compacts and prunes, creates the indexes when the table has reached the threshold, and
/// folds new rows into existing indexes, merging their parts as `merge` says.
async fn optimize_once(
    shared: &Shared,
    table: &Table,
    merge: IndexMerge,
) -> Result<MaintenanceReport> {
    let before = table.stats().await.map_err(lance_err("stats"))?;
    let mut report = MaintenanceReport {
        fragments_before: before.fragment_stats.num_fragments,
        ..MaintenanceReport::default()
    };
    if before.num_rows >= shared.opts.index_threshold && !has_vector_index(table).await? {
        // HNSW over 8-bit scalar-quantised vectors, one IVF partition per million rows;
        // queries re-rank with exact distances (refine_factor).
        let partitions = (before.num_rows / 1_000_000).clamp(1, 64) as u32;
        table
            .create_index(
                &[VECTOR_COLUMN],
                Index::IvfHnswSq(
                    IvfHnswSqIndexBuilder::default()
                        .distance_type(DistanceType::Cosine)
                        .num_partitions(partitions),
                ),
            )
            .execute()
            .await
            .map_err(lance_err("create_vector_index"))?;
        for column in ["wing", "room"] {
            table
                .create_index(&[column], Index::Bitmap(BitmapIndexBuilder::default()))
                .execute()
                .await
                .map_err(lance_err("create_scalar_index"))?;
        }
        report.built_vector_index = true;
    }
    // Lance's `OptimizeAction::All`, but with the index step told how far to merge: its
    // default adds a new part per run, and the parts pile up under a stream of writes.
    compact(table).await?;
    report.versions_pruned = prune_old_versions(shared, table).await?;
    for index in index_states(table).await? {
        if index.unindexed_rows == 0 && index.parts <= merge.max_parts(&index) {
            continue;
        }
        table
            .optimize(OptimizeAction::Index(merge.options(&index)))
            .await
            .map_err(lance_err("optimize_index"))?;
    }
    if merge == IndexMerge::Whole {
        // Every fragment is now under the same indexes, so the fragments that compaction had
        // to keep apart (their rows were indexed at different times) merge too: a settled
        // table is one fragment, not the three or so that mining leaves.
        compact(table).await?;
    }
    report.fragments_after = table
        .stats()
        .await
        .map_err(lance_err("stats"))?
        .fragment_stats
        .num_fragments;
    Ok(report)
}
