//! Opening a palace on a chosen stack: LanceDB (default) or Qdrant for drawers, SQLite
//! (default) or PostgreSQL for the knowledge graph, all-MiniLM-L6-v2 (loaded lazily) for
//! embeddings.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, Result};
use mempalace_closets_sqlite::SqliteClosets;
use mempalace_coord_sqlite::SqliteCoordinationLog;
use mempalace_core::locations;
use mempalace_core::{Embedder, Fusion, KnowledgeGraph, LazyEmbedder, Palace, VectorStore};
use mempalace_embed_candle::{DIMENSION, MODEL_NAME, MiniLmEmbedder};
use mempalace_kg_postgres::{PostgresKnowledgeGraph, SchemaName};
use mempalace_kg_sqlite::SqliteKnowledgeGraph;
use mempalace_links_json::JsonFileLinks;
use mempalace_store_lance::{LanceOptions, LanceStore};
use mempalace_store_qdrant::{QdrantOptions, QdrantStore};

use crate::palace_config::{BackendKind, KgBackend, PalaceConfig, collection_for, palace_id_for};

/// Folder of the LanceDB database inside the palace.
pub const LANCE_DIR: &str = "lance";

/// How to open a palace.
#[derive(Debug, Clone)]
pub struct StackOptions {
    /// The palace folder.
    pub palace_path: PathBuf,
    /// Whether the palace was named with `--palace` (its knowledge graph is then always its
    /// own; see `mempalace_core::locations`).
    pub palace_explicit: bool,
    /// The vector store; `None` means the palace's recorded one, else LanceDB.
    pub backend: Option<BackendKind>,
    /// Qdrant URL (default http://localhost:6334).
    pub qdrant_url: Option<String>,
    /// Qdrant API key.
    pub qdrant_api_key: Option<String>,
    /// PostgreSQL URL for a shared knowledge graph (a new palace keeps its graph there).
    pub kg_postgres_url: Option<String>,
    /// LanceDB table / Qdrant collection for a new palace; `None` means the recorded one,
    /// else `mempalace_drawers`.
    pub collection: Option<String>,
    /// Model folder override.
    pub model_dir: Option<PathBuf>,
}

impl StackOptions {
    /// The embedded default (LanceDB + SQLite, the default collection and model) at an
    /// explicitly named palace folder: what the benches and example programs open.
    pub fn embedded(palace_path: impl Into<PathBuf>) -> Self {
        StackOptions {
            palace_path: palace_path.into(),
            palace_explicit: true,
            backend: None,
            qdrant_url: None,
            qdrant_api_key: None,
            kg_postgres_url: None,
            collection: None,
            model_dir: None,
        }
    }
}

/// The embedder of the default stack, loaded on first use.
pub fn lazy_minilm(model_dir: Option<PathBuf>) -> Arc<LazyEmbedder> {
    Arc::new(LazyEmbedder::new(MODEL_NAME, DIMENSION, move || {
        let started = std::time::Instant::now();
        let model = MiniLmEmbedder::load_resolved(model_dir.as_deref())?;
        tracing::info!(
            elapsed_ms = started.elapsed().as_millis() as u64,
            "model loaded"
        );
        Ok(Arc::new(model) as Arc<dyn Embedder>)
    }))
}

/// The palace's config as `opts` asks for it: the recorded `palace.json` when there is one
/// (a backend or collection that contradicts it is an error), else a new one. A palace gets
/// its id here, and a new Qdrant palace a collection named for that id.
pub fn resolve_config(
    opts: &StackOptions,
    recorded: Option<&PalaceConfig>,
    model: &str,
    dimension: usize,
) -> Result<PalaceConfig> {
    let path = &opts.palace_path;
    let mut config = recorded.cloned().unwrap_or_else(|| {
        PalaceConfig::new(
            opts.backend.unwrap_or(BackendKind::Lancedb),
            model,
            dimension,
        )
    });
    if let Some(b) = opts.backend {
        if recorded.is_some() && b != config.backend {
            anyhow::bail!(
                "the palace at {} uses the {:?} backend; it cannot be opened as {:?}",
                path.display(),
                config.backend,
                b
            );
        }
        config.backend = b;
    }
    if let Some(url) = &opts.qdrant_url {
        config.qdrant_url = Some(url.clone());
    }
    let palace_id = config
        .palace_id
        .clone()
        .unwrap_or_else(|| palace_id_for(path));
    config.palace_id = Some(palace_id.clone());
    match (recorded.map(|r| r.knowledge_graph), &opts.kg_postgres_url) {
        (None, Some(_)) => {
            config.knowledge_graph = KgBackend::Postgres;
            config.kg_schema = Some(SchemaName::for_palace(&palace_id)?.as_str().to_string());
        }
        (Some(KgBackend::Sqlite), Some(_)) => anyhow::bail!(
            "the palace at {} keeps its knowledge graph in SQLite; it cannot be opened with a PostgreSQL URL",
            path.display()
        ),
        _ => {}
    }
    match &opts.collection {
        Some(collection) if recorded.is_some() && *collection != config.table => {
            anyhow::bail!(
                "the palace at {} keeps its drawers in {:?}; it cannot be opened with --collection {:?}",
                path.display(),
                config.table,
                collection
            );
        }
        Some(collection) => config.table = collection.clone(),
        // One palace, one collection: two palaces on one Qdrant server never share one.
        None if recorded.is_none() && config.backend == BackendKind::Qdrant => {
            config.table = collection_for(&palace_id);
        }
        None => {}
    }
    Ok(config)
}

