//! `mempalace hook run` driven as Claude Code and Codex drive it: the real binary, the
//! harness's JSON on stdin, transcripts in the harness's own shapes (the fixtures' first lines
//! are the ones MemPalace 3.11's parsers were checked to accept), growing as a session goes.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

/// The model the tests' processes load (from the real home: theirs is a temporary one).
fn model_dir() -> std::path::PathBuf {
    mempalace_embed_candle::model_dir::resolve(None)
}

/// A user's machine: a home with `~/.mempalace` (MemPalace is set up) and the palace in it.
struct Machine {
    _dir: tempfile::TempDir,
    home: PathBuf,
    palace: PathBuf,
}

impl Machine {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        std::fs::create_dir_all(home.join(".mempalace")).unwrap();
        let palace = home.join(".mempalace").join("palace");
        Machine {
            _dir: dir,
            home,
            palace,
        }
    }

    fn command(&self) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_mempalace"));
        c.env("HOME", &self.home)
            .env("MEMPALACE_MODEL_DIR", model_dir())
            .env_remove("MEMPALACE_CONFIG_DIR")
            .env_remove("MEMPALACE_PALACE_PATH")
            .env_remove("MEMPALACE_HOOKS_AUTO_SAVE")
            .env_remove("MEMPAL_DIR")
            .env("MEMPALACE_PALACE_PATH", &self.palace);
        c
    }

    /// Runs a hook with `stdin`; asserts it exits 0 and printed one JSON object.
    fn hook(&self, hook: &str, harness: &str, stdin: &[u8]) -> Value {
        let mut child = self
            .command()
            .args(["hook", "run", "--hook", hook, "--harness", harness])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // A hook may stop reading early (an oversized payload): a closed pipe is fine.
        let _ = child.stdin.take().unwrap().write_all(stdin);
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success(),
            "{hook}: exit {:?}: {stderr}",
            out.status
        );
        let text = String::from_utf8(out.stdout).unwrap();
        let v: Value =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{hook}: {e}: {text:?}"));
        assert!(v.is_object(), "{text}");
        assert!(text.ends_with('\n'));
        v
    }

    fn cli(&self, args: &[&str]) -> Value {
        let out = self.command().args(args).output().unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    }

    /// A Claude Code session transcript where Claude Code keeps it, begun with the fixture.
    fn claude_transcript(&self) -> PathBuf {
        let dir = self.home.join(".claude/projects/-home-me-dev-my-proj");
        std::fs::create_dir_all(&dir).unwrap();
        let transcript = dir.join(format!("{SESSION}.jsonl"));
        std::fs::write(&transcript, fixture("claude_min.jsonl")).unwrap();
        transcript
    }

    /// Drawers per wing (empty when there is no palace).
    fn wing_counts(&self) -> serde_json::Map<String, Value> {
        let status = self.cli(&["status", "--json"]);
        status["wings"].as_object().cloned().unwrap_or_default()
    }
}

const SESSION: &str = "0b1c2d3e-1111-4222-8333-944455566677";

