//! `audit` against MemPalace 3.11: the inputs 3.11's audit read from five palaces it built
//! (tests/fixtures/audit_3_11) give the same JSON report and the same text, byte for byte.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use mempalace_core::palace_audit::{AuditInputs, GraphCounts, ProjectMix, audit, render_audit};
use serde_json::Value;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/audit_3_11")
        .join(name)
}

fn read_json(path: &Path) -> Option<Value> {
    std::fs::read_to_string(path)
        .ok()
        .map(|t| serde_json::from_str(&t).unwrap())
}

fn inputs(name: &str, expected: &Value) -> AuditInputs {
    let dir = fixture(name);
    let wing_rooms: BTreeMap<String, BTreeMap<String, u64>> =
        serde_json::from_value(read_json(&dir.join("wing_room_counts.json")).unwrap()).unwrap();
    let mix = read_json(&dir.join("wing_project_mix.json")).unwrap();
    let project_mix = mix
        .as_object()
        .unwrap()
        .iter()
        .map(|(wing, m)| {
            let top = m["top"]
                .as_array()
                .unwrap()
                .iter()
                .map(|kn| (kn[0].as_str().unwrap().to_string(), kn[1].as_u64().unwrap()))
                .collect();
            (
                wing.clone(),
                ProjectMix {
                    projects: m["projects"].as_u64().unwrap(),
                    drawers: m["drawers"].as_u64().unwrap(),
                    top,
                },
            )
        })
        .collect();
    let tunnels = read_json(&dir.join("tunnels.json"))
        .map(|t| t.as_array().unwrap().clone())
        .unwrap_or_default();
    let hallways = match read_json(&dir.join("hallways.json")) {
        Some(Value::Object(o)) => o["hallways"].as_array().cloned().unwrap_or_default(),
        Some(Value::Array(a)) => a,
        _ => Vec::new(),
    };
    let graph = read_json(&dir.join("kg_dump.json")).map(|kg| {
        let triples = kg["triples"].as_array().unwrap();
        let mut open_predicates = BTreeMap::new();
        for t in triples.iter().filter(|t| t[4].is_null()) {
            *open_predicates
                .entry(t[1].as_str().unwrap().to_string())
                .or_insert(0) += 1;
        }
        GraphCounts {
            path: expected["knowledge_graph"]["path"]
                .as_str()
                .unwrap()
                .to_string(),
            entities: kg["entities"].as_array().unwrap().len() as u64,
            triples: triples.len() as u64,
            current_facts: triples.iter().filter(|t| t[4].is_null()).count() as u64,
            open_predicates,
        }
    });
    AuditInputs {
        palace: expected["palace"].as_str().unwrap().to_string(),
        counts_source: expected["counts_source"].as_str().unwrap().to_string(),
        wing_rooms,
        project_mix: Some(project_mix),
        tunnels,
        hallways,
        graph,
    }
}

#[test]
fn reports_and_text_match_3_11_on_its_own_palaces() {
    for name in ["A", "B", "C", "D", "M"] {
        let expected = read_json(&fixture(name).join("expected.json")).unwrap();
        let report = audit(&inputs(name, &expected));
        assert_eq!(
            serde_json::to_string_pretty(&report).unwrap(),
            serde_json::to_string_pretty(&expected).unwrap(),
            "palace {name}"
        );
        let text = std::fs::read_to_string(fixture(name).join("expected.txt")).unwrap();
        assert_eq!(render_audit(&report, 80), text, "palace {name}");
    }
}
