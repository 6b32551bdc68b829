//! How a tool's outcome becomes its MCP answer, as MemPalace 3.11 answers: the result as JSON
//! text; a tool that ran and failed answers `{"error": message}` (flagged `isError`); a read
//! of a palace that does not exist answers the no-palace payload.

use mempalace_core::PalaceError;
use mempalace_core::reports::NoPalaceReport;
use rmcp::ErrorData as McpError;
use rmcp::model::{CallToolResult, ContentBlock};
use serde::Serialize;
use serde_json::{Value, json};

/// What a tool method returns.
pub type ToolAnswer = Result<CallToolResult, McpError>;

/// The answer carrying `value` as JSON text.
pub fn json_answer(value: &Value) -> CallToolResult {
    CallToolResult::success(vec![ContentBlock::text(value.to_string())])
}

/// The answer of a tool that ran and failed: `{"error": message}`, flagged `isError`.
pub fn failure(message: impl std::fmt::Display) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(
        json!({ "error": message.to_string() }).to_string(),
    )])
}

/// The answer of a read tool: the result, the no-palace payload, or the failure.
pub fn read<T: Serialize>(outcome: mempalace_core::Result<T>) -> ToolAnswer {
    match outcome {
        Err(PalaceError::NoPalace { palace_path }) => Ok(json_answer(
            &serde_json::to_value(NoPalaceReport::new(&palace_path)).unwrap_or_default(),
        )),
        other => write(other),
    }
}

/// The answer of a write tool: the result, or the failure.
pub fn write<T: Serialize>(outcome: mempalace_core::Result<T>) -> ToolAnswer {
    match outcome {
        Ok(value) => match serde_json::to_value(value) {
            Ok(v) => Ok(json_answer(&v)),
            Err(e) => Err(McpError::internal_error(
                format!("cannot encode the result: {e}"),
                None,
            )),
        },
        Err(e) => {
            tracing::warn!(error = %e, "tool failed");
            Ok(failure(e))
        }
    }
}
