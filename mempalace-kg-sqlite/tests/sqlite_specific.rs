//! SQLite-specific behaviour: files written by the Python MemPalace read in place, older files
//! get the later columns, queries at 10k triples use the indexes, and several handles (as
//! several processes would) write the same file without "database is locked".

use mempalace_core::{Direction, KnowledgeGraph, NewTriple};
use mempalace_kg_sqlite::SqliteKnowledgeGraph;
use rusqlite::Connection;

/// The schema exactly as MemPalace creates it (older version: without the two later columns).
const MEMPALACE_OLD_SCHEMA: &str = "
CREATE TABLE entities (id TEXT PRIMARY KEY, name TEXT NOT NULL, type TEXT DEFAULT 'unknown',
    properties TEXT DEFAULT '{}', created_at TEXT DEFAULT CURRENT_TIMESTAMP);
CREATE TABLE triples (id TEXT PRIMARY KEY, subject TEXT NOT NULL, predicate TEXT NOT NULL,
    object TEXT NOT NULL, valid_from TEXT, valid_to TEXT, confidence REAL DEFAULT 1.0,
    source_closet TEXT, source_file TEXT, extracted_at TEXT DEFAULT CURRENT_TIMESTAMP,
    FOREIGN KEY (subject) REFERENCES entities(id), FOREIGN KEY (object) REFERENCES entities(id));
CREATE INDEX idx_triples_subject ON triples(subject);
CREATE INDEX idx_triples_object ON triples(object);
CREATE INDEX idx_triples_predicate ON triples(predicate);
CREATE INDEX idx_triples_valid ON triples(valid_from, valid_to);
INSERT INTO entities (id, name, type) VALUES ('max', 'Max', 'person'), ('alice', 'Alice', 'person'),
    ('chess', 'chess', 'unknown'), ('swimming', 'swimming', 'unknown');
INSERT INTO triples (id, subject, predicate, object, valid_from, valid_to, confidence, source_closet)
VALUES ('t_max_child_of_alice_1a2b3c4d', 'max', 'child_of', 'alice', '2015-04-01', NULL, 1.0, 'drawer_family_kids_0011223344556677'),
       ('t_max_loves_chess_5e6f7a8b', 'max', 'loves', 'chess', '2025-10-01', NULL, 0.9, NULL),
       ('t_max_does_swimming_9c0d1e2f', 'max', 'does', 'swimming', '2025-01-01', '2025-09-30', 1.0, NULL);
";

#[tokio::test]
async fn reads_and_writes_a_mempalace_file_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("knowledge_graph.sqlite3");
    Connection::open(&path)
        .unwrap()
        .execute_batch(MEMPALACE_OLD_SCHEMA)
        .unwrap();

    let kg = SqliteKnowledgeGraph::open(&path);
    let facts = kg
        .query_entity("Max", None, Direction::Outgoing)
        .await
        .unwrap();
    assert_eq!(facts.len(), 3);
    let child = facts.iter().find(|f| f.predicate == "child_of").unwrap();
    assert_eq!(
        (child.subject.as_str(), child.object.as_str()),
        ("Max", "Alice")
    );
    assert_eq!(
        child.source_closet.as_deref(),
        Some("drawer_family_kids_0011223344556677")
    );
    assert!(child.current);
    let now: Vec<_> = kg
        .query_entity("max", Some("2026-01-01"), Direction::Outgoing)
        .await
        .unwrap();
    assert_eq!(now.len(), 2, "swimming ended in 2025");
    assert_eq!(
        kg.query_entity("Alice", None, Direction::Incoming)
            .await
            .unwrap()
            .len(),
        1
    );

    kg.add_triple(&NewTriple::new("Max", "plays", "piano").valid_from("2026-02-01"))
        .await
        .unwrap();
    drop(kg);
    // The file is still MemPalace's schema (plus the later columns), readable by plain SQL.
    let conn = Connection::open(&path).unwrap();
    let cols: Vec<String> = conn
        .prepare("SELECT name FROM pragma_table_info('triples')")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert!(
        cols.contains(&"source_drawer_id".to_string())
            && cols.contains(&"adapter_name".to_string())
    );
    let (s, p, o): (String, String, String) = conn
        .query_row(
            "SELECT subject, predicate, object FROM triples WHERE object = 'piano'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap();
    assert_eq!(
        (s.as_str(), p.as_str(), o.as_str()),
        ("max", "plays", "piano")
    );
    let mode: String = conn
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
}

