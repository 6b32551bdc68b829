//! Crash points: each long write path (`mine` of a project, `mine --mode convos`, `migrate`
//! from 3.11, `import` of drawer and graph batches, `repair`'s index rebuild and the settle
//! that ends a mine) is run uninterrupted once, then killed with SIGKILL at evenly spread
//! instants of its run. After each kill the palace must open, hold everything acknowledged
//! before the command started, hold no drawer twice, and re-running the command must
//! complete the job: the same drawers and facts as the uninterrupted run, and a palace that
//! verifies (indexes answering as a rebuild would).
//!
//! CI runs `MEMPALACE_CRASH_POINTS` (default 4) instants per path; the full sweep is
//! `MEMPALACE_CRASH_POINTS=40 cargo nextest run -p mempalace-cli --test crash_points`.

#[path = "support/palace_runs.rs"]
mod palace_runs;

use std::path::Path;
use std::time::Instant;

use mempalace_conformance::folders::copy_dir;
use palace_runs::{Env, args, holding, write_project};
use serde_json::Value;

/// Kill instants per write path.
fn points() -> usize {
    std::env::var("MEMPALACE_CRASH_POINTS")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(4)
}

/// Fills a fresh palace with what is acknowledged before a command runs.
type Setup = Box<dyn Fn(&Env, &Path)>;

/// One long write path: how to prepare a palace, the command, and anything to do before it.
struct WritePath {
    name: &'static str,
    /// Fills a fresh palace with what is acknowledged before the command runs.
    setup: Setup,
    command: Vec<String>,
}

/// Runs `path` uninterrupted, then killed at `points()` instants; returns (tried, survived,
/// killed while still running).
fn sweep(env: &Env, path: &WritePath) -> (usize, usize, usize) {
    let reference = env.root.join(format!("{}-reference", path.name));
    (path.setup)(env, &reference);
    let base = holding(env, &reference);
    let started = Instant::now();
    env.ok(&reference, &path.command);
    let duration = started.elapsed();
    let expected = holding(env, &reference);
    let n = points();
    let mut survived = 0;
    let mut mid_run = 0;
    for k in 1..=n {
        let palace = env.root.join(format!("{}-{k}", path.name));
        (path.setup)(env, &palace);
        let mut child = env.command(&palace, &path.command).spawn().unwrap();
        let at = duration.mul_f64(k as f64 / (n + 1) as f64);
        std::thread::sleep(at);
        let killed = child.try_wait().unwrap().is_none();
        mid_run += usize::from(killed);
        child.kill().ok(); // SIGKILL
        child.wait().unwrap();
        let context = format!(
            "{} killed at {:?} of {:?} (still running: {killed})",
            path.name, at, duration
        );
        // It opens, keeps what was acknowledged, holds nothing twice.
        env.ok(&palace, &args(&["status", "--json"]));
        let after_kill = holding(env, &palace);
        assert!(
            after_kill.drawers.is_superset(&base.drawers),
            "{context}: a drawer acknowledged before the command is gone"
        );
        assert!(
            after_kill.facts.is_superset(&base.facts),
            "{context}: a fact acknowledged before the command is gone"
        );
        // Re-running finishes the job, as the uninterrupted run did.
        env.ok(&palace, &path.command);
        assert_eq!(holding(env, &palace), expected, "{context}: re-run");
        let verified: Value =
            serde_json::from_str(&env.ok(&palace, &args(&["verify", "--json"]))).unwrap();
        assert_eq!(verified["sound"], true, "{context}: {verified}");
        survived += 1;
        std::fs::remove_dir_all(&palace).ok();
    }
    eprintln!(
        "crash points: {}: {n} tried ({mid_run} while it ran), {survived} survived (run {:?})",
        path.name, duration
    );
    assert!(
        mid_run > 0,
        "{}: every kill came after the command had finished",
        path.name
    );
    (n, survived, mid_run)
}

#[test]
fn every_long_write_path_survives_sigkill_and_completes_when_run_again() {
    let dir = tempfile::tempdir().unwrap();
    let env = Env::new(dir.path());
    let project = dir.path().join("project");
    write_project(&project, 30);
    let base_project = dir.path().join("base-project");
    write_project(&base_project, 3);
    // The conversation fixtures that parse whole (the broken ones exit 1 by design).
    let conversations = dir.path().join("conversations");
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/conversations");
    for entry in std::fs::read_dir(&fixtures).unwrap() {
        let entry = entry.unwrap();
        if entry.file_type().unwrap().is_dir() && entry.file_name() != "broken" {
            copy_dir(&entry.path(), &conversations.join(entry.file_name()));
        }
    }
    let p = |p: &Path| p.to_str().unwrap().to_string();

    // What every palace holds before its command: a mined wing and a fact.
    let base = {
        let base_project = p(&base_project);
        move |env: &Env, palace: &Path| {
            env.ok(
                palace,
                &args(&["mine", &base_project, "--wing", "base", "--quiet"]),
            );
            env.ok(
                palace,
                &args(&[
                    "kg",
                    "add",
                    "Alice",
                    "works_on",
                    "Orion",
                    "--valid-from",
                    "2025-01-01",
                ]),
            );
        }
    };

    // An export of a mined palace with facts: the import path's input.
    let source = dir.path().join("export-source");
    base(&env, &source);
    env.ok(
        &source,
        &args(&["mine", &p(&project), "--wing", "bulk", "--quiet"]),
    );
    for i in 0..40 {
        env.ok(
            &source,
            &args(&[
                "kg",
                "add",
                &format!("Person{i}"),
                "knows",
                &format!("Person{}", (i + 1) % 40),
            ]),
        );
    }
    let export = dir.path().join("source.jsonl");
    env.ok(&source, &args(&["export", &p(&export)]));

    // The 3.11 palace the migrate path reads.
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/mempalace-3.11");
    let python_palace = dir.path().join("python_palace");
    std::fs::create_dir_all(&python_palace).unwrap();
    std::fs::copy(
        fixture.join("palace/chroma.sqlite3"),
        python_palace.join("chroma.sqlite3"),
    )
    .unwrap();

    let paths = vec![
        WritePath {
            name: "mine",
            setup: Box::new(base.clone()),
            command: args(&["mine", &p(&project), "--wing", "bulk", "--quiet"]),
        },
        WritePath {
            name: "mine-convos",
            setup: Box::new(base.clone()),
            command: args(&["mine", &p(&conversations), "--mode", "convos", "--quiet"]),
        },
        WritePath {
            name: "migrate",
            setup: Box::new(base.clone()),
            command: args(&["migrate", &p(&python_palace), "--quiet"]),
        },
        WritePath {
            name: "import",
            setup: Box::new(base.clone()),
            command: args(&["import", &p(&export)]),
        },
        WritePath {
            name: "repair",
            setup: Box::new({
                let base = base.clone();
                let project = p(&project);
                move |env: &Env, palace: &Path| {
                    base(env, palace);
                    env.ok(
                        palace,
                        &args(&["mine", &project, "--wing", "bulk", "--quiet"]),
                    );
                }
            }),
            command: args(&["repair"]),
        },
    ];
    let mut total = (0, 0, 0);
    for path in &paths {
        let (tried, survived, mid_run) = sweep(&env, path);
        total.0 += tried;
        total.1 += survived;
        total.2 += mid_run;
    }
    eprintln!(
        "crash points: {} tried ({} while the command ran), {} survived",
        total.0, total.2, total.1
    );
    assert_eq!(total.0, total.1);
}