/// Opens (without creating) the palace described by `opts`, with `embedder`.
pub async fn open_palace(opts: &StackOptions, embedder: Arc<dyn Embedder>) -> Result<Palace> {
    let path = &opts.palace_path;
    let recorded = PalaceConfig::load(path)?;
    let config = resolve_config(
        opts,
        recorded.as_ref(),
        embedder.model_name(),
        embedder.dimension(),
    )?;
    config.check_embedder(embedder.model_name(), embedder.dimension(), path)?;

    let store: Arc<dyn VectorStore> = match config.backend {
        BackendKind::Lancedb => {
            // LanceDB addresses its files by a UTF-8 URI: a lossy conversion would put the data
            // in a sibling folder, so such a path is refused instead.
            let lance_dir = path.join(LANCE_DIR);
            if lance_dir.to_str().is_none() {
                anyhow::bail!(
                    "the palace path {} is not valid UTF-8, which the LanceDB backend cannot address; choose another folder",
                    path.display()
                );
            }
            Arc::new(
                LanceStore::open(
                    LanceOptions::new(lance_dir, config.dimension).with_table(&config.table),
                )
                .await
                .context("opening the LanceDB store")?,
            )
        }
        BackendKind::Qdrant => {
            let url = config
                .qdrant_url
                .clone()
                .unwrap_or_else(|| QdrantOptions::DEFAULT_URL.to_string());
            let mut q = QdrantOptions::new(url, config.dimension).with_collection(&config.table);
            q.api_key = opts.qdrant_api_key.clone();
            if let Some(id) = &config.palace_id {
                q = q.with_owner(id.clone());
            }
            Arc::new(
                QdrantStore::connect(q)
                    .await
                    .context("connecting to Qdrant")?,
            )
        }
    };
    let kg: Arc<dyn KnowledgeGraph> = match config.knowledge_graph {
        KgBackend::Sqlite => Arc::new(SqliteKnowledgeGraph::open(locations::knowledge_graph_path(
            path,
            opts.palace_explicit,
        ))),
        KgBackend::Postgres => {
            let local = locations::knowledge_graph_path(path, opts.palace_explicit);
            if recorded.is_none() && local.exists() {
                anyhow::bail!(
                    "the palace at {} keeps its knowledge graph in SQLite ({}); it cannot be opened with a PostgreSQL URL",
                    path.display(),
                    local.display()
                );
            }
            let schema = config.kg_schema.as_deref().unwrap_or_default();
            let Some(url) = &opts.kg_postgres_url else {
                anyhow::bail!(
                    "the palace at {} keeps its knowledge graph in PostgreSQL (schema {schema}); set MEMPALACE_KG_POSTGRES_URL",
                    path.display()
                );
            };
            let mut graph = PostgresKnowledgeGraph::connect(url, SchemaName::new(schema)?)
                .context("opening the PostgreSQL knowledge graph")?;
            if let Some(id) = &config.palace_id {
                graph = graph.with_owner(id.clone());
            }
            Arc::new(graph)
        }
    };
    // A palace that exists gets its palace.json (palaces created by a first MCP write have
    // none yet, older ones no id), and so does a folder whose graph is in PostgreSQL (so every
    // later open finds it there; a folder that does not exist, a typo, is not created by a
    // read); best effort, so a read-only palace still opens.
    let needs_record = recorded.as_ref().is_none_or(|r| r.palace_id.is_none());
    if needs_record
        && ((config.knowledge_graph == KgBackend::Postgres && path.is_dir())
            || store.exists().await?)
        && let Err(e) = config.save(path)
    {
        tracing::warn!(error = %format!("{e:#}"), "could not record palace.json; continuing");
    }
    let mut palace = Palace::new(path, embedder, store, kg)?;
    if config.backend == BackendKind::Qdrant {
        // A collection other hosts may write: the palace's lock file does not reach them.
        palace = palace.with_cross_host_dedup(dedup_settle_from_env()?);
    }
    Ok(palace
        .with_fusion(fusion_from_env()?)
        .with_coordination_log(Arc::new(SqliteCoordinationLog::in_palace(path)))
        .with_links(Arc::new(JsonFileLinks::new(path)))
        .with_closets(Arc::new(SqliteClosets::in_palace(path))))
}

