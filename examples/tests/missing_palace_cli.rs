//! Every read command on a folder with no palace follows one rule: it says "No palace found
//! at <path>" with the hint to create one, exits 0, and creates nothing.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

/// The model the tests load (wake-up counts tokens with its tokenizer).
fn model_dir() -> std::path::PathBuf {
    std::env::var_os("MEMPALACE_MODEL_DIR")
        .map(Into::into)
        .unwrap_or_else(|| {
            dirs::home_dir()
                .expect("a home folder")
                .join(".cache/mempalace/models/all-MiniLM-L6-v2")
        })
}

fn run(palace: &Path, home: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mempalace"))
        .env("MEMPALACE_MODEL_DIR", model_dir())
        .env("HOME", home)
        .env("MEMPALACE_CONFIG_DIR", home.join(".mempalace"))
        .env_remove("MEMPALACE_KG_POSTGRES_URL")
        .env_remove("MEMPALACE_KG_POSTGRES_URL_FILE")
        .arg("--palace")
        .arg(palace)
        .args(args)
        .output()
        .unwrap()
}

/// The read commands that print text.
const READS: [&[&str]; 7] = [
    &["status"],
    &["repair-status"],
    &["search", "why did we switch providers"],
    &["wake-up"],
    &["compress"],
    &["kg", "query", "Alice"],
    &["kg", "timeline"],
];

#[test]
fn every_read_of_a_missing_palace_says_so_the_same_way_and_exits_0() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let typo = dir.path().join("no-such-palace");
    let expected = format!("No palace found at {}", typo.display());
    for args in READS {
        let out = run(&typo, &home, args);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{args:?} exited {:?}: {stdout} {}",
            out.status.code(),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(stdout.contains(&expected), "{args:?}: {stdout}");
        assert!(
            stdout.contains("Run: mempalace init <dir> && mempalace mine <dir>"),
            "{args:?}: {stdout}"
        );
        assert!(!typo.exists(), "{args:?} created the folder");
    }
    // With --json (and `kg stats`, which prints JSON), the status payload (MCP's answer for
    // a missing palace).
    for args in [
        &["kg", "stats"][..],
        &["status", "--json"],
        &["repair-status", "--json"],
        &["search", "anything", "--json"],
        &["compress", "--json"],
        &["kg", "query", "Alice", "--json"],
        &["kg", "timeline", "--json"],
    ] {
        let out = run(&typo, &home, args);
        assert!(out.status.success(), "{args:?}");
        let v: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{args:?}: {e}: {}", String::from_utf8_lossy(&out.stdout)));
        assert_eq!(v["error"], "No palace found", "{args:?}: {v}");
        assert_eq!(
            v["palace_path"],
            typo.display().to_string(),
            "{args:?}: {v}"
        );
    }
    assert!(!typo.exists());
}
