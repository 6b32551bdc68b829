//! Several `mempalace mcp` processes filing facts into one palace at once: the scenario of
//! the multi-process test and of the soak bench (included by both with `#[path]`).

#![allow(dead_code)] // each includer uses a part

use std::path::Path;

use futures::StreamExt;
use rmcp::model::CallToolRequestParams;
use rmcp::service::{Peer, RunningService};
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};
use tokio::process::Command;

/// One add_drawer: shared or own, the fact's index, and the tool's answer.
pub type Answer = (bool, usize, Result<Value, String>);

/// Words for generated facts: random 14-word sequences over this vocabulary are far apart
/// semantically (MiniLM similarity well under 0.9), so only identical facts are duplicates.
const VOCABULARY: &[&str] = &[
    "harbor",
    "violin",
    "glacier",
    "mortgage",
    "pepper",
    "satellite",
    "tulip",
    "compiler",
    "meadow",
    "invoice",
    "falcon",
    "lantern",
    "quartz",
    "symphony",
    "tractor",
    "vaccine",
    "walrus",
    "yogurt",
    "zeppelin",
    "anchor",
    "bicycle",
    "cathedral",
    "dolphin",
    "espresso",
    "furnace",
    "gondola",
    "hammock",
    "igloo",
    "jasmine",
    "kettle",
    "lobster",
    "marathon",
    "nebula",
    "orchard",
    "parachute",
    "quilt",
    "receipt",
    "saxophone",
    "telescope",
    "umbrella",
    "volcano",
    "waffle",
    "xylophone",
    "yacht",
    "zucchini",
    "asteroid",
    "blizzard",
    "cactus",
    "dentist",
    "elevator",
    "fireworks",
    "giraffe",
    "hurricane",
    "insurance",
    "jellyfish",
    "kangaroo",
    "lighthouse",
    "microscope",
    "notebook",
    "octopus",
    "penguin",
    "quarantine",
    "rainbow",
    "scarecrow",
    "tornado",
    "unicorn",
    "vineyard",
    "wrestler",
    "avalanche",
    "barbecue",
    "chessboard",
    "dinosaur",
    "earthquake",
    "flamingo",
    "graveyard",
    "helicopter",
    "iceberg",
    "jukebox",
    "keyboard",
    "lemonade",
    "mushroom",
    "nightclub",
    "oxygen",
    "pyramid",
    "raccoon",
    "submarine",
    "trampoline",
    "uranium",
    "volleyball",
    "windmill",
    "accordion",
    "bakery",
    "canyon",
    "diamond",
    "engine",
    "forest",
    "guitar",
    "honey",
    "island",
    "jungle",
    "ladder",
    "magnet",
    "needle",
    "ocean",
    "pillow",
    "rocket",
    "spider",
    "tiger",
    "valley",
    "wallet",
    "blanket",
    "candle",
    "desert",
    "feather",
    "garlic",
    "hospital",
    "jacket",
    "kitchen",
    "library",
    "mirror",
    "nurse",
    "office",
    "pirate",
    "river",
    "salary",
    "tunnel",
];

/// A deterministic pseudo-random fact for `seed`.
pub fn fact(seed: u64) -> String {
    let mut state = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    let words: Vec<&str> = (0..14)
        .map(|_| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            VOCABULARY[(state >> 33) as usize % VOCABULARY.len()]
        })
        .collect();
    format!("Remember: {}.", words.join(" "))
}

/// Starts `mempalace [stack args] --palace <palace> mcp` and initializes an MCP client session
/// with it.
pub async fn start_server(palace: &Path, stack_args: &[String]) -> RunningService<RoleClient, ()> {
    start_server_with_env(palace, stack_args, &[]).await
}

/// Like [`start_server`], with these environment variables set for the server.
pub async fn start_server_with_env(
    palace: &Path,
    stack_args: &[String],
    env: &[(&str, &str)],
) -> RunningService<RoleClient, ()> {
    let transport = TokioChildProcess::new(
        Command::new(env!("CARGO_BIN_EXE_mempalace")).configure(|c| {
            c.envs(env.iter().copied())
                .args(stack_args)
                .arg("--palace")
                .arg(palace)
                .arg("mcp");
        }),
    )
    .expect("spawn mempalace mcp");
    ().serve(transport).await.expect("initialize")
}

/// Calls a tool; the tool's JSON result, or the error as text.
pub async fn call(peer: &Peer<RoleClient>, tool: &str, args: Value) -> Result<Value, String> {
    let mut params = CallToolRequestParams::new(tool.to_string());
    if let Value::Object(map) = args {
        params = params.with_arguments(map);
    }
    let result = peer.call_tool(params).await.map_err(|e| e.to_string())?;
    let text = result
        .content
        .first()
        .and_then(|c| c.as_text())
        .map(|t| t.text.clone())
        .ok_or("no text content")?;
    // A tool that ran and failed answers `{"error": …}` flagged isError.
    if result.is_error == Some(true) {
        return Err(text);
    }
    serde_json::from_str(&text).map_err(|e| e.to_string())
}

