//! The palace graph: rooms that connect wings, explicit tunnels, hallways.

use mempalace_core::palace_links::NewTunnel;
use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::MemPalaceServer;
use crate::answer::{ToolAnswer, read, write};
use crate::parameters::{NoArgs, Parameters};

/// `mempalace_traverse`.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TraverseArgs {
    /// Room to start from (e.g. 'chromadb-setup', 'riley-school').
    pub start_room: String,
    /// How many connections to follow (default: 2).
    #[serde(default)]
    pub max_hops: Option<i64>,
}

/// `mempalace_find_tunnels`.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FindTunnelsArgs {
    /// First wing (optional).
    #[serde(default)]
    pub wing_a: Option<String>,
    /// Second wing (optional).
    #[serde(default)]
    pub wing_b: Option<String>,
}

/// `mempalace_create_tunnel`.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateTunnelArgs {
    /// Wing of the source.
    pub source_wing: String,
    /// Room in the source wing.
    pub source_room: String,
    /// Wing of the target.
    pub target_wing: String,
    /// Room in the target wing.
    pub target_room: String,
    /// Description of the connection.
    #[serde(default)]
    pub label: Option<String>,
    /// Optional specific drawer ID.
    #[serde(default)]
    pub source_drawer_id: Option<String>,
    /// Optional specific drawer ID.
    #[serde(default)]
    pub target_drawer_id: Option<String>,
}

/// `mempalace_list_tunnels`.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListTunnelsArgs {
    /// Filter tunnels by wing (shows tunnels where wing is source or target).
    #[serde(default)]
    pub wing: Option<String>,
}

/// `mempalace_delete_tunnel`.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeleteTunnelArgs {
    /// Tunnel ID to delete.
    pub tunnel_id: String,
}

/// `mempalace_list_hallways`.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListHallwaysArgs {
    /// Filter hallways by wing.
    #[serde(default)]
    pub wing: Option<String>,
    /// Page size (default 100, max 500).
    #[serde(default)]
    pub limit: Option<i64>,
    /// Offset for pagination (default 0).
    #[serde(default)]
    pub offset: Option<i64>,
}

/// `mempalace_delete_hallway`.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeleteHallwayArgs {
    /// Hallway ID to delete.
    pub hallway_id: String,
}

/// `mempalace_follow_tunnels`.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FollowTunnelsArgs {
    /// Wing to start from.
    pub wing: String,
    /// Room to follow tunnels from.
    pub room: String,
}

#[tool_router(router = palace_graph_tools, vis = "pub(crate)")]
impl MemPalaceServer {
    /// Walk the palace graph from a room: the rooms that share a wing with it, hop by hop — how ideas connect across wings.
    #[tool(name = "mempalace_traverse", annotations(read_only_hint = true))]
    async fn traverse(&self, Parameters(a): Parameters<TraverseArgs>) -> ToolAnswer {
        read(self.palace.traverse(&a.start_room, a.max_hops).await)
    }

    /// Find rooms that bridge two wings — the same topic appearing in different domains. E.g. what topics connect wing_code to wing_team?
    #[tool(name = "mempalace_find_tunnels", annotations(read_only_hint = true))]
    async fn find_tunnels(&self, Parameters(a): Parameters<FindTunnelsArgs>) -> ToolAnswer {
        read(
            self.palace
                .find_tunnels(a.wing_a.as_deref(), a.wing_b.as_deref())
                .await,
        )
    }

    /// Palace graph overview: total rooms, tunnel connections, rooms per wing.
    #[tool(name = "mempalace_graph_stats", annotations(read_only_hint = true))]
    async fn graph_stats(&self, Parameters(_): Parameters<NoArgs>) -> ToolAnswer {
        read(self.palace.graph_stats().await)
    }

    /// Create a cross-wing tunnel linking two palace locations (both rooms must exist). Use when content in one project relates to another — e.g. an API design in project_api connects to a database schema in project_database.
    #[tool(name = "mempalace_create_tunnel")]
    async fn create_tunnel(&self, Parameters(a): Parameters<CreateTunnelArgs>) -> ToolAnswer {
        let tunnel = NewTunnel::new(a.source_wing, a.source_room, a.target_wing, a.target_room)
            .with_label(a.label.unwrap_or_default())
            .with_drawer_ids(a.source_drawer_id, a.target_drawer_id);
        write(self.palace.create_tunnel(tunnel).await)
    }

    /// List all explicit cross-wing tunnels. Optionally filter by wing.
    #[tool(name = "mempalace_list_tunnels", annotations(read_only_hint = true))]
    async fn list_tunnels(&self, Parameters(a): Parameters<ListTunnelsArgs>) -> ToolAnswer {
        write(self.palace.list_tunnels(a.wing.as_deref()).await)
    }

    /// Delete an explicit tunnel by its ID.
    #[tool(name = "mempalace_delete_tunnel")]
    async fn delete_tunnel(&self, Parameters(a): Parameters<DeleteTunnelArgs>) -> ToolAnswer {
        write(self.palace.delete_tunnel(&a.tunnel_id).await)
    }

    /// List within-wing hallway records (entity-to-entity co-occurrence links), strongest first, paged. Optionally filter by wing. Returns {hallways, total, count, offset, limit}.
    #[tool(name = "mempalace_list_hallways", annotations(read_only_hint = true))]
    async fn list_hallways(&self, Parameters(a): Parameters<ListHallwaysArgs>) -> ToolAnswer {
        write(
            self.palace
                .list_hallways(a.wing.as_deref(), a.limit, a.offset)
                .await,
        )
    }

    /// Delete a hallway record by its ID. Returns {deleted: bool}.
    #[tool(name = "mempalace_delete_hallway")]
    async fn delete_hallway(&self, Parameters(a): Parameters<DeleteHallwayArgs>) -> ToolAnswer {
        write(self.palace.delete_hallway(&a.hallway_id).await)
    }

    /// Follow tunnels from a room to see what it connects to in other wings. Returns connected rooms with drawer previews.
    #[tool(name = "mempalace_follow_tunnels", annotations(read_only_hint = true))]
    async fn follow_tunnels(&self, Parameters(a): Parameters<FollowTunnelsArgs>) -> ToolAnswer {
        read(self.palace.follow_tunnels(&a.wing, &a.room).await)
    }
}
