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
    mempalace_with(palace, args, |_| {})
}

/// Like [`mempalace`], with `adjust` setting up the command (its environment) first.
fn mempalace_with(palace: &Path, args: &[&str], adjust: impl FnOnce(&mut Command)) -> Value {
    let mut command = Command::new(env!("CARGO_BIN_EXE_mempalace"));
    command.arg("--palace").arg(palace).args(args);
    adjust(&mut command);
    let out = command.output().unwrap();
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
    // 3.11 filed one closet per mined file (18 files in the fixture).
    assert_eq!(report["closets_found"], 18, "{report}");
    assert_eq!(report["closets_imported"], 18, "{report}");
    assert_eq!(report["closets_skipped"], serde_json::json!([]));
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

    // Search, against what 3.11's own `search_memories` answered on this palace
    // (`record_searches.py` → `searches_3_11.json`: top 3 with distance, BM25 and closet boost).
    let recorded: Value = serde_json::from_str(
        &std::fs::read_to_string(fixture().join("searches_3_11.json")).unwrap(),
    )
    .unwrap();
    let searches = recorded["searches"].as_object().unwrap();
    assert!(searches.len() >= 10);
    let search = |query: &str, ranking: &str| -> Vec<Value> {
        let v = mempalace_with(
            &to,
            &["search", query, "--limit", "3", "--json"],
            |command| {
                command
                    .env("MEMPALACE_RANKING", ranking)
                    .env_remove("MEMPALACE_HYBRID_VECTOR_WEIGHT")
                    .env_remove("MEMPALACE_HYBRID_BM25_WEIGHT");
            },
        );
        v["results"].as_array().unwrap().clone()
    };
    let ids = |hits: &[Value]| -> Vec<String> {
        hits.iter()
            .map(|h| h["drawer_id"].as_str().unwrap().to_string())
            .collect()
    };
    let mut lifted = 0;
    for (query, theirs) in searches {
        let theirs = theirs.as_array().unwrap();
        let their_ids = ids(theirs);

        // The default ranking (tuned for recall: union of both channels, 0.8 / 0.2, no stop
        // words, no closets) puts 3.11's best drawer first.
        let ours = search(query, "default");
        assert_eq!(ids(&ours)[0], their_ids[0], "{query}: default ranking");

        // 3.11's ranking gives 3.11's three drawers in 3.11's order, with the same distances
        // (the same model, embedded again), the same closet boosts (the closets came with the
        // migration) and the same BM25 (over the same passages, where a closet showed one).
        let ours = search(query, "mempalace-3.11");
        assert_eq!(ids(&ours), their_ids, "{query}: 3.11 ranking");
        for (o, t) in ours.iter().zip(theirs) {
            let close = |k: &str, tol: f64| {
                let a = o[k].as_f64().unwrap_or(0.0);
                let b = t[k].as_f64().unwrap();
                assert!((a - b).abs() <= tol, "{query}: {k} {a} here, {b} in 3.11");
            };
            close("distance", 2e-3);
            close("bm25_score", 2e-3);
            close("closet_boost", 1e-9);
            if t["closet_boost"].as_f64() != Some(0.0) {
                lifted += 1;
                assert!(o["matched_via"].as_str().unwrap().ends_with("+closet"));
                assert!(o["closet_preview"].as_str().unwrap().contains('|'));
            }
        }
    }
    assert!(lifted >= 8, "only {lifted} hits were lifted by a closet");
}

/// Runs `mempalace --palace <palace> <args>` and returns its output, whatever the exit code.
fn mempalace_output(palace: &Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_mempalace"))
        .arg("--palace")
        .arg(palace)
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn one_bad_record_is_skipped_by_name_and_the_rest_migrates() {
    let dir = tempfile::tempdir().unwrap();
    let from = dir.path().join("python_palace");
    std::fs::create_dir_all(&from).unwrap();
    for f in ["chroma.sqlite3", "knowledge_graph.sqlite3"] {
        std::fs::copy(fixture().join("palace").join(f), from.join(f)).unwrap();
    }
    let expected: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture().join("expected.json")).unwrap())
            .unwrap();
    let total = expected["drawers"].as_array().unwrap().len();
    // Two drawers as a hostile or buggy writer leaves them in a 3.11 palace: one whose wing
    // is a path (3.11's miner files it; its MCP tools refuse it), one whose source file has
    // a control character (3.11 stores it verbatim).
    let db = rusqlite::Connection::open(from.join("chroma.sqlite3")).unwrap();
    let mut ids = db
        .prepare(
            "SELECT e.id, e.embedding_id FROM embeddings e JOIN embedding_metadata m ON m.id = e.id
             WHERE m.key = 'wing' AND e.embedding_id LIKE 'drawer_%' ORDER BY e.id LIMIT 2",
        )
        .unwrap()
        .query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    let (path_wing, bell_source) = (ids.remove(0), ids.remove(0));
    db.execute(
        "UPDATE embedding_metadata SET string_value = '../../../../etc' WHERE id = ?1 AND key = 'wing'",
        [path_wing.0],
    )
    .unwrap();
    db.execute(
        "UPDATE embedding_metadata SET string_value = '/notes/bell' || char(7) || '.md' WHERE id = ?1 AND key = 'source_file'",
        [bell_source.0],
    )
    .unwrap();
    drop(db);

    let to = dir.path().join("palace");
    let from_arg = from.to_str().unwrap();
    let report = mempalace(&to, &["migrate", from_arg, "--json"]);
    assert_eq!(report["drawers_found"], total, "{report}");
    assert_eq!(report["imported"], total - 1, "{report}");
    let skipped = report["skipped"].as_array().unwrap();
    assert_eq!(skipped.len(), 1, "{report}");
    assert_eq!(skipped[0]["id"], path_wing.1.as_str(), "{report}");
    let reason = skipped[0]["reason"].as_str().unwrap();
    assert!(
        reason.contains("wing") && reason.contains("../../../../etc"),
        "{reason}"
    );
    let repaired = report["repaired"].as_array().unwrap();
    assert_eq!(repaired.len(), 1, "{report}");
    assert_eq!(repaired[0]["id"], bell_source.1.as_str(), "{report}");
    let status = mempalace(&to, &["status", "--json"]);
    assert_eq!(status["total_drawers"], total - 1, "{status}");
    assert!(!status["wings"].to_string().contains("../"), "{status}");

    // --strict: the same migration (nothing new to file) exits non-zero, naming the record.
    let out = mempalace_output(&to, &["migrate", from_arg, "--strict"]);
    assert!(!out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains(&path_wing.1), "{stdout}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--strict"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
