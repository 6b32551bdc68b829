//! Our `hook run` prints what MemPalace 3.11's prints, byte for byte, for the same transcript,
//! payload and config: `answers_3_11.json` was made by running 3.11's own `hook run`
//! (`fixtures/hooks/make_3_11_answers.py`).

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::Value;

/// The model the tests' processes load (from the real home: theirs is a temporary one).
fn model_dir() -> std::path::PathBuf {
    mempalace_embed_candle::model_dir::resolve(None)
}

#[test]
fn hook_answers_are_3_11s() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hooks");
    let cases: Value =
        serde_json::from_str(&std::fs::read_to_string(fixtures.join("answers_3_11.json")).unwrap())
            .unwrap();
    let cases = cases.as_object().unwrap();
    assert!(cases.len() >= 8);
    for (name, case) in cases {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path();
        std::fs::create_dir_all(home.join(".mempalace")).unwrap();
        if let Some(config) = case["config"].as_object() {
            std::fs::write(
                home.join(".mempalace/config.json"),
                Value::Object(config.clone()).to_string(),
            )
            .unwrap();
        }
        let folder = home.join(".claude/projects/-home-me-dev-my-proj");
        std::fs::create_dir_all(&folder).unwrap();
        let transcript = folder.join("session.jsonl");
        let lines: Vec<&str> = case["transcript"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l.as_str().unwrap())
            .collect();
        std::fs::write(&transcript, lines.join("\n") + "\n").unwrap();
        let hook = case["hook"].as_str().unwrap();
        let stdin = match case["stdin"].as_str() {
            Some(s) => s.to_string(),
            None => serde_json::json!({
                "session_id": "0b1c2d3e-1111-4222-8333-944455566677",
                "transcript_path": transcript, "cwd": "/home/me/dev/my-proj",
                "hook_event_name": hook, "stop_hook_active": false,
            })
            .to_string(),
        };
        let mut child = Command::new(env!("CARGO_BIN_EXE_mempalace"))
            .env("HOME", home)
            .env("MEMPALACE_MODEL_DIR", model_dir())
            .env_remove("MEMPALACE_PALACE_PATH")
            .env_remove("MEMPALACE_CONFIG_DIR")
            .env_remove("MEMPALACE_HOOKS_AUTO_SAVE")
            .env_remove("XDG_CONFIG_HOME")
            .args(["hook", "run", "--hook", hook, "--harness"])
            .arg(case["harness"].as_str().unwrap())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(stdin.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert_eq!(
            out.status.code(),
            case["exit_code"].as_i64().map(|c| c as i32),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            String::from_utf8(out.stdout).unwrap(),
            case["stdout"].as_str().unwrap(),
            "{name}"
        );
    }
}
