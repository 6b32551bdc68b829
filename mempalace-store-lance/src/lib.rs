//! # mempalace-store-lance
//!
//! The default [`mempalace_core::VectorStore`]: LanceDB embedded in the process, the palace's
//! drawers in one Lance table on local disk. Filters are pushed down into Lance as SQL
//! predicates (prefiltered, values quoted and escaped); search is exact below
//! [`LanceOptions::index_threshold`] rows (5,000 by default) and uses a cosine HNSW index over
//! 8-bit quantised vectors above it, re-ranked with exact distances (a filter that keeps under
//! a tenth of the rows is searched exactly). Every 8th write runs a background check: it folds
//! new rows into the indexes from 1,000 uncovered rows on, keeping the vector index in at most
//! two parts, and otherwise merges the fragments the writes added (a one-drawer write is a
//! one-row fragment that every query would open). `settle` leaves one part and one fragment.

mod maintenance;
mod options;
mod predicate;
mod room_count_cache;
mod schema;
mod store;

pub use maintenance::MaintenanceReport;
pub use options::LanceOptions;
pub use predicate::{filter_predicate, sql_string};
pub use store::LanceStore;
