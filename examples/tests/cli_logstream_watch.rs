//! `mempalace logstream watch` keeps its cursor so that a restarted watcher never skips an
//! event: a first run starts at the tip, a watcher that started on an empty log replays from
//! the start, a corrupt state file replays rather than skips, and `--follow` prints one JSON
//! line per wake.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

struct Shell {
    _dir: tempfile::TempDir,
    home: PathBuf,
    palace: PathBuf,
}

impl Shell {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        std::fs::create_dir_all(&home).unwrap();
        let palace = dir.path().join("palace");
        Shell {
            _dir: dir,
            home,
            palace,
        }
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_mempalace"));
        c.env("HOME", &self.home)
            .env_remove("MEMPALACE_PALACE_PATH")
            .env_remove("MEMPALACE_CONFIG_DIR")
            .arg("--palace")
            .arg(&self.palace)
            .args(args);
        c
    }

    fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().unwrap()
    }

    /// Appends a task for `to` from `from`; answers its id.
    fn send(&self, from: &str, to: &str, body: &str) -> String {
        let out = self.run(&[
            "logstream",
            "append",
            "--type",
            "task.request",
            "--stream",
            "project/x",
            "--room",
            "delegation",
            "--from-agent",
            from,
            "--to-agent",
            to,
            "--body",
            body,
            "--json",
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        v["id"].as_str().unwrap().to_string()
    }

    /// One watch as `agent` with a short idle limit: (exit code, JSON answer, stderr).
    fn watch(&self, agent: &str) -> (i32, Value, String) {
        let out = self.run(&[
            "logstream",
            "watch",
            "--agent",
            agent,
            "--idle-exit-ms",
            "400",
            "--json",
        ]);
        let answer = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        (
            out.status.code().unwrap(),
            answer,
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    fn state_file(&self, agent_file: &str) -> PathBuf {
        self.home.join(".mempalace/watch").join(agent_file)
    }
}

fn cursor(path: &Path) -> Value {
    let state: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    state["cursor"].clone()
}

#[test]
fn a_restarted_watcher_resumes_where_it_stopped_and_never_skips() {
    let sh = Shell::new();
    let me = "mac:claude:x";
    let state = sh.state_file("mac_claude_x.json");
    // First run on an empty log: idle (exit 2), and a state file that records "no cursor yet".
    let (code, answer, _) = sh.watch(me);
    assert_eq!(code, 2, "{answer}");
    assert_eq!(answer["timed_out"], true);
    assert_eq!(cursor(&state), Value::Null);
    // Mail arrives while the watcher is stopped: the restart replays from the start, not the tip.
    let mine = sh.send(me, "*", "my own broadcast");
    let mail = sh.send("pc:codex:x", me, "please review");
    let (code, answer, _) = sh.watch(me);
    assert_eq!(code, 0, "{answer}");
    let ids: Vec<&str> = answer["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, [mail.as_str()], "its own broadcast never wakes it");
    assert_ne!(mine, mail);
    assert_eq!(cursor(&state), Value::String(mail.clone()));
    // Nothing new since: idle again, the cursor kept.
    assert_eq!(sh.watch(me).0, 2);
    assert_eq!(cursor(&state), Value::String(mail.clone()));
    // A corrupt state file replays rather than skips.
    std::fs::write(&state, "{\"cursor\": ").unwrap();
    let (code, answer, stderr) = sh.watch(me);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(answer["events"][0]["id"], mail.as_str());
    assert!(
        stderr.contains("is unreadable; replaying from the start"),
        "{stderr}"
    );
    // A new agent's first run starts at the tip: the old mail is not replayed to it.
    let (code, _, stderr) = sh.watch("pc:codex:x");
    assert_eq!(code, 2);
    assert!(stderr.contains("Starting at the tip"), "{stderr}");
    // An explicit unknown cursor is refused and leaves no state behind.
    let out = sh.run(&[
        "logstream",
        "watch",
        "--agent",
        "new:agent:x",
        "--since-event-id",
        "evt_nope",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let err: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        err["error"]
            .as_str()
            .unwrap()
            .contains("Nothing was written to the state file")
    );
    assert!(!sh.state_file("new_agent_x.json").exists());
}

#[test]
fn follow_prints_one_json_line_per_wake() {
    let sh = Shell::new();
    let me = "mac:claude:x";
    sh.send("pc:codex:x", "someone-else", "not for me");
    // From the start (the first event is not for it), so no race with the sends below; an
    // idle limit so that a failure ends instead of hanging.
    let mut child = sh
        .command(&[
            "logstream",
            "watch",
            "--agent",
            me,
            "--follow",
            "--json",
            "--state-file",
            "",
            "--from-start",
            "--poll-timeout-ms",
            "200",
            "--idle-exit-ms",
            "20000",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            if tx.send(line.unwrap()).is_err() {
                break;
            }
        }
    });
    let first = sh.send("pc:codex:x", me, "one");
    let second = sh.send("pc:codex:x", "*", "two");
    let mut seen = Vec::new();
    while seen.len() < 2 {
        let line = rx
            .recv_timeout(std::time::Duration::from_secs(30))
            .expect("a wake within 30 s");
        // Each wake is one complete JSON document on one line.
        let wake: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(wake["timed_out"], false);
        for e in wake["events"].as_array().unwrap() {
            seen.push(e["id"].as_str().unwrap().to_string());
        }
    }
    child.kill().unwrap();
    let _ = child.wait();
    assert_eq!(seen, [first, second]);
}
