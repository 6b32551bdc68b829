//! `Palace::backup` while other palace handles keep writing (each with its own write lock on
//! the palace, as separate server processes have): the backup holds every drawer acknowledged
//! before it began, drawers and facts are of one instant (a writer files drawer i, then fact
//! i: the copy never holds a fact whose drawer it lacks), and the copy verifies, answers and
//! takes writes as a palace of its own.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mempalace::PalaceBuilder;
use mempalace::core::coordination::NewEvent;
use mempalace::core::{Direction, NewDrawer, NewTriple, Palace};
use mempalace_conformance::hashing_embedder::HashingEmbedder;

const WORDS: [&str; 24] = [
    "harbor", "violin", "granite", "orbit", "lantern", "meadow", "cipher", "falcon", "ember",
    "glacier", "quartz", "saffron", "tundra", "willow", "zephyr", "basalt", "coral", "dune",
    "fjord", "nebula", "prism", "sierra", "thistle", "walnut",
];

/// Text of item `i` of writer `w`: words far enough apart that no two are near-duplicates.
fn content(w: usize, i: usize) -> String {
    let mut state = (w as u64 + 1) * 1_000_003 + i as u64 * 7_919;
    let mut words = Vec::new();
    for _ in 0..14 {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        words.push(WORDS[(state >> 33) as usize % WORDS.len()]);
    }
    format!("writer {w} item {i}: {}", words.join(" "))
}

async fn open(path: &std::path::Path) -> Palace {
    PalaceBuilder::new(path)
        .embedder(Arc::new(HashingEmbedder::new(64)))
        .open_or_create()
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_backup_taken_while_writers_run_is_one_instant_and_verifies() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("palace");
    let palace = open(&path).await;
    palace
        .add_drawer(NewDrawer::new(
            "wing_base",
            "notes",
            "the base drawer before any writer",
        ))
        .await
        .unwrap();

    let stop = Arc::new(AtomicBool::new(false));
    // (writer, item, drawer id) of every drawer acknowledged.
    let acked: Arc<Mutex<Vec<(usize, usize, String)>>> = Arc::default();
    let mut writers = Vec::new();
    for w in 0..2 {
        let (stop, acked, path) = (Arc::clone(&stop), Arc::clone(&acked), path.clone());
        writers.push(tokio::spawn(async move {
            let palace = open(&path).await;
            let mut i = 0;
            while !stop.load(Ordering::Relaxed) {
                let outcome = palace
                    .add_drawer(NewDrawer::new("wing_live", "stream", content(w, i)))
                    .await
                    .unwrap();
                if let Some(id) = outcome.drawer_id() {
                    acked.lock().unwrap().push((w, i, id.to_string()));
                    palace
                        .kg_add(NewTriple::new(
                            format!("w{w}_{i}"),
                            "filed",
                            format!("item_{i}"),
                        ))
                        .await
                        .unwrap();
                    palace
                        .event_append(&NewEvent {
                            event_type: "note.posted".into(),
                            stream: "project/backup".into(),
                            room: "general".into(),
                            from_agent: format!("writer{w}"),
                            body: Some(format!("filed {i}")),
                            ..Default::default()
                        })
                        .await
                        .unwrap();
                }
                i += 1;
            }
        }));
    }
    // Wait for the writers (not for a time): a backup amid a stream of writes.
    let acks = |n: usize| {
        let acked = Arc::clone(&acked);
        async move {
            for _ in 0..600 {
                if acked.lock().unwrap().len() >= n {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            panic!("the writers did not file {n} drawers within 30 s");
        }
    };
    acks(6).await;
    let before: Vec<(usize, usize, String)> = acked.lock().unwrap().clone();
    let dest = dir.path().join("backup");
    let report = palace.backup(&dest).await.expect("backup");
    let so_far = acked.lock().unwrap().len();
    acks(so_far + 4).await;
    stop.store(true, Ordering::Relaxed);
    for w in writers {
        w.await.unwrap();
    }
    for part in [
        "palace.json",
        "drawers",
        "knowledge_graph",
        "coordination_log",
    ] {
        assert!(
            report.parts.iter().any(|p| p == part),
            "{part}: {:?}",
            report.parts
        );
    }
    let after = acked.lock().unwrap().len();
    assert!(after > before.len(), "writers went on during the backup");

    let copy = open(&dest).await;
    let verified = copy.verify().await.unwrap();
    assert!(verified.sound, "{:?}", verified.problems());
    let listed = copy
        .list_drawers(
            Some("wing_live"),
            None,
            mempalace::core::Page {
                offset: 0,
                limit: 1000,
            },
        )
        .await
        .unwrap();
    let ids: HashSet<String> = serde_json::to_value(&listed).unwrap()["drawers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["drawer_id"].as_str().unwrap().to_string())
        .collect();
    for (_, _, id) in &before {
        assert!(ids.contains(id), "acknowledged before the backup: {id}");
    }
    // One instant: no fact without its drawer.
    let all = acked.lock().unwrap().clone();
    let mut facts = 0;
    for (w, i, id) in &all {
        let found = copy
            .kg_query(&format!("w{w}_{i}"), None, Direction::Outgoing)
            .await
            .unwrap();
        let has_fact = !serde_json::to_value(&found).unwrap()["facts"]
            .as_array()
            .unwrap()
            .is_empty();
        if has_fact {
            facts += 1;
            assert!(
                ids.contains(id),
                "fact w{w}_{i} is in the backup without its drawer"
            );
        }
    }
    assert!(
        facts >= before.len().saturating_sub(2),
        "facts of the acknowledged drawers are there"
    );
    // The copy is a palace of its own: it answers and takes writes; the original is untouched.
    assert!(
        !serde_json::to_value(copy.search("harbor violin", None, None, 3).await.unwrap()).unwrap()
            ["results"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    copy.add_drawer(NewDrawer::new(
        "wing_restored",
        "notes",
        "written into the restored copy",
    ))
    .await
    .unwrap();
    assert!(palace.verify().await.unwrap().sound);
    let err = palace.backup(&dest).await.unwrap_err().to_string();
    assert!(err.contains("exists already"), "{err}");
}
