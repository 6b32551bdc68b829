//! `MemPalaceServer`: the rmcp `ServerHandler` that lists the tools and runs them.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures::FutureExt;
use tokio::sync::Semaphore;

use mempalace_core::reports::NoPalaceReport;
use mempalace_core::{PALACE_PROTOCOL, Palace, PalaceError};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorCode,
    Implementation, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt};

use super::dispatch::dispatch;
use super::tool_call::{ToolCall, ToolCallError};
use super::tool_catalog::tools;

/// The JSON-RPC error code of a tool whose operation failed.
pub const TOOL_FAILED: ErrorCode = ErrorCode(-32000);

/// The JSON-RPC error code of a tool that failed inside the server (a bug of ours, reported
/// rather than dropped).
pub const INTERNAL_ERROR: ErrorCode = ErrorCode(-32603);
/// Most tool calls one server runs at once; more are refused with an error until one ends.
pub const MAX_CALLS_IN_FLIGHT: usize = 64;

/// Serves one palace's tools.
#[derive(Clone)]
pub struct MemPalaceServer {
    palace: Arc<Palace>,
    in_flight: Arc<Semaphore>,
}

/// Runs one tool call's future; a panic inside it becomes an internal-error answer (a client
/// must always get an answer to its request, and the server must keep serving).
pub async fn answer_even_on_panic<F>(tool: &str, call: F) -> Result<serde_json::Value, McpError>
where
    F: std::future::Future<Output = Result<serde_json::Value, McpError>>,
{
    match AssertUnwindSafe(call).catch_unwind().await {
        Ok(answer) => answer,
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            tracing::error!(tool, panic = %what, "tool panicked");
            Err(McpError::new(
                INTERNAL_ERROR,
                format!("internal error in {tool}: {what}"),
                None,
            ))
        }
    }
}

impl MemPalaceServer {
    /// A server over `palace`.
    pub fn new(palace: Arc<Palace>) -> Self {
        MemPalaceServer {
            palace,
            in_flight: Arc::new(Semaphore::new(MAX_CALLS_IN_FLIGHT)),
        }
    }

    /// Parses and runs one call; the JSON result, or the error to answer.
    pub async fn call(
        &self,
        name: &str,
        arguments: Option<serde_json::Map<String, serde_json::Value>>,
    ) -> Result<serde_json::Value, McpError> {
        let call = ToolCall::parse(name, arguments).map_err(|e| match &e {
            ToolCallError::UnknownTool(_) | ToolCallError::BadArguments { .. } => {
                McpError::invalid_params(e.to_string(), None)
            }
        })?;
        let is_write = call.is_write();
        let _permit = self.in_flight.try_acquire().map_err(|_| {
            McpError::new(
                TOOL_FAILED,
                format!(
                    "server busy: {MAX_CALLS_IN_FLIGHT} tool calls are in flight; retry when one has answered"
                ),
                None,
            )
        })?;
        answer_even_on_panic(name, self.run(name, call, is_write)).await
    }

    async fn run(
        &self,
        name: &str,
        call: ToolCall,
        is_write: bool,
    ) -> Result<serde_json::Value, McpError> {
        match dispatch(&self.palace, call).await {
            Ok(value) => Ok(value),
            // Reads of a palace that does not exist answer MemPalace's no-palace payload.
            Err(PalaceError::NoPalace { palace_path }) if !is_write => {
                Ok(serde_json::to_value(NoPalaceReport::new(&palace_path)).unwrap_or_default())
            }
            Err(e) => {
                tracing::warn!(tool = name, error = %e, "tool failed");
                Err(McpError::new(TOOL_FAILED, e.to_string(), None))
            }
        }
    }
}

impl ServerHandler for MemPalaceServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("mempalace", env!("CARGO_PKG_VERSION")))
            .with_instructions(PALACE_PROTOCOL)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let value = self.call(&request.name, request.arguments).await?;
        Ok(CallToolResult::success(vec![ContentBlock::text(value.to_string())]).into())
    }
}

/// Serves `palace` over stdin/stdout until the client disconnects. `on_ready` runs once the
/// client's `initialize` has been answered (start loading the model there). Lines that are
/// not JSON are answered with a parse error by [`super::stdio_guard`].
pub async fn serve_stdio(
    palace: Arc<Palace>,
    on_ready: impl FnOnce() + Send,
) -> anyhow::Result<()> {
    let (server_side, proxy_side) = tokio::io::duplex(1 << 20);
    let (from_server, to_server) = tokio::io::split(proxy_side);
    let guard = tokio::spawn(super::stdio_guard::guard_lines(
        tokio::io::stdin(),
        tokio::io::stdout(),
        from_server,
        to_server,
    ));
    let (server_read, server_write) = tokio::io::split(server_side);
    match MemPalaceServer::new(palace)
        .serve((server_read, server_write))
        .await
    {
        Ok(service) => {
            on_ready();
            service.waiting().await?;
        }
        // A client that disconnects before initializing is not an error of ours.
        Err(e) => tracing::info!(error = %e, "client left before initialize"),
    }
    guard.await??;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_panicking_tool_is_answered_with_an_error() {
        let answer = answer_even_on_panic("mempalace_x", async {
            if std::hint::black_box(true) {
                panic!("date arithmetic overflowed");
            }
            Ok(serde_json::Value::Null)
        })
        .await
        .unwrap_err();
        assert_eq!(answer.code, INTERNAL_ERROR);
        assert!(answer.message.contains("date arithmetic overflowed"));
        let fine = answer_even_on_panic("mempalace_x", async { Ok(serde_json::json!(1)) }).await;
        assert_eq!(fine.unwrap(), serde_json::json!(1));
    }
}
