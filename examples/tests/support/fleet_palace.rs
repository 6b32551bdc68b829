//! A fleet palace for tests: host folders that share one `palace.json`, hence one Qdrant
//! collection and one PostgreSQL schema (included with `#[path]`).

#![allow(dead_code)] // each includer uses a part

use std::path::{Path, PathBuf};

/// The folders `host0`, `host1`, … of `count` hosts under `dir`.
pub fn host_folders(dir: &Path, count: usize) -> Vec<PathBuf> {
    (0..count).map(|h| dir.join(format!("host{h}"))).collect()
}

/// The stack arguments that make a new fleet palace in `collection`.
pub fn create_args(qdrant: &str, pg: &str, collection: &str) -> Vec<String> {
    [
        "--backend",
        "qdrant",
        "--qdrant-url",
        qdrant,
        "--collection",
        collection,
        "--kg-postgres-url",
        pg,
    ]
    .map(str::to_string)
    .to_vec()
}

/// The stack arguments every server of the fleet runs with (the rest is in palace.json).
pub fn serve_args(qdrant: &str, pg: &str) -> Vec<String> {
    ["--qdrant-url", qdrant, "--kg-postgres-url", pg]
        .map(str::to_string)
        .to_vec()
}

/// Makes the palace on the first host (`create` stack arguments, none for the embedded
/// default; the first write, a fact, creates the stores and the next open records
/// palace.json) and gives every other host its palace.json.
pub fn make_fleet_palace(hosts: &[PathBuf], create: &[String]) {
    for args in [&["kg", "add", "Fleet", "starts", "today"][..], &["status"]] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_mempalace"))
            .arg("--palace")
            .arg(&hosts[0])
            .args(create)
            .args(args)
            .output()
            .expect("run mempalace");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let config = hosts[0].join("palace.json");
    for host in &hosts[1..] {
        std::fs::create_dir_all(host).unwrap();
        std::fs::copy(&config, host.join("palace.json")).unwrap();
    }
}
