//! Opening a palace from its folder, exactly as the `mempalace` CLI does: the recorded
//! `palace.json` wins (a backend, collection or graph that contradicts it is an error); a new
//! palace is assembled as asked (LanceDB and SQLite by default) and writes its `palace.json`
//! when it is created; every sidecar (coordination log, tunnels, closets) is persisted in the
//! palace folder, or, for a palace whose graph is in PostgreSQL (a fleet), beside the graph in
//! its schema, where every host shares them and takes the palace's write lock.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use mempalace_closets_sqlite::SqliteClosets;
use mempalace_coord_sqlite::SqliteCoordinationLog;
use mempalace_core::closets::ClosetIndex;
use mempalace_core::coordination::CoordinationLog;
use mempalace_core::palace_links::PalaceLinks;
use mempalace_core::{Embedder, Fusion, KnowledgeGraph, Palace, VectorStore, WriteLock};
use mempalace_links_json::JsonFileLinks;

use crate::config::{
    BackendKind, KgBackend, PALACE_FORMAT_VERSION, PalaceConfig, PalaceJsonRecord, collection_for,
    palace_id_for,
};
use crate::error::OpenError;
use crate::settings::{dedup_settle_from_env, fusion_from_env};

/// The default Qdrant URL (gRPC).
pub const DEFAULT_QDRANT_URL: &str = "http://localhost:6334";

/// How to open a palace: its folder, and for a new palace what to assemble it from.
///
/// ```no_run
/// # async fn demo() -> Result<(), mempalace::OpenError> {
/// // A fleet host: drawers in Qdrant, the graph in PostgreSQL (features `qdrant`, `postgres`).
/// let palace = mempalace::PalaceBuilder::new("/srv/palace")
///     .backend(mempalace::BackendKind::Qdrant)
///     .qdrant_url("http://qdrant:6334")
///     .knowledge_graph_postgres("postgres://mempalace@db/mempalace")
///     .open_or_create()
///     .await?;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct PalaceBuilder {
    path: PathBuf,
    named_explicitly: bool,
    backend: Option<BackendKind>,
    qdrant_url: Option<String>,
    qdrant_api_key: Option<String>,
    kg_postgres_url: Option<String>,
    postgres_ca_file: Option<PathBuf>,
    collection: Option<String>,
    model_dir: Option<PathBuf>,
    embedder: Option<Arc<dyn Embedder>>,
    store: Option<Arc<dyn VectorStore>>,
    fusion: Option<Fusion>,
    dedup_settle: Option<Duration>,
}

