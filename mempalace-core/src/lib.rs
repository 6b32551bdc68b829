//! # mempalace-core
//!
//! The domain of MemPalace, with no storage code: an agent files *drawers* (verbatim text
//! chunks) under a *wing* and a *room*, finds them again by meaning, and records facts with time
//! validity in a *knowledge graph*.
//!
//! The crate defines three object-safe async traits that backends implement:
//! [`Embedder`] (text → vectors), [`VectorStore`] (drawers and their vectors) and
//! [`KnowledgeGraph`] (entities and temporal triples). The [`Palace`] service owns one of each
//! and implements every behaviour once: result shaping, the 0.9 duplicate check, drawer ids,
//! status aggregation, input validation and the write lock.
//!
//! [`MemoryStore`] is the exact in-process reference `VectorStore`.

pub mod aaak;
pub mod agent_hooks;
pub mod agent_instructions;
pub mod cancellation;
pub mod chunking;
pub mod closets;
pub mod conversations;
pub mod coordination;
pub mod coordination_watch;
pub mod creation_record;
pub mod disk_space;
pub mod drawer;
pub mod drawer_chunks;
pub mod drawer_id;
pub mod embedder;
pub mod entity_extraction;
pub mod entity_spelling;
pub mod error;
pub mod filter;
pub mod hallway_builder;
pub mod kg_rows;
pub mod knowledge_graph;
pub mod layout;
pub mod lazy_embedder;
pub mod lexical;
pub mod locations;
pub mod memory_store;
pub mod palace;
pub mod palace_audit;
pub mod palace_export;
pub mod palace_links;
pub mod palace_verify;
pub mod protocol;
pub(crate) mod python_json;
pub mod python_repr;
pub mod regular_file;
pub mod reports;
pub mod retrieval;
pub mod room_routing;
pub mod room_sets;
pub mod secret_file;
pub mod similarity;
pub mod store_health;
pub mod temporal;
pub mod term_rules;
pub mod transcript_projects;
pub mod tunnel_links;
pub mod tunnel_proposal;
pub mod validation;
pub mod vector_store;
pub mod wake_up;
pub mod write_lock;

pub use cancellation::Cancellation;
pub use drawer::{AddedBy, ConversationRef, Drawer, DrawerMetadata};
pub use embedder::Embedder;
pub use error::{PalaceError, Result};
pub use filter::DrawerFilter;
pub use knowledge_graph::{
    Direction, EntityCandidate, Fact, KgStats, KnowledgeGraph, NewEntity, NewTriple, Supersede,
    Supersession,
};
pub use layout::PalaceLayout;
pub use lazy_embedder::LazyEmbedder;
pub use memory_store::MemoryStore;
pub use palace::{NewDrawer, Palace, PalaceLimits};
pub use protocol::{AAAK_SPEC, PALACE_PROTOCOL};
pub use retrieval::{CandidateSource, Fusion, SearchMode, SearchRequest};
pub use vector_store::{
    DrawerMove, LexicalHit, Neighbour, NeighbourId, Page, RoomCount, VectorStore,
    rank_lexical_hits, rank_neighbour_ids, rank_neighbours,
};
pub use write_lock::{FileWriteLock, ProcessWriteLock, WriteGuard, WriteLock};