/// How long `add_drawer` on a shared (Qdrant) store waits before its second duplicate
/// look, in milliseconds (default 300, at least 50; see `Palace::with_cross_host_dedup`).
pub const DEDUP_SETTLE_ENV: &str = "MEMPALACE_DEDUP_SETTLE_MS";

/// The settle time in [`DEDUP_SETTLE_ENV`], else the default.
pub fn dedup_settle_from_env() -> Result<std::time::Duration> {
    match std::env::var(DEDUP_SETTLE_ENV) {
        Err(_) => Ok(mempalace_core::palace::DEFAULT_SETTLE),
        Ok(v) => match v.trim().parse::<u64>() {
            Ok(ms) if (50..=60_000).contains(&ms) => Ok(std::time::Duration::from_millis(ms)),
            _ => anyhow::bail!(
                "{DEDUP_SETTLE_ENV}={v:?} is not a number of milliseconds from 50 to 60000"
            ),
        },
    }
}

/// MemPalace 3.11's variables for the hybrid weights.
pub const VECTOR_WEIGHT_ENV: &str = "MEMPALACE_HYBRID_VECTOR_WEIGHT";
/// See [`VECTOR_WEIGHT_ENV`].
pub const LEXICAL_WEIGHT_ENV: &str = "MEMPALACE_HYBRID_BM25_WEIGHT";

/// Selects a ranking by name: `default`, or `mempalace-3.11` for [`Fusion::mempalace_3_11`].
pub const RANKING_ENV: &str = "MEMPALACE_RANKING";

/// The hybrid ranking: [`Fusion::default`] or the one `MEMPALACE_RANKING` names, with the
/// weights set in `MEMPALACE_HYBRID_VECTOR_WEIGHT` / `MEMPALACE_HYBRID_BM25_WEIGHT` (as
/// MemPalace 3.11 reads them; non-negative numbers, not both zero).
pub fn fusion_from_env() -> Result<Fusion> {
    let mut fusion = match std::env::var(RANKING_ENV) {
        Err(_) => Fusion::default(),
        Ok(v) => match v.trim() {
            "" | "default" => Fusion::default(),
            "mempalace-3.11" => Fusion::mempalace_3_11(),
            other => anyhow::bail!(
                "{RANKING_ENV}={other:?} is not a ranking (default or mempalace-3.11)"
            ),
        },
    };
    let read = |name: &str| -> Result<Option<f64>> {
        match std::env::var(name) {
            Ok(v) if !v.trim().is_empty() => {
                let w: f64 = v
                    .trim()
                    .parse()
                    .with_context(|| format!("{name}={v:?} is not a number"))?;
                if !w.is_finite() || w < 0.0 {
                    anyhow::bail!("{name}={v:?} must be a non-negative number");
                }
                Ok(Some(w))
            }
            _ => Ok(None),
        }
    };
    if let Some(w) = read(VECTOR_WEIGHT_ENV)? {
        fusion.vector_weight = w;
    }
    if let Some(w) = read(LEXICAL_WEIGHT_ENV)? {
        fusion.lexical_weight = w;
    }
    if fusion.vector_weight + fusion.lexical_weight <= 0.0 {
        anyhow::bail!("{VECTOR_WEIGHT_ENV} and {LEXICAL_WEIGHT_ENV} must not both be 0");
    }
    Ok(fusion)
}

/// Creates the palace (store, graph and palace.json) if missing.
pub async fn create_palace(palace: &Palace, opts: &StackOptions) -> Result<()> {
    palace.init().await?;
    let recorded = PalaceConfig::load(&opts.palace_path)?;
    if recorded.as_ref().is_none_or(|r| r.palace_id.is_none()) {
        let config = resolve_config(
            opts,
            recorded.as_ref(),
            palace.embedder().model_name(),
            palace.embedder().dimension(),
        )?;
        config.save(&opts.palace_path)?;
    }
    Ok(())
}
