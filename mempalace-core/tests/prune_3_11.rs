//! `tunnels prune` and `hallways --prune-spellings` against MemPalace 3.11: the files 3.11
//! pruned (tests/fixtures/prune_3_11) give its counts, samples and survivors.

use std::collections::BTreeSet;
use std::path::PathBuf;

use mempalace_core::palace_audit::{hallway_spelling_artifacts, tunnel_artifacts};
use serde_json::Value;

fn fixture(name: &str) -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/prune_3_11")
        .join(name);
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn ids(records: &[Value]) -> BTreeSet<String> {
    records
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn tunnel_prune_matches_3_11() {
    let before = fixture("tunnels_before.json").as_array().unwrap().clone();
    let after = fixture("tunnels_after.json").as_array().unwrap().clone();
    let wings: BTreeSet<String> = ["alpha", "beta", "gamma"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let prune = tunnel_artifacts(&before, &wings);
    assert_eq!(
        (prune.total, prune.generic, prune.dangling, prune.duplicates),
        (20, 4, 2, 1)
    );
    let removed: BTreeSet<String> = prune.artifact_ids.iter().cloned().collect();
    let kept: BTreeSet<String> = ids(&before).difference(&removed).cloned().collect();
    assert_eq!(kept, ids(&after), "3.11 kept exactly these");
    // What 3.11 kept has nothing left to prune.
    assert!(tunnel_artifacts(&after, &wings).artifact_ids.is_empty());
}

#[test]
fn hallway_spelling_prune_matches_3_11() {
    let before = fixture("hallways_before.json")["hallways"]
        .as_array()
        .unwrap()
        .clone();
    let after = fixture("hallways_after.json")["hallways"]
        .as_array()
        .unwrap()
        .clone();
    let prune = hallway_spelling_artifacts(&before);
    assert_eq!(
        (prune.total, prune.self_links, prune.duplicates),
        (29, 3, 4)
    );
    assert_eq!(
        prune.by_wing,
        vec![("alpha".to_string(), 6), ("beta".to_string(), 1)]
    );
    assert_eq!(
        &prune.sample[..5],
        [
            "main.zig ↔ src/main.zig",
            "a/src/x.py ↔ b/src/x.py",
            "mcp_server ↔ mcp_server.py",
            "ChatStore.swift ↔ RootView",
            "RootView.swift ↔ ChatStore",
        ]
    );
    assert_eq!(before.len() - prune.artifact_ids.len(), after.len());
    assert_eq!(
        hallway_spelling_artifacts(&after).artifact_ids.len(),
        0,
        "3.11's survivors have nothing left to prune"
    );
}
