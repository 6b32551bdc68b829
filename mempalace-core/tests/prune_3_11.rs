//! `tunnels prune` and `hallways --prune-spellings` against MemPalace 3.11: the files 3.11
//! pruned (tests/fixtures/prune_3_11) give its counts, samples and survivors.

use std::collections::BTreeSet;
use std::path::PathBuf;

use mempalace_core::palace_audit::{prune_hallway_records, prune_tunnel_records};
use serde_json::Value;

fn fixture(name: &str) -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/prune_3_11")
        .join(name);
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn tunnel_prune_matches_3_11() {
    let mut records = fixture("tunnels_before.json").as_array().unwrap().clone();
    let after = fixture("tunnels_after.json").as_array().unwrap().clone();
    let wings: BTreeSet<String> = ["alpha", "beta", "gamma"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let prune = prune_tunnel_records(&mut records, &wings);
    assert_eq!(
        (
            prune.total,
            prune.generic,
            prune.dangling,
            prune.duplicates,
            prune.removed
        ),
        (20, 4, 2, 1, 7)
    );
    assert_eq!(records, after, "3.11 kept exactly these, in this order");
    let again = prune_tunnel_records(&mut records, &wings);
    assert_eq!(again.removed, 0);
    assert_eq!(records, after);
}

#[test]
fn hallway_spelling_prune_matches_3_11() {
    let mut records = fixture("hallways_before.json")["hallways"]
        .as_array()
        .unwrap()
        .clone();
    let after = fixture("hallways_after.json")["hallways"]
        .as_array()
        .unwrap()
        .clone();
    let prune = prune_hallway_records(&mut records);
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
    assert_eq!(
        records, after,
        "3.11's file after the prune: survivors renamed to their canonical spellings and ids"
    );
    let again = prune_hallway_records(&mut records);
    assert_eq!(again.self_links + again.duplicates, 0);
    assert_eq!(records, after);
}

/// Hostile records: non-objects, odd value types, missing keys and duplicated ids are judged
/// without a panic, and an exact copy of a tunnel is one duplicate, not two deletions.
#[test]
fn odd_records_are_judged_not_crashed_on() {
    let wings: BTreeSet<String> = ["alpha", "beta"].iter().map(|s| s.to_string()).collect();
    let tunnel = serde_json::json!({"id": "t1", "source": {"wing": "alpha", "room": "general"},
        "target": {"wing": "beta", "room": "general"}, "access_count": "3"});
    let mut tunnels = vec![
        tunnel.clone(),
        tunnel.clone(),
        Value::from(7),
        serde_json::json!({"id": 5, "source": {"wing": 1.5}, "target": null, "kind": ["x"]}),
        serde_json::json!({"source": {"wing": "alpha", "room": "entity:Ünïcode"}, "target": {"wing": "beta", "room": "entity:Ünïcode"}}),
    ];
    let prune = prune_tunnel_records(&mut tunnels, &wings);
    assert_eq!((prune.total, prune.duplicates, prune.removed), (5, 1, 3));
    assert_eq!(tunnels.len(), 2);
    assert_eq!(
        tunnels[0], tunnel,
        "one copy of the duplicated tunnel stays"
    );
    let mut hallways = vec![
        Value::Null,
        serde_json::json!({"wing": "alpha", "entity_a": null, "entity_b": 3, "co_occurrence_count": 2.7}),
        serde_json::json!({"wing": "alpha", "entity_a": "main.zig", "entity_b": "src/main.zig"}),
        serde_json::json!({"entity_a": "x", "entity_b": "y"}),
    ];
    let prune = prune_hallway_records(&mut hallways);
    assert_eq!((prune.total, prune.self_links), (4, 1));
}
