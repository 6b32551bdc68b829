//! Hostile projects and palaces: a `mempalace.yaml` that is a link or a FIFO, drawers an agent
//! filed against a mined file, terminal escapes in drawer text, and a read-only palace.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mempalace::core::Cancellation;
use mempalace::ingest::NoProgress;
use mempalace::ingest::project_mine::{MineOptions, mine_project};
use mempalace_conformance::HashingEmbedder;
use mempalace_core::palace::NewDrawer;
use mempalace_core::room_routing::RoomSpec;
use mempalace_core::{AddedBy, DrawerFilter, MemoryStore, Page, Palace};
use mempalace_kg_sqlite::SqliteKnowledgeGraph;

/// Runs the CLI with a deadline: a hang is a test failure, not a stuck test run.
fn run(args: &[&std::ffi::OsStr], envs: &[(&str, &Path)], prefix: &[&str]) -> Output {
    let (program, leading): (&str, Vec<&str>) = match prefix.split_first() {
        Some((p, rest)) => (p, rest.to_vec()),
        None => (env!("CARGO_BIN_EXE_mempalace"), Vec::new()),
    };
    let mut cmd = Command::new(program);
    cmd.args(&leading);
    if !prefix.is_empty() {
        cmd.arg(env!("CARGO_BIN_EXE_mempalace"));
    }
    cmd.args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in envs {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            child.kill().unwrap();
            panic!("mempalace {args:?} hung");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

fn os(args: &[&str]) -> Vec<std::ffi::OsString> {
    args.iter().map(|a| a.into()).collect()
}

fn cli(palace: &Path, args: &[&str]) -> Output {
    let mut all = vec![std::ffi::OsString::from("--palace"), palace.into()];
    all.extend(os(args));
    let refs: Vec<&std::ffi::OsStr> = all.iter().map(|a| a.as_os_str()).collect();
    run(&refs, &[], &[])
}

fn ok(out: Output, what: &str) -> String {
    assert!(
        out.status.success(),
        "{what} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn init_never_writes_through_a_config_link() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project");
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(project.join("evil\nname: injected")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(project.join("notes.md"), "some notes").unwrap();
    let target = outside.join("created-by-init");
    std::os::unix::fs::symlink("../outside/created-by-init", project.join("mempalace.yaml"))
        .unwrap();
    let palace = dir.path().join("palace");
    let out = cli(&palace, &["init", project.to_str().unwrap()]);
    assert!(!out.status.success(), "init must refuse a config link");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("symbolic link"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!target.exists(), "nothing is created outside the project");
    let out = cli(&palace, &["mine", project.to_str().unwrap(), "--quiet"]);
    assert!(!out.status.success(), "mine must refuse a config link too");
    assert!(!target.exists());

    // A FIFO where the config should be: a clear error at once, not a hang.
    std::fs::remove_file(project.join("mempalace.yaml")).unwrap();
    let fifo = std::ffi::CString::new(project.join("mempalace.yaml").to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
    for args in [
        vec!["init", project.to_str().unwrap()],
        vec!["mine", project.to_str().unwrap(), "--quiet"],
    ] {
        let out = cli(&palace, &args);
        assert!(!out.status.success(), "{args:?} must refuse a FIFO config");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("not a regular file"),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    // A folder name with a newline gets no room of its own; the YAML stays well formed.
    std::fs::remove_file(project.join("mempalace.yaml")).unwrap();
    std::fs::create_dir_all(project.join("x".repeat(200))).unwrap();
    ok(cli(&palace, &["init", project.to_str().unwrap()]), "init");
    let yaml = std::fs::read_to_string(project.join("mempalace.yaml")).unwrap();
    let config: serde_json::Value = serde_yaml_ng::from_str(&yaml).unwrap();
    let rooms: Vec<&str> = config["rooms"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(rooms, vec!["general"], "{yaml}");
    assert!(!yaml.contains("injected"), "{yaml}");
}

fn test_palace(dir: &Path) -> Arc<Palace> {
    let path = dir.join("palace");
    Arc::new(
        Palace::new(
            &path,
            Arc::new(HashingEmbedder::new(64)),
            Arc::new(MemoryStore::new(64)),
            Arc::new(SqliteKnowledgeGraph::in_palace(&path)),
        )
        .unwrap(),
    )
}

fn quiet_options() -> MineOptions {
    MineOptions::new(
        "wing_p",
        vec![RoomSpec {
            name: "general".into(),
            keywords: Vec::new(),
            description: None,
        }],
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn remining_never_prunes_what_an_agent_filed_against_the_same_file() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project");
    std::fs::create_dir_all(&project).unwrap();
    let file = project.join("design.md");
    let long: String = (0..40)
        .map(|i| {
            format!("Paragraph {i} of the design: the cache is keyed by tenant and region.\n\n")
        })
        .collect();
    std::fs::write(&file, &long).unwrap();
    let palace = test_palace(dir.path());
    let cancel = Cancellation::new();
    mine_project(
        Arc::clone(&palace),
        &project,
        quiet_options(),
        &NoProgress,
        &cancel,
    )
    .await
    .unwrap();
    let source = file.canonicalize().unwrap().to_string_lossy().into_owned();
    let mut note = NewDrawer::new(
        "wing_p",
        "general",
        "Agent note: we agreed the cache must never hold personal data.",
    );
    note.source_file = Some(source.clone());
    let note_id = palace
        .add_drawer(note)
        .await
        .unwrap()
        .drawer_id()
        .unwrap()
        .to_string();

    // The file shrinks to one chunk: the miner prunes its own stale chunks only.
    std::fs::write(
        &file,
        "The design was replaced by a single note: the cache is keyed by tenant.",
    )
    .unwrap();
    let report = mine_project(
        Arc::clone(&palace),
        &project,
        quiet_options(),
        &NoProgress,
        &cancel,
    )
    .await
    .unwrap();
    assert!(report.drawers_removed > 0, "{report:?}");
    let left = palace
        .store()
        .list(
            &DrawerFilter::wing("wing_p").with_source_file(&source),
            Page::first(100),
        )
        .await
        .unwrap();
    assert!(
        left.iter().any(|d| d.id == note_id),
        "the agent's drawer survives re-mining"
    );
    let mined: Vec<_> = left
        .iter()
        .filter(|d| d.metadata.added_by == AddedBy::Mine)
        .collect();
    assert_eq!(
        mined.len(),
        1,
        "exactly the new chunk remains of the miner's"
    );
}

/// The user to run as so that the palace cannot be written: nobody when we are root (root
/// writes anything), else ourselves with the palace's write bits removed.
fn read_only_runner(palace: &Path) -> Vec<&'static str> {
    if unsafe { libc::geteuid() } == 0 {
        vec![
            "setpriv",
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "--",
        ]
    } else {
        chmod_tree(palace, false);
        Vec::new()
    }
}

fn chmod_tree(path: &Path, writable: bool) {
    use std::os::unix::fs::PermissionsExt;
    let meta = std::fs::metadata(path).unwrap();
    let mode = meta.permissions().mode();
    let mode = if writable {
        mode | 0o200
    } else {
        mode & !0o222
    };
    if meta.is_dir() {
        if writable {
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
        }
        for e in std::fs::read_dir(path).unwrap() {
            chmod_tree(&e.unwrap().path(), writable);
        }
    }
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// Opens every folder on the way to `path` to others (read and traverse only).
fn let_others_read(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    for p in path.ancestors() {
        if let Ok(meta) = std::fs::metadata(p) {
            let mode = meta.permissions().mode() | 0o005;
            let _ = std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode));
        }
    }
}

fn model_dir() -> PathBuf {
    mempalace_embed_candle::model_dir::resolve(None)
}

#[test]
fn a_read_only_palace_can_be_read_and_escapes_stay_out_of_the_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let project = root.join("project");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(
        project.join("incident.md"),
        "Incident review: the lighthouse beacon failed at midnight.\u{1b}]0;pwned\u{7}\u{1b}[2J The keeper restarted it by hand.",
    )
    .unwrap();
    let palace = root.join("palace");
    ok(cli(&palace, &["init", project.to_str().unwrap()]), "init");
    ok(
        cli(&palace, &["mine", project.to_str().unwrap(), "--quiet"]),
        "mine",
    );
    ok(
        cli(&palace, &["kg", "add", "Beacon", "failed_on", "midnight"]),
        "kg add",
    );
    // Human output shows the escapes, never sends them.
    let shown = ok(
        cli(&palace, &["search", "lighthouse beacon failure"]),
        "search",
    );
    assert!(shown.contains("lighthouse beacon"), "{shown}");
    assert!(
        !shown.contains('\u{1b}') && !shown.contains('\u{7}'),
        "{shown:?}"
    );
    assert!(shown.contains("\\x1b]0;pwned"), "{shown}");
    // JSON output stays exact.
    let exact = ok(
        cli(&palace, &["search", "lighthouse beacon failure", "--json"]),
        "search --json",
    );
    let exact: serde_json::Value = serde_json::from_str(&exact).unwrap();
    assert!(
        exact["results"][0]["text"]
            .as_str()
            .unwrap()
            .contains("\u{1b}[2J"),
        "{exact}"
    );

    // Copy the model where the other user can read it, drop palace.json (older palaces have
    // none), then make the palace read-only.
    let models = root.join("model");
    std::fs::create_dir_all(&models).unwrap();
    for f in ["config.json", "tokenizer.json", "model.safetensors"] {
        std::fs::copy(model_dir().join(f), models.join(f)).unwrap();
    }
    std::fs::remove_file(palace.join("palace.json")).unwrap();
    let_others_read(&models.join("config.json"));
    for f in ["tokenizer.json", "model.safetensors"] {
        let_others_read(&models.join(f));
    }
    chmod_tree(&palace, true);
    for e in walk(&palace) {
        let_others_read(&e);
    }
    let runner = read_only_runner(&palace);
    let read = |args: &[&str]| {
        let mut all = os(&[
            "--palace",
            palace.to_str().unwrap(),
            "--model-dir",
            models.to_str().unwrap(),
        ]);
        all.extend(os(args));
        let refs: Vec<&std::ffi::OsStr> = all.iter().map(|a| a.as_os_str()).collect();
        let out = run(&refs, &[("HOME", root)], &runner);
        ok(out, &format!("read-only {args:?}"))
    };
    let status: serde_json::Value = serde_json::from_str(&read(&["status", "--json"])).unwrap();
    assert_eq!(status["total_drawers"], 1, "{status}");
    let facts: serde_json::Value =
        serde_json::from_str(&read(&["kg", "query", "Beacon", "--json"])).unwrap();
    assert_eq!(facts["count"], 1, "{facts}");
    let hits: serde_json::Value =
        serde_json::from_str(&read(&["search", "beacon", "--json"])).unwrap();
    assert_eq!(hits["results"].as_array().unwrap().len(), 1, "{hits}");
    // A write is refused with an error, not a crash, and changes nothing.
    let mut all = os(&["--palace", palace.to_str().unwrap()]);
    all.extend(os(&["kg", "add", "A", "b", "C"]));
    let refs: Vec<&std::ffi::OsStr> = all.iter().map(|a| a.as_os_str()).collect();
    let out = run(&refs, &[("HOME", root)], &runner);
    assert!(!out.status.success());
    chmod_tree(&palace, true);
}

fn walk(path: &Path) -> Vec<PathBuf> {
    let mut out = vec![path.to_path_buf()];
    if path.is_dir() {
        for e in std::fs::read_dir(path).unwrap() {
            out.extend(walk(&e.unwrap().path()));
        }
    }
    out
}
