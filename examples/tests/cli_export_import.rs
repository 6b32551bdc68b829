//! `mempalace export` / `mempalace import` on the real binary: a mined palace with facts and
//! a tunnel goes to a file and into a new palace that exports the same, a second import adds
//! nothing, stdout pipes into stdin, and a cut file is refused with a message.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

fn model_dir() -> PathBuf {
    mempalace_embed_candle::model_dir::resolve(None)
}

fn command(home: &Path, palace: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_mempalace"));
    c.env("HOME", home)
        .env("MEMPALACE_MODEL_DIR", model_dir())
        .env_remove("MEMPALACE_PALACE_PATH")
        .env_remove("MEMPALACE_CONFIG_DIR")
        .arg("--palace")
        .arg(palace)
        .args(args);
    c
}

fn run(home: &Path, palace: &Path, args: &[&str]) -> Output {
    command(home, palace, args).output().unwrap()
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

/// A home folder for the CLI under `dir`.
fn home_in(dir: &Path) -> PathBuf {
    let home = dir.join("home");
    std::fs::create_dir_all(&home).unwrap();
    home
}

/// Mines the repository's sample project into `palace`.
fn mine_sample(home: &Path, palace: &Path) {
    let project = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("sample-project");
    ok(
        home,
        palace,
        &["mine", project.to_str().unwrap(), "--quiet"],
    );
}

/// An export's lines without what differs between two palaces holding the same records.
fn comparable(text: &str) -> Vec<Value> {
    text.lines()
        .map(|line| {
            let mut v: Value = serde_json::from_str(line).unwrap();
            let obj = v.as_object_mut().unwrap();
            obj.remove("exported_at");
            obj.remove("seq");
            v
        })
        .collect()
}

#[test]
fn a_mined_palace_exports_imports_and_exports_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let home = home_in(dir.path());
    let (a, b, c) = (
        dir.path().join("a"),
        dir.path().join("b"),
        dir.path().join("c"),
    );
    mine_sample(&home, &a);
    ok(
        &home,
        &a,
        &[
            "kg",
            "add",
            "Alice",
            "works_on",
            "Orion",
            "--valid-from",
            "2025-01-01",
        ],
    );
    ok(
        &home,
        &a,
        &[
            "kg",
            "invalidate",
            "Alice",
            "works_on",
            "Orion",
            "--ended",
            "2026-01-01",
        ],
    );
    let file = dir.path().join("palace.jsonl");
    let printed = ok(&home, &a, &["export", file.to_str().unwrap()]);
    assert!(printed.contains("drawers:"), "{printed}");
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.lines().next().unwrap().contains("\"row\":\"header\""));
    assert!(text.lines().last().unwrap().contains("\"row\":\"end\""));

    let report: Value = serde_json::from_str(&ok(
        &home,
        &b,
        &["import", file.to_str().unwrap(), "--json"],
    ))
    .unwrap();
    assert_eq!(report["embedded"], 0, "{report}");
    assert_eq!(report["added"], report["read"], "{report}");
    let copy = dir.path().join("copy.jsonl");
    ok(&home, &b, &["export", copy.to_str().unwrap()]);
    assert_eq!(
        comparable(&std::fs::read_to_string(&copy).unwrap()),
        comparable(&text)
    );
    let again = ok(&home, &b, &["import", file.to_str().unwrap()]);
    assert!(again.contains("drawers:   0"), "{again}");
    assert!(again.contains("facts:     0"), "{again}");
    let query = ["search", "how is the frontend built", "--json"];
    let hits = |palace: &Path| -> Value {
        let v: Value = serde_json::from_str(&ok(&home, palace, &query)).unwrap();
        v["results"].clone()
    };
    assert_eq!(hits(&a), hits(&b));

    // stdout into stdin.
    let exported = command(&home, &a, &["export", "-", "--no-vectors"])
        .output()
        .unwrap();
    assert!(exported.status.success());
    let mut import = command(&home, &c, &["import", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    import
        .stdin
        .take()
        .unwrap()
        .write_all(&exported.stdout)
        .unwrap();
    let out = import.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("embedded here"),
        "no vectors: the import embeds"
    );
    assert_eq!(hits(&a), hits(&c));

    // A cut file: a message naming the problem, exit 1.
    let cut = dir.path().join("cut.jsonl");
    let lines: Vec<&str> = text.lines().collect();
    std::fs::write(&cut, lines[..lines.len() / 2].join("\n")).unwrap();
    let out = run(
        &home,
        &dir.path().join("d"),
        &["import", cut.to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("without its end line"), "{err}");
}

#[test]
fn verify_finds_a_deleted_index_and_repair_rebuilds_it() {
    let dir = tempfile::tempdir().unwrap();
    let home = home_in(dir.path());
    let palace = dir.path().join("palace");
    mine_sample(&home, &palace);
    let sound = ok(&home, &palace, &["verify"]);
    assert!(sound.contains("The palace is sound."), "{sound}");
    let report: Value = serde_json::from_str(&ok(&home, &palace, &["verify", "--json"])).unwrap();
    assert_eq!(report["sound"], true, "{report}");

    let indexes = palace.join("lance/mempalace_drawers.lance/_indices");
    std::fs::remove_dir_all(&indexes).unwrap();
    let out = run(&home, &palace, &["verify"]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("indexes          PROBLEM"), "{text}");

    let repaired = ok(&home, &palace, &["repair"]);
    assert!(
        repaired.contains("rebuilt the lancedb indexes"),
        "{repaired}"
    );
    assert!(repaired.ends_with("The palace is sound.\n"), "{repaired}");
    ok(&home, &palace, &["verify"]);
}

#[test]
fn backup_makes_a_palace_that_verifies_and_refuses_an_existing_folder() {
    let dir = tempfile::tempdir().unwrap();
    let home = home_in(dir.path());
    let palace = dir.path().join("palace");
    mine_sample(&home, &palace);
    ok(&home, &palace, &["kg", "add", "Alice", "works_on", "Orion"]);
    let dest = dir.path().join("backup");
    let out = ok(&home, &palace, &["backup", dest.to_str().unwrap()]);
    assert!(out.contains("drawers, knowledge_graph"), "{out}");
    ok(&home, &dest, &["verify"]);
    let query = ["search", "how is the frontend built", "--json"];
    let hits = |p: &Path| -> Value {
        let v: Value = serde_json::from_str(&ok(&home, p, &query)).unwrap();
        v["results"].clone()
    };
    assert_eq!(hits(&palace), hits(&dest));
    let again = run(&home, &palace, &["backup", dest.to_str().unwrap()]);
    assert_eq!(again.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&again.stderr).contains("exists already"));
}
