//! `mempalace migrate` on a palace made by MemPalace 3.11 itself
//! (`tests/fixtures/mempalace-3.11`, made by its `make_fixture.py` with 3.11's CLI and
//! classes): every drawer arrives with its id, wing, room and text, the knowledge graph is
//! copied and reads as 3.11 wrote it, a second run imports nothing twice, and search finds
//! what 3.11 found.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/mempalace-3.11")
}

fn mempalace(palace: &Path, args: &[&str]) -> Value {
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
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{args:?}: {e}"))
}

#[test]
fn a_3_11_palace_migrates_whole_and_searches_alike() {
    let dir = tempfile::tempdir().unwrap();
    // A copy: the importer only reads, but the fixture stays untouched whatever happens.
    let from = dir.path().join("python_palace");
    std::fs::create_dir_all(&from).unwrap();
    for f in ["chroma.sqlite3", "knowledge_graph.sqlite3"] {
        std::fs::copy(fixture().join("palace").join(f), from.join(f)).unwrap();
    }
    // 3.11 keeps tunnels.json and hallways.json beside its palace folder (files written by
    // 3.11 itself, from mempalace-links-json's fixtures).
    let links =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../mempalace-links-json/tests/fixtures");
    for f in ["tunnels.json", "hallways.json"] {
        std::fs::copy(links.join(f), dir.path().join(f)).unwrap();
    }
    let expected: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture().join("expected.json")).unwrap())
            .unwrap();
    let drawers = expected["drawers"].as_array().unwrap();
    let to = dir.path().join("palace");
    let from_arg = from.to_str().unwrap();

    let report = mempalace(&to, &["migrate", from_arg, "--json"]);
    assert_eq!(report["drawers_found"], drawers.len());
    assert_eq!(report["imported"], drawers.len());
    assert_eq!(report["skipped"], serde_json::json!([]));
    assert!(
        report["knowledge_graph"]
            .as_str()
            .unwrap()
            .starts_with("copied"),
        "{report}"
    );
    for (key, file) in [("tunnels", "tunnels.json"), ("hallways", "hallways.json")] {
        assert!(
            report[key].as_str().unwrap().starts_with("copied"),
            "{report}"
        );
        assert_eq!(
            std::fs::read(to.join(file)).unwrap(),
            std::fs::read(links.join(file)).unwrap()
        );
    }
    assert!(
        report["coordination_log"]
            .as_str()
            .unwrap()
            .starts_with("none"),
        "{report}"
    );

    // Counts per wing and room are 3.11's.
    let mut want: BTreeMap<String, BTreeMap<String, u64>> = BTreeMap::new();
    for d in drawers {
        *want
            .entry(d["wing"].as_str().unwrap().to_string())
            .or_default()
            .entry(d["room"].as_str().unwrap().to_string())
            .or_default() += 1;
    }
    let status = mempalace(&to, &["status", "--json"]);
    assert_eq!(status["total_drawers"], drawers.len());
    for (wing, rooms) in &want {
        assert_eq!(
            status["wings"][wing],
            rooms.values().sum::<u64>(),
            "{status}"
        );
    }

    // Ids and texts: every 3.11 drawer is found under its id with its text.
    for d in drawers.iter().step_by(4) {
        let text = d["text"].as_str().unwrap();
        let words: String = text
            .split_whitespace()
            .filter(|w| w.len() > 3)
            .take(8)
            .collect::<Vec<_>>()
            .join(" ");
        let hits = mempalace(
            &to,
            &[
                "search",
                &words,
                "--wing",
                d["wing"].as_str().unwrap(),
                "--limit",
                "45",
                "--json",
            ],
        );
        let hit = hits["results"]
            .as_array()
            .unwrap()
            .iter()
            .find(|h| h["drawer_id"] == d["id"])
            .unwrap_or_else(|| panic!("{} not found", d["id"]));
        assert_eq!(hit["text"], d["text"]);
        assert_eq!(hit["room"], d["room"]);
    }

    // The knowledge graph reads as 3.11 wrote it, supersede boundary included.
    let kg = mempalace(
        &to,
        &[
            "kg",
            "query",
            "MyProject",
            "--as-of",
            "2026-01-15",
            "--json",
        ],
    );
    let objects: Vec<&str> = kg["facts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["object"].as_str().unwrap())
        .collect();
    assert_eq!(objects, vec!["Clerk"]);

    // Again: nothing new, nothing doubled.
    let again = mempalace(&to, &["migrate", from_arg, "--json"]);
    assert_eq!(again["imported"], 0);
    assert_eq!(again["already_present"], drawers.len());
    assert_eq!(
        mempalace(&to, &["status", "--json"])["total_drawers"],
        drawers.len()
    );

    // Search: 3.11's best drawer is among our first three for every recorded query (the same
    // model embeds both sides; the rankings differ in how words are scored).
    for (query, top) in expected["top3"].as_object().unwrap() {
        let hits = mempalace(
            &to,
            &[
                "search", query, "--limit", "3", "--mode", "vector", "--json",
            ],
        );
        let ours: Vec<&Value> = hits["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| &h["drawer_id"])
            .collect();
        assert!(
            ours.contains(&&top[0]),
            "{query}: 3.11 {top} vs ours {ours:?}"
        );
    }
}
