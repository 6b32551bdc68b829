//! An agent built on the `mempalace` crate alone and the `mempalace` CLI share one palace:
//! the agent opens a palace the CLI made (drawers, graph, tunnels and coordination events
//! filed through the CLI and its MCP server), sees all of it, mines a folder, and the CLI then
//! sees what the agent filed. And the CLI's `mine` and the MCP `mine` tool are one
//! orchestration: the same folder gives the same drawers, and neither writes into the folder.

#[path = "support/palace_processes.rs"]
mod palace_processes;

use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use mempalace::core::coordination::EventQuery;
use mempalace::core::vector_store::Page;
use mempalace::ingest::{MineRequest, NoProgress};
use mempalace::prelude::*;
use palace_processes::{call, start_server};
use serde_json::{Value, json};

fn cli(palace: &Path, args: &[&str]) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_mempalace"))
        .arg("--palace")
        .arg(palace)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or(Value::Null)
}

fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A small project with two rooms.
fn project(root: &Path, name: &str) -> std::path::PathBuf {
    let dir = root.join(name);
    write(
        &dir,
        "docs/auth.md",
        "# Auth\n\nWe replaced Auth0 with Clerk in January because SAML pricing tripled.\n",
    );
    write(
        &dir,
        "backend/webhooks.md",
        "# Webhooks\n\nStripe retries failed webhooks for three days; handlers are idempotent.\n",
    );
    dir
}

/// Every drawer id of a palace, sorted.
async fn drawer_ids(palace: &Palace) -> Vec<String> {
    let page = Page {
        offset: 0,
        limit: 10_000,
    };
    let mut ids: Vec<String> = palace
        .list_drawers(None, None, page)
        .await
        .unwrap()
        .drawers
        .into_iter()
        .map(|d| d.drawer_id)
        .collect();
    ids.sort();
    ids
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_on_the_library_and_the_cli_share_one_palace() {
    let dir = tempfile::tempdir().unwrap();
    let palace_dir = dir.path().join("palace");
    let app = project(dir.path(), "app");
    cli(&palace_dir, &["init", app.to_str().unwrap()]);
    let mined = cli(&palace_dir, &["mine", app.to_str().unwrap(), "--json"]);
    cli(&palace_dir, &["kg", "add", "Clerk", "replaces", "Auth0"]);
    // Tunnels and coordination events through the CLI's MCP server.
    let server = start_server(&palace_dir, &[]).await;
    call(
        server.peer(),
        "mempalace_create_tunnel",
        json!({"source_wing": "app", "source_room": "docs", "target_wing": "app", "target_room": "backend", "label": "auth calls webhooks"}),
    )
    .await
    .unwrap();
    call(
        server.peer(),
        "mempalace_event_append",
        json!({"type": "task.request", "stream": "project/app", "room": "delegation", "from_agent": "lead", "to_agent": "worker", "body": "Review the webhook retries"}),
    )
    .await
    .unwrap();
    let _ = server.cancel().await;

    // The agent: only the `mempalace` crate.
    let palace = Arc::new(mempalace::open(&palace_dir).await.unwrap());
    let status = match palace.status().await.unwrap() {
        mempalace::core::reports::Status::Ready(s) => s,
        other => panic!("{other:?}"),
    };
    assert_eq!(
        status.total_drawers,
        mined["drawers_filed"].as_u64().unwrap()
    );
    let facts = palace
        .kg_query("Clerk", None, Direction::Both)
        .await
        .unwrap();
    assert_eq!(facts.facts[0].object, "Auth0");
    let tunnels = palace.list_tunnels(None).await.unwrap();
    assert_eq!(tunnels.len(), 1, "{tunnels:?}");
    let events = palace
        .event_list(&EventQuery {
            to_agent: Some("worker".into()),
            ..EventQuery::default()
        })
        .await
        .unwrap();
    assert_eq!(events.count, 1);

    // It mines a folder; the CLI sees what it filed.
    let notes = project(dir.path(), "notes");
    let outcome = mempalace::ingest::mine(
        Arc::clone(&palace),
        &MineRequest::project(&notes),
        &NoProgress,
        &Cancellation::new(),
    )
    .await
    .unwrap();
    let filed = match outcome {
        mempalace::ingest::MineOutcome::Project { report, .. } => report.drawers_filed,
        other => panic!("{other:?}"),
    };
    assert!(filed >= 2);
    let seen = cli(&palace_dir, &["status", "--json"]);
    assert_eq!(
        seen["total_drawers"].as_u64().unwrap(),
        status.total_drawers + filed,
        "{seen}"
    );
    assert!(seen["wings"]["notes"].as_u64().is_some(), "{seen}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cli_and_the_mcp_mine_tool_are_one_orchestration() {
    let dir = tempfile::tempdir().unwrap();
    let folder = project(dir.path(), "shared");
    let (by_cli, by_mcp) = (dir.path().join("by_cli"), dir.path().join("by_mcp"));

    cli(&by_cli, &["mine", folder.to_str().unwrap(), "--json"]);
    let server = start_server(&by_mcp, &[]).await;
    let answer = call(
        server.peer(),
        "mempalace_mine",
        json!({"source": folder.to_str().unwrap()}),
    )
    .await
    .unwrap();
    assert_eq!(answer["success"], true, "{answer}");
    let _ = server.cancel().await;

    // Neither wrote a mempalace.yaml into the folder it read (as MemPalace 3.11).
    assert!(!folder.join("mempalace.yaml").exists());
    let a = mempalace::open(&by_cli).await.unwrap();
    let b = mempalace::open(&by_mcp).await.unwrap();
    let ids = drawer_ids(&a).await;
    assert!(!ids.is_empty());
    assert_eq!(ids, drawer_ids(&b).await);
}
