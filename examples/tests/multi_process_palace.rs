//! One palace, many processes (real `mempalace` processes on the real embedded stack):
//! - four MCP servers, each with 8 tool calls in flight, file 50 shared facts and 50 of their
//!   own: every shared fact lands exactly once, every own fact once, no call fails;
//! - `mine` killed with SIGKILL at random points: the palace opens, `status` works, and
//!   re-mining ends with the same drawers as an uninterrupted mine.

use std::path::Path;
use std::process::Command as StdCommand;
use std::time::Instant;

use futures::StreamExt;
use rmcp::model::CallToolRequestParams;
use rmcp::service::{Peer, RunningService};
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};
use tokio::process::Command;

const SERVERS: usize = 4;
const IN_FLIGHT: usize = 8;
const FACTS: usize = 50;

/// One add_drawer: shared or own, the fact's index, and the tool's answer.
type Answer = (bool, usize, Result<Value, String>);

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
fn fact(seed: u64) -> String {
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

async fn start_server(palace: &Path) -> RunningService<RoleClient, ()> {
    let transport = TokioChildProcess::new(
        Command::new(env!("CARGO_BIN_EXE_mempalace")).configure(|c| {
            c.arg("--palace").arg(palace).arg("mcp");
        }),
    )
    .expect("spawn mempalace mcp");
    ().serve(transport).await.expect("initialize")
}

async fn call(peer: &Peer<RoleClient>, tool: &str, args: Value) -> Result<Value, String> {
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
    serde_json::from_str(&text).map_err(|e| e.to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn four_mcp_servers_file_each_fact_exactly_once() {
    let dir = tempfile::tempdir().unwrap();
    let palace = dir.path().join("palace");
    let mut clients = Vec::new();
    for _ in 0..SERVERS {
        clients.push(start_server(&palace).await);
    }

    let runs = clients.iter().enumerate().map(|(p, client)| {
        let peer = client.peer().clone();
        async move {
            // Interleave shared and own facts, each process in its own order.
            let mut jobs: Vec<(bool, usize)> = (0..FACTS)
                .flat_map(|i| [(true, (i + p * 13) % FACTS), (false, i)])
                .collect();
            if p % 2 == 1 {
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
                                fact(1_000 * (p as u64 + 1) + i as u64),
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
                .buffer_unordered(IN_FLIGHT)
                .collect::<Vec<_>>()
                .await
        }
    });
    let results: Vec<Vec<Answer>> = futures::future::join_all(runs).await;

    let mut shared_filed = vec![0u32; FACTS];
    for (p, answers) in results.iter().enumerate() {
        assert_eq!(answers.len(), 2 * FACTS);
        for (shared, i, answer) in answers {
            let v = answer
                .as_ref()
                .unwrap_or_else(|e| panic!("process {p} fact {i} failed: {e}"));
            match (v["success"].as_bool(), *shared) {
                (Some(true), true) => shared_filed[*i] += 1,
                (Some(true), false) => {}
                (Some(false), true) => assert_eq!(v["reason"], "duplicate", "{v}"),
                _ => panic!("process {p}: own fact {i} not filed: {v}"),
            }
        }
    }
    assert!(
        shared_filed.iter().all(|&n| n == 1),
        "each shared fact is filed exactly once: {shared_filed:?}"
    );

    let status = call(client_peer(&clients[0]), "mempalace_status", json!({}))
        .await
        .unwrap();
    assert_eq!(status["total_drawers"], FACTS + SERVERS * FACTS, "{status}");
    assert_eq!(status["wings"]["wing_shared"], FACTS);
    for p in 0..SERVERS {
        assert_eq!(status["wings"][format!("wing_p{p}")], FACTS, "{status}");
    }
    // Every server sees the same palace.
    for client in &clients[1..] {
        let other = call(client_peer(client), "mempalace_status", json!({}))
            .await
            .unwrap();
        assert_eq!(other["total_drawers"], status["total_drawers"]);
    }
    for client in clients {
        client.cancel().await.unwrap();
    }
}

fn client_peer(client: &RunningService<RoleClient, ()>) -> &Peer<RoleClient> {
    client.peer()
}

fn mempalace(palace: &Path, args: &[&str]) -> std::process::Output {
    StdCommand::new(env!("CARGO_BIN_EXE_mempalace"))
        .arg("--palace")
        .arg(palace)
        .args(args)
        .output()
        .expect("run mempalace")
}

fn drawer_count(palace: &Path) -> u64 {
    let out = mempalace(palace, &["status", "--json"]);
    assert!(
        out.status.success(),
        "status after a kill: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).expect("status JSON");
    // Killed before the store was created: status answers the no-palace payload.
    if v["error"] == "No palace found" {
        return 0;
    }
    v["total_drawers"].as_u64().unwrap_or_else(|| panic!("{v}"))
}

fn mine_to_completion(palace: &Path, project: &Path) {
    let out = mempalace(
        palace,
        &["mine", project.to_str().unwrap(), "--wing", "proj"],
    );
    assert!(
        out.status.success(),
        "mine: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A project of 60 files of three to four chunks each.
fn make_project(root: &Path) {
    for f in 0..60u64 {
        let folder = ["docs", "src", "notes"][f as usize % 3];
        let text: Vec<String> = (0..18).map(|s| fact(f * 100 + s)).collect();
        let path = root.join(folder).join(format!("file_{f:02}.md"));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text.join("\n\n")).unwrap();
    }
}

#[test]
fn mine_killed_at_random_points_recovers_to_the_same_palace() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project");
    make_project(&project);

    let reference = dir.path().join("reference");
    let t = Instant::now();
    mine_to_completion(&reference, &project);
    let full = t.elapsed();
    let expected = drawer_count(&reference);
    assert!(
        expected >= 150,
        "the project mines into many drawers: {expected}"
    );

    for seed in 1..=4u64 {
        let palace = dir.path().join(format!("killed_{seed}"));
        // Kill somewhere between 5% and 90% of an uninterrupted run (startup included).
        let fraction = 0.05 + 0.85 * ((seed * 7919) % 100) as f64 / 100.0;
        let mut child = StdCommand::new(env!("CARGO_BIN_EXE_mempalace"))
            .arg("--palace")
            .arg(&palace)
            .args(["mine", project.to_str().unwrap(), "--wing", "proj"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(full.mul_f64(fraction));
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();

        if palace.exists() {
            let partial = drawer_count(&palace);
            assert!(partial <= expected, "seed {seed}: {partial} > {expected}");
        }
        mine_to_completion(&palace, &project);
        assert_eq!(
            drawer_count(&palace),
            expected,
            "seed {seed}: re-mined after a kill at {:.0}% of the run",
            fraction * 100.0
        );
    }
    // And nothing more on another pass.
    mine_to_completion(&reference, &project);
    assert_eq!(drawer_count(&reference), expected);
}
