//! Every tool the server offers, one method each, grouped by what they work on. The groups'
//! routers add up to the whole surface of MemPalace 3.11.

pub mod agents;
pub mod coordination;
pub mod diary;
pub mod drawers;
pub mod knowledge_graph;
pub mod overview;
pub mod palace_graph;

use rmcp::handler::server::router::tool::ToolRouter;

use super::MemPalaceServer;

/// The router of every tool.
pub fn all() -> ToolRouter<MemPalaceServer> {
    MemPalaceServer::overview_tools()
        + MemPalaceServer::drawer_tools()
        + MemPalaceServer::knowledge_graph_tools()
        + MemPalaceServer::diary_tools()
        + MemPalaceServer::agent_tools()
        + MemPalaceServer::palace_graph_tools()
        + MemPalaceServer::coordination_tools()
}
