//! The knowledge-graph conformance suite on SQLite, in a file and in memory.

use std::sync::Arc;

use mempalace_conformance::{KgFactory, KgFixture, knowledge_graph_conformance};
use mempalace_kg_sqlite::SqliteKnowledgeGraph;

struct FileFactory;

#[async_trait::async_trait]
impl KgFactory for FileFactory {
    async fn create(&self) -> KgFixture {
        let dir = tempfile::tempdir().unwrap();
        let kg = SqliteKnowledgeGraph::in_palace(&dir.path().join("palace"));
        KgFixture::with_guard(Arc::new(kg), dir)
    }
}

mod file {
    use super::*;
    knowledge_graph_conformance!(FileFactory);
}

struct MemoryFactory;

#[async_trait::async_trait]
impl KgFactory for MemoryFactory {
    async fn create(&self) -> KgFixture {
        KgFixture::new(Arc::new(SqliteKnowledgeGraph::in_memory()))
    }
}

mod memory {
    use super::*;
    knowledge_graph_conformance!(MemoryFactory);
}
