//! The MemPalace MCP server: JSON-RPC 2.0 over stdio (rmcp), one tool per Palace operation.
//!
//! Tool names and argument names match the Python MemPalace, so existing prompts and clients
//! work. A tool's result is the Palace method's JSON as text content. Failures: an unknown
//! tool or arguments that do not fit its schema get the protocol's invalid-params error
//! (-32602); a failing operation gets -32000 with the message. Reads of a palace that does not
//! exist answer the no-palace payload, as MemPalace does.

pub mod dispatch;
pub mod server;
pub mod stdio_guard;
pub mod tool_args;
pub mod tool_call;
pub mod tool_catalog;

pub use server::{MemPalaceServer, serve_stdio};
pub use tool_call::{ToolCall, ToolCallError};