/// Claude Code's records for exchange `n`: the user's question, a tool call, its result and
/// the answer (the shape of the fixture's lines).
fn claude_exchange(n: usize) -> String {
    let base = json!({
        "isSidechain": false, "userType": "external", "cwd": "/home/me/dev/my-proj",
        "sessionId": SESSION, "version": "1.0.80", "gitBranch": "main",
    });
    let rec = |extra: Value| {
        let mut r = base.clone();
        for (k, v) in extra.as_object().unwrap() {
            r[k] = v.clone();
        }
        r.to_string()
    };
    let ts = format!("2025-08-20T11:{:02}:00.000Z", n % 60);
    [
        rec(json!({"type": "user", "uuid": format!("u{n}"), "timestamp": ts,
            "message": {"role": "user", "content": format!("Question {n}: how should the billing module {n} handle retries for invoice batch {n}?")}})),
        rec(json!({"type": "assistant", "uuid": format!("a{n}"), "timestamp": ts,
            "message": {"id": format!("msg_{n}"), "type": "message", "role": "assistant", "model": "claude-sonnet-4-20250514",
                "content": [{"type": "text", "text": format!("Let me look at billing module {n}.")},
                            {"type": "tool_use", "id": format!("toolu_{n}"), "name": "Bash", "input": {"command": format!("grep -n retry billing_{n}.py")}}],
                "stop_reason": "tool_use"}})),
        rec(json!({"type": "user", "uuid": format!("r{n}"), "timestamp": ts,
            "message": {"role": "user", "content": [{"tool_use_id": format!("toolu_{n}"), "type": "tool_result", "content": format!("billing_{n}.py:12: retries = 3")}]}})),
        rec(json!({"type": "assistant", "uuid": format!("b{n}"), "timestamp": ts,
            "message": {"id": format!("msg_{n}b"), "type": "message", "role": "assistant", "model": "claude-sonnet-4-20250514",
                "content": [{"type": "text", "text": format!("Answer {n}: billing module {n} retries invoice batch {n} three times with exponential backoff, marker zebra{n}.")}],
                "stop_reason": "end_turn"}})),
    ]
    .join("\n")
        + "\n"
}

/// Codex's rollout records for exchange `n`.
fn codex_exchange(n: usize) -> String {
    let ts = format!("2025-09-01T12:{:02}:00.000Z", n % 60);
    [
        json!({"timestamp": ts, "type": "response_item", "payload": {"type": "message", "role": "user",
            "content": [{"type": "input_text", "text": format!("Question {n}: where is cache layer {n} invalidated?")}]}}),
        json!({"timestamp": ts, "type": "event_msg", "payload": {"type": "user_message",
            "message": format!("Question {n}: where is cache layer {n} invalidated?"), "kind": "plain"}}),
        json!({"timestamp": ts, "type": "event_msg", "payload": {"type": "agent_message",
            "message": format!("Answer {n}: cache layer {n} is invalidated on write, marker quokka{n}.")}}),
    ]
    .iter()
    .map(Value::to_string)
    .collect::<Vec<_>>()
    .join("\n")
        + "\n"
}

fn append(path: &Path, text: &str) {
    let mut f = std::fs::OpenOptions::new().append(true).open(path).unwrap();
    f.write_all(text.as_bytes()).unwrap();
}

fn fixture(name: &str) -> String {
    std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/hooks")
            .join(name),
    )
    .unwrap()
}

fn payload(event: &str, transcript: &Path) -> Vec<u8> {
    json!({
        "session_id": SESSION, "transcript_path": transcript, "cwd": "/home/me/dev/my-proj",
        "hook_event_name": event, "stop_hook_active": false,
    })
    .to_string()
    .into_bytes()
}

