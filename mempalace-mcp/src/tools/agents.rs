//! The AI client's side: hook settings, checkpoint acknowledgements, reconnecting.

use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::MemPalaceServer;
use crate::answer::{ToolAnswer, read, write};
use crate::parameters::{NoArgs, Parameters};

/// `mempalace_hook_settings`.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HookSettingsArgs {
    /// True = silent direct save, False = blocking MCP calls.
    #[serde(default)]
    pub silent_save: Option<bool>,
    /// True = show desktop toast via notify-send.
    #[serde(default)]
    pub desktop_toast: Option<bool>,
}

#[tool_router(router = agent_tools, vis = "pub(crate)")]
impl MemPalaceServer {
    /// Get or set hook behavior. silent_save: True = save directly (no MCP clutter), False = legacy blocking. desktop_toast: True = show desktop notification. Call with no args to view.
    #[tool(name = "mempalace_hook_settings")]
    async fn hook_settings(&self, Parameters(a): Parameters<HookSettingsArgs>) -> ToolAnswer {
        write(self.hooks.settings(a.silent_save, a.desktop_toast))
    }

    /// Check if a recent palace checkpoint was saved. Returns message count and timestamp.
    #[tool(name = "mempalace_memories_filed_away")]
    async fn memories_filed_away(&self, Parameters(_): Parameters<NoArgs>) -> ToolAnswer {
        write(Ok(self.hooks.memories_filed_away()))
    }

    /// Mesh snapshot: this replica's identity, host name and version vector; configured peers (none: this port shares a palace across hosts through its engines, not by syncing copies).
    #[tool(name = "mempalace_mesh_peers", annotations(read_only_hint = true))]
    async fn mesh_peers(&self, Parameters(_): Parameters<NoArgs>) -> ToolAnswer {
        read(self.palace.mesh_peers().await)
    }

    /// Force reconnect to the palace database. Use after external scripts or CLI commands modified the palace directly.
    // Marked read-only as 3.11 treats it: it reopens handles and changes no memory, and a
    // read-only server needs it to see other writers' changes.
    #[tool(name = "mempalace_reconnect", annotations(read_only_hint = true))]
    async fn reconnect(&self, Parameters(_): Parameters<NoArgs>) -> ToolAnswer {
        read(self.palace.reconnect().await)
    }
}
