//! `MemPalaceServer`: the rmcp `ServerHandler` that lists the tools and runs them.
//!
//! The tools themselves live in [`super::tools`], one method each (rmcp's `#[tool]`), with
//! their arguments beside them. This file holds what every call shares: unknown tools
//! (-32601), read-only mode (-32003, as 3.11), the bound on calls in flight, the time limit of
//! reads, writes that run to the end even when their client has gone, and a panic inside a
//! tool answered as an internal error (-32603) rather than a dropped request.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Duration;

use futures::FutureExt;
use serde_json::json;
use tracing::Instrument;

use super::call_gate::CallGate;
use super::detach_on_drop::DetachOnDrop;

use mempalace_core::agent_hooks::AgentHooks;
use mempalace_core::{PALACE_PROTOCOL, Palace};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ErrorCode, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt};

/// The JSON-RPC error code of a call the server refuses to run (too many in flight).
pub const TOOL_FAILED: ErrorCode = ErrorCode(-32000);
/// The JSON-RPC error code of a tool that failed inside the server (a bug of ours, reported
/// rather than dropped).
pub const INTERNAL_ERROR: ErrorCode = ErrorCode(-32603);
/// The JSON-RPC error code of a call naming no tool of this server.
pub const UNKNOWN_TOOL: ErrorCode = ErrorCode(-32601);
/// The JSON-RPC error code of a tool refused because the server is read-only (3.11's code).
pub const READ_ONLY_REFUSED: ErrorCode = ErrorCode(-32003);
/// Most tool calls one server runs at once; more are refused with an error until one ends.
pub const MAX_CALLS_IN_FLIGHT: usize = 64;
/// How long a stdio server whose client has gone waits for the tool calls still running.
const STDIO_DRAIN: Duration = Duration::from_secs(60);
/// Tools that wait by design (long polls with their own bounded timeout): the read time
/// limit does not cut them short.
const LONG_POLL_TOOLS: &[&str] = &["mempalace_event_wait"];

/// Serves one palace's tools.
#[derive(Clone)]
pub struct MemPalaceServer {
    pub(crate) palace: Arc<Palace>,
    pub(crate) hooks: Arc<AgentHooks>,
    calls: Arc<CallGate>,
    tools: Arc<ToolRouter<MemPalaceServer>>,
    read_only: bool,
    read_time_limit: Option<Duration>,
}

/// Runs one tool call's future; a panic inside it becomes an internal-error answer (a client
/// must always get an answer to its request, and the server must keep serving).
pub async fn answer_even_on_panic<F, T>(tool: &str, call: F) -> Result<T, McpError>
where
    F: std::future::Future<Output = Result<T, McpError>>,
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
    /// A server over `palace`, offering every tool.
    pub fn new(palace: Arc<Palace>) -> Self {
        MemPalaceServer {
            palace,
            hooks: Arc::new(AgentHooks::default()),
            calls: Arc::new(CallGate::new(MAX_CALLS_IN_FLIGHT)),
            tools: Arc::new(super::tools::all()),
            read_only: false,
            read_time_limit: None,
        }
    }

    /// Serves recall only, as 3.11's `--read-only`: tools that change state are left out of
    /// `tools/list` and refused (-32003) when called by name.
    pub fn read_only(mut self, read_only: bool) -> Self {
        self.read_only = read_only;
        self
    }

    /// Cuts a read tool short after `limit` with an error (long polls keep their own bound).
    /// Writes are never abandoned half-way: they run to the end and answer.
    pub fn with_read_time_limit(mut self, limit: Duration) -> Self {
        self.read_time_limit = Some(limit);
        self
    }

    /// The gate every tool call passes; closing it ([`CallGate::drain`]) lets the calls in
    /// flight finish and refuses new ones.
    pub fn call_gate(&self) -> Arc<CallGate> {
        Arc::clone(&self.calls)
    }

    /// Reads and writes the AI client's hook files at `hooks` instead of the user's own
    /// (`~/.mempalace`, the config folder).
    pub fn with_agent_hooks(mut self, hooks: AgentHooks) -> Self {
        self.hooks = Arc::new(hooks);
        self
    }

    /// Every tool this server offers, with its input schema, sorted by name (without the
    /// write tools when the server is read-only).
    pub fn tools(&self) -> Vec<Tool> {
        let mut tools = self.tools.list_all();
        if self.read_only {
            tools.retain(|t| !changes_state(t));
        }
        tools
    }

    /// Whether `name` is a tool that changes state (one not marked read-only).
    pub fn is_write_tool(&self, name: &str) -> bool {
        self.tools.get(name).is_some_and(changes_state)
    }
}

