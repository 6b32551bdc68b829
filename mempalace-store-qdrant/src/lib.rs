//! # mempalace-store-qdrant
//!
//! A [`mempalace_core::VectorStore`] over a [Qdrant](https://qdrant.tech) server, through the
//! official gRPC client.
//!
//! One palace is one collection (default `mempalace_drawers`), created on first use with cosine
//! distance, the embedder's dimension and keyword payload indexes on `wing`, `room`,
//! `source_file` and `drawer_id`. Every drawer is one point: its id is a UUID v5 of the drawer
//! id ([`ids::point_uuid`]) and its payload carries the drawer id, text and metadata
//! ([`payload`]). Wing/room/source filters run inside Qdrant as `must` keyword matches
//! ([`filter`]); Qdrant's cosine similarity is reported as distance `1 - score` ([`ranking`]).
//! The lexical channel is a named sparse vector made by Qdrant's built-in BM25 model with an
//! IDF modifier ([`lexical`]); collections made before it get it added and back-filled.
//!
//! ```no_run
//! # async fn demo() -> mempalace_core::Result<()> {
//! use mempalace_core::VectorStore;
//! use mempalace_store_qdrant::{QdrantOptions, QdrantStore};
//!
//! let store = QdrantStore::connect(QdrantOptions::new(QdrantOptions::DEFAULT_URL, 384)).await?;
//! store.create_if_missing().await?;
//! # Ok(())
//! # }
//! ```

pub mod aggregate;
pub mod collection;
pub mod errors;
pub mod filter;
pub mod ids;
pub mod lexical;
pub mod options;
pub mod payload;
pub mod ranking;
mod store;

pub use options::QdrantOptions;
pub use store::{OWNER_METADATA_KEY, QdrantStore};
