//! The CLI with its knowledge graph in PostgreSQL: two "hosts" (two palace folders sharing one
//! palace.json) see one graph; the URL is never recorded; contradictions are refused. Needs
//! the server in MEMPALACE_TEST_POSTGRES_URL (scripts/test.sh starts a throwaway one); without
//! it the test is SKIPPED with the reason.

use std::path::Path;
use std::process::{Command, Output};

use mempalace_conformance::live_service::postgres_url;
use serde_json::Value;

fn run(palace: &Path, url: Option<&str>, args: &[&str]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_mempalace"));
    command
        .arg("--palace")
        .arg(palace)
        .args(args)
        .env_remove("MEMPALACE_KG_POSTGRES_URL")
        .env_remove("MEMPALACE_KG_POSTGRES_URL_FILE");
    if let Some(url) = url {
        command.env("MEMPALACE_KG_POSTGRES_URL", url);
    }
    command.output().unwrap()
}

fn ok(palace: &Path, url: Option<&str>, args: &[&str]) -> String {
    let out = run(palace, url, args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn objects(json: &str) -> Vec<String> {
    let v: Value = serde_json::from_str(json).unwrap();
    v["facts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["object"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn hosts_sharing_a_palace_config_share_one_postgres_graph() {
    let Some(url) = postgres_url("hosts_sharing_a_palace_config_share_one_postgres_graph") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (host_a, host_b) = (dir.path().join("host_a"), dir.path().join("host_b"));

    // A read of a folder that does not exist (a typo) creates nothing.
    let typo = dir.path().join("typo");
    // (Every read of a missing palace says so, exits 0 and creates nothing.)
    let out = run(&typo, Some(&url), &["kg", "query", "Alice", "--json"]);
    assert!(out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("No palace found"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(!typo.exists());

    ok(
        &host_a,
        Some(&url),
        &["kg", "add", "Alice", "works_at", "Acme"],
    );
    // The first write made the folder; the next open records where its graph is.
    ok(&host_a, Some(&url), &["kg", "query", "Alice", "--json"]);
    let config = std::fs::read_to_string(host_a.join("palace.json")).unwrap();
    let recorded: Value = serde_json::from_str(&config).unwrap();
    assert_eq!(recorded["knowledge_graph"], "postgres", "{config}");
    let schema = recorded["kg_schema"].as_str().unwrap().to_string();
    assert!(schema.starts_with("mempalace_"), "{config}");
    assert!(
        !config.contains(&url) && !config.contains("postgres://"),
        "the URL is never recorded: {config}"
    );
    assert!(
        !host_a.join("knowledge_graph.sqlite3").exists(),
        "no SQLite graph beside it"
    );

    // Host B: its own folder (its drawers here are its own LanceDB), the same palace.json;
    // its first write creates its side of the palace.
    std::fs::create_dir_all(&host_b).unwrap();
    std::fs::write(host_b.join("palace.json"), &config).unwrap();
    ok(&host_b, Some(&url), &["kg", "add", "Alice", "knows", "Bob"]);
    for host in [&host_a, &host_b] {
        let seen = ok(host, Some(&url), &["kg", "query", "Alice", "--json"]);
        let mut got = objects(&seen);
        got.sort();
        assert_eq!(got, vec!["Acme", "Bob"], "{}", host.display());
    }

    // The URL from a file (kept out of argv and the environment) opens the same graph.
    let secret = dir.path().join("pg-url");
    std::fs::write(&secret, format!("{url}\n")).unwrap();
    let mut from_file = Command::new(env!("CARGO_BIN_EXE_mempalace"));
    from_file
        .arg("--palace")
        .arg(&host_a)
        .args(["kg", "query", "Alice", "--json"])
        .env_remove("MEMPALACE_KG_POSTGRES_URL")
        .env("MEMPALACE_KG_POSTGRES_URL_FILE", &secret);
    let out = from_file.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut got = objects(&String::from_utf8(out.stdout).unwrap());
    got.sort();
    assert_eq!(got, vec!["Acme", "Bob"]);

    // Without the URL the palace says where its graph is instead of opening an empty one.
    let out = run(&host_a, None, &["kg", "query", "Alice", "--json"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("MEMPALACE_KG_POSTGRES_URL") && err.contains(&schema),
        "{err}"
    );

    // A palace whose graph is in SQLite refuses a PostgreSQL URL.
    let local = dir.path().join("local");
    ok(&local, None, &["kg", "add", "Carol", "uses", "Vim"]);
    let out = run(&local, Some(&url), &["kg", "query", "Carol", "--json"]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("keeps its knowledge graph in SQLite"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
