//! Serving your palace to an AI client from your own binary: the same 47 tools as `mempalace
//! mcp`, over stdio (the client starts this program) or, with `--http`, streamable HTTP on
//! loopback.
//!
//! Run: register `cargo run -p mempalace-agent-embedded --bin serve_mcp PALACE` as a stdio
//! MCP server, or run it with `--http` and point a client at the printed URL.

use std::sync::Arc;

use mempalace::mcp::{HttpOptions, MemPalaceServer, serve_http, serve_stdio};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let http = args.iter().any(|a| a == "--http");
    args.retain(|a| a != "--http");
    let Some(folder) = args.first() else {
        return Err("usage: serve_mcp PALACE [--http]".into());
    };
    // Logs go to stderr: stdout carries the protocol.
    let palace = Arc::new(mempalace::open(folder).await?);
    if http {
        let options = HttpOptions {
            bind: "127.0.0.1:0".parse()?,
            token: None,
            tls: None,
            allowed_hosts: Vec::new(),
            allowed_origins: Vec::new(),
            limits: Default::default(),
        };
        let server = MemPalaceServer::new(palace);
        serve_http(server, options, |url| eprintln!("listening on {url}")).await?;
    } else {
        serve_stdio(palace, false, || {}).await?;
    }
    Ok(())
}
