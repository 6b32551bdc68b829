//! # mempalace
//!
//! Memory for Rust AI agents. An agent files what it learns as *drawers* (verbatim text
//! chunks) under a *wing* and a *room*, finds them again by meaning, records facts with time
//! validity in a *knowledge graph*, and can serve all of it to an AI client over MCP. This is
//! the one crate an agent adds; it re-creates the Python MemPalace 3.11 (same behaviour and
//! payloads, its palaces migrate in).
//!
//! ```
//! use mempalace::prelude::*;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let dir = tempfile::tempdir()?;
//! # let folder = dir.path().join("palace");
//! # let embedder = std::sync::Arc::new(mempalace_conformance::HashingEmbedder::new(384));
//! // Open (or create) a palace: LanceDB + SQLite + all-MiniLM-L6-v2 by default. Here a small
//! // hashing embedder stands in for MiniLM so the example needs no model files.
//! let palace = PalaceBuilder::new(&folder).embedder(embedder).open_or_create().await?;
//!
//! // Remember: a near-duplicate (similarity ≥ 0.9) is refused.
//! let filed = palace
//!     .add_drawer(NewDrawer::new("wing_app", "auth", "We moved login from Auth0 to Clerk in January."))
//!     .await?;
//! assert!(filed.drawer_id().is_some());
//!
//! // Recall by meaning and words.
//! let found = palace.search("Auth0 Clerk login", Some("wing_app"), None, 3).await?;
//! assert_eq!(found.results[0].room, "auth");
//!
//! // Facts that change over time.
//! palace.kg_add(NewTriple::new("app", "uses", "Clerk").valid_from("2026-01-15")).await?;
//! let facts = palace.kg_query("app", None, Direction::Both).await?;
//! assert_eq!(facts.facts[0].object, "Clerk");
//!
//! // The context a new agent session starts with.
//! let woken = palace.wake_up(&WakeUpRequest::default()).await?;
//! assert!(woken.text.contains("Clerk"));
//! # Ok(()) }
//! ```
//!
//! ## Where to go next
//!
//! - [`PalaceBuilder`]: choose the backends of a new palace (Qdrant, PostgreSQL), the
//!   embedder, the ranking; [`open()`] opens a folder with what it records.
//! - [`Palace`]: every operation the CLI and the MCP server offer (search, duplicates,
//!   drawers, taxonomy, knowledge graph, diary, tunnels, coordination, wake-up, AAAK), and
//!   the upkeep 3.11's command line offers: [`Palace::audit`], [`Palace::prune_tunnels`],
//!   [`Palace::prune_hallway_spellings`], [`Palace::move_drawers`],
//!   [`Palace::migrate_wing_names`], [`Palace::plan_room_reclassification`],
//!   [`Palace::rebuild_hallways`], [`Palace::propose_tunnels`] /
//!   [`Palace::apply_tunnel_proposal`], [`Palace::repair_status`].
//! - [`ingest`]: mining a folder ([`ingest::mine()`]), migrating a MemPalace 3.11 palace
//!   ([`ingest::migrate::migrate`]), with progress events and cancellation; agent harness
//!   hooks ([`ingest::hooks::run_hook`]: file each Claude Code or Codex session as it goes);
//!   pruning drawers of deleted or ignored files ([`ingest::sync::sync`]); splitting a wing of
//!   many projects' transcripts ([`ingest::wing_split`]). A mine tags each drawer with the
//!   names it mentions and rebuilds its wing's hallways and entity tunnels
//!   ([`ingest::wing_links`]).
//! - `mcp` (feature `mcp`): serve the palace to AI clients over stdio or streamable HTTP.
//! - [`core`]: the domain types and the traits a new backend implements
//!   ([`VectorStore`], [`KnowledgeGraph`], [`Embedder`]).
//!
//! ## Features
//!
//! | feature | what | default |
//! | --- | --- | --- |
//! | `lance` | drawers in embedded LanceDB | yes |
//! | `sqlite` | the knowledge graph in SQLite (3.11's file) | yes |
//! | `minilm` | all-MiniLM-L6-v2 on CPU (candle), loaded from disk | yes |
//! | `qdrant` | drawers in a Qdrant server | |
//! | `postgres` | the graph, coordination log, links, closets and write lock in PostgreSQL (a fleet) | |
//! | `openblas` | MiniLM on the system's OpenBLAS, about 3× faster | |
//! | `mcp` | the MCP server | |
//!
//! A Qdrant + PostgreSQL agent (`default-features = false, features = ["qdrant", "postgres",
//! "minilm"]`) compiles no LanceDB or DataFusion.

#![warn(missing_docs)]

pub mod config;
pub mod error;
pub mod open;
pub mod settings;

pub use config::{BackendKind, KgBackend, PALACE_FORMAT_VERSION, PalaceConfig};
pub use error::OpenError;
pub use open::{PalaceBuilder, open};

pub use mempalace_core as core;
pub use mempalace_core::{
    Cancellation, Direction, Drawer, DrawerFilter, Embedder, Fusion, KnowledgeGraph, MemoryStore,
    NewDrawer, NewTriple, Palace, PalaceError, PalaceLayout, SearchMode, SearchRequest,
    VectorStore,
};
pub use mempalace_ingest as ingest;

#[cfg(feature = "mcp")]
pub use mempalace_mcp as mcp;

/// Implements the async traits ([`VectorStore`], [`KnowledgeGraph`], [`Embedder`]) on your
/// own types: `#[mempalace::async_trait]`.
pub use async_trait::async_trait;

#[cfg(feature = "minilm")]
pub use mempalace_embed_candle as minilm_embedder;
#[cfg(feature = "postgres")]
pub use mempalace_kg_postgres as kg_postgres;
#[cfg(feature = "sqlite")]
pub use mempalace_kg_sqlite as kg_sqlite;
#[cfg(feature = "lance")]
pub use mempalace_store_lance as lance;
#[cfg(feature = "qdrant")]
pub use mempalace_store_qdrant as qdrant;

/// all-MiniLM-L6-v2 from `model_dir` (default: `$MEMPALACE_MODEL_DIR`, else
/// `~/.cache/mempalace/models/all-MiniLM-L6-v2`), loaded on first use.
#[cfg(feature = "minilm")]
pub fn minilm(
    model_dir: Option<std::path::PathBuf>,
) -> std::sync::Arc<mempalace_core::LazyEmbedder> {
    use mempalace_embed_candle::{DIMENSION, MODEL_NAME, MiniLmEmbedder};
    std::sync::Arc::new(mempalace_core::LazyEmbedder::new(
        MODEL_NAME,
        DIMENSION,
        move || {
            let started = std::time::Instant::now();
            let model = MiniLmEmbedder::load_resolved(model_dir.as_deref())?;
            tracing::info!(
                elapsed_ms = started.elapsed().as_millis() as u64,
                "model loaded"
            );
            Ok(std::sync::Arc::new(model) as std::sync::Arc<dyn mempalace_core::Embedder>)
        },
    ))
}

/// What an agent needs in scope: `use mempalace::prelude::*;`.
pub mod prelude {
    pub use crate::{BackendKind, OpenError, PalaceBuilder, open};
    pub use mempalace_core::knowledge_graph::Supersede;
    pub use mempalace_core::wake_up::WakeUpRequest;
    pub use mempalace_core::{
        Cancellation, Direction, Drawer, DrawerFilter, Embedder, NewDrawer, NewTriple, Palace,
        PalaceError, SearchMode, SearchRequest,
    };
    pub use mempalace_ingest::{MineRequest, NoProgress, Progress, ProgressEvent};
}
