//! The palace at a glance: status, wings, rooms, taxonomy and the AAAK spec.

use mempalace_core::AAAK_SPEC;
use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::MemPalaceServer;
use crate::answer::{ToolAnswer, read};
use crate::parameters::{NoArgs, Parameters};

/// `mempalace_list_rooms`.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListRoomsArgs {
    /// Wing to list rooms for (all wings when omitted).
    #[serde(default)]
    pub wing: Option<String>,
}

#[tool_router(router = overview_tools, vis = "pub(crate)")]
impl MemPalaceServer {
    /// Palace overview: total drawers, drawers per wing and room, the memory protocol and the AAAK dialect. Call this on wake-up.
    #[tool(name = "mempalace_status", annotations(read_only_hint = true))]
    async fn status(&self, Parameters(_): Parameters<NoArgs>) -> ToolAnswer {
        read(self.palace.status().await)
    }

    /// All wings with their drawer counts.
    #[tool(name = "mempalace_list_wings", annotations(read_only_hint = true))]
    async fn list_wings(&self, Parameters(_): Parameters<NoArgs>) -> ToolAnswer {
        read(self.palace.list_wings().await)
    }

    /// Rooms with their drawer counts, in one wing or in all.
    #[tool(name = "mempalace_list_rooms", annotations(read_only_hint = true))]
    async fn list_rooms(&self, Parameters(a): Parameters<ListRoomsArgs>) -> ToolAnswer {
        read(self.palace.list_rooms(a.wing.as_deref()).await)
    }

    /// The full wing → room → drawer count tree.
    #[tool(name = "mempalace_get_taxonomy", annotations(read_only_hint = true))]
    async fn get_taxonomy(&self, Parameters(_): Parameters<NoArgs>) -> ToolAnswer {
        read(self.palace.taxonomy().await)
    }

    /// The AAAK compressed memory dialect specification.
    #[tool(name = "mempalace_get_aaak_spec", annotations(read_only_hint = true))]
    async fn get_aaak_spec(&self, Parameters(_): Parameters<NoArgs>) -> ToolAnswer {
        read(Ok(serde_json::json!({ "aaak_spec": AAAK_SPEC })))
    }
}
