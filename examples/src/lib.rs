//! # mempalace-cli
//!
//! The `mempalace` command (init, mine, search, status, kg, mcp) and the pieces it is made of,
//! usable by any app that embeds MemPalace: opening a palace on the default embedded stack
//! ([`stack`]), mining a project folder ([`mine`]) and serving a palace over MCP ([`mcp`]).

pub mod init;
pub mod malloc_tuning;
pub mod mcp;
pub mod migrate;
pub mod mine;
pub mod palace_config;
pub mod project_config;
pub mod regular_file;
pub mod render;
pub mod secret_file;
pub mod stack;
