//! `mempalace wings split` and `mempalace migrate-wings` on the real binary: a wing of many
//! projects' transcripts becomes one wing per project (planned, edited, applied, resumed), and
//! legacy wing spellings are re-keyed; drawers keep their ids and stay searchable.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use mempalace::core::NewDrawer;
use serde_json::Value;

fn claude_session() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(
        "../tests/fixtures/conversations/claude-code/session-0ff63091-06a5-413a-bc53-16dfe11e1f48.jsonl",
    )
}

/// The model the tests' processes load (from the real home: theirs is a temporary one).
fn model_dir() -> PathBuf {
    mempalace_embed_candle::model_dir::resolve(None)
}

fn run(home: &Path, palace: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mempalace"))
        .env("HOME", home)
        .env("MEMPALACE_MODEL_DIR", model_dir())
        .env_remove("MEMPALACE_PALACE_PATH")
        .env_remove("MEMPALACE_CONFIG_DIR")
        .arg("--palace")
        .arg(palace)
        .args(args)
        .output()
        .unwrap()
}

fn ok(home: &Path, palace: &Path, args: &[&str]) -> String {
    let out = run(home, palace, args);
    assert!(
        out.status.success(),
        "{args:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Drawers per wing, from `status --json`.
fn wings(home: &Path, palace: &Path) -> Vec<(String, u64)> {
    let status: Value = serde_json::from_str(&ok(home, palace, &["status", "--json"])).unwrap();
    let mut out: Vec<(String, u64)> = status["wings"]
        .as_object()
        .map(|w| {
            w.iter()
                .map(|(k, v)| (k.clone(), v.as_u64().unwrap_or(0)))
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

/// Every drawer id of the palace, sorted (through the library, on the CLI's palace).
async fn drawer_ids(palace: &Path) -> Vec<String> {
    let p = mempalace::open(palace).await.unwrap();
    let page = mempalace::core::vector_store::Page {
        offset: 0,
        limit: 10_000,
    };
    let mut ids: Vec<String> = p
        .list_drawers(None, None, page)
        .await
        .unwrap()
        .drawers
        .into_iter()
        .map(|d| d.drawer_id)
        .collect();
    ids.sort();
    ids
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wings_split_plans_applies_and_finishes_an_interrupted_split() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let palace = dir.path().join("palace");
    let projects = home.join(".claude/projects");
    for key in [
        "-Users-me-dev-acme-app",
        "-home-me-notes",
        "-Users-me-dev-acme-portal",
    ] {
        std::fs::create_dir_all(projects.join(key)).unwrap();
        std::fs::copy(claude_session(), projects.join(key).join("s1.jsonl")).unwrap();
    }
    // An existing wing the portal project resolves to.
    let portal = dir.path().join("portal");
    std::fs::create_dir_all(&portal).unwrap();
    std::fs::write(portal.join("readme.md"), "# Portal\n\nThe customer portal signs in with SSO through the company's identity provider, \
         and sessions last eight hours before the portal asks again.\n").unwrap();
    ok(
        &home,
        &palace,
        &[
            "mine",
            portal.to_str().unwrap(),
            "--wing",
            "portal",
            "--quiet",
        ],
    );
    ok(
        &home,
        &palace,
        &[
            "mine",
            projects.to_str().unwrap(),
            "--mode",
            "convos",
            "--wing",
            "wing_api",
            "--quiet",
        ],
    );
    let before = wings(&home, &palace);
    let per_session = before.iter().find(|(w, _)| w == "wing_api").unwrap().1 / 3;
    assert!(per_session > 0, "{before:?}");
    assert!(before.iter().any(|(w, _)| w == "portal"), "{before:?}");
    let ids_before = drawer_ids(&palace).await;

    // Plan: the report, and the plan file for the user to edit.
    let plan_text = ok(&home, &palace, &["wings", "split", "--wing", "wing_api"]);
    assert!(
        plan_text.starts_with(&format!(
            "  wing_api: 3 source projects, {} drawers with a project key, 0 without one (stay).\n  Targets:\n",
            per_session * 3
        )),
        "{plan_text}"
    );
    assert!(
        plan_text.contains(&format!(
            "    {:<32} {:>7}  (existing)\n",
            "portal", per_session
        )),
        "{plan_text}"
    );
    assert!(
        plan_text.contains(&format!(
            "    {:<32} {:>7}  (derived)\n",
            "acme_app", per_session
        )),
        "{plan_text}"
    );
    let plan_file = palace.join("wings/split-wing_api.json");
    assert!(plan_text.ends_with(&format!(
        "\n  Plan saved to {}. Edit targets there, then re-run with --yes.\n",
        plan_file.display()
    )));
    let mut plan: Value =
        serde_json::from_str(&std::fs::read_to_string(&plan_file).unwrap()).unwrap();
    assert_eq!(plan["schema_version"], 1);
    assert_eq!(plan["projects"]["-home-me-notes"]["target"], "notes");
    assert_eq!(wings(&home, &palace), before, "planning moves nothing");

    // The user renames one target.
    plan["projects"]["-home-me-notes"]["target"] = Value::from("Notebook");
    std::fs::write(&plan_file, serde_json::to_string_pretty(&plan).unwrap()).unwrap();

    // An interrupted apply of another plan is refused, and nothing moves.
    let marker = palace.join("wings/split-wing_api.pending");
    std::fs::write(&marker, "{\"plan_sha256\": \"deadbeef\"}\n").unwrap();
    let refused = run(
        &home,
        &palace,
        &["wings", "split", "--wing", "wing_api", "--yes"],
    );
    assert_eq!(refused.status.code(), Some(1));
    let text = String::from_utf8_lossy(&refused.stdout);
    assert!(
        text.contains("  split plan for 'wing_api' changed since this split started (pinned deadbeef, current "),
        "{text}"
    );
    assert_eq!(wings(&home, &palace), before);
    let planned = ok(&home, &palace, &["wings", "split", "--wing", "wing_api"]);
    assert!(
        planned.contains("A split of wing_api was interrupted."),
        "{planned}"
    );
    assert!(
        !text.contains("Resuming"),
        "a refused resume does not announce itself: {text}"
    );
    // The interrupted apply was of this plan: running it again finishes it.
    let edited = mempalace::ingest::wing_split::load_plan(&palace, "wing_api").unwrap();
    std::fs::write(
        &marker,
        format!("{{\"plan_sha256\": \"{}\"}}\n", edited.fingerprint()),
    )
    .unwrap();

    // Hallways of the split wing (one of them not even a well-formed record) go; others stay.
    std::fs::write(
        palace.join("hallways.json"),
        serde_json::json!({"schema_version": 1, "hallways": [
            {"id": "h1", "wing": "wing_api", "entity_a": "Aya", "entity_b": "Lumi", "co_occurrence_count": 3},
            {"id": "h2", "wing": "portal", "entity_a": "Aya", "entity_b": "Zed", "co_occurrence_count": 2},
            {"wing": "wing_api", "entity_a": null},
        ]})
        .to_string(),
    )
    .unwrap();

    // Apply (resuming).
    let applied = ok(
        &home,
        &palace,
        &["wings", "split", "--wing", "wing_api", "--yes"],
    );
    assert!(
        applied.contains(
            "\n  Resuming an interrupted split: finishing drawers, closets and hallways.\n"
        ),
        "{applied}"
    );
    assert!(
        applied.ends_with(&format!(
            "\n  Moved {} drawers into 3 wings and 0 closets; 0 skipped; 2 hallway records of wing_api dropped.\n",
            per_session * 3
        )),
        "{applied}"
    );
    assert!(!marker.exists(), "the marker goes when the split is done");
    let hallways: Value =
        serde_json::from_str(&std::fs::read_to_string(palace.join("hallways.json")).unwrap())
            .unwrap();
    assert_eq!(hallways["hallways"].as_array().unwrap().len(), 1);
    assert_eq!(hallways["hallways"][0]["id"], "h2");
    let after = wings(&home, &palace);
    let portal_before = before.iter().find(|(w, _)| w == "portal").unwrap().1;
    assert_eq!(
        after,
        vec![
            ("Notebook".to_string(), per_session),
            ("acme_app".to_string(), per_session),
            ("portal".to_string(), portal_before + per_session),
        ]
    );
    assert_eq!(
        drawer_ids(&palace).await,
        ids_before,
        "ids kept, nothing added or lost"
    );
    let hits: Value = serde_json::from_str(&ok(
        &home,
        &palace,
        &[
            "search",
            "what did we decide",
            "--wing",
            "acme_app",
            "--json",
        ],
    ))
    .unwrap();
    assert!(!hits["results"].as_array().unwrap().is_empty(), "{hits}");

    // Again: nothing left to move.
    let again = ok(
        &home,
        &palace,
        &["wings", "split", "--wing", "wing_api", "--yes"],
    );
    assert!(again.contains("  Moved 0 drawers into 0 wings"), "{again}");
    let none = ok(&home, &palace, &["wings", "split", "--wing", "wing_api"]);
    assert_eq!(
        none,
        "  No drawer in wing_api carries a project key; nothing to split.\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn migrate_wings_re_keys_legacy_spellings_after_a_dry_run() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let palace = dir.path().join("palace");
    {
        let p = mempalace::open(&palace).await.unwrap();
        for (wing, text) in [
            ("_home_me_app", "The deploy key rotates every month."),
            ("home_me_app", "Billing moves to the new queue in March."),
            (
                "-Side-Project-",
                "The side project stores its data in SQLite.",
            ),
        ] {
            p.add_drawer(NewDrawer::new(wing, "notes", text))
                .await
                .unwrap();
        }
    }
    let ids_before = drawer_ids(&palace).await;
    let dry = ok(&home, &palace, &["migrate-wings", "--dry-run"]);
    assert_eq!(
        dry,
        "\n  Wing-name migration plan:\n    '-Side-Project-' -> 'side_project': 1 drawer(s)\n    '_home_me_app' -> 'home_me_app': 1 drawer(s)  (MERGE into existing wing)\n\n  DRY RUN -- no changes made.\n\n"
    );
    // Without --yes and without a terminal to ask at: nothing happens.
    let declined = ok(&home, &palace, &["migrate-wings"]);
    assert!(declined.ends_with("  Aborted.\n"), "{declined}");
    assert_eq!(wings(&home, &palace).len(), 3);
    let done = ok(&home, &palace, &["migrate-wings", "--yes"]);
    assert!(done.ends_with("\n  Migrated 2 drawer(s).\n\n"), "{done}");
    assert_eq!(
        wings(&home, &palace),
        vec![
            ("home_me_app".to_string(), 2),
            ("side_project".to_string(), 1)
        ]
    );
    assert_eq!(drawer_ids(&palace).await, ids_before);
    assert_eq!(
        ok(&home, &palace, &["migrate-wings"]),
        "  All wing names are already normalized -- nothing to migrate.\n"
    );
}

#[test]
fn a_missing_palace_is_named_and_not_created() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let typo = dir.path().join("no-such-palace");
    for args in [
        &["wings", "split", "--wing", "wing_api"][..],
        &["migrate-wings", "--dry-run"],
    ] {
        let out = run(&home, &typo, args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("No palace found at"), "{args:?}: {stderr}");
        assert!(!typo.exists(), "{args:?} created the folder");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rooms_apply_moves_drawers_to_the_nearest_room_of_the_set() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let palace = dir.path().join("palace");
    let notes = [
        (
            "general",
            "Added a composite index on orders so the postgres query planner stops scanning the table.",
        ),
        (
            "general",
            "The schema migration renames the customer column and backfills it in batches of ten thousand rows.",
        ),
        (
            "general",
            "Tagged version 2.4.0, wrote the changelog and published the release to the registry.",
        ),
        (
            "general",
            "The release checklist: bump the version, tag the commit, publish the packages, announce it.",
        ),
        (
            "decisions",
            "We chose Postgres over MySQL for its transactional schema migrations.",
        ),
    ];
    let mut ids = Vec::new();
    {
        let p = mempalace::open(&palace).await.unwrap();
        for (room, text) in notes {
            let filed = p
                .add_drawer(NewDrawer::new("orbit", room, text))
                .await
                .unwrap();
            ids.push(filed.drawer_id().unwrap().to_string());
        }
    }
    let run_rooms = |args: &[&str]| {
        let mut all = vec!["rooms", "apply", "--wing", "orbit"];
        all.extend_from_slice(args);
        run(&home, &palace, &all)
    };
    let missing = run_rooms(&[]);
    assert_eq!(missing.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&missing.stdout),
        "  No room set for orbit. Run: mempalace rooms propose --wing orbit\n"
    );
    std::fs::create_dir_all(palace.join("rooms")).unwrap();
    let set = palace.join("rooms/orbit.json");
    std::fs::write(&set, r#"{"rooms": [{"name": "a"}, {"name": "a"}]}"#).unwrap();
    let dup = run_rooms(&[]);
    assert_eq!(dup.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&dup.stdout).contains("is invalid: room set lists 'a' twice"));

    // One room from exemplars, one from its description, as 3.11's `rooms propose` writes them.
    let room_set = serde_json::json!({
        "schema_version": 1,
        "wing": "orbit",
        "rooms": [
            {"name": "database-migrations", "description": "Schema changes, indexes, query tuning and postgres operations.",
             "keywords": ["postgres", "index", "migration"], "exemplars": [ids[0], ids[1]]},
            {"name": "release-process", "description": "Versioning, changelogs, tagging and publishing releases.",
             "keywords": ["release", "version", "changelog"], "exemplars": []},
        ]
    });
    std::fs::write(&set, serde_json::to_string_pretty(&room_set).unwrap()).unwrap();
    let dry = String::from_utf8(run_rooms(&["--show", "1"]).stdout).unwrap();
    assert!(
        dry.starts_with(
            "  Room prototypes: database-migrations (centroid of 2), release-process (description)\n  Reclassifying drawers currently in: architecture, general, planning, problems, technical\n  orbit: 5 drawers; 4 would move, 1 stay, 0 below threshold 0.30 (kept), 0 without embeddings (kept).\n    database-migrations          2\n    decisions                    1\n    release-process              2\n"
        ),
        "{dry}"
    );
    assert!(
        dry.contains("\n  Examples of what would move (confidence, excerpt):\n"),
        "{dry}"
    );
    assert!(
        dry.contains("\n    -> database-migrations\n       ["),
        "{dry}"
    );
    assert!(
        dry.contains("\n    -> release-process\n       [0."),
        "{dry}"
    );
    assert!(
        dry.ends_with("\n  Dry run. Re-run with --yes to write the room changes.\n"),
        "{dry}"
    );
    assert_eq!(wings(&home, &palace), vec![("orbit".to_string(), 5)]);

    let applied = String::from_utf8(run_rooms(&["--yes"]).stdout).unwrap();
    assert!(applied.ends_with("  Moved 4 drawers. 0 closets followed. Run `mempalace audit` to see the new rooms score.\n"), "{applied}");
    let p = mempalace::open(&palace).await.unwrap();
    let rooms: Vec<String> = p
        .store()
        .get(&ids)
        .await
        .unwrap()
        .into_iter()
        .map(|d| d.metadata.room)
        .collect();
    assert_eq!(
        rooms,
        [
            "database-migrations",
            "database-migrations",
            "release-process",
            "release-process",
            "decisions"
        ]
    );
    drop(p);
    let again = String::from_utf8(run_rooms(&["--yes"]).stdout).unwrap();
    assert!(again.ends_with("  Nothing to change.\n"), "{again}");
    assert_eq!(drawer_ids(&palace).await.len(), 5, "nothing added or lost");
}