/// A graph an earlier release of this project wrote, with hyphens in ids turned to
/// underscores ("GPT-4" as `gpt_4`), is re-keyed to 3.11's ids when opened; what 3.11 wrote
/// (`foo_bar` for "foo bar", `gpt-3` for "GPT-3") is left as it is.
#[tokio::test]
async fn legacy_hyphen_ids_are_rekeyed_to_3_11s() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("knowledge_graph.sqlite3");
    let conn = Connection::open(&path).unwrap();
    conn.execute_batch(MEMPALACE_OLD_SCHEMA).unwrap();
    conn.execute_batch(
        "INSERT INTO entities (id, name) VALUES ('gpt_4', 'GPT-4'), ('openai', 'OpenAI'),
            ('gpt-3', 'GPT-3'), ('foo_bar', 'foo bar'), ('x_ray', 'X-Ray'), ('x-ray', 'X-Ray');
         INSERT INTO triples (id, subject, predicate, object) VALUES
            ('t_gpt_4_made_by_openai_1a2b3c4d', 'gpt_4', 'made_by', 'openai'),
            ('t_gpt-3_made_by_openai_5e6f7a8b', 'gpt-3', 'made_by', 'openai'),
            ('t_foo_bar_is_openai_9c0d1e2f', 'foo_bar', 'is', 'openai'),
            ('t_openai_sells_x_ray_00000001', 'openai', 'sells', 'x_ray'),
            ('t_openai_sells_x-ray_00000002', 'openai', 'sells', 'x-ray');",
    )
    .unwrap();
    drop(conn);

    let kg = SqliteKnowledgeGraph::open(&path);
    let gpt4 = kg
        .query_entity("GPT-4", None, Direction::Outgoing)
        .await
        .unwrap();
    assert_eq!(gpt4.len(), 1, "{gpt4:?}");
    assert_eq!(gpt4[0].object, "OpenAI");
    assert_eq!(
        kg.query_entity("X-Ray", None, Direction::Incoming)
            .await
            .unwrap()
            .len(),
        2,
        "both ids' facts under 3.11's id"
    );
    let conn = Connection::open(&path).unwrap();
    let ids: Vec<String> = conn
        .prepare("SELECT id FROM entities ORDER BY id")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    for kept in ["gpt-4", "gpt-3", "foo_bar", "x-ray", "openai"] {
        assert!(ids.contains(&kept.to_string()), "{kept} in {ids:?}");
    }
    for gone in ["gpt_4", "x_ray"] {
        assert!(!ids.contains(&gone.to_string()), "{gone} in {ids:?}");
    }
    let subjects: i64 = conn
        .query_row(
            "SELECT COUNT(*) FROM triples WHERE subject = 'gpt_4' OR object = 'x_ray'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(subjects, 0);
    // The triple ids are kept: they are ids, not keys.
    let kept: i64 = conn
        .query_row(
            "SELECT COUNT(*) FROM triples WHERE id = 't_gpt_4_made_by_openai_1a2b3c4d'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(kept, 1);
}

#[tokio::test]
async fn entity_queries_use_the_indexes_at_10k_triples() {
    let dir = tempfile::tempdir().unwrap();
    let kg = SqliteKnowledgeGraph::in_palace(dir.path());
    let triples: Vec<NewTriple> = (0..10_000)
        .map(|i| {
            NewTriple::new(format!("e{}", i % 1000), "rel", format!("o{i}"))
                .valid_from("2024-01-01")
        })
        .collect();
    kg.add_triples(&triples).await.unwrap();
    for incoming in [false, true] {
        let plan = kg.explain_entity_query(incoming).await.unwrap().join("\n");
        // Outgoing queries may use the subject index or the (subject, predicate, object)
        // one; both start with the subject.
        let indexes: &[&str] = if incoming {
            &["idx_triples_object"]
        } else {
            &["idx_triples_subject", "idx_triples_spo"]
        };
        assert!(
            indexes.iter().any(|i| plan.contains(i)),
            "plan must use one of {indexes:?}:\n{plan}"
        );
        assert!(
            !plan.contains("SCAN t\n") && !plan.ends_with("SCAN t"),
            "no full scan of triples:\n{plan}"
        );
    }
    assert_eq!(
        kg.query_entity("e7", Some("2025-01-01"), Direction::Both)
            .await
            .unwrap()
            .len(),
        10
    );
}

#[tokio::test]
async fn the_duplicate_check_finds_a_fact_of_a_busy_entity_by_index() {
    // One subject and one predicate with thousands of facts: the check for an existing open
    // fact must go straight to it, not read every fact of the subject or predicate.
    let dir = tempfile::tempdir().unwrap();
    let kg = SqliteKnowledgeGraph::in_palace(dir.path());
    let triples: Vec<NewTriple> = (0..5_000)
        .map(|i| NewTriple::new("hub", "knows", format!("person{i}")))
        .collect();
    kg.add_triples(&triples).await.unwrap();
    let plan = kg.explain_duplicate_check().await.unwrap().join("\n");
    assert!(
        plan.contains("idx_triples_spo (subject=? AND predicate=? AND object=?)"),
        "the duplicate check must search the (subject, predicate, object) index:\n{plan}"
    );
    // And it still recognises the duplicate.
    let again = kg
        .add_triple(&NewTriple::new("hub", "knows", "person42"))
        .await
        .unwrap();
    assert_eq!(
        kg.stats().await.unwrap().triples,
        5_000,
        "{again} was not re-added"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn several_handles_write_one_file_without_lock_errors() {
    // Each round starts from no file, so the handles also race to create the database, switch
    // it to WAL and create the schema (once a source of immediate "database is locked").
    for round in 0..8 {
        let dir = tempfile::tempdir().unwrap();
        let mut tasks = Vec::new();
        for h in 0..4 {
            // Separate handles = separate connections, as separate processes would have.
            let kg = SqliteKnowledgeGraph::in_palace(dir.path());
            tasks.push(tokio::spawn(async move {
                for i in 0..50 {
                    kg.add_triple(&NewTriple::new(
                        format!("writer{h}"),
                        "wrote",
                        format!("fact{i}"),
                    ))
                    .await
                    .unwrap_or_else(|e| panic!("round {round}, writer {h}, fact {i}: {e}"));
                }
            }));
        }
        for t in tasks {
            t.await.unwrap();
        }
        let kg = SqliteKnowledgeGraph::in_palace(dir.path());
        assert_eq!(kg.stats().await.unwrap().triples, 200, "round {round}");
    }
}
