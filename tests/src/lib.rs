//! # mempalace-conformance
//!
//! The behaviour every [`mempalace_core::VectorStore`] and [`mempalace_core::KnowledgeGraph`]
//! implementation must show. A backend crate runs the whole suite with one macro call in an
//! integration test:
//!
//! ```ignore
//! struct MyFactory;
//! #[async_trait::async_trait]
//! impl mempalace_conformance::StoreFactory for MyFactory {
//!     async fn create(&self, dimension: usize) -> mempalace_conformance::StoreFixture {
//!         mempalace_conformance::StoreFixture::new(std::sync::Arc::new(MyStore::new(dimension)))
//!     }
//! }
//! mempalace_conformance::vector_store_conformance!(MyFactory, mempalace_conformance::Ranking::Exact);
//! ```
//!
//! Ranking is checked against [`mempalace_core::MemoryStore`], the exact reference: identical
//! top-k ids for exact stores, recall@10 at or above a bar for approximate ones, and distances
//! within 1e-4 of exact cosine either way.

pub mod closet_index_suite;
pub mod coordination_suite;
pub mod corpus;
pub mod fixtures;
pub mod folders;
pub mod hashing_embedder;
pub mod knowledge_graph_suite;
pub mod live_service;
pub mod palace_links_suite;
pub mod throwaway_postgres;
pub mod vector_store_suite;

pub use fixtures::{KgFactory, KgFixture, Ranking, StoreFactory, StoreFixture};
pub use hashing_embedder::HashingEmbedder;

/// Generates one `#[tokio::test]` per vector-store behaviour for a [`StoreFactory`] value.
/// With `requires = "VAR"`, each test first checks the server address in `VAR` at run time
/// ([`live_service::service_address`]: skipped with the reason when unset, or failed where
/// skips are not allowed). The calling crate needs `tokio` (with `macros` and
/// `rt-multi-thread`) as a dev-dependency.
#[macro_export]
macro_rules! vector_store_conformance {
    ($factory:expr, $ranking:expr $(, requires = $var:literal)?) => {
        $crate::vector_store_conformance!(@tests $factory, $ranking, [$($var)?];
            empty_store_behaviour, upsert_get_delete_round_trip, upsert_replaces_same_id,
            insert_new_files_fresh_drawers,
            filters_by_wing_room_and_source, ranking_matches_exact_reference, nearest_ids_rank_as_query_does,
            room_counts_match_reference,
            paging_is_stable_and_complete, dimension_mismatch_writes_nothing, unicode_text_and_names,
            hostile_filter_values_are_literal, concurrent_upserts_all_land, limit_larger_than_store,
            lexical_query_finds_words_and_honours_filters, id_and_time_filters_are_pushed_down,
            authored_dates_round_trip_and_date_the_filters,
            recent_is_newest_first_within_the_filter, relocate_moves_drawers_and_keeps_their_vectors,
            vectors_read_back_what_was_stored);
    };
    (@tests $factory:expr, $ranking:expr, $requires:tt; $($name:ident),*) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $name() {
                if !$crate::vector_store_conformance!(@available $requires, $name) {
                    return;
                }
                $crate::vector_store_suite::$name(&$factory, $ranking).await;
            }
        )*
    };
    (@available [], $name:ident) => {
        true
    };
    (@available [$var:literal], $name:ident) => {
        $crate::live_service::service_address($var, stringify!($name)).is_some()
    };
}

/// Generates one `#[tokio::test]` per knowledge-graph behaviour for a [`KgFactory`] value;
/// `requires = "VAR"` gates each test on a server address as [`vector_store_conformance!`]
/// does.
#[macro_export]
macro_rules! knowledge_graph_conformance {
    ($factory:expr $(, requires = $var:literal)?) => {
        $crate::knowledge_graph_conformance!(@tests $factory, [$($var)?];
            fresh_graph_reads_create_nothing, query_both_directions, as_of_boundaries,
            invalidate_closes_without_deleting, supersede_leaves_no_overlap, duplicate_open_triples_collapse,
            unicode_entity_names, unknown_names_resolve_to_a_single_candidate, unknown_entity_is_empty, bad_input_writes_nothing,
            timeline_is_chronological_and_paged, stats_and_relationships, entity_upsert_keeps_one_row,
            concurrent_adds_all_land);
    };
    (@tests $factory:expr, $requires:tt; $($name:ident),*) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $name() {
                if !$crate::vector_store_conformance!(@available $requires, $name) {
                    return;
                }
                $crate::knowledge_graph_suite::$name(&$factory).await;
            }
        )*
    };
}
