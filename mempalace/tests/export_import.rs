//! `Palace::export` / `Palace::import`: a palace round-trips exactly between backends
//! (LanceDB + SQLite here; Qdrant + PostgreSQL where the servers are up), an import run twice
//! adds nothing, and broken exports are refused with the line, keeping what came before.

use std::sync::Arc;

use mempalace::core::coordination::{NewArtifact, NewEvent, NewTask};
use mempalace::core::knowledge_graph::Supersede;
use mempalace::core::palace::HallwayRebuild;
use mempalace::core::palace_export::{ExportCounts, ExportOptions};
use mempalace::core::palace_links::NewTunnel;
use mempalace::core::{AddedBy, Drawer, DrawerMetadata, NewDrawer, NewTriple, Palace};
use mempalace::{PalaceBuilder, core::closets::Closet};
use mempalace_conformance::hashing_embedder::HashingEmbedder;
use serde_json::Value;

const DIMENSION: usize = 64;

fn embedder() -> Arc<HashingEmbedder> {
    Arc::new(HashingEmbedder::new(DIMENSION))
}

/// A LanceDB + SQLite palace in a new folder.
async fn local_palace(dir: &std::path::Path) -> Palace {
    PalaceBuilder::new(dir)
        .embedder(embedder())
        .open_or_create()
        .await
        .expect("palace opens")
}

fn mined(id: &str, wing: &str, text: &str, entities: &[&str]) -> Drawer {
    Drawer {
        id: id.into(),
        text: text.into(),
        metadata: DrawerMetadata {
            wing: wing.into(),
            room: "notes".into(),
            source_file: format!("/src/{id}.md"),
            chunk_index: 0,
            added_by: AddedBy::Mine,
            filed_at: "2026-12-01T10:00:00.000000".into(),
            authored_at: None,
            conversation: None,
            entities: entities.iter().map(|e| e.to_string()).collect(),
        },
    }
}

/// Fills `palace` with one of everything an export carries.
async fn fill(palace: &Palace) {
    palace
        .add_drawer(NewDrawer::new(
            "wing_code",
            "decisions",
            "We chose Postgres for the fleet because advisory locks serialise writers.",
        ))
        .await
        .unwrap();
    let long: String = (0..400)
        .map(|i| format!("Sentence {i} about the garden shed and its tools. "))
        .collect();
    palace
        .add_drawer(NewDrawer::new("wing_home", "garden", &long))
        .await
        .unwrap();
    palace
        .diary_write("scribe", "Today the export test ran.", Some("tests"), None)
        .await
        .unwrap();
    palace
        .import_drawers(&[
            mined(
                "drawer_wing_lab_notes_0001",
                "wing_lab",
                "Alice and Bob met.",
                &["Alice", "Bob"],
            ),
            mined(
                "drawer_wing_lab_notes_0002",
                "wing_lab",
                "Alice and Bob again.",
                &["Alice", "Bob"],
            ),
        ])
        .await
        .unwrap();
    palace
        .import_closets(&[Closet {
            id: "closet_wing_lab_notes_aa_01".into(),
            text: "lab notes|Alice;Bob|→drawer_wing_lab_notes_0001".into(),
            wing: "wing_lab".into(),
            room: "notes".into(),
            source_file: "/src/drawer_wing_lab_notes_0001.md".into(),
        }])
        .await
        .unwrap();
    palace
        .rebuild_hallways(&HallwayRebuild::default())
        .await
        .unwrap();
    palace
        .kg_add(NewTriple::new("Alice", "works at", "Acme").valid_from("2024-01-01"))
        .await
        .unwrap();
    palace
        .kg_supersede(Supersede {
            subject: "Alice".into(),
            predicate: "works at".into(),
            old_object: "Acme".into(),
            new_object: "Initech".into(),
            at: Some("2026-06-01".into()),
            confidence: 0.9,
            source_closet: None,
        })
        .await
        .unwrap();
    palace
        .kg_add(NewTriple::new("Bob", "likes", "tea"))
        .await
        .unwrap();
    palace
        .kg_invalidate("Bob", "likes", "tea", Some("2026-11-30"))
        .await
        .unwrap();
    palace
        .create_tunnel(NewTunnel {
            source_wing: "wing_code".into(),
            source_room: "decisions".into(),
            target_wing: "wing_home".into(),
            target_room: "garden".into(),
            label: "both about sheds".into(),
            source_drawer_id: None,
            target_drawer_id: None,
            kind: "explicit".into(),
        })
        .await
        .unwrap();
    let artifact = palace
        .artifact_put(&NewArtifact {
            kind: "note".into(),
            content: "the plan".into(),
            created_by: "planner".into(),
            metadata: Some(serde_json::json!({"b": 1, "a": [1, 2]})),
        })
        .await
        .unwrap();
    let task = palace
        .task_create(&NewTask {
            project: "mempalace".into(),
            from_agent: "planner".into(),
            to_agent: "worker".into(),
            goal: "export everything".into(),
            branch: "main".into(),
            base_commit: "abc1234def".into(),
            done: "tests pass".into(),
        })
        .await
        .unwrap();
    palace
        .event_ack(
            &task.task.id,
            "worker",
            Some("claimed"),
            Some("on it"),
            None,
        )
        .await
        .unwrap();
    palace
        .event_append(&NewEvent {
            event_type: "note.posted".into(),
            stream: "project/mempalace".into(),
            room: "general".into(),
            from_agent: "planner".into(),
            body: Some("see the artifact".into()),
            artifact_ids: Some(vec![artifact.artifact.id.clone()]),
            ..Default::default()
        })
        .await
        .unwrap();
}

