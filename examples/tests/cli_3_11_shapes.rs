//! Our `split`, `logstream`, `task`, `artifact`, `rules` and `instructions` print what MemPalace 3.11's
//! print for the same commands run in the same order on a fresh palace: the same exit codes,
//! and the same stdout and stderr once ids, times and random suffixes are masked (JSON keys,
//! their order and every other value included). `outputs_3_11.json` was made by running 3.11's
//! own command line (`fixtures/cli/make_3_11_outputs.py`).

use std::collections::HashMap;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use regex::Regex;
use serde_json::Value;

/// `text` with everything that differs between two runs replaced by a placeholder.
fn masked(text: &str) -> String {
    let rules = [
        (r"evt_\d{8}T\d{6}_[0-9a-f]{12}", "EVT"),
        (r"art_\d{8}T\d{6}_[0-9a-f]{12}", "ART"),
        (r"\d{13}-\d{6}-rep_[0-9a-f]{32}", "HLC"),
        (r"rep_[0-9a-f]{32}", "REP"),
        (r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", "TIME"),
        (r"(task_[a-z0-9_]+)_[0-9a-f]{8}\b", "${1}_HEX"),
    ];
    let mut text = text.to_string();
    for (pattern, with) in rules {
        text = Regex::new(pattern)
            .unwrap()
            .replace_all(&text, with)
            .into_owned();
    }
    text
}

#[test]
fn coordination_rules_and_instructions_print_what_3_11_prints() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/cli");
    let fixture: Value =
        serde_json::from_str(&std::fs::read_to_string(fixtures.join("outputs_3_11.json")).unwrap())
            .unwrap();
    let steps = fixture["steps"].as_array().unwrap();
    assert!(steps.len() >= 30);
    let dir = tempfile::tempdir().unwrap();
    let tmp = dir.path().canonicalize().unwrap();
    let tmp_text = tmp.display().to_string();
    for (rel, text) in fixture["files"].as_object().unwrap() {
        let path = tmp.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text.as_str().unwrap()).unwrap();
    }
    let home = tmp.join("home");
    let palace = tmp.join("palace");
    std::fs::create_dir_all(&home).unwrap();
    let mut ids: HashMap<String, String> = HashMap::new();
    for step in steps {
        let name = step["name"].as_str().unwrap();
        // `{id:STEP}`: the id STEP printed, in this run.
        let argv: Vec<String> = step["argv"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap().to_string())
            .map(
                |a| match a.strip_prefix("{id:").and_then(|a| a.strip_suffix('}')) {
                    Some(step) => ids[step].clone(),
                    None => a.replace("{TMP}", &tmp_text),
                },
            )
            .collect();
        let mut child = Command::new(env!("CARGO_BIN_EXE_mempalace"))
            .env("HOME", &home)
            .env_remove("MEMPALACE_PALACE_PATH")
            .env_remove("MEMPALACE_CONFIG_DIR")
            .env_remove("XDG_CONFIG_HOME")
            .arg("--palace")
            .arg(&palace)
            .args(&argv)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = step["stdin"].as_str().unwrap_or_default().to_string();
        let mut pipe = child.stdin.take().unwrap();
        pipe.write_all(stdin.as_bytes()).unwrap();
        drop(pipe);
        let out = child.wait_with_output().unwrap();
        let stdout = String::from_utf8(out.stdout).unwrap();
        let stderr = String::from_utf8(out.stderr).unwrap();
        let (stdout_shown, stderr_shown) = (
            stdout.replace(&tmp_text, "{TMP}"),
            stderr.replace(&tmp_text, "{TMP}"),
        );
        if let Ok(Value::Object(answer)) = serde_json::from_str::<Value>(&stdout)
            && let Some(Value::String(id)) = answer.get("id")
        {
            ids.insert(name.to_string(), id.clone());
        }
        assert_eq!(
            out.status.code(),
            step["exit"].as_i64().map(|c| c as i32),
            "{name}: exit code (stderr: {stderr})"
        );
        assert_eq!(
            masked(&stdout_shown),
            masked(step["stdout"].as_str().unwrap()),
            "{name}: stdout"
        );
        assert_eq!(
            masked(&stderr_shown),
            masked(step["stderr"].as_str().unwrap()),
            "{name}: stderr"
        );
    }
}