/// Whether a tool changes state: every tool not annotated `readOnlyHint: true`.
fn changes_state(tool: &Tool) -> bool {
    tool.annotations.as_ref().and_then(|a| a.read_only_hint) != Some(true)
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
        Ok(ListToolsResult::with_all_items(self.tools()))
    }

    #[tracing::instrument(level = "debug", skip_all, fields(tool = %request.name))]
    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let name = request.name.to_string();
        let Some(tool) = self.tools.get(&name) else {
            let shown: String = name.chars().take(200).collect();
            return Err(McpError::new(
                UNKNOWN_TOOL,
                format!("Unknown tool: {shown}"),
                None,
            ));
        };
        let writes = changes_state(tool);
        if writes && self.read_only {
            return Err(McpError::new(
                READ_ONLY_REFUSED,
                "Server is in read-only mode; this tool is disabled",
                Some(json!({ "tool": name })),
            ));
        }
        let permit = self
            .calls
            .enter()
            .map_err(|refused| McpError::new(TOOL_FAILED, refused.to_string(), None))?;
        let server = self.clone();
        let tool_name = name.clone();
        let call = async move {
            let _permit = permit;
            let call = ToolCallContext::new(&server, request, context);
            answer_even_on_panic(&tool_name, server.tools.call(call)).await
        };
        if writes {
            // A write holds its permit to the end and finishes (a drain waits for it) even when
            // the client disconnects or its session is torn down: it runs here, and whatever
            // is left of it when its caller stops waiting goes on in a task of its own.
            return DetachOnDrop::new(call.instrument(tracing::Span::current())).await;
        }
        // A read runs right here, so it costs no hand-off to another task; when its caller
        // stops waiting (a cancelled request, a session torn down) it is dropped with it.
        match self.read_time_limit {
            Some(limit) if !LONG_POLL_TOOLS.contains(&name.as_str()) => {
                tokio::time::timeout(limit, call).await.unwrap_or_else(|_| {
                    Err(McpError::new(
                        TOOL_FAILED,
                        format!("{name} timed out after {} s", limit.as_secs_f64()),
                        None,
                    ))
                })
            }
            _ => call.await,
        }
    }
}

/// Why a server stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The task running the MCP session failed.
    #[error("the MCP session task failed: {0}")]
    Session(#[from] tokio::task::JoinError),
}

/// Serves `palace` over stdin/stdout until the client disconnects (recall only when
/// `read_only`). `on_ready` runs once the client's `initialize` has been answered (start
/// loading the model there). Lines that are not JSON are answered with a parse error by
/// [`super::stdio_guard::GuardedTransport`].
pub async fn serve_stdio(
    palace: Arc<Palace>,
    read_only: bool,
    on_ready: impl FnOnce() + Send,
) -> Result<(), ServeError> {
    let transport = super::stdio_guard::GuardedTransport::new(
        super::stdio_streams::input(),
        super::stdio_streams::output(),
    );
    let answers = transport.pending_answers();
    let server = MemPalaceServer::new(palace).read_only(read_only);
    let calls = server.call_gate();
    match server.serve(transport).await {
        Ok(service) => {
            on_ready();
            service.waiting().await?;
        }
        // A client that disconnects before initializing is not an error of ours.
        Err(e) => tracing::info!(error = %e, "client left before initialize"),
    }
    // A client may hang up with writes still running: they finish before the process ends.
    let unfinished = calls.drain(STDIO_DRAIN).await;
    if unfinished > 0 {
        tracing::warn!(unfinished, "tool calls still running at exit");
    }
    answers.written().await;
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
