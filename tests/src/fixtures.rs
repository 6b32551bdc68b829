//! How a backend hands fresh instances to the suite.

use std::any::Any;
use std::sync::Arc;

use async_trait::async_trait;
use mempalace_core::{KnowledgeGraph, VectorStore};

/// How closely a store's ranking must follow exact cosine order.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Ranking {
    /// Top-k ids identical to the exact reference.
    Exact,
    /// Approximate nearest neighbours: recall@10 at least `min_recall` (0.95 for the suite).
    Approximate {
        /// Lowest acceptable mean recall@10.
        min_recall: f64,
    },
}

/// A fresh, empty store plus whatever must live as long as it (a temp dir, a collection name).
pub struct StoreFixture {
    /// The store under test.
    pub store: Arc<dyn VectorStore>,
    _keep_alive: Option<Box<dyn Any + Send + Sync>>,
}

impl StoreFixture {
    /// A fixture with nothing to keep alive.
    pub fn new(store: Arc<dyn VectorStore>) -> Self {
        StoreFixture {
            store,
            _keep_alive: None,
        }
    }

    /// A fixture that keeps `guard` (e.g. a `tempfile::TempDir`) until it is dropped.
    pub fn with_guard(store: Arc<dyn VectorStore>, guard: impl Any + Send + Sync) -> Self {
        StoreFixture {
            store,
            _keep_alive: Some(Box::new(guard)),
        }
    }
}

/// Makes fresh, empty, not yet created stores.
#[async_trait]
pub trait StoreFactory: Send + Sync {
    /// A new store for vectors of `dimension`, sharing nothing with earlier ones.
    async fn create(&self, dimension: usize) -> StoreFixture;
}

/// A fresh, empty knowledge graph plus what must live as long as it.
pub struct KgFixture {
    /// The graph under test.
    pub kg: Arc<dyn KnowledgeGraph>,
    _keep_alive: Option<Box<dyn Any + Send + Sync>>,
}

impl KgFixture {
    /// A fixture with nothing to keep alive.
    pub fn new(kg: Arc<dyn KnowledgeGraph>) -> Self {
        KgFixture {
            kg,
            _keep_alive: None,
        }
    }

    /// A fixture that keeps `guard` alive as long as the graph.
    pub fn with_guard(kg: Arc<dyn KnowledgeGraph>, guard: impl Any + Send + Sync) -> Self {
        KgFixture {
            kg,
            _keep_alive: Some(Box::new(guard)),
        }
    }
}

/// Makes fresh, empty knowledge graphs.
#[async_trait]
pub trait KgFactory: Send + Sync {
    /// A new graph sharing nothing with earlier ones.
    async fn create(&self) -> KgFixture;
}
