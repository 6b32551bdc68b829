//! `mempalace repair-status` on a palace: the store's rows and indexes, the graph's counts,
//! and a verdict; read-only.

use std::process::Command;

use serde_json::Value;

#[test]
fn repair_status_reports_an_empty_store_and_the_graph_without_changing_anything() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let palace = dir.path().join("palace");
    let run = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_mempalace"))
            .env("HOME", &home)
            .env_remove("MEMPALACE_PALACE_PATH")
            .env_remove("MEMPALACE_CONFIG_DIR")
            .arg("--palace")
            .arg(&palace)
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    // A fact creates the palace; no drawer is filed.
    run(&["kg", "add", "Alice", "works_on", "Orion"]);
    let report: Value = serde_json::from_str(&run(&["repair-status", "--json"])).unwrap();
    assert_eq!(report["status"], "empty", "{report}");
    assert_eq!(report["store"]["backend"], "lancedb");
    assert_eq!(report["store"]["rows"], 0);
    assert_eq!(report["knowledge_graph"]["triples"], 1);
    assert_eq!(report["findings"], Value::Array(vec![]));
    let before = std::fs::read_dir(&palace).unwrap().count();
    let text = run(&["repair-status"]);
    assert!(text.contains("MemPalace Repair -- Status"), "{text}");
    assert!(text.contains("status:         EMPTY"), "{text}");
    assert!(text.contains("facts:          1 (1 current)"), "{text}");
    assert_eq!(std::fs::read_dir(&palace).unwrap().count(), before);
}