async fn export_text(palace: &Palace, vectors: bool) -> (String, ExportCounts) {
    let mut out = Vec::new();
    let counts = palace
        .export(&mut out, &ExportOptions { vectors })
        .await
        .expect("export");
    (String::from_utf8(out).unwrap(), counts)
}

/// The lines of an export with what may differ between two stores of the same palace made
/// comparable: the export time, the local event position, vectors rounded.
fn comparable(text: &str) -> Vec<Value> {
    text.lines()
        .map(|line| {
            let mut v: Value = serde_json::from_str(line).unwrap();
            let obj = v.as_object_mut().unwrap();
            obj.remove("exported_at");
            obj.remove("seq");
            if let Some(Value::Array(vector)) = obj.get_mut("vector") {
                for x in vector.iter_mut() {
                    let rounded = (x.as_f64().unwrap() * 1e5).round() / 1e5;
                    *x = serde_json::json!(rounded);
                }
            }
            v
        })
        .collect()
}

async fn import_text(
    palace: &Palace,
    text: &str,
) -> mempalace::core::Result<mempalace::core::palace_export::ImportReport> {
    palace.import(&mut text.as_bytes()).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_palace_round_trips_exactly_and_a_second_import_adds_nothing() {
    let dirs = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let source = local_palace(dirs.0.path()).await;
    fill(&source).await;
    let (text, counts) = export_text(&source, true).await;
    assert!(counts.drawers >= 6, "{counts:?}");
    assert_eq!(counts.closets, 1);
    assert_eq!(counts.triples, 3, "{counts:?}");
    assert!(counts.entities >= 5);
    assert_eq!(counts.tunnels, 1);
    assert!(counts.hallways >= 1, "{counts:?}");
    assert_eq!(counts.artifacts, 1);
    assert!(counts.events >= 3, "{counts:?}");

    let target = local_palace(dirs.1.path()).await;
    let report = import_text(&target, &text).await.expect("import");
    assert_eq!(report.read, counts);
    assert_eq!(report.added, counts, "everything was new");
    assert_eq!(
        report.embedded, 0,
        "same embedder: the export's vectors are used"
    );
    let (again, _) = export_text(&target, true).await;
    assert_eq!(comparable(&again), comparable(&text));

    let twice = import_text(&target, &text).await.expect("second import");
    assert_eq!(twice.added, ExportCounts::default(), "nothing added twice");
    let (after_twice, _) = export_text(&target, true).await;
    assert_eq!(comparable(&after_twice), comparable(&text));

    // The imported palace answers as the source does.
    let query = "which database does the fleet use";
    let a = source.search(query, None, None, 3).await.unwrap();
    let b = target.search(query, None, None, 3).await.unwrap();
    assert_eq!(
        serde_json::to_value(&a).unwrap()["results"],
        serde_json::to_value(&b).unwrap()["results"]
    );
    let facts = target
        .kg_query("Alice", None, mempalace::core::Direction::Both)
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(&facts).unwrap()["facts"],
        serde_json::to_value(
            source
                .kg_query("Alice", None, mempalace::core::Direction::Both)
                .await
                .unwrap()
        )
        .unwrap()["facts"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_vectors_the_import_embeds_and_answers_alike() {
    let dirs = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let source = local_palace(dirs.0.path()).await;
    fill(&source).await;
    let (text, counts) = export_text(&source, false).await;
    assert!(!text.contains("\"vector\""));
    let target = local_palace(dirs.1.path()).await;
    let report = import_text(&target, &text).await.unwrap();
    assert_eq!(report.embedded, counts.drawers);
    let (with_vectors, _) = export_text(&source, true).await;
    let (imported, _) = export_text(&target, true).await;
    assert_eq!(comparable(&imported), comparable(&with_vectors));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cut_export_keeps_what_it_held_and_the_whole_file_completes_it() {
    let dirs = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let source = local_palace(dirs.0.path()).await;
    fill(&source).await;
    let (text, counts) = export_text(&source, true).await;
    let lines: Vec<&str> = text.lines().collect();
    let cut = lines[..lines.len() - 3].join("\n");
    let target = local_palace(dirs.1.path()).await;
    let err = import_text(&target, &cut).await.unwrap_err().to_string();
    assert!(err.contains("without its end line"), "{err}");
    assert_eq!(
        target.status_counts().await,
        source.status_counts().await,
        "every drawer before the cut is stored"
    );
    let report = import_text(&target, &text).await.unwrap();
    assert_eq!(report.read, counts);
    let (again, _) = export_text(&target, true).await;
    assert_eq!(comparable(&again), comparable(&text));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn broken_exports_are_refused_with_their_line_and_change_nothing_stored() {
    let dirs = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let source = local_palace(dirs.0.path()).await;
    fill(&source).await;
    let (text, _) = export_text(&source, true).await;
    let target = local_palace(dirs.1.path()).await;
    target
        .add_drawer(NewDrawer::new(
            "wing_keep",
            "room",
            "already here before any import",
        ))
        .await
        .unwrap();
    let before = target.status_counts().await;
    let lines: Vec<String> = text.lines().map(str::to_string).collect();
    let header = lines[0].clone();

    let cases: Vec<(String, &str)> = vec![
        ("not json at all\n".into(), "line 1"),
        (
            header.replace("\"version\":1", "\"version\":99") + "\n",
            "newer than this release reads",
        ),
        (
            header.replace("mempalace-export", "something-else") + "\n",
            "is not \"mempalace-export\"",
        ),
        (
            format!(
                "{header}\n{{\"row\":\"drawer\",\"id\":\"drawer_x_y_1\",\"text\":\"\",\"wing\":\"x\",\"room\":\"y\",\"source_file\":\"\",\"chunk_index\":0,\"added_by\":\"mcp\",\"filed_at\":\"2026-01-01T00:00:00\"}}\n"
            ),
            "line 2",
        ),
        (
            format!(
                "{header}\n{{\"row\":\"drawer\",\"id\":\"drawer_x_y_1\",\"text\":\"hi\",\"wing\":\"x\",\"room\":\"y\",\"source_file\":\"\",\"chunk_index\":0,\"added_by\":\"mcp\",\"filed_at\":\"2026-01-01T00:00:00\",\"vector\":[1.0,2.0]}}\n"
            ),
            "vector of 2 dimensions",
        ),
        (
            format!(
                "{header}\n{{\"row\":\"triple\",\"id\":\"t1\",\"subject\":\"ghost\",\"predicate\":\"p\",\"object\":\"ghost2\"}}\n{{\"row\":\"end\",\"counts\":{{}}}}\n"
            ),
            "unknown entity",
        ),
        (
            format!("{header}\n{{\"row\":\"event\",\"id\":\"evt_1\"}}\n"),
            "line 2",
        ),
        (format!("{header}\n{{\"row\":\"spaceship\"}}\n"), "line 2"),
        (
            format!(
                "{header}\n{}\n",
                "x".repeat(mempalace::core::palace_export::MAX_EXPORT_LINE_BYTES + 10)
            ),
            "longer than",
        ),
    ];
    for (input, expected) in cases {
        let err = import_text(&target, &input)
            .await
            .expect_err("refused")
            .to_string();
        assert!(err.contains(expected), "{expected:?} not in {err:?}");
        assert_eq!(
            target.status_counts().await,
            before,
            "nothing changed by {expected:?}"
        );
    }
    assert_eq!(target.kg_stats().await.unwrap().triples, 0);
}

/// Drawer counts by wing and room, for comparing two palaces.
trait StatusCounts {
    async fn status_counts(&self) -> Value;
}

impl StatusCounts for Palace {
    async fn status_counts(&self) -> Value {
        let taxonomy = self.taxonomy().await.unwrap();
        serde_json::to_value(taxonomy).unwrap()
    }
}

#[cfg(all(feature = "qdrant", feature = "postgres"))]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lancedb_and_sqlite_round_trip_through_qdrant_and_postgres() {
    use mempalace_conformance::live_service::{postgres_url, qdrant_url};
    let name = "lancedb_and_sqlite_round_trip_through_qdrant_and_postgres";
    let (Some(qdrant), Some(postgres)) = (qdrant_url(name), postgres_url(name)) else {
        return;
    };
    let dirs = (
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
    );
    let source = local_palace(dirs.0.path()).await;
    fill(&source).await;
    let (text, counts) = export_text(&source, true).await;
    let fleet = PalaceBuilder::new(dirs.1.path())
        .embedder(embedder())
        .backend(mempalace::BackendKind::Qdrant)
        .qdrant_url(qdrant)
        .knowledge_graph_postgres(postgres)
        .open_or_create()
        .await
        .expect("fleet palace opens");
    let report = import_text(&fleet, &text)
        .await
        .expect("import into the fleet");
    assert_eq!(report.added, counts);
    let (from_fleet, _) = export_text(&fleet, true).await;
    assert_eq!(comparable(&from_fleet), comparable(&text));
    assert_eq!(
        import_text(&fleet, &text).await.unwrap().added,
        ExportCounts::default()
    );
    // And back to the embedded backends.
    let back = local_palace(dirs.2.path()).await;
    import_text(&back, &from_fleet).await.expect("import back");
    let (round_trip, _) = export_text(&back, true).await;
    assert_eq!(comparable(&round_trip), comparable(&text));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_import_leaves_stored_records_as_they_are_and_carries_facts_of_missing_entities() {
    let dirs = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let source = local_palace(dirs.0.path()).await;
    fill(&source).await;
    // A fact naming an entity the graph lacks, as a file written without foreign keys holds.
    let conn = rusqlite::Connection::open(dirs.0.path().join("knowledge_graph.sqlite3")).unwrap();
    conn.execute_batch(
        "PRAGMA foreign_keys = OFF; INSERT INTO triples (id, subject, predicate, object) \
         VALUES ('t_ghost', 'ghost', 'haunts', 'alice');",
    )
    .unwrap();
    drop(conn);
    let (text, _) = export_text(&source, true).await;

    let target = local_palace(dirs.1.path()).await;
    // A closet of the same id, stored first with other text: the import keeps it.
    target
        .import_closets(&[Closet {
            id: "closet_wing_lab_notes_aa_01".into(),
            text: "kept|→drawer_wing_lab_notes_0001".into(),
            wing: "wing_lab".into(),
            room: "notes".into(),
            source_file: "/src/drawer_wing_lab_notes_0001.md".into(),
        }])
        .await
        .unwrap();
    let report = import_text(&target, &text).await.expect("import");
    assert_eq!(report.added.closets, 0, "{report:?}");
    let (after, _) = export_text(&target, true).await;
    assert!(after.contains("kept|→drawer_wing_lab_notes_0001"));
    let ghost = target
        .kg_query("ghost", None, mempalace::core::Direction::Outgoing)
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(&ghost).unwrap()["facts"]
            .as_array()
            .unwrap()
            .len(),
        1,
        "the fact came along with an entity for its subject"
    );

    // An event of another id at a stored event's author position: two logs wrote as one.
    let event_line = text
        .lines()
        .find(|l| l.starts_with("{\"row\":\"event\""))
        .unwrap();
    let mut event: Value = serde_json::from_str(event_line).unwrap();
    event["id"] = Value::String("evt_20260101T000000_000000000000".into());
    let header = text.lines().next().unwrap();
    let clash = format!("{header}\n{event}\n");
    let err = import_text(&target, &clash).await.unwrap_err().to_string();
    assert!(err.contains("as one replica"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn vectors_that_are_not_finite_are_refused() {
    let dirs = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let source = local_palace(dirs.0.path()).await;
    fill(&source).await;
    let (text, _) = export_text(&source, true).await;
    let header = text.lines().next().unwrap();
    let huge = vec!["1e39"; DIMENSION].join(",");
    let line = format!(
        "{{\"row\":\"drawer\",\"id\":\"drawer_x_y_1\",\"text\":\"hi\",\"wing\":\"x\",\"room\":\"y\",\"source_file\":\"\",\"chunk_index\":0,\"added_by\":\"mcp\",\"filed_at\":\"2026-01-01T00:00:00\",\"vector\":[{huge}]}}"
    );
    let target = local_palace(dirs.1.path()).await;
    let err = import_text(
        &target,
        &format!("{header}\n{line}\n{{\"row\":\"end\",\"counts\":{{\"drawers\":1}}}}\n"),
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(err.contains("not finite"), "{err}");
    assert_eq!(target.kg_stats().await.unwrap().triples, 0);
}