/// How a filing run went, counted from the answers and the palace afterwards.
#[derive(Debug, Default)]
pub struct FilingOutcome {
    /// add_drawer calls made.
    pub calls: usize,
    /// Calls that failed (an error answer, not a duplicate refusal).
    pub failed: Vec<String>,
    /// For each shared fact, how many processes filed it (must be 1).
    pub shared_filed: Vec<u32>,
    /// Own facts a process could not file.
    pub own_missing: usize,
    /// total_drawers as each server's status reports it afterwards.
    pub totals_seen: Vec<u64>,
    /// Drawers per wing (from the first server's status).
    pub wings: serde_json::Map<String, Value>,
    /// The first drawer each duplicate refusal names (the one that remains).
    pub named_in_refusals: Vec<String>,
    /// Drawers named by refusals that the first server cannot find afterwards.
    pub named_but_missing: Vec<String>,
}

/// Starts `servers` MCP processes on `palace` (with `stack_args` before the subcommand, e.g.
/// a Qdrant backend); each files the same `facts` shared facts and `facts` of its own with
/// `in_flight` calls at once, then every server reports status.
pub async fn file_from_many_servers(
    palace: &Path,
    stack_args: &[String],
    servers: usize,
    facts: usize,
    in_flight: usize,
) -> FilingOutcome {
    file_from_hosts(
        &[palace.to_path_buf()],
        (stack_args, &[]),
        servers,
        (facts, facts),
        in_flight,
        false,
    )
    .await
}

/// Like [`file_from_many_servers`] across "hosts": server `p` runs on palace folder
/// `palaces[p % palaces.len()]` (folders that share their stores through `stack_args`, e.g.
/// one Qdrant collection; the servers also get `env`), and each files `counts.1` facts of its
/// own beside the `counts.0` shared ones. `aligned`: every server files the shared facts in the same order, so the same
/// fact is filed from all of them at about the same moment.
pub async fn file_from_hosts(
    palaces: &[std::path::PathBuf],
    (stack_args, env): (&[String], &[(&str, &str)]),
    servers: usize,
    (shared, own): (usize, usize),
    in_flight: usize,
    aligned: bool,
) -> FilingOutcome {
    let facts = shared;
    let mut clients = Vec::new();
    for p in 0..servers {
        clients.push(start_server_with_env(&palaces[p % palaces.len()], stack_args, env).await);
    }
    let runs = clients.iter().enumerate().map(|(p, client)| {
        let peer = client.peer().clone();
        async move {
            // Interleave shared and own facts, each process in its own order.
            let mut jobs: Vec<(bool, usize)> = (0..facts.max(own))
                .flat_map(|i| {
                    let offset = if aligned { 0 } else { p * 13 };
                    let shared = (i < facts).then(|| (true, (i + offset) % facts));
                    let mine = (i < own).then_some((false, i));
                    shared.into_iter().chain(mine)
                })
                .collect();
            if p % 2 == 1 && !aligned {
                jobs.reverse();
            }
            futures::stream::iter(jobs)
                .map(|(shared, i)| {
                    let peer = peer.clone();
                    async move {
                        let (wing, content) = if shared {
                            ("wing_shared".to_string(), fact(i as u64))
                        } else {
                            (
                                format!("wing_p{p}"),
                                fact(1_000_000 * (p as u64 + 1) + i as u64),
                            )
                        };
                        let answer = call(
                            &peer,
                            "mempalace_add_drawer",
                            json!({"wing": wing, "room": "facts", "content": content}),
                        )
                        .await;
                        (shared, i, answer)
                    }
                })
                .buffer_unordered(in_flight)
                .collect::<Vec<Answer>>()
                .await
        }
    });
    let results: Vec<Vec<Answer>> = futures::future::join_all(runs).await;

    let mut outcome = FilingOutcome {
        shared_filed: vec![0; facts],
        ..FilingOutcome::default()
    };
    for (p, answers) in results.iter().enumerate() {
        for (shared, i, answer) in answers {
            outcome.calls += 1;
            let v = match answer {
                Ok(v) => v,
                Err(e) => {
                    outcome.failed.push(format!("process {p} fact {i}: {e}"));
                    continue;
                }
            };
            match (v["success"].as_bool(), *shared) {
                (Some(true), true) => outcome.shared_filed[*i] += 1,
                (Some(true), false) => {}
                (Some(false), true) if v["reason"] == "duplicate" => {
                    if let Some(id) = v["matches"][0]["id"].as_str() {
                        outcome.named_in_refusals.push(id.to_string());
                    }
                }
                (_, false) => outcome.own_missing += 1,
                _ => outcome.failed.push(format!("process {p} fact {i}: {v}")),
            }
        }
    }
    for client in &clients {
        let status = call(client.peer(), "mempalace_status", json!({}))
            .await
            .unwrap_or_default();
        outcome
            .totals_seen
            .push(status["total_drawers"].as_u64().unwrap_or(0));
        if outcome.wings.is_empty() {
            outcome.wings = status["wings"].as_object().cloned().unwrap_or_default();
        }
    }
    let named: std::collections::BTreeSet<&String> = outcome.named_in_refusals.iter().collect();
    for id in named {
        let found = call(
            clients[0].peer(),
            "mempalace_get_drawer",
            json!({"drawer_id": id}),
        )
        .await;
        if !found.is_ok_and(|v| v["drawer_id"] == *id || v["id"] == *id) {
            outcome.named_but_missing.push(id.clone());
        }
    }
    for client in clients {
        let _ = client.cancel().await;
    }
    outcome
}
