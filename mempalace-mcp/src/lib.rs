//! # mempalace-mcp
//!
//! The MemPalace MCP server: JSON-RPC 2.0 over stdio or streamable HTTP (rmcp), one tool per
//! Palace operation, to serve a palace from any binary:
//!
//! ```no_run
//! # async fn demo(palace: std::sync::Arc<mempalace_core::Palace>) -> Result<(), Box<dyn std::error::Error>> {
//! // One client that started this process, over stdin/stdout:
//! mempalace_mcp::serve_stdio(palace, false, || {}).await?;
//! # Ok(()) }
//! ```
//!
//! Tool names, argument names and payloads match MemPalace 3.11, so existing prompts and
//! clients work: an unknown tool gets -32601; arguments that do not fit its schema get
//! -32602 naming the argument; a tool that ran and failed answers `{"error": message}`
//! (flagged `isError`); reads of a palace that does not exist answer the no-palace payload.

#![warn(missing_docs)]

pub mod answer;
pub mod call_gate;
pub mod detach_on_drop;
pub mod http;
pub mod parameters;
pub mod server;
pub mod stdio_guard;
pub mod stdio_streams;
pub mod tools;

pub use http::{HttpLimits, HttpOptions, serve_http};
pub use server::{MemPalaceServer, ServeError, serve_stdio};
