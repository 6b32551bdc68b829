//! The coordination-log, links and closet conformance suites on PostgreSQL: each store in a
//! schema of its own on the server in `MEMPALACE_TEST_POSTGRES_URL` (SKIPPED without it, and
//! failed where skips are not allowed). A second handle is a second graph object on the same
//! schema, with its own connections: another host.

use std::sync::Arc;

use async_trait::async_trait;
use mempalace_conformance::closet_index_suite::{ClosetFactory, ClosetFixture};
use mempalace_conformance::coordination_suite::{CoordFactory, CoordFixture};
use mempalace_conformance::palace_links_suite::{LinksFactory, LinksFixture, LinksSeed};
use mempalace_conformance::{
    closet_index_conformance, coordination_log_conformance, palace_links_conformance,
};
use mempalace_core::coordination::CoordinationLog;
use mempalace_core::palace_links::PalaceLinks;
use mempalace_kg_postgres::{
    PostgresClosets, PostgresCoordinationLog, PostgresKnowledgeGraph, PostgresLinks, SchemaName,
};

mod common;
use common::fresh_schema;

/// A graph handle on `schema` of the test server: one host's connections.
fn host(schema: &SchemaName) -> PostgresKnowledgeGraph {
    let url = std::env::var("MEMPALACE_TEST_POSTGRES_URL").unwrap();
    PostgresKnowledgeGraph::connect(&url, schema.clone()).unwrap()
}

struct LogFactory;

#[async_trait]
impl CoordFactory for LogFactory {
    async fn create(&self) -> CoordFixture {
        let schema = fresh_schema("coord");
        let log = PostgresCoordinationLog::new(&host(&schema), "rep_host_a");
        let reopen = Arc::new(move || {
            Arc::new(PostgresCoordinationLog::new(&host(&schema), "rep_host_b"))
                as Arc<dyn CoordinationLog>
        });
        CoordFixture::with_reopen(Arc::new(log), reopen, ())
    }
}

mod coordination {
    use super::*;
    coordination_log_conformance!(LogFactory, requires = "MEMPALACE_TEST_POSTGRES_URL");
}

struct LinksOnServer;

#[async_trait]
impl LinksFactory for LinksOnServer {
    async fn create(&self, seed: LinksSeed) -> LinksFixture {
        let schema = fresh_schema("links");
        let links = PostgresLinks::new(&host(&schema));
        let LinksSeed { tunnels, hallways } = seed;
        if !tunnels.is_empty() {
            links
                .edit_tunnel_records(Box::new(move |r| {
                    *r = tunnels;
                    true
                }))
                .await
                .unwrap();
        }
        if !hallways.is_empty() {
            links
                .edit_hallway_records(Box::new(move |r| {
                    *r = hallways;
                    true
                }))
                .await
                .unwrap();
        }
        LinksFixture::new(Arc::new(links), move || {
            Arc::new(PostgresLinks::new(&host(&schema))) as Arc<dyn PalaceLinks>
        })
    }
}

mod links {
    use super::*;
    palace_links_conformance!(LinksOnServer, requires = "MEMPALACE_TEST_POSTGRES_URL");
}

struct ClosetsOnServer;

#[async_trait]
impl ClosetFactory for ClosetsOnServer {
    async fn create(&self) -> ClosetFixture {
        ClosetFixture::new(Arc::new(PostgresClosets::new(&host(&fresh_schema(
            "closets",
        )))))
    }
}

mod closets {
    use super::*;
    closet_index_conformance!(ClosetsOnServer, requires = "MEMPALACE_TEST_POSTGRES_URL");
}
