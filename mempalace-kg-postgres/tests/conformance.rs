//! The knowledge-graph conformance suite on PostgreSQL: each graph in a schema of its own on
//! the server in `MEMPALACE_TEST_POSTGRES_URL` (scripts/postgres/start.sh starts a throwaway one;
//! without it every test is SKIPPED with the reason, and fails where skips are not allowed).

use std::sync::Arc;

use mempalace_conformance::{KgFactory, KgFixture, knowledge_graph_conformance};
use mempalace_kg_postgres::PostgresKnowledgeGraph;

mod common;
use common::fresh_schema;

struct PostgresFactory;

#[async_trait::async_trait]
impl KgFactory for PostgresFactory {
    async fn create(&self) -> KgFixture {
        let url = std::env::var("MEMPALACE_TEST_POSTGRES_URL").unwrap();
        let kg = PostgresKnowledgeGraph::connect(&url, fresh_schema("conformance")).unwrap();
        KgFixture::new(Arc::new(kg))
    }
}

knowledge_graph_conformance!(PostgresFactory, requires = "MEMPALACE_TEST_POSTGRES_URL");