impl PalaceBuilder {
    /// A palace in the folder `path`.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        PalaceBuilder {
            path: path.into(),
            named_explicitly: true,
            backend: None,
            qdrant_url: None,
            qdrant_api_key: None,
            kg_postgres_url: None,
            postgres_ca_file: None,
            collection: None,
            model_dir: None,
            embedder: None,
            store: None,
            fusion: None,
            dedup_settle: None,
        }
    }

    /// The palace where MemPalace 3.11 looks for it without being told:
    /// `$MEMPALACE_PALACE_PATH`, else `config.json`'s `palace_path`, else `palace` in the
    /// config folder (see [`mempalace_core::locations`]); the legacy default palace keeps its
    /// knowledge graph beside it, as 3.11 does.
    pub fn default_location() -> Self {
        let mut builder = Self::new(mempalace_core::locations::palace_path(None));
        builder.named_explicitly = false;
        builder
    }

    /// Whether the folder was named by the user (`--palace`) rather than found by the default
    /// rules (only the legacy default palace may keep its graph outside its folder).
    pub fn named_explicitly(mut self, named: bool) -> Self {
        self.named_explicitly = named;
        self
    }

    /// The vector store of a new palace (an existing one must match its record).
    pub fn backend(mut self, backend: BackendKind) -> Self {
        self.backend = Some(backend);
        self
    }

    /// The Qdrant server's URL (default [`DEFAULT_QDRANT_URL`]; recorded for a new palace).
    pub fn qdrant_url(mut self, url: impl Into<String>) -> Self {
        self.qdrant_url = Some(url.into());
        self
    }

    /// The Qdrant API key (never recorded).
    pub fn qdrant_api_key(mut self, key: impl Into<String>) -> Self {
        self.qdrant_api_key = Some(key.into());
        self
    }

    /// Keeps a new palace's knowledge graph in PostgreSQL at `url` (in a schema named for the
    /// palace; the URL, which may hold a password, is never recorded), or opens the palace
    /// whose record says its graph is there.
    pub fn knowledge_graph_postgres(mut self, url: impl Into<String>) -> Self {
        self.kg_postgres_url = Some(url.into());
        self
    }

    /// Trusts the certificates in the PEM file `path` (a private CA, a self-signed server) for
    /// TLS to PostgreSQL, besides the system's roots. TLS is used whenever the server offers
    /// it (`sslmode=require` in the URL insists on it) and the server is always verified.
    pub fn postgres_ca_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.postgres_ca_file = Some(path.into());
        self
    }

    /// The LanceDB table / Qdrant collection of a new palace (default `mempalace_drawers` for
    /// LanceDB, `mempalace_<palace id>` for Qdrant); an existing one must match its record.
    pub fn collection(mut self, name: impl Into<String>) -> Self {
        self.collection = Some(name.into());
        self
    }

    /// Where all-MiniLM-L6-v2 is (default `$MEMPALACE_MODEL_DIR`, else
    /// `~/.cache/mempalace/models/all-MiniLM-L6-v2`).
    pub fn model_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.model_dir = Some(dir.into());
        self
    }

    /// The embedder (default: all-MiniLM-L6-v2, loaded on first use; feature `minilm`). A
    /// palace refuses an embedder of another dimension than it was built with.
    pub fn embedder(mut self, embedder: Arc<dyn Embedder>) -> Self {
        self.embedder = Some(embedder);
        self
    }

    /// Keeps the drawers in `store`, a [`VectorStore`] of your own (or [`crate::MemoryStore`])
    /// instead of the recorded or requested backend. The graph and the sidecars live in the
    /// palace folder as usual; no `palace.json` is written (the CLI could not reopen such a
    /// store).
    pub fn store(mut self, store: Arc<dyn VectorStore>) -> Self {
        self.store = Some(store);
        self
    }

    /// The hybrid ranking (default: `$MEMPALACE_RANKING` and 3.11's weight variables, else
    /// [`Fusion::default`]).
    pub fn fusion(mut self, fusion: Fusion) -> Self {
        self.fusion = Some(fusion);
        self
    }

    /// How long `add_drawer` on a Qdrant palace whose graph is not in PostgreSQL waits before
    /// its second duplicate look (default: `$MEMPALACE_DEDUP_SETTLE_MS`, else 300 ms). A
    /// palace with its graph in PostgreSQL takes the fleet's lock there and never waits.
    pub fn dedup_settle(mut self, settle: Duration) -> Self {
        self.dedup_settle = Some(settle);
        self
    }

    /// The palace folder.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Opens the palace without creating it: reads of a palace that does not exist yet answer
    /// "No palace found" and create nothing; its first write creates it (and its
    /// `palace.json`).
    pub async fn open(self) -> Result<Palace, OpenError> {
        let embedder = match &self.embedder {
            Some(e) => Arc::clone(e),
            None => default_embedder(self.model_dir.clone())?,
        };
        open_with(&self, embedder).await
    }

    /// Opens the palace, creating it (store, graph, `palace.json`) when it does not exist.
    pub async fn open_or_create(self) -> Result<Palace, OpenError> {
        let palace = self.open().await?;
        palace.init().await?;
        Ok(palace)
    }

    /// The palace's record as this builder asks for it: the recorded `palace.json` when there
    /// is one (a backend or collection that contradicts it is an error), else a new one. A
    /// palace gets its id here, and a new Qdrant palace a collection named for that id.
    pub fn resolve_config(
        &self,
        recorded: Option<&PalaceConfig>,
        model: &str,
        dimension: usize,
    ) -> Result<PalaceConfig, OpenError> {
        let path = &self.path;
        let mut config = recorded.cloned().unwrap_or_else(|| {
            PalaceConfig::new(
                self.backend.unwrap_or(BackendKind::Lancedb),
                model,
                dimension,
            )
        });
        if let Some(b) = self.backend {
            if recorded.is_some() && b != config.backend {
                return Err(OpenError::Mismatch(format!(
                    "the palace at {} uses the {:?} backend; it cannot be opened as {:?}",
                    path.display(),
                    config.backend,
                    b
                )));
            }
            config.backend = b;
        }
        if let Some(url) = &self.qdrant_url {
            config.qdrant_url = Some(url.clone());
        }
        let palace_id = config
            .palace_id
            .clone()
            .unwrap_or_else(|| palace_id_for(path));
        config.palace_id = Some(palace_id.clone());
        // An older format is brought up to date as it opens (`PalaceConfig::load` refused a
        // newer one): every change so far is read as it is and completed on the first write.
        config.format_version = Some(PALACE_FORMAT_VERSION);
        match (recorded.map(|r| r.knowledge_graph), &self.kg_postgres_url) {
            (None, Some(_)) => {
                config.knowledge_graph = KgBackend::Postgres;
                config.kg_schema = Some(schema_for(&palace_id)?);
            }
            (Some(KgBackend::Sqlite), Some(_)) => {
                return Err(OpenError::Mismatch(format!(
                    "the palace at {} keeps its knowledge graph in SQLite; it cannot be opened with a PostgreSQL URL",
                    path.display()
                )));
            }
            _ => {}
        }
        match &self.collection {
            Some(collection) if recorded.is_some() && *collection != config.table => {
                return Err(OpenError::Mismatch(format!(
                    "the palace at {} keeps its drawers in {:?}; it cannot be opened with the collection {:?}",
                    path.display(),
                    config.table,
                    collection
                )));
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
}

/// Opens the palace in `path` with what it records, creating it (embedded default: LanceDB,
/// SQLite, all-MiniLM-L6-v2) when it does not exist: [`PalaceBuilder::open_or_create`].
pub async fn open(path: impl Into<PathBuf>) -> Result<Palace, OpenError> {
    PalaceBuilder::new(path).open_or_create().await
}

/// The embedder used when none is given: MiniLM, loaded on first use.
fn default_embedder(model_dir: Option<PathBuf>) -> Result<Arc<dyn Embedder>, OpenError> {
    #[cfg(feature = "minilm")]
    {
        Ok(crate::minilm(model_dir))
    }
    #[cfg(not(feature = "minilm"))]
    {
        let _ = model_dir;
        Err(OpenError::NoEmbedder)
    }
}

/// The PostgreSQL schema of a palace id.
fn schema_for(palace_id: &str) -> Result<String, OpenError> {
    #[cfg(feature = "postgres")]
    {
        Ok(mempalace_kg_postgres::SchemaName::for_palace(palace_id)?
            .as_str()
            .to_string())
    }
    #[cfg(not(feature = "postgres"))]
    {
        let _ = palace_id;
        Err(OpenError::BackendNotBuilt {
            what: "a PostgreSQL knowledge graph",
            feature: "postgres",
        })
    }
}

/// Opens the palace `builder` describes with `embedder`.
async fn open_with(
    builder: &PalaceBuilder,
    embedder: Arc<dyn Embedder>,
) -> Result<Palace, OpenError> {
    let path = &builder.path;
    let recorded = PalaceConfig::load(path)?;
    let config = builder.resolve_config(
        recorded.as_ref(),
        embedder.model_name(),
        embedder.dimension(),
    )?;
    config.check_embedder(embedder.model_name(), embedder.dimension(), path)?;
    if let Some(store) = &builder.store {
        let graph = open_graph(builder, &config, recorded.is_none())?;
        let palace = Palace::new(path, embedder, Arc::clone(store), Arc::clone(&graph.kg))?;
        let adopting = graph.shared.is_some();
        let palace = with_sidecars(palace, builder, path, graph.shared)?;
        if adopting {
            adopt_local_sidecars(&palace, path).await?;
        }
        return Ok(palace);
    }
    let store = open_store(builder, &config).await?;
    let graph = open_graph(builder, &config, recorded.is_none())?;
    // A palace that exists gets its palace.json (palaces created by a first MCP write before
    // records were written at creation have none, older ones no id), and so does a folder
    // whose graph is in PostgreSQL (so every later open finds it there; a folder that does
    // not exist, a typo, is not created by a read), and a palace of an older format its
    // upgraded record; best effort, so a read-only palace still opens.
    let needs_record = recorded
        .as_ref()
        .is_none_or(|r| r.palace_id.is_none() || r.format() < PALACE_FORMAT_VERSION);
    if needs_record
        && ((config.knowledge_graph == KgBackend::Postgres && path.is_dir())
            || store.exists().await?)
        && let Err(e) = config.save(path)
    {
        tracing::warn!(error = %e, "could not record palace.json; continuing");
    }
    let mut palace = Palace::new(path, embedder, store, Arc::clone(&graph.kg))?
        .with_creation_record(Arc::new(PalaceJsonRecord::new(path, config.clone())));
    if config.backend == BackendKind::Qdrant && graph.shared.is_none() {
        // A collection other hosts may write, and no server lock they all take: the palace's
        // lock file does not reach them, so add_drawer looks again after a settle time.
        let settle = match builder.dedup_settle {
            Some(settle) => settle,
            None => dedup_settle_from_env()?,
        };
        palace = palace.with_cross_host_dedup(settle);
    }
    let adopting = graph.shared.is_some();
    let palace = with_sidecars(palace, builder, path, graph.shared)?;
    if adopting {
        adopt_local_sidecars(&palace, path).await?;
    }
    Ok(palace)
}

/// The files a palace folder kept its sidecars in before they moved beside a PostgreSQL graph.
const LOCAL_SIDECAR_FILES: [&str; 4] = [
    mempalace_core::PalaceLayout::COORDINATION_LOG,
    mempalace_core::PalaceLayout::TUNNELS,
    mempalace_core::PalaceLayout::HALLWAYS,
    mempalace_core::PalaceLayout::CLOSETS,
];

/// What a moved sidecar file is renamed with (`logstream.sqlite3.moved-to-postgres`).
const MOVED_SUFFIX: &str = ".moved-to-postgres";

/// A palace whose sidecars now live in PostgreSQL, opened on a host that still has them in
/// its folder (a fleet palace from before they were shared): their records are copied into
/// the shared ones (nothing stored twice), then the files are set aside as
/// `…moved-to-postgres`. Until that has succeeded the palace does not open (an error naming
/// the cause, e.g. the server unreachable): this host appending to the shared log before its
/// own earlier events are in would give two events one author position.
async fn adopt_local_sidecars(palace: &Palace, path: &Path) -> Result<(), OpenError> {
    let present: Vec<PathBuf> = LOCAL_SIDECAR_FILES
        .iter()
        .map(|name| path.join(name))
        .filter(|file| file.is_file())
        .collect();
    if present.is_empty() {
        return Ok(());
    }
    let adopted = {
        let log = SqliteCoordinationLog::in_palace(path);
        let links = JsonFileLinks::new(path);
        let closets = SqliteClosets::in_palace(path);
        palace.adopt_sidecars(&log, &links, &closets).await
    }
    .map_err(|e| {
        OpenError::Palace(mempalace_core::PalaceError::store(
            "postgres",
            "move this host's coordination log, links and closets into PostgreSQL",
            format!(
                "{e}; they stay in {}, and the next open tries again",
                path.display()
            ),
        ))
    })?;
    for file in &present {
        for suffix in ["", "-wal", "-shm"] {
            let mut from = file.as_os_str().to_owned();
            from.push(suffix);
            set_aside(Path::new(&from), suffix);
        }
    }
    tracing::info!(
        ?adopted,
        "this host's coordination log, links and closets moved into PostgreSQL"
    );
    Ok(())
}

/// Renames a moved sidecar file `…moved-to-postgres{suffix}` (`-1`, `-2`, … after it when
/// that name is taken: an earlier one is never overwritten).
fn set_aside(from: &Path, suffix: &str) {
    if !from.exists() {
        return;
    }
    let base = from.to_string_lossy().trim_end_matches(suffix).to_string();
    for n in 0..10 {
        let numbered = if n == 0 {
            String::new()
        } else {
            format!("-{n}")
        };
        let to = PathBuf::from(format!("{base}{MOVED_SUFFIX}{numbered}{suffix}"));
        match std::fs::hard_link(from, &to) {
            Ok(()) => {
                if let Err(e) = std::fs::remove_file(from) {
                    tracing::warn!(error = %e, file = %from.display(), "could not set the moved sidecar file aside");
                }
                return;
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => {
                tracing::warn!(error = %e, file = %from.display(), "could not set the moved sidecar file aside");
                return;
            }
        }
    }
}

/// A palace's graph and, when it lives on a server every host shares, the rest of what the
/// hosts share there.
struct OpenedGraph {
    kg: Arc<dyn KnowledgeGraph>,
    shared: Option<SharedSidecars>,
}

/// The sidecars and write lock of a palace whose graph is in PostgreSQL: in the same schema,
/// so every host of a fleet sees the same log, links and closets and takes the same lock.
struct SharedSidecars {
    log: Arc<dyn CoordinationLog>,
    links: Arc<dyn PalaceLinks>,
    closets: Arc<dyn ClosetIndex>,
    write_lock: Arc<dyn WriteLock>,
}

/// `palace` with its ranking, and its sidecars: the shared ones when its graph is on a
/// server, else the coordination log, tunnels and hallways, closets persisted in its folder.
fn with_sidecars(
    palace: Palace,
    builder: &PalaceBuilder,
    path: &Path,
    shared: Option<SharedSidecars>,
) -> Result<Palace, OpenError> {
    let fusion = match builder.fusion {
        Some(fusion) => fusion,
        None => fusion_from_env()?,
    };
    let palace = palace.with_fusion(fusion);
    Ok(match shared {
        Some(shared) => palace
            .with_write_lock(shared.write_lock)
            .with_coordination_log(shared.log)
            .with_links(shared.links)
            .with_closets(shared.closets),
        None => palace
            .with_coordination_log(Arc::new(SqliteCoordinationLog::in_palace(path)))
            .with_links(Arc::new(JsonFileLinks::new(path)))
            .with_closets(Arc::new(SqliteClosets::in_palace(path))),
    })
}

/// The vector store the record names.
async fn open_store(
    builder: &PalaceBuilder,
    config: &PalaceConfig,
) -> Result<Arc<dyn VectorStore>, OpenError> {
    match config.backend {
        BackendKind::Lancedb => {
            #[cfg(feature = "lance")]
            {
                use mempalace_store_lance::{LanceOptions, LanceStore};
                // LanceDB addresses its files by a UTF-8 URI: a lossy conversion would put the
                // data in a sibling folder, so such a path is refused instead.
                let lance_dir = mempalace_core::PalaceLayout::new(&builder.path).lance_dir();
                if lance_dir.to_str().is_none() {
                    return Err(OpenError::Mismatch(format!(
                        "the palace path {} is not valid UTF-8, which the LanceDB backend cannot address; choose another folder",
                        builder.path.display()
                    )));
                }
                let options =
                    LanceOptions::new(lance_dir, config.dimension).with_table(&config.table);
                Ok(Arc::new(LanceStore::open(options).await?))
            }
            #[cfg(not(feature = "lance"))]
            {
                let _ = (builder, config);
                Err(OpenError::BackendNotBuilt {
                    what: "LanceDB",
                    feature: "lance",
                })
            }
        }
        BackendKind::Qdrant => {
            #[cfg(feature = "qdrant")]
            {
                use mempalace_store_qdrant::{QdrantOptions, QdrantStore};
                let url = config
                    .qdrant_url
                    .clone()
                    .unwrap_or_else(|| DEFAULT_QDRANT_URL.to_string());
                let mut q =
                    QdrantOptions::new(url, config.dimension).with_collection(&config.table);
                q.api_key = builder.qdrant_api_key.clone();
                if let Some(id) = &config.palace_id {
                    q = q.with_owner(id.clone());
                }
                Ok(Arc::new(QdrantStore::connect(q).await?))
            }
            #[cfg(not(feature = "qdrant"))]
            {
                let _ = (builder, config);
                Err(OpenError::BackendNotBuilt {
                    what: "Qdrant",
                    feature: "qdrant",
                })
            }
        }
    }
}

/// The knowledge graph the record names; `new_palace` when there was no `palace.json`.
fn open_graph(
    builder: &PalaceBuilder,
    config: &PalaceConfig,
    new_palace: bool,
) -> Result<OpenedGraph, OpenError> {
    let path = &builder.path;
    let local = mempalace_core::locations::knowledge_graph_path(path, builder.named_explicitly);
    match config.knowledge_graph {
        KgBackend::Sqlite => {
            #[cfg(feature = "sqlite")]
            {
                Ok(OpenedGraph {
                    kg: Arc::new(mempalace_kg_sqlite::SqliteKnowledgeGraph::open(local)),
                    shared: None,
                })
            }
            #[cfg(not(feature = "sqlite"))]
            {
                let _ = local;
                Err(OpenError::BackendNotBuilt {
                    what: "a SQLite knowledge graph",
                    feature: "sqlite",
                })
            }
        }
        KgBackend::Postgres => {
            if new_palace && local.exists() {
                return Err(OpenError::Mismatch(format!(
                    "the palace at {} keeps its knowledge graph in SQLite ({}); it cannot be opened with a PostgreSQL URL",
                    path.display(),
                    local.display()
                )));
            }
            let schema = config.kg_schema.as_deref().unwrap_or_default();
            let Some(url) = &builder.kg_postgres_url else {
                return Err(OpenError::Mismatch(format!(
                    "the palace at {} keeps its knowledge graph in PostgreSQL (schema {schema}); set MEMPALACE_KG_POSTGRES_URL",
                    path.display()
                )));
            };
            #[cfg(feature = "postgres")]
            {
                use mempalace_kg_postgres::{
                    PostgresClosets, PostgresCoordinationLog, PostgresKnowledgeGraph,
                    PostgresLinks, PostgresTls, PostgresWriteLock, SchemaName,
                };
                let tls = PostgresTls {
                    ca_file: builder.postgres_ca_file.clone(),
                };
                let mut graph =
                    PostgresKnowledgeGraph::connect_with_tls(url, SchemaName::new(schema)?, tls)?;
                let palace_id = config.palace_id.clone().unwrap_or_default();
                if !palace_id.is_empty() {
                    graph = graph.with_owner(palace_id.clone());
                }
                // This host's replica id (its own replica.json), read or minted on the first
                // append, never by a read.
                let host_dir = path.clone();
                let log = PostgresCoordinationLog::with_replica_from(&graph, move || {
                    mempalace_coord_sqlite::replica_id(&host_dir)
                        .map_err(|e| mempalace_core::PalaceError::io(host_dir.clone(), e))
                });
                let shared = SharedSidecars {
                    log: Arc::new(log),
                    links: Arc::new(PostgresLinks::new(&graph)),
                    closets: Arc::new(PostgresClosets::new(&graph)),
                    write_lock: Arc::new(PostgresWriteLock::new(&graph, &palace_id)?),
                };
                Ok(OpenedGraph {
                    kg: Arc::new(graph),
                    shared: Some(shared),
                })
            }
            #[cfg(not(feature = "postgres"))]
            {
                let _ = url;
                Err(OpenError::BackendNotBuilt {
                    what: "a PostgreSQL knowledge graph",
                    feature: "postgres",
                })
            }
        }
    }
}
