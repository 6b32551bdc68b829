//! `mempalace audit` on the real binary: 3.11's report (JSON keys, text layout, scores) from a
//! palace with drawers, a tunnel and facts; `--fail-under` exits 2; read-only.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

fn run(palace: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mempalace"))
        .env_remove("COLUMNS")
        .arg("--palace")
        .arg(palace)
        .args(args)
        .output()
        .unwrap()
}

fn ok(palace: &Path, args: &[&str]) -> String {
    let out = run(palace, args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn audit_scores_a_palace_like_3_11_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let palace = dir.path().join("palace");
    {
        // Two spellings of one wing, as 3.11's hand-written mempalace.yaml files make them.
        let p = mempalace::open(&palace).await.unwrap();
        for (wing, room, text) in [
            (
                "my-app",
                "general",
                "The web client keeps its sessions in Redis for eight hours.",
            ),
            (
                "my_app",
                "backend",
                "Billing retries failed invoices three times before paging on-call.",
            ),
        ] {
            let filed = p
                .add_drawer(mempalace::core::NewDrawer::new(wing, room, text))
                .await
                .unwrap();
            assert!(
                matches!(filed, mempalace::core::reports::AddDrawerOutcome::Added(_)),
                "{filed:?}"
            );
        }
    }
    ok(&palace, &["kg", "add", "Alice", "works_on", "Orion"]);
    ok(&palace, &["kg", "add", "Bob", "works_on", "Orion"]);
    ok(
        &palace,
        &[
            "tunnels",
            "create",
            "my-app",
            "general",
            "my_app",
            "backend",
            "--label",
            "same service",
        ],
    );
    let before: Vec<_> = std::fs::read_dir(&palace)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();

    let report: Value = serde_json::from_str(&ok(&palace, &["audit", "--json"])).unwrap();
    let keys: Vec<&str> = report
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "counts_source",
            "findings",
            "hallways",
            "knowledge_graph",
            "naming",
            "palace",
            "rooms",
            "scores",
            "tunnels"
        ]
    );
    assert_eq!(
        report["naming"]["wing_drift"],
        serde_json::json!([["my-app", "my_app"]])
    );
    assert_eq!(report["scores"]["naming"], 90);
    assert_eq!(report["tunnels"]["total"], 1);
    assert_eq!(report["knowledge_graph"]["current_facts"], 2);
    assert_eq!(report["knowledge_graph"]["distinct_predicates"], 1);
    assert_eq!(report["scores"]["knowledge_graph"], 50);
    assert!(report["scores"]["hallways"].is_null(), "no hallways: n/a");
    let overall = report["scores"]["overall"].as_i64().unwrap();
    assert!(
        report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["text"] == "my-app / my_app: one wing spelled two ways."),
        "{report}"
    );

    let text = ok(&palace, &["audit"]);
    let absolute = std::path::absolute(&palace).unwrap();
    assert!(
        text.starts_with(&format!(
            "\nMemPalace audit: {}\n\n  overall          ",
            absolute.display()
        )),
        "{text}"
    );
    assert!(
        text.contains(
            "  naming            90  #########.  wing/room spellings that do not collide\n"
        ),
        "{text}"
    );
    assert!(text.contains("  hallways         n/a              strongest hallways that are not spelling artifacts\n"), "{text}");
    assert!(
        text.contains("\n  NAMING\n    - my-app / my_app: one wing spelled two ways.\n"),
        "{text}"
    );
    assert!(text.ends_with("\n\n"), "{text:?}");

    let floor = (overall + 1).to_string();
    assert_eq!(
        run(&palace, &["audit", "--fail-under", &floor])
            .status
            .code(),
        Some(2)
    );
    let at = overall.to_string();
    assert_eq!(
        run(&palace, &["audit", "--json", "--fail-under", &at])
            .status
            .code(),
        Some(0)
    );
    let after: Vec<_> = std::fs::read_dir(&palace)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(before, after, "audit writes nothing");

    let missing = run(&dir.path().join("nowhere"), &["audit"]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("No palace found"));
}

/// The files 3.11 pruned, in a palace of its three wings: the same report lines, byte for
/// byte, and after --yes nothing left to prune.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prunes_report_and_remove_what_3_11_does() {
    let fixtures = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../mempalace-core/tests/fixtures/prune_3_11");
    let dir = tempfile::tempdir().unwrap();
    let palace = dir.path().join("palace");
    {
        let p = mempalace::open(&palace).await.unwrap();
        for (wing, text) in [
            (
                "alpha",
                "Aya and Lumi planned the alpha release together in March.",
            ),
            (
                "beta",
                "Pelleran reviewed the beta billing changes before the freeze.",
            ),
            (
                "gamma",
                "Quintavex maintains the gamma data pipeline and its nightly jobs.",
            ),
        ] {
            p.add_drawer(mempalace::core::NewDrawer::new(wing, "general", text))
                .await
                .unwrap();
        }
    }
    std::fs::copy(
        fixtures.join("tunnels_before.json"),
        palace.join("tunnels.json"),
    )
    .unwrap();
    std::fs::copy(
        fixtures.join("hallways_before.json"),
        palace.join("hallways.json"),
    )
    .unwrap();

    let report = "  7 of 20 tunnels are artifacts: 4 generic tokens, 2 dangling endpoints, 1 duplicate spellings.\n";
    assert_eq!(
        ok(&palace, &["tunnels", "prune"]),
        format!("{report}  Dry run. Re-run with --yes to remove them.\n")
    );
    assert_eq!(
        ok(&palace, &["tunnels", "prune", "--yes"]),
        format!("{report}  Removed 7.\n")
    );
    assert_eq!(
        ok(&palace, &["tunnels", "prune"]),
        "  0 of 13 tunnels are artifacts: 0 generic tokens, 0 dangling endpoints, 0 duplicate spellings.\n"
    );

    let report = "  7 of 29 hallways are spelling artifacts: 3 self-links, 4 duplicate spellings.
    alpha: 6
    beta: 1
    e.g. main.zig ↔ src/main.zig
    e.g. a/src/x.py ↔ b/src/x.py
    e.g. mcp_server ↔ mcp_server.py
    e.g. ChatStore.swift ↔ RootView
    e.g. RootView.swift ↔ ChatStore
";
    assert_eq!(
        ok(&palace, &["hallways", "--prune-spellings"]),
        format!("{report}  Dry run. Re-run with --yes to remove them.\n")
    );
    assert_eq!(
        ok(&palace, &["hallways", "--prune-spellings", "--yes"]),
        format!("{report}  Removed 7.\n")
    );
    assert_eq!(
        ok(&palace, &["hallways", "--prune-spellings"]),
        "  0 of 22 hallways are spelling artifacts: 0 self-links, 0 duplicate spellings.\n"
    );
    // The files are what 3.11 left: tunnels most followed first, hallway survivors renamed.
    let read = |path: std::path::PathBuf| -> Value {
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    };
    assert_eq!(
        read(palace.join("tunnels.json")),
        read(fixtures.join("tunnels_after.json"))
    );
    assert_eq!(
        read(palace.join("hallways.json"))["hallways"],
        read(fixtures.join("hallways_after.json"))["hallways"]
    );
}
