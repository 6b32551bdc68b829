//! `Palace::verify` and `Palace::repair` on a copy of this release's palace-format fixture:
//! sound as made; an index folder deleted or truncated is found and rebuilt; a graph naming
//! missing entities, closets of gone drawers and vectors of another embedder are found, the
//! closets dropped, and what cannot be rebuilt is said.

mod support;

use std::path::{Path, PathBuf};

use mempalace_conformance::folders::copy_dir;
use std::sync::Arc;
use support::fixtures_dir;

use mempalace::core::closets::Closet;
use mempalace::{PALACE_FORMAT_VERSION, PalaceBuilder};
use mempalace_conformance::hashing_embedder::HashingEmbedder;

/// A copy of the fixture palace of this release's format.
fn fixture_copy(dir: &Path) -> PathBuf {
    let fixture = fixtures_dir().join(format!("palace_format_{PALACE_FORMAT_VERSION}"));
    let palace = dir.join("palace");
    copy_dir(&fixture, &palace);
    palace
}

fn index_dir(palace: &Path) -> PathBuf {
    palace.join("lance/mempalace_drawers.lance/_indices")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deleted_or_truncated_index_is_found_and_rebuilt() {
    for damage in ["deleted", "truncated"] {
        let dir = tempfile::tempdir().unwrap();
        let path = fixture_copy(dir.path());
        {
            let palace = PalaceBuilder::new(&path).open().await.unwrap();
            let report = palace.verify().await.unwrap();
            assert!(
                report.sound,
                "the fixture is sound: {:?}",
                report.problems()
            );
            assert_eq!(report.drawers, 13);
        }
        match damage {
            "deleted" => std::fs::remove_dir_all(index_dir(&path)).unwrap(),
            _ => {
                for index in std::fs::read_dir(index_dir(&path)).unwrap() {
                    for file in std::fs::read_dir(index.unwrap().path()).unwrap() {
                        std::fs::write(file.unwrap().path(), b"").unwrap();
                    }
                }
            }
        }
        let palace = PalaceBuilder::new(&path).open().await.unwrap();
        let report = palace.verify().await.unwrap();
        assert!(!report.sound, "{damage}: found");
        assert!(
            !report.check("indexes").unwrap().problems.is_empty(),
            "{damage}: {:?}",
            report.problems()
        );
        let repair = palace.repair().await.unwrap();
        assert!(
            repair.after.sound,
            "{damage}: {:?}",
            repair.after.problems()
        );
        assert!(repair.not_repaired.is_empty(), "{:?}", repair.not_repaired);
        let hits = palace.search("Alice", None, None, 3).await.unwrap();
        assert!(
            !serde_json::to_value(&hits).unwrap()["results"]
                .as_array()
                .unwrap()
                .is_empty()
        );
        drop(palace);
        let reopened = PalaceBuilder::new(&path).open().await.unwrap();
        assert!(
            reopened.verify().await.unwrap().sound,
            "{damage}: sound in a new process"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closets_of_gone_drawers_are_dropped_and_a_broken_graph_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let path = fixture_copy(dir.path());
    let palace = PalaceBuilder::new(&path).open().await.unwrap();
    palace
        .import_closets(&[Closet {
            id: "closet_gone_01".into(),
            text: "gone|X|→drawer_that_was_deleted".into(),
            wing: "alpha".into(),
            room: "general".into(),
            source_file: "/gone.md".into(),
        }])
        .await
        .unwrap();
    let conn = rusqlite::Connection::open(path.join("knowledge_graph.sqlite3")).unwrap();
    // As a file written without foreign keys enforced (3.11's connections) can be.
    conn.execute_batch("PRAGMA foreign_keys = OFF").unwrap();
    conn.execute(
        "INSERT INTO triples (id, subject, predicate, object) VALUES ('t_ghost', 'ghost', 'haunts', 'alice')",
        [],
    )
    .unwrap();
    drop(conn);
    let report = palace.verify().await.unwrap();
    assert!(
        report.check("closets").unwrap().problems[0].contains("closet_gone_01"),
        "{:?}",
        report.problems()
    );
    assert!(
        report.check("knowledge_graph").unwrap().problems[0].contains("1 fact(s)"),
        "{:?}",
        report.problems()
    );
    let repair = palace.repair().await.unwrap();
    assert!(repair.after.check("closets").unwrap().problems.is_empty());
    assert_eq!(palace.closet_count().await.unwrap(), 0);
    assert!(
        repair
            .not_repaired
            .iter()
            .any(|l| l.starts_with("knowledge_graph:")),
        "{:?}",
        repair.not_repaired
    );
    assert!(!repair.after.sound, "the graph is still broken and says so");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn vectors_of_another_embedder_are_found() {
    let dir = tempfile::tempdir().unwrap();
    let path = fixture_copy(dir.path());
    // Same dimension, another model: the open cannot tell, verify can.
    let palace = PalaceBuilder::new(&path)
        .embedder(Arc::new(HashingEmbedder::new(384)))
        .open()
        .await
        .unwrap();
    let report = palace.verify().await.unwrap();
    let problems = &report.check("embedder").unwrap().problems;
    assert!(
        problems.len() == 1 && problems[0].contains("another model"),
        "{:?}",
        report.problems()
    );
}
