//! `mempalace mine <dir> --mode convos` on the fixture exports (tests/fixtures/conversations):
//! a mixed folder of every format mines in one command, search's since/before return only the
//! right period, a re-mine files nothing, a grown transcript files only its new exchange, a
//! broken export is an error naming file and position with nothing half-filed, and
//! `--extract general` files decisions in their own room.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/conversations")
}

fn run(palace: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mempalace"))
        .arg("--palace")
        .arg(palace)
        .args(args)
        .output()
        .unwrap()
}

fn json(palace: &Path, args: &[&str]) -> Value {
    let out = run(palace, args);
    assert!(
        out.status.success(),
        "mempalace {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// `mempalace mine <folder> --mode convos <extra> --json`, which must succeed.
fn mine_convos(palace: &Path, folder: &Path, extra: &[&str]) -> Value {
    let mut args = vec!["mine", folder.to_str().unwrap(), "--mode", "convos"];
    args.extend_from_slice(extra);
    args.push("--json");
    json(palace, &args)
}

/// Copies the fixture folder (without `broken/`) to `to`.
fn copy_exports(to: &Path) {
    fn copy(from: &Path, to: &Path) {
        std::fs::create_dir_all(to).unwrap();
        for e in std::fs::read_dir(from).unwrap() {
            let e = e.unwrap();
            let target = to.join(e.file_name());
            if e.file_type().unwrap().is_dir() {
                if e.file_name() != "broken" {
                    copy(&e.path(), &target);
                }
            } else {
                std::fs::copy(e.path(), target).unwrap();
            }
        }
    }
    copy(&fixtures(), to);
}

#[test]
fn a_mixed_folder_of_exports_mines_in_one_command_and_again_only_what_grew() {
    let dir = tempfile::tempdir().unwrap();
    let exports = dir.path().join("chats");
    let palace = dir.path().join("palace");
    copy_exports(&exports);

    let r = mine_convos(&palace, &exports, &[]);
    let formats = &r["files_by_format"];
    for (format, files) in [
        ("claude-code", 1),
        ("codex", 1),
        ("chatgpt", 1),
        ("claude-ai", 1),
        ("slack", 2),
        ("gemini-cli", 2),
        ("plain-text", 3),
    ] {
        assert_eq!(formats[format].as_u64(), Some(files), "{format}: {r}");
    }
    assert_eq!(r["conversations"].as_u64(), Some(14), "{r}");
    assert_eq!(r["errors"].as_array().unwrap().len(), 0, "{r}");
    let skipped: Vec<&str> = r["files_skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["file"].as_str().unwrap())
        .collect();
    assert_eq!(skipped.len(), 3, "README, users.json, channels.json: {r}");
    assert!(
        r["left_out"]["tool output of a file read or edit"]
            .as_u64()
            .unwrap()
            >= 6
    );
    let filed = r["filed"]["drawers_filed"].as_u64().unwrap();
    assert!(filed >= 50, "{r}");
    let status = json(&palace, &["status", "--json"]);
    assert_eq!(status["wings"]["chats"].as_u64(), Some(filed));

    // Only the Claude Code session (March 4–5) and the Slack days (March 10–11) lie in March.
    let hits = json(
        &palace,
        &[
            "search",
            "postgres connections",
            "--since",
            "2025-03-01",
            "--before",
            "2025-03-06",
            "--limit",
            "20",
            "--json",
        ],
    );
    let results = hits["results"].as_array().unwrap();
    assert!(!results.is_empty());
    for h in results {
        let at = h["authored_at"].as_str().unwrap();
        assert!(("2025-03-01".."2025-03-06").contains(&at), "{at}");
        assert_eq!(
            h["conversation"]["id"].as_str(),
            Some("0ff63091-06a5-413a-bc53-16dfe11e1f48")
        );
        assert!(!h["conversation"]["speakers"].as_array().unwrap().is_empty());
    }

    // Nothing new: nothing filed.
    let again = mine_convos(&palace, &exports, &[]);
    assert_eq!(again["filed"]["drawers_filed"].as_u64(), Some(0), "{again}");
    assert_eq!(again["filed"]["conversations_unchanged"].as_u64(), Some(14));

    // The Claude Code session grows by one exchange: one exchange is filed.
    let session = exports.join("claude-code/session-0ff63091-06a5-413a-bc53-16dfe11e1f48.jsonl");
    let mut text = std::fs::read_to_string(&session).unwrap();
    for (kind, words, at) in [
        (
            "user",
            "One more thing: should the pool size live in the Helm values file?",
            "2025-03-06T08:00:00.000Z",
        ),
        (
            "assistant",
            "Yes. Put pool_size and max_overflow in values.yaml so each environment can tune them.",
            "2025-03-06T08:00:05.000Z",
        ),
    ] {
        let line = serde_json::json!({
            "type": kind, "sessionId": "0ff63091-06a5-413a-bc53-16dfe11e1f48", "timestamp": at,
            "message": {"role": kind, "content": [{"type": "text", "text": words}]},
        });
        text.push_str(&format!("{line}\n"));
    }
    std::fs::write(&session, text).unwrap();
    let grown = mine_convos(&palace, &exports, &[]);
    assert_eq!(grown["filed"]["new_exchanges"].as_u64(), Some(1), "{grown}");
    assert_eq!(grown["filed"]["new_turns"].as_u64(), Some(2));
    assert_eq!(grown["filed"]["drawers_filed"].as_u64(), Some(1));
    assert_eq!(grown["filed"]["conversations_unchanged"].as_u64(), Some(13));
    let hits = json(
        &palace,
        &[
            "search",
            "Helm values pool size",
            "--since",
            "2025-03-06",
            "--before",
            "2025-03-07",
            "--json",
        ],
    );
    let results = hits["results"].as_array().unwrap();
    assert_eq!(results.len(), 1, "{hits}");
    assert!(
        results[0]["text"]
            .as_str()
            .unwrap()
            .starts_with("> One more thing")
    );
}

#[test]
fn a_broken_export_is_an_error_naming_file_and_position_and_files_nothing_half() {
    let dir = tempfile::tempdir().unwrap();
    let palace = dir.path().join("palace");
    let broken = fixtures().join("broken");
    let out = run(
        &palace,
        &[
            "mine",
            broken.to_str().unwrap(),
            "--mode",
            "convos",
            "--wing",
            "broken",
            "--json",
        ],
    );
    assert!(!out.status.success());
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    let errors = r["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 2, "{r}");
    let reason = |file: &str| {
        errors
            .iter()
            .find(|e| e["file"].as_str().unwrap().ends_with(file))
            .unwrap()["reason"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert!(reason("malformed.jsonl").contains("line 4"), "{r}");
    assert!(
        reason("truncated-conversations.json").contains("line 1, column"),
        "{r}"
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("broke off"));
    // The whole conversation before the break is filed; the one it struck is not, and the
    // transcript with the bad line files nothing.
    assert_eq!(r["conversations"].as_u64(), Some(1), "{r}");
    let hits = json(
        &palace,
        &["search", "terraform state lock", "--limit", "20", "--json"],
    );
    assert!(!hits["results"].as_array().unwrap().is_empty());
    for h in hits["results"].as_array().unwrap() {
        assert_eq!(
            h["conversation"]["id"].as_str(),
            Some("a6032593-f73e-4711-8b66-741770bdcaf8"),
            "only the complete conversation: {h}"
        );
    }
}

#[test]
fn general_extraction_files_decisions_in_their_own_room() {
    let dir = tempfile::tempdir().unwrap();
    let exports = dir.path().join("chats");
    let palace = dir.path().join("palace");
    copy_exports(&exports);
    let r = mine_convos(&palace, &exports, &["--extract", "general"]);
    assert!(r["filed"]["drawers_filed"].as_u64().unwrap() > 0, "{r}");
    let status = json(&palace, &["status", "--json"]);
    let rooms = status["rooms"].as_object().unwrap();
    assert!(rooms.contains_key("decision"), "{status}");
    for room in rooms.keys() {
        assert!(
            [
                "decision",
                "preference",
                "milestone",
                "problem",
                "emotional"
            ]
            .contains(&room.as_str()),
            "{room}"
        );
    }
    let hits = json(
        &palace,
        &[
            "search",
            "what did we decide about the webhook retry queue",
            "--room",
            "decision",
            "--json",
        ],
    );
    let top = &hits["results"][0];
    assert!(
        top["text"]
            .as_str()
            .unwrap()
            .contains("We decided to use Postgres"),
        "{hits}"
    );
}

#[test]
fn a_file_name_that_cannot_be_a_source_is_passed_over_and_the_rest_is_mined() {
    let dir = tempfile::tempdir().unwrap();
    let exports = dir.path().join("chats");
    let palace = dir.path().join("palace");
    std::fs::create_dir_all(&exports).unwrap();
    let transcript = "> Where do the backups go?\nTo the bucket in eu-west-1, kept for 30 days.\n\n> And who can restore them?\nOnly the on-call engineer, with the break-glass role.\n\n> Thanks.\nYou're welcome.\n";
    std::fs::write(exports.join("good.txt"), transcript).unwrap();
    // A Slack channel named like a build folder is still a channel.
    std::fs::create_dir_all(exports.join("build")).unwrap();
    std::fs::write(exports.join("build/2025-03-10.json"), r#"[{"type":"message","user":"U1","text":"the build is green again","ts":"1741600000.000100"}]"#).unwrap();
    std::fs::write(exports.join("bad\u{1b}name.txt"), transcript).unwrap();
    let r = mine_convos(&palace, &exports, &[]);
    assert_eq!(r["files_by_format"]["plain-text"].as_u64(), Some(1), "{r}");
    assert_eq!(r["files_by_format"]["slack"].as_u64(), Some(1), "{r}");
    let skipped = r["files_skipped"].as_array().unwrap();
    assert_eq!(skipped.len(), 1, "{r}");
    assert!(
        skipped[0]["reason"].as_str().unwrap().contains("control"),
        "{r}"
    );
    // A wing that cannot be a wing is refused before anything is read.
    let long = "w".repeat(1000);
    let out = run(
        &palace,
        &[
            "mine",
            exports.to_str().unwrap(),
            "--mode",
            "convos",
            "--wing",
            &long,
        ],
    );
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("wing"));
}

/// A ChatGPT `conversations.json` of `conversations` conversations whose assistant turn is
/// one line of `words` words, as an attacker (or a pasted log) would make it.
fn export_with_huge_messages(folder: &Path, conversations: usize, words: usize) {
    std::fs::create_dir_all(folder).unwrap();
    let huge = "zqxw ".repeat(words);
    let message = |id: &str, role: &str, text: &str, parent: &str, child: Option<&str>| {
        serde_json::json!({
            "id": id,
            "message": {
                "id": id, "author": {"role": role}, "create_time": 1737567611.0,
                "content": {"content_type": "text", "parts": [text]}
            },
            "parent": parent,
            "children": child.map(|c| vec![c]).unwrap_or_default()
        })
    };
    let export: Vec<Value> = (0..conversations)
        .map(|i| {
            serde_json::json!({
                "title": format!("A pasted log {i}"), "id": format!("conv-huge-{i}"),
                "create_time": 1737567611.0, "current_node": "a1",
                "mapping": {
                    "root": {"id": "root", "message": null, "parent": null, "children": ["u1"]},
                    "u1": message("u1", "user", &format!("Why does build {i} repeat itself?"), "root", Some("a1")),
                    "a1": message("a1", "assistant", &huge, "u1", None),
                }
            })
        })
        .collect();
    std::fs::write(
        folder.join("conversations.json"),
        serde_json::to_string(&export).unwrap(),
    )
    .unwrap();
}

#[test]
fn a_fifty_megabyte_message_is_cut_to_a_bounded_size_and_mines_in_seconds() {
    let dir = tempfile::tempdir().unwrap();
    let exports = dir.path().join("chats");
    let palace = dir.path().join("palace");
    export_with_huge_messages(&exports, 1, 10_000_000);
    // Before the cutting was linear this ran for minutes; the bound is loose for a loaded CI
    // machine (the measured time is in bench/RESULTS.md).
    let started = std::time::Instant::now();
    let r = mine_convos(&palace, &exports, &[]);
    let took = started.elapsed();
    assert!(took < std::time::Duration::from_secs(60), "took {took:?}");
    assert_eq!(r["conversations"], 1, "{r}");
    let reason = mempalace_core::conversations::formats::CUT_MESSAGE_REASON;
    assert_eq!(r["left_out"][reason], 1, "{r}");
    // 100,000 characters of the message and the question: about 125 drawers, not 62,500.
    let filed = r["filed"]["drawers_filed"].as_u64().unwrap();
    assert!((100..=200).contains(&filed), "{r}");
    let status = json(&palace, &["status", "--json"]);
    assert_eq!(status["total_drawers"].as_u64(), Some(filed), "{status}");
}

#[test]
fn ctrl_c_stops_a_conversation_mine_within_seconds_and_a_rerun_finishes_it() {
    let dir = tempfile::tempdir().unwrap();
    let exports = dir.path().join("chats");
    let palace = dir.path().join("palace");
    // Five conversations of a 10 MB message each: over 600 drawers to embed, so the signal
    // lands in the middle of the work.
    export_with_huge_messages(&exports, 5, 2_000_000);
    let mut child = Command::new(env!("CARGO_BIN_EXE_mempalace"))
        .arg("--palace")
        .arg(&palace)
        .args([
            "mine",
            exports.to_str().unwrap(),
            "--mode",
            "convos",
            "--json",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Into the reading and embedding of the huge message.
    std::thread::sleep(std::time::Duration::from_millis(2500));
    // SAFETY: kill(2) on our own child's pid.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let signalled = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(
            signalled.elapsed() < std::time::Duration::from_secs(20),
            "still running 20 s after Ctrl-C"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let stopped_after = signalled.elapsed();
    let out = child.wait_with_output().unwrap();
    assert!(
        status.success(),
        "{status:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    eprintln!("stopped {stopped_after:?} after Ctrl-C");
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["interrupted"], true, "{report}");
    // Whatever was filed before the stop is whole; mining again finishes the job.
    let again = mine_convos(&palace, &exports, &[]);
    let status = json(&palace, &["status", "--json"]);
    assert_eq!(again["interrupted"], false, "{again}");
    assert_eq!(again["conversations"], 5, "{again}");
    assert!(
        status["total_drawers"].as_u64().unwrap() >= 500,
        "{again} {status}"
    );
}
