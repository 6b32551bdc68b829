//! `mempalace sync`: drawers of files deleted since they were mined are reported, and deleted
//! only with --apply; a folder with no palace is reported, not created.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

fn cli(palace: &Path, args: &[&str]) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_mempalace"))
        .arg("--palace")
        .arg(palace)
        .args(args)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr),
    )
}

fn json(palace: &Path, args: &[&str]) -> Value {
    let (ok, text) = cli(palace, args);
    assert!(ok, "{args:?}: {text}");
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

#[test]
fn sync_reports_drawers_of_deleted_files_and_deletes_them_only_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let palace = dir.path().join("palace");
    let (ok, text) = cli(&palace, &["sync"]);
    assert!(ok && text.contains("No palace found"), "{text}");
    assert!(!palace.exists());

    let project = dir.path().join("proj");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(
        project.join("keep.md"),
        "# Keep\n\nThe deploy pipeline runs on every merge to main, builds the image once and promotes it through staging.\n",
    )
    .unwrap();
    std::fs::write(
        project.join("gone.md"),
        "# Gone\n\nThe old billing cron ran at midnight UTC and retried failed invoices three times before paging.\n",
    )
    .unwrap();
    json(
        &palace,
        &["mine", project.to_str().unwrap(), "--json", "--quiet"],
    );
    std::fs::remove_file(project.join("gone.md")).unwrap();

    let dry = json(&palace, &["sync", project.to_str().unwrap(), "--json"]);
    assert_eq!(dry["dry_run"], true);
    assert_eq!(dry["stale_drawers"], 1, "{dry}");
    assert!(
        dry["stale_sources"][0]["source_file"]
            .as_str()
            .unwrap()
            .ends_with("gone.md")
    );
    let (ok, text) = cli(&palace, &["sync"]);
    assert!(ok && text.contains("Re-run with --apply"), "{text}");
    assert_eq!(json(&palace, &["status", "--json"])["total_drawers"], 2);

    let (ok, text) = cli(&palace, &["sync", "--apply"]);
    assert!(
        !ok && text.contains("name the project folder"),
        "an unscoped --apply is refused: {text}"
    );
    let applied = json(
        &palace,
        &["sync", project.to_str().unwrap(), "--apply", "--json"],
    );
    assert_eq!(applied["deleted"], 1, "{applied}");
    assert_eq!(json(&palace, &["status", "--json"])["total_drawers"], 1);
    let again = json(&palace, &["sync", "--json"]);
    assert_eq!(again["stale_drawers"], 0);
}

#[test]
fn sync_of_a_project_also_prunes_files_its_gitignore_now_excludes() {
    let dir = tempfile::tempdir().unwrap();
    let palace = dir.path().join("palace");
    let project = dir.path().join("proj");
    std::fs::create_dir_all(project.join("notes")).unwrap();
    std::fs::write(
        project.join("keep.md"),
        "# Keep\n\nThe deploy pipeline runs on every merge to main, builds the image once and promotes it through staging.\n",
    )
    .unwrap();
    std::fs::write(
        project.join("notes/scratch.md"),
        "# Scratch\n\nPersonal scratch notes about the billing cron that should never have been shared with the team.\n",
    )
    .unwrap();
    json(
        &palace,
        &["mine", project.to_str().unwrap(), "--json", "--quiet"],
    );
    let mined = json(&palace, &["status", "--json"])["total_drawers"]
        .as_u64()
        .unwrap();
    std::fs::write(project.join(".gitignore"), "notes/\n").unwrap();

    // Without the project folder only missing files count; with it, ignored ones too.
    assert_eq!(json(&palace, &["sync", "--json"])["stale_drawers"], 0);
    let dry = json(&palace, &["sync", project.to_str().unwrap(), "--json"]);
    assert_eq!(dry["stale_sources"].as_array().unwrap().len(), 1, "{dry}");
    assert_eq!(dry["stale_sources"][0]["reason"], "ignored", "{dry}");
    assert!(
        dry["stale_sources"][0]["source_file"]
            .as_str()
            .unwrap()
            .ends_with("notes/scratch.md")
    );
    let stale = dry["stale_drawers"].as_u64().unwrap();
    assert!(stale > 0);
    let applied = json(
        &palace,
        &["sync", project.to_str().unwrap(), "--apply", "--json"],
    );
    assert_eq!(applied["deleted"], stale, "{applied}");
    assert_eq!(
        json(&palace, &["status", "--json"])["total_drawers"],
        mined - stale
    );
    // The kept file is untouched, and re-mining files nothing from the ignored folder.
    json(
        &palace,
        &["mine", project.to_str().unwrap(), "--json", "--quiet"],
    );
    assert_eq!(
        json(&palace, &["status", "--json"])["total_drawers"],
        mined - stale
    );
}
