//! The offline example agents run to the end on a clean machine: no model, no server.

use std::process::Command;

fn run(binary: &str) -> String {
    let out = Command::new(binary).output().unwrap();
    assert!(
        out.status.success(),
        "{binary}: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn offline_memory_runs_the_whole_lifecycle() {
    let out = run(env!("CARGO_BIN_EXE_offline_memory"));
    assert!(out.contains("offline agent: ok"), "{out}");
    assert!(out.contains("recalled: Deploys run every Tuesday"), "{out}");
}

#[test]
fn a_custom_store_serves_a_palace() {
    let out = run(env!("CARGO_BIN_EXE_custom_store"));
    assert!(
        out.contains("\"upsert\": 1") && out.contains("\"query\""),
        "{out}"
    );
}
