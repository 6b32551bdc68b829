//! Opening a palace on a chosen stack: LanceDB (default) or Qdrant for drawers, SQLite for the
//! knowledge graph, all-MiniLM-L6-v2 (loaded lazily) for embeddings.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, Result};
use mempalace_core::{Embedder, KnowledgeGraph, LazyEmbedder, Palace, VectorStore};
use mempalace_embed_candle::{DIMENSION, MODEL_NAME, MiniLmEmbedder};
use mempalace_kg_sqlite::SqliteKnowledgeGraph;
use mempalace_store_lance::{LanceOptions, LanceStore};
use mempalace_store_qdrant::{QdrantOptions, QdrantStore};

use crate::palace_config::{BackendKind, PalaceConfig};

/// Folder of the LanceDB database inside the palace.
pub const LANCE_DIR: &str = "lance";

/// How to open a palace.
#[derive(Debug, Clone)]
pub struct StackOptions {
    /// The palace folder.
    pub palace_path: PathBuf,
    /// The vector store; `None` means the palace's recorded one, else LanceDB.
    pub backend: Option<BackendKind>,
    /// Qdrant URL (default http://localhost:6334).
    pub qdrant_url: Option<String>,
    /// Qdrant API key.
    pub qdrant_api_key: Option<String>,
    /// LanceDB table / Qdrant collection for a new palace; `None` means the recorded one,
    /// else `mempalace_drawers`.
    pub collection: Option<String>,
    /// Model folder override.
    pub model_dir: Option<PathBuf>,
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

/// Opens (without creating) the palace described by `opts`, with `embedder`.
pub async fn open_palace(opts: &StackOptions, embedder: Arc<dyn Embedder>) -> Result<Palace> {
    let path = &opts.palace_path;
    let recorded = PalaceConfig::load(path)?;
    let mut config = recorded.clone().unwrap_or_else(|| {
        PalaceConfig::new(
            opts.backend.unwrap_or(BackendKind::Lancedb),
            embedder.model_name(),
            embedder.dimension(),
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
    if let Some(collection) = &opts.collection {
        if recorded.is_some() && *collection != config.table {
            anyhow::bail!(
                "the palace at {} keeps its drawers in {:?}; it cannot be opened with --collection {:?}",
                path.display(),
                config.table,
                collection
            );
        }
        config.table = collection.clone();
    }
    config.check_embedder(embedder.model_name(), embedder.dimension(), path)?;

    let store: Arc<dyn VectorStore> = match config.backend {
        BackendKind::Lancedb => Arc::new(
            LanceStore::open(
                LanceOptions::new(path.join(LANCE_DIR), config.dimension).with_table(&config.table),
            )
            .await
            .context("opening the LanceDB store")?,
        ),
        BackendKind::Qdrant => {
            let url = config
                .qdrant_url
                .clone()
                .unwrap_or_else(|| QdrantOptions::DEFAULT_URL.to_string());
            let mut q = QdrantOptions::new(url, config.dimension).with_collection(&config.table);
            q.api_key = opts.qdrant_api_key.clone();
            Arc::new(
                QdrantStore::connect(q)
                    .await
                    .context("connecting to Qdrant")?,
            )
        }
    };
    let kg: Arc<dyn KnowledgeGraph> = Arc::new(SqliteKnowledgeGraph::in_palace(path));
    // A palace that exists gets its palace.json (palaces created by a first MCP write have none yet).
    if recorded.is_none() && store.exists().await? {
        config.save(path)?;
    }
    Ok(Palace::new(path, embedder, store, kg)?)
}

/// Creates the palace (store, graph and palace.json) if missing.
pub async fn create_palace(palace: &Palace, opts: &StackOptions) -> Result<()> {
    palace.init().await?;
    if PalaceConfig::load(&opts.palace_path)?.is_none() {
        let mut config = PalaceConfig::new(
            opts.backend.unwrap_or(BackendKind::Lancedb),
            palace.embedder().model_name(),
            palace.embedder().dimension(),
        );
        config.qdrant_url = opts.qdrant_url.clone();
        if let Some(collection) = &opts.collection {
            config.table = collection.clone();
        }
        config.save(&opts.palace_path)?;
    }
    Ok(())
}