/// The drawers of a palace's wing as (id, text) (search returns at most 100).
fn conversation_drawers(m: &Machine, wing: &str) -> Vec<(String, String)> {
    let r = m.cli(&[
        "search",
        "billing cache invoice question answer",
        "--wing",
        wing,
        "--limit",
        "200",
        "--mode",
        "vector",
        "--json",
    ]);
    r["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["drawer_id"].as_str().unwrap_or_default().to_string(),
                d["text"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

/// Every exchange's marker appears in exactly one drawer of the wing.
fn assert_each_exchange_once(m: &Machine, wing: &str, marker: &str, exchanges: usize) {
    let drawers = conversation_drawers(m, wing);
    for n in 1..=exchanges {
        let needle = format!("{marker}{n}.");
        let holding = drawers.iter().filter(|(_, t)| t.contains(&needle)).count();
        assert_eq!(
            holding, 1,
            "exchange {n} ({needle}) in {holding} drawers of {wing}"
        );
    }
    let mut ids: Vec<&String> = drawers.iter().map(|(id, _)| id).collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), drawers.len(), "no drawer twice");
}

#[test]
fn a_claude_code_session_is_filed_turn_by_turn_exactly_once_and_the_next_session_starts_with_it() {
    let m = Machine::new();
    let transcript = m.claude_transcript();

    // A first session start: nothing in the palace yet, nothing to add.
    assert_eq!(
        m.hook(
            "session-start",
            "claude-code",
            &payload("SessionStart", &transcript)
        ),
        json!({})
    );

    // Five turns of work, a stop hook after each; 4 exchanges (8 user records) a turn.
    let mut exchange = 0;
    let mut answers = Vec::new();
    for _turn in 0..5 {
        for _ in 0..4 {
            exchange += 1;
            append(&transcript, &claude_exchange(exchange));
        }
        answers.push(m.hook("stop", "claude-code", &payload("Stop", &transcript)));
        // Each turn's exchanges are filed by its own stop.
        assert_each_exchange_once(&m, "my_proj", "zebra", exchange);
    }
    // 2 user records in the fixture + 8 a turn: the checkpoint comes at the second stop
    // (18 ≥ 15), then not again until 15 more (the fourth: 34 - 18 = 16).
    let checkpoints: Vec<usize> = answers
        .iter()
        .enumerate()
        .filter(|(_, a)| a.get("systemMessage").is_some())
        .map(|(i, _)| i + 1)
        .collect();
    assert_eq!(checkpoints, [2, 4], "{answers:?}");
    let message = answers[1]["systemMessage"].as_str().unwrap();
    assert!(
        message.starts_with("✦ 1 checkpoint saved — ")
            && message.contains("messages woven into the palace — "),
        "{message}"
    );
    for (i, a) in answers.iter().enumerate() {
        if !checkpoints.contains(&(i + 1)) {
            assert_eq!(a, &json!({}), "stop {}", i + 1);
        }
    }

    // More work, then the harness compacts: precompact files what the last stop did not see.
    for _ in 0..3 {
        exchange += 1;
        append(&transcript, &claude_exchange(exchange));
    }
    assert_eq!(
        m.hook(
            "precompact",
            "claude-code",
            &payload("PreCompact", &transcript)
        ),
        json!({})
    );
    assert_each_exchange_once(&m, "my_proj", "zebra", exchange);
    // Filing again files nothing new.
    let before = m.wing_counts();
    assert_eq!(
        m.hook(
            "precompact",
            "claude-code",
            &payload("PreCompact", &transcript)
        ),
        json!({})
    );
    assert_eq!(m.wing_counts(), before);
    // The checkpoints went to the project's diary wing.
    assert!(before.contains_key("wing_my_proj"), "{before:?}");

    // The next session starts with the project's memory in its context.
    let start = m.hook(
        "session-start",
        "claude-code",
        &payload("SessionStart", &transcript),
    );
    let output = &start["hookSpecificOutput"];
    assert_eq!(output["hookEventName"], "SessionStart");
    let context = output["additionalContext"].as_str().unwrap();
    assert!(context.chars().count() <= 10_000);
    // L1 shows the session's newest exchanges (each cut to a line).
    assert!(context.contains("## L1"), "{context}");
    assert!(
        context.contains("Question ") && context.contains("how should the billing module"),
        "{context}"
    );
}

#[test]
fn a_codex_session_is_filed_turn_by_turn_exactly_once() {
    let m = Machine::new();
    let dir = m.home.join(".codex/sessions/2025/09/01");
    std::fs::create_dir_all(&dir).unwrap();
    let transcript =
        dir.join("rollout-2025-09-01T12-00-00-5973b6c0-94b8-487b-a530-2aeb6098ae0e.jsonl");
    std::fs::write(&transcript, fixture("codex_min.jsonl")).unwrap();
    let codex_payload = |event: &str| {
        json!({
            "session_id": "5973b6c0-94b8-487b-a530-2aeb6098ae0e", "transcript_path": transcript,
            "cwd": "/home/me/dev/my-proj", "hook_event_name": event, "model": "gpt-5-codex",
            "turn_id": "t1", "stop_hook_active": false, "last_assistant_message": "done",
        })
        .to_string()
        .into_bytes()
    };
    let mut exchange = 0;
    let mut checkpoints = 0;
    for _turn in 0..5 {
        for _ in 0..4 {
            exchange += 1;
            append(&transcript, &codex_exchange(exchange));
        }
        let a = m.hook("stop", "codex", &codex_payload("Stop"));
        if a.get("systemMessage").is_some() {
            checkpoints += 1;
        } else {
            assert_eq!(a, json!({}));
        }
        // The rollout's session_meta names the project (3.11 would file under `sessions`).
        assert_each_exchange_once(&m, "my_proj", "quokka", exchange);
    }
    assert_eq!(checkpoints, 1, "1 + 20 user messages: one checkpoint at 17");
    for _ in 0..2 {
        exchange += 1;
        append(&transcript, &codex_exchange(exchange));
    }
    assert_eq!(
        m.hook("precompact", "codex", &codex_payload("PreCompact")),
        json!({})
    );
    assert_each_exchange_once(&m, "my_proj", "quokka", exchange);
    let start = m.hook("session-start", "codex", &codex_payload("SessionStart"));
    assert!(
        start["hookSpecificOutput"]["additionalContext"]
            .as_str()
            .unwrap()
            .contains("quokka"),
        "{start}"
    );
}

#[test]
fn session_end_files_the_rest_in_a_detached_process() {
    let m = Machine::new();
    let transcript = m.claude_transcript();
    for n in 1..=3 {
        append(&transcript, &claude_exchange(n));
    }
    assert_eq!(
        m.hook(
            "session-end",
            "claude-code",
            &payload("SessionEnd", &transcript)
        ),
        json!({})
    );
    // The answer does not wait for the filing; the detached process finishes it.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    loop {
        let counts = m.wing_counts();
        if counts.contains_key("wing_my_proj") && counts.contains_key("my_proj") {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "not filed: {counts:?}"
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    assert_each_exchange_once(&m, "my_proj", "zebra", 3);
}

#[test]
fn hostile_payloads_get_a_harmless_answer_and_touch_nothing() {
    let m = Machine::new();
    let outside = tempfile::tempdir().unwrap();
    let outside_transcript = outside.path().join("s.jsonl");
    std::fs::write(
        &outside_transcript,
        fixture("claude_min.jsonl") + &claude_exchange(1),
    )
    .unwrap();
    let inside = m.home.join("t");
    std::fs::create_dir_all(&inside).unwrap();
    let link = inside.join("link.jsonl");
    std::os::unix::fs::symlink(&outside_transcript, &link).unwrap();
    let huge = inside.join("huge.jsonl");
    std::fs::File::create(&huge)
        .unwrap()
        .set_len(1 << 30)
        .unwrap();
    let not_jsonl = inside.join("passwd");
    std::fs::write(&not_jsonl, "root:x:0:0").unwrap();
    let dotdot = format!("{}/t/../t/x.jsonl", m.home.display());
    let bad_payloads: Vec<Vec<u8>> = vec![
        b"".to_vec(),
        b"not json".to_vec(),
        b"[1]".to_vec(),
        b"null".to_vec(),
        b"\xff\xfe\x00".to_vec(),
        json!({"session_id": ["../../x"], "transcript_path": 5, "stop_hook_active": {"a": 1}})
            .to_string()
            .into_bytes(),
        json!({"transcript_path": outside_transcript})
            .to_string()
            .into_bytes(),
        json!({"transcript_path": link}).to_string().into_bytes(),
        json!({"transcript_path": huge}).to_string().into_bytes(),
        json!({"transcript_path": not_jsonl})
            .to_string()
            .into_bytes(),
        json!({"transcript_path": dotdot}).to_string().into_bytes(),
        json!({"transcript_path": "relative.jsonl"})
            .to_string()
            .into_bytes(),
        vec![b' '; 2 * 1024 * 1024],
    ];
    for p in &bad_payloads {
        for hook in ["session-start", "stop", "precompact", "session-end"] {
            for harness in ["claude-code", "codex"] {
                let a = m.hook(hook, harness, p);
                assert_eq!(
                    a,
                    json!({}),
                    "{hook} {harness}: {:?}",
                    String::from_utf8_lossy(&p[..p.len().min(80)])
                );
            }
        }
    }
    assert!(
        !m.palace.exists(),
        "nothing was filed, so no palace was made"
    );
    let log = std::fs::read_to_string(m.home.join(".mempalace/hook_state/hook.log")).unwrap();
    assert!(log.contains("outside the allowed folders"), "{log}");
    assert!(log.contains("symbolic link"), "{log}");
    assert!(log.contains("byte limit"), "{log}");

    // A machine where MemPalace was never set up is not touched at all.
    let bare = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_mempalace"))
        .env("HOME", bare.path())
        .env_remove("MEMPALACE_PALACE_PATH")
        .env_remove("MEMPALACE_CONFIG_DIR")
        .env_remove("XDG_CONFIG_HOME")
        .args(["hook", "run", "--hook", "stop", "--harness", "claude-code"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(out.stdout, b"{}\n");
    assert_eq!(
        std::fs::read_dir(bare.path()).unwrap().count(),
        0,
        "nothing written"
    );
}

#[test]
fn two_stop_hooks_at_once_file_the_turns_once() {
    let m = Machine::new();
    let transcript = m.claude_transcript();
    for n in 1..=6 {
        append(&transcript, &claude_exchange(n));
    }
    let stdin = payload("Stop", &transcript);
    std::thread::scope(|s| {
        let a = s.spawn(|| m.hook("stop", "claude-code", &stdin));
        let b = s.spawn(|| m.hook("stop", "claude-code", &stdin));
        a.join().unwrap();
        b.join().unwrap();
    });
    // Whichever filed, every exchange is there once; a third hook finds nothing new.
    m.hook("stop", "claude-code", &stdin);
    assert_each_exchange_once(&m, "my_proj", "zebra", 6);
    let log = std::fs::read_to_string(m.home.join(".mempalace/hook_state/hook.log")).unwrap();
    assert!(log.matches("Transcript filed").count() >= 2, "{log}");
}

#[test]
fn install_adds_our_hooks_once_and_keeps_the_users() {
    let m = Machine::new();
    let settings = m.home.join(".claude/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    std::fs::write(
        &settings,
        r#"{"permissions":{"allow":["Bash(ls)"]},"hooks":{"Stop":[{"matcher":"","hooks":[{"type":"command","command":"say done"}]}]}}"#,
    )
    .unwrap();
    let run = |args: &[&str]| {
        let out = m.command().args(args).output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let dry = run(&[
        "hook",
        "install",
        "--harness",
        "claude-code",
        "--dry-run",
        "--command",
        "/opt/bin/mempalace",
    ]);
    assert!(
        dry.contains("+") && dry.contains("--hook session-start"),
        "{dry}"
    );
    assert!(
        std::fs::read_to_string(&settings)
            .unwrap()
            .contains("say done")
    );
    assert!(
        !std::fs::read_to_string(&settings)
            .unwrap()
            .contains("mempalace"),
        "dry run wrote nothing"
    );
    run(&[
        "hook",
        "install",
        "--harness",
        "claude-code",
        "--command",
        "/opt/bin/mempalace",
    ]);
    let again = run(&[
        "hook",
        "install",
        "--harness",
        "claude-code",
        "--command",
        "/opt/bin/mempalace",
    ]);
    assert!(again.contains("nothing to change"), "{again}");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    assert_eq!(v["permissions"]["allow"][0], "Bash(ls)");
    assert_eq!(v["hooks"]["Stop"].as_array().unwrap().len(), 2);
    assert_eq!(
        v["hooks"]["SessionStart"][0]["hooks"][0]["command"],
        "/opt/bin/mempalace hook run --hook session-start --harness claude-code"
    );
    let codex = run(&[
        "hook",
        "install",
        "--harness",
        "codex",
        "--command",
        "mempalace",
    ]);
    assert!(codex.contains("codex_hooks"), "{codex}");
    assert!(m.home.join(".codex/hooks.json").is_file());
}

#[test]
fn sweep_files_what_no_hook_filed_exactly_once_beside_the_hooks() {
    let m = Machine::new();
    let transcript = m.claude_transcript();
    for n in 1..=3 {
        append(&transcript, &claude_exchange(n));
    }
    let projects = m.home.join(".claude/projects");
    let sweep = |target: &Path| {
        let out = m
            .command()
            .arg("sweep")
            .arg(target)
            .arg("--json")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice::<Value>(&out.stdout).unwrap()
    };
    let first = sweep(&projects);
    assert_eq!(first["transcripts"].as_array().unwrap().len(), 1, "{first}");
    assert_eq!(first["transcripts"][0]["wing"], "my_proj", "{first}");
    assert!(first["new_turns"].as_u64().unwrap() >= 3, "{first}");
    assert_each_exchange_once(&m, "my_proj", "zebra", 3);
    // Swept again (the file itself this time): nothing new.
    assert_eq!(sweep(&transcript)["new_turns"], 0);
    // A stop hook after the sweep files only the new exchange.
    append(&transcript, &claude_exchange(4));
    m.hook("stop", "claude-code", &payload("Stop", &transcript));
    assert_each_exchange_once(&m, "my_proj", "zebra", 4);
    assert_eq!(sweep(&projects)["new_turns"], 0);
    // Not a file or folder: exit 1, 3.11's message.
    let out = m
        .command()
        .args(["sweep", "/nonexistent/transcripts"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("ERROR: Not a file or directory"));
}

#[test]
fn a_sweep_continues_in_the_wing_a_hook_chose_so_nothing_is_filed_twice() {
    let m = Machine::new();
    // Records without `cwd`: the hook takes the project from its payload (my.proj), while the
    // path alone says my-proj.
    let without_cwd = |text: String| {
        text.lines()
            .map(|l| {
                let mut v: Value = serde_json::from_str(l).unwrap();
                v.as_object_mut().unwrap().remove("cwd");
                v.to_string() + "\n"
            })
            .collect::<String>()
    };
    let dir = m.home.join(".claude/projects/-home-me-dev-my-proj");
    std::fs::create_dir_all(&dir).unwrap();
    let transcript = dir.join(format!("{SESSION}.jsonl"));
    std::fs::write(
        &transcript,
        without_cwd(claude_exchange(1) + &claude_exchange(2)),
    )
    .unwrap();
    let stop = json!({
        "session_id": SESSION, "transcript_path": transcript, "cwd": "/home/me/dev/my.proj",
        "hook_event_name": "Stop", "stop_hook_active": false,
    });
    m.hook("stop", "claude-code", stop.to_string().as_bytes());
    let wings_after_hook = m.wing_counts();
    let hook_wing = wings_after_hook
        .keys()
        .find(|w| !w.starts_with("wing_"))
        .cloned()
        .unwrap_or_else(|| panic!("{wings_after_hook:?}"));
    append(&transcript, &without_cwd(claude_exchange(3)));
    let out = m
        .command()
        .arg("sweep")
        .arg(&transcript)
        .arg("--json")
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        report["transcripts"][0]["wing"],
        hook_wing.as_str(),
        "{report}"
    );
    assert_each_exchange_once(&m, &hook_wing, "zebra", 3);
    let project_wings: Vec<String> = m
        .wing_counts()
        .keys()
        .filter(|w| !w.starts_with("wing_"))
        .cloned()
        .collect();
    assert_eq!(project_wings, [hook_wing], "one wing holds the session");
}
