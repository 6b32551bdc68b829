//! Agent diaries: what an agent wrote down for its future self.

use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::MemPalaceServer;
use crate::answer::{ToolAnswer, failure, read, write};
use crate::parameters::Parameters;

/// `mempalace_diary_write`.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DiaryWriteArgs {
    /// Your name — each agent gets their own diary wing.
    pub agent_name: String,
    /// Your diary entry in AAAK format — compressed, entity-coded, emotion-marked.
    #[serde(default)]
    pub entry: Option<String>,
    /// Topic tag (optional, default: general).
    #[serde(default)]
    pub topic: Option<String>,
    /// Target wing for this entry (optional; default wing_{agent_name}). Use it to write to a project wing.
    #[serde(default)]
    pub wing: Option<String>,
    /// Alias for 'entry' (add_drawer's name); 'entry' wins when both are given.
    #[serde(default)]
    pub content: Option<String>,
}

fn default_last_n() -> u32 {
    10
}

/// `mempalace_diary_read`.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DiaryReadArgs {
    /// Your name — each agent gets their own diary wing.
    pub agent_name: String,
    /// Number of recent entries to read (default: 10).
    #[serde(default = "default_last_n")]
    pub last_n: u32,
    /// Wing to read diary entries from (optional; default wing_{agent_name}).
    #[serde(default)]
    pub wing: Option<String>,
}

#[tool_router(router = diary_tools, vis = "pub(crate)")]
impl MemPalaceServer {
    /// Write to your personal agent diary in AAAK format: your observations, what you worked on, what matters. Each agent has their own diary with full history, e.g. 'SESSION:2026-04-04|built.palace.graph+diary.tools|★★★'.
    #[tool(name = "mempalace_diary_write")]
    async fn diary_write(&self, Parameters(a): Parameters<DiaryWriteArgs>) -> ToolAnswer {
        let Some(entry) = a.entry.or(a.content) else {
            return Err(rmcp::ErrorData::invalid_params(
                "Missing required parameter 'entry' for tool mempalace_diary_write",
                None,
            ));
        };
        if entry.trim().is_empty() {
            return Ok(failure("entry must be a non-empty string"));
        }
        write(
            self.palace
                .diary_write(&a.agent_name, &entry, a.topic.as_deref(), a.wing.as_deref())
                .await,
        )
    }

    /// Read your recent diary entries (in AAAK), newest first: what past versions of yourself recorded.
    #[tool(name = "mempalace_diary_read", annotations(read_only_hint = true))]
    async fn diary_read(&self, Parameters(a): Parameters<DiaryReadArgs>) -> ToolAnswer {
        read(
            self.palace
                .diary_read(&a.agent_name, a.last_n as usize, a.wing.as_deref())
                .await,
        )
    }
}
