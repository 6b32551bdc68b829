//! `mine` builds hallways and entity tunnels from the names drawers mention, and `hallways
//! --rebuild` and `tunnels propose` answer as MemPalace 3.11 answers, on the real binary and
//! the corpus 3.11's own outputs were captured on (`fixtures/links_corpus_3_11`).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn corpus(wing: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/links_corpus_3_11")
        .join(wing)
}

fn run(home: &Path, palace: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mempalace"))
        .env("HOME", home)
        .env(
            "MEMPALACE_MODEL_DIR",
            mempalace_embed_candle::model_dir::resolve(None),
        )
        .env_remove("MEMPALACE_PALACE_PATH")
        .env_remove("MEMPALACE_CONFIG_DIR")
        .env_remove("MEMPALACE_KG_HALLWAY_MIN_COUNT")
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

#[test]
fn mining_links_wings_and_rebuild_and_propose_answer_as_3_11() {
    let home = tempfile::tempdir().unwrap();
    let palace = home.path().join("palace");
    // 3.11's mine lines for its three wings.
    let expected = [
        ("alpha", "  Hallways: +7 within-wing entity link(s)\n", None),
        (
            "beta",
            "  Hallways: +6 within-wing entity link(s)\n",
            Some("  Entity tunnels: +2 cross-wing entity link(s)\n"),
        ),
        (
            "gamma",
            "  Hallways: +3 within-wing entity link(s)\n",
            Some("  Entity tunnels: +4 cross-wing entity link(s)\n"),
        ),
    ];
    for (wing, hallways, tunnels) in expected {
        let dir = corpus(wing);
        let out = ok(
            home.path(),
            &palace,
            &["mine", dir.to_str().unwrap(), "--wing", wing],
        );
        assert!(out.contains(hallways), "{wing}: {out}");
        match tunnels {
            Some(line) => assert!(out.contains(line), "{wing}: {out}"),
            None => assert!(!out.contains("Entity tunnels"), "{wing}: {out}"),
        }
    }
    assert_eq!(
        ok(home.path(), &palace, &["hallways", "--rebuild"]),
        "  alpha                                      7 hallways\n  \
         beta                                       6 hallways\n  \
         gamma                                      3 hallways\n  \
         Rebuilt 16 hallways across 3 wing(s).\n"
    );
    assert_eq!(
        ok(
            home.path(),
            &palace,
            &["hallways", "--rebuild", "--wing", "nosuch"]
        ),
        "  nosuch                                     0 hallways\n  \
         Rebuilt 0 hallways across 1 wing(s).\n"
    );
    let listing = ok(home.path(), &palace, &["hallways", "--wing", "beta"]);
    assert!(
        listing.contains("Aya ↔ Pelleran (co-occur in 4 drawers across 1 room: general)"),
        "{listing}"
    );
    // The miner linked what it could: nothing is left to propose.
    assert_eq!(
        ok(home.path(), &palace, &["tunnels", "propose"]),
        "  No shared entities strong enough to propose a tunnel that does not exist.\n"
    );

    // Without the miner's tunnels, the plan is 3.11's.
    std::fs::remove_file(palace.join("tunnels.json")).unwrap();
    let plan_path = palace.join("tunnels").join("proposal.json");
    let missing = run(home.path(), &palace, &["tunnels", "propose", "--yes"]);
    assert_eq!(missing.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&missing.stdout),
        format!(
            "  No proposal at {}. Run without --yes first.\n",
            plan_path.display()
        )
    );
    let saved = format!(
        "\n  Plan saved to {}. Delete rows you do not want, then re-run with --yes.\n",
        plan_path.display()
    );
    assert_eq!(
        ok(home.path(), &palace, &["tunnels", "propose", "--max", "2"]),
        format!(
            "  6 candidate links; proposing the strongest 2:\n    \
             Aya                          alpha <-> beta  (4)\n    \
             Lumi                         alpha <-> gamma  (4)\n{saved}"
        )
    );
    assert_eq!(
        ok(home.path(), &palace, &["tunnels", "propose"]),
        format!(
            "  6 candidate links; proposing the strongest 6:\n    \
             Aya                          alpha <-> beta  (4)\n    \
             Lumi                         alpha <-> gamma  (4)\n    \
             Pelleran                     beta <-> gamma  (4)\n    \
             Quintavex                    beta <-> gamma  (4)\n    \
             Quintavex                    beta <-> alpha  (3)\n    \
             Quintavex                    gamma <-> alpha  (3)\n{saved}"
        )
    );
    assert_eq!(
        ok(home.path(), &palace, &["tunnels", "propose", "--yes"]),
        "  Created 6 tunnels.\n"
    );
    assert_eq!(
        ok(home.path(), &palace, &["tunnels", "propose", "--yes"]),
        "  Created 0 tunnels. 6 already existed, possibly under another spelling.\n"
    );
    let listed = ok(home.path(), &palace, &["tunnels", "list", "--json"]);
    let tunnels: serde_json::Value = serde_json::from_str(&listed).unwrap();
    assert_eq!(tunnels.as_array().map(Vec::len), Some(6), "{listed}");

    // A plan broken by hand is refused with 3.11's message.
    std::fs::write(&plan_path, r#"{"tunnels": []}"#).unwrap();
    let broken = run(home.path(), &palace, &["tunnels", "propose", "--yes"]);
    assert_eq!(broken.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&broken.stdout),
        "  Proposal is invalid: tunnel proposal has no tunnels\n"
    );
}
