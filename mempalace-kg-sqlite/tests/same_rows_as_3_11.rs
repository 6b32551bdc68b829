//! The knowledge-graph file is shared with MemPalace 3.11, so the same operations must store
//! the same rows. `tests/fixtures/mempalace-3.11/make_fixture.py` ran a list of adds,
//! supersedes and invalidates through 3.11's own `KnowledgeGraph` and recorded the entities
//! and triples it stored (`kg_ops`, `kg_rows` in `expected.json`); this replays the same
//! operations here and compares row for row (triple ids without their time-based hash, whose
//! length must match).

use std::path::Path;

use mempalace_core::{KnowledgeGraph, NewTriple, Supersede};
use mempalace_kg_sqlite::SqliteKnowledgeGraph;
use rusqlite::Connection;
use serde_json::{Value, json};

fn expected() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/mempalace-3.11/expected.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn text(v: &Value) -> Option<String> {
    v.as_str().map(str::to_string)
}

async fn apply(kg: &SqliteKnowledgeGraph, op: &[Value]) {
    let s = |i: usize| op[i].as_str().unwrap().to_string();
    match op[0].as_str().unwrap() {
        "add" => {
            let mut t = NewTriple::new(s(1), s(2), s(3));
            t.valid_from = text(&op[4]);
            t.valid_to = text(&op[5]);
            kg.add_triple(&t).await.unwrap();
        }
        "supersede" => {
            kg.supersede(&Supersede {
                subject: s(1),
                predicate: s(2),
                old_object: s(3),
                new_object: s(4),
                at: text(&op[5]),
                confidence: 1.0,
                source_closet: None,
            })
            .await
            .unwrap();
        }
        "invalidate" => {
            kg.invalidate(&s(1), &s(2), &s(3), op[4].as_str())
                .await
                .unwrap();
        }
        other => panic!("unknown operation {other}"),
    }
}

/// Entities and triples as stored, in the generator's form.
fn rows(path: &Path) -> Value {
    let conn = Connection::open(path).unwrap();
    let entities: Vec<Value> = conn
        .prepare("SELECT id, name FROM entities ORDER BY id")
        .unwrap()
        .query_map([], |r| {
            Ok(json!([r.get::<_, String>(0)?, r.get::<_, String>(1)?]))
        })
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let mut triples: Vec<Value> = conn
        .prepare(
            "SELECT id, subject, predicate, object, valid_from, valid_to, confidence,
                    source_closet, source_file, source_drawer_id FROM triples",
        )
        .unwrap()
        .query_map([], |r| {
            let id: String = r.get(0)?;
            let (stem, hash) = id.rsplit_once('_').unwrap();
            Ok(json!([
                format!("{stem}_{}", hash.len()),
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, String>(3)?,
                r.get::<_, Option<String>>(4)?,
                r.get::<_, Option<String>>(5)?,
                r.get::<_, f64>(6)?,
                r.get::<_, Option<String>>(7)?,
                r.get::<_, Option<String>>(8)?,
                r.get::<_, Option<String>>(9)?,
            ]))
        })
        .unwrap()
        .map(Result::unwrap)
        .collect();
    // The generator's order: by every field as text (Python's str of each value).
    let key = |t: &Value| -> Vec<String> {
        t.as_array()
            .unwrap()
            .iter()
            .map(|v| match v {
                Value::Null => "None".to_string(),
                Value::String(s) => s.clone(),
                Value::Number(n) => format!("{:?}", n.as_f64().unwrap()),
                other => other.to_string(),
            })
            .collect()
    };
    triples.sort_by_key(key);
    json!({"entities": entities, "triples": triples})
}

#[tokio::test]
async fn the_same_operations_store_the_rows_3_11_stores() {
    let expected = expected();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("knowledge_graph.sqlite3");
    let kg = SqliteKnowledgeGraph::open(&path);
    for op in expected["kg_ops"].as_array().unwrap() {
        apply(&kg, op.as_array().unwrap()).await;
    }
    drop(kg);
    assert_eq!(rows(&path), expected["kg_rows"]);
}
