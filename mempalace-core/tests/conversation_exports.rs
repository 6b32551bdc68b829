//! Every supported export format, read from its fixture in `tests/fixtures/conversations`
//! (see that folder's README for how each was made): speakers, authored times, what is left
//! out, and the exchange chunks each conversation is cut into.

use std::fs::File;
use std::io::BufReader;
use std::path::PathBuf;

use mempalace_core::conversations::exchanges::{EXCHANGE_WINDOW, chunk_exchanges, render_turn};
use mempalace_core::conversations::formats::{
    ConversationFormat, ExportError, ReadSummary, SourceName, read_conversations,
};
use mempalace_core::conversations::timestamps::{from_iso, from_unix_seconds};
use mempalace_core::conversations::{Conversation, Role};

fn fixture(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/conversations")
        .join(path)
}

fn read(path: &str) -> (Vec<Conversation>, Result<ReadSummary, ExportError>) {
    let file = File::open(fixture(path)).unwrap();
    let mut got = Vec::new();
    let name = path.rsplit_once('.').map_or(path, |(s, _)| s).to_string();
    let r = read_conversations(BufReader::new(file), &SourceName::new(name), &mut |c| {
        got.push(c)
    });
    (got, r)
}

fn read_ok(path: &str, format: ConversationFormat) -> (Vec<Conversation>, ReadSummary) {
    let (c, r) = read(path);
    let summary = r.unwrap_or_else(|e| panic!("{path}: {e}"));
    assert_eq!(summary.format, Some(format), "{path}");
    assert_eq!(summary.conversations as usize, c.len());
    (c, summary)
}

/// (role, authored time, first words) of every turn.
fn outline(c: &Conversation) -> Vec<(String, Option<String>, String)> {
    c.turns
        .iter()
        .map(|t| {
            let head: String = t
                .text
                .split_whitespace()
                .take(4)
                .collect::<Vec<_>>()
                .join(" ");
            (t.role.label().to_string(), t.authored_at.clone(), head)
        })
        .collect()
}

fn iso(t: &str) -> Option<String> {
    Some(from_iso(t).unwrap())
}

/// A Unix time exactly as the export writes it.
fn unix(t: &str) -> Option<String> {
    Some(from_unix_seconds(t.parse().unwrap()).unwrap())
}

fn expect(c: &Conversation, want: &[(&str, Option<String>, &str)]) {
    let got = outline(c);
    assert_eq!(got.len(), want.len(), "{}: {got:#?}", c.id);
    for (g, w) in got.iter().zip(want) {
        assert_eq!(g.0, w.0, "{}: {g:?}", c.id);
        assert_eq!(g.1, w.1, "{}: {g:?}", c.id);
        assert!(
            g.2.starts_with(w.2),
            "{}: {:?} should start with {:?}",
            c.id,
            g.2,
            w.2
        );
    }
}

/// Exchange-chunk rules that hold for every conversation: no drawer over the window; a drawer
/// of several turns holds them whole; a turn cut in pieces loses nothing but whitespace, each
/// piece keeping its speaker.
fn check_chunks(c: &Conversation) {
    let chunks = chunk_exchanges(&c.turns, 0);
    assert!(!chunks.is_empty());
    let mut next = 0u32;
    for ch in &chunks {
        assert!(
            ch.text.chars().count() <= EXCHANGE_WINDOW,
            "{}: {}",
            c.id,
            ch.text
        );
        assert!(ch.first_turn == next || (ch.piece > 0 && ch.first_turn + 1 == next));
        next = ch.last_turn + 1;
        if ch.first_turn != ch.last_turn || ch.piece == 0 && !is_cut(c, ch.first_turn) {
            for i in ch.first_turn..=ch.last_turn {
                let t = &c.turns[i as usize];
                assert!(
                    ch.text.contains(&render_turn(&t.role, &t.text)),
                    "{}: turn {i} whole",
                    c.id
                );
            }
        }
    }
    assert_eq!(next as usize, c.turns.len(), "{}: every turn filed", c.id);
    for (i, t) in c.turns.iter().enumerate() {
        if !is_cut(c, i as u32) {
            continue;
        }
        let pieces: Vec<&str> = chunks
            .iter()
            .filter(|ch| ch.first_turn == i as u32)
            .map(|ch| ch.text.as_str())
            .collect();
        assert!(pieces.len() >= 2);
        let mark = render_turn(&t.role, "");
        let joined: Vec<&str> = pieces
            .iter()
            .map(|p| {
                assert!(p.starts_with(&mark), "piece keeps its speaker");
                &p[mark.len()..]
            })
            .flat_map(|p| p.split_whitespace())
            .collect();
        assert_eq!(joined, t.text.split_whitespace().collect::<Vec<_>>());
    }
}

fn is_cut(c: &Conversation, turn: u32) -> bool {
    let t = &c.turns[turn as usize];
    render_turn(&t.role, &t.text).chars().count() > EXCHANGE_WINDOW
}

#[test]
fn claude_code_session() {
    let (c, summary) = read_ok(
        "claude-code/session-0ff63091-06a5-413a-bc53-16dfe11e1f48.jsonl",
        ConversationFormat::ClaudeCode,
    );
    let c = &c[0];
    assert_eq!(c.id, "0ff63091-06a5-413a-bc53-16dfe11e1f48");
    assert_eq!(
        c.title.as_deref(),
        Some("Fix Postgres connection exhaustion in invoice worker")
    );
    expect(
        c,
        &[
            (
                "user",
                iso("2025-03-04T15:58:14.733Z"),
                "We're getting `FATAL: sorry,",
            ),
            (
                "assistant",
                iso("2025-03-04T15:58:18.090Z"),
                "I'll start by finding",
            ),
            ("user", iso("2025-03-04T16:01:37.025Z"), "Yes, go with the"),
            (
                "assistant",
                iso("2025-03-04T16:01:40.882Z"),
                "I'll add the two",
            ),
            (
                "user",
                iso("2025-03-05T09:12:40.118Z"),
                "Morning. Staging was stable",
            ),
            (
                "assistant",
                iso("2025-03-05T09:12:51.006Z"),
                "Not right now, in",
            ),
            ("user", iso("2025-03-05T09:14:02.771Z"), "Ok, we decided to"),
            (
                "assistant",
                iso("2025-03-05T09:14:09.350Z"),
                "[Write /home/dev/src/invoice-service/docs/decisions/0007-defer-pgbouncer.md]",
            ),
        ],
    );
    let loop_turn = &c.turns[1].text;
    // Tool calls as one-line digests; a shell's 60 lines of output as head and tail; a file
    // read's contents left out.
    assert!(loop_turn.contains("[Grep] "));
    assert!(loop_turn.contains("[Read "));
    assert!(loop_turn.contains("[Bash] kubectl -n staging logs deploy/invoice-worker --tail=60"));
    assert!(loop_turn.contains("→ ... [20 lines omitted] ..."));
    assert_eq!(loop_turn.matches("\n→ ").count(), 3 + 20 + 1 + 20);
    assert!(!c.turns[2].text.contains("system-reminder"));
    assert!(c.turns.iter().all(|t| !t.text.contains("Caveat")));
    assert_eq!(summary.skipped["meta message injected by the agent"], 1);
    assert_eq!(summary.skipped["tool output of a file read or edit"], 6);
    check_chunks(c);
}

#[test]
fn codex_rollout() {
    let (c, summary) = read_ok(
        "codex/rollout-2025-02-03T10-00-00-df083e9c-4dfb-4e8d-b58a-c273aa4fa1b9.jsonl",
        ConversationFormat::Codex,
    );
    let c = &c[0];
    assert_eq!(c.id, "df083e9c-4dfb-4e8d-b58a-c273aa4fa1b9");
    expect(
        c,
        &[
            (
                "user",
                iso("2025-02-03T10:00:41.118Z"),
                "The search-indexer pods never",
            ),
            (
                "assistant",
                iso("2025-02-03T10:01:07.822Z"),
                "Found the problem. Both",
            ),
            (
                "user",
                iso("2025-02-03T10:04:12.509Z"),
                "Switch both probes to",
            ),
            (
                "assistant",
                iso("2025-02-03T10:04:29.077Z"),
                "Done. Both probes in",
            ),
            (
                "user",
                iso("2025-02-03T10:09:03.244Z"),
                "Also, the deploy workflow",
            ),
            (
                "assistant",
                iso("2025-02-03T10:09:15.968Z"),
                "Replaced `sleep 60` in",
            ),
            ("user", iso("2025-02-03T10:12:37.015Z"), "perfect, thanks"),
            (
                "assistant",
                iso("2025-02-03T10:12:39.560Z"),
                "You're welcome. Once this",
            ),
        ],
    );
    // The response_item copies and the injected instructions are not turns.
    assert!(
        c.turns
            .iter()
            .all(|t| !t.text.contains("<user_instructions>"))
    );
    assert!(summary.skipped["codex record other than a message event"] > 0);
    check_chunks(c);
}

#[test]
fn chatgpt_export_follows_the_branch_the_user_kept() {
    let (all, summary) = read_ok("chatgpt/conversations.json", ConversationFormat::ChatGpt);
    assert_eq!(all.len(), 3);
    let by_id = |id: &str| all.iter().find(|c| c.id == id).unwrap();
    let branched = by_id("1ee36511-59a2-4025-a370-3750e672acda");
    assert_eq!(
        branched.title.as_deref(),
        Some("thiserror vs anyhow for a library")
    );
    expect(
        branched,
        &[
            ("user", unix("1736935618.530911"), "For a library crate"),
            (
                "assistant",
                unix("1736935629.771462"),
                "Use `thiserror` for the",
            ),
            ("user", unix("1736935940.884102"), "I prefer thiserror for"),
            (
                "assistant",
                unix("1736935945.887493"),
                "Yes, that's the most",
            ),
            ("user", unix("1736936282.06553"), "How do I add"),
            (
                "assistant",
                unix("1736936290.83678"),
                "`anyhow` keeps the original",
            ),
        ],
    );
    assert!(
        branched
            .turns
            .iter()
            .all(|t| !t.text.contains("anyhow or thiserror?"))
    );
    let tools = by_id("a086df98-f2ab-49e4-b53c-31ac800ff1f3");
    expect(
        tools,
        &[
            ("user", unix("1737567611.203587"), "Here's a CSV of"),
            ("assistant", unix("1737567624.824578"), "Yes, but mostly in"),
            ("user", unix("1737568012.331104"), "So it's the tail,"),
            ("assistant", unix("1737568022.380492"), "A slow tail with"),
            ("user", unix("1737568327.91825"), "Ok, we'll pin the"),
            (
                "assistant",
                unix("1737568331.418962"),
                "Sounds reasonable. Keep this",
            ),
        ],
    );
    let hidden = by_id("58047013-de6f-455f-ae45-59a88c2c9e7e");
    assert_eq!(hidden.turns.len(), 6);
    assert_eq!(hidden.turns[0].authored_at, unix("1736349664.512331"));
    assert!(summary.skipped["tool output (ChatGPT tool message)"] >= 1);
    assert!(summary.skipped["tool call (ChatGPT code or browsing)"] >= 1);
    for c in &all {
        check_chunks(c);
    }
}

#[test]
fn claude_ai_export() {
    let (all, _) = read_ok("claude-ai/conversations.json", ConversationFormat::ClaudeAi);
    assert_eq!(all.len(), 2);
    let c = &all[0];
    assert_eq!(c.id, "2f3a57f1-853e-439c-80f6-93858da1763f");
    assert_eq!(
        c.title.as_deref(),
        Some("Webhook retry queue: Postgres vs Redis vs SQS")
    );
    expect(
        c,
        &[
            (
                "user",
                iso("2025-02-11T14:03:22.118563Z"),
                "We need retries for",
            ),
            (
                "assistant",
                iso("2025-02-11T14:03:25.520676Z"),
                "At 50k deliveries a",
            ),
            (
                "user",
                iso("2025-02-11T14:11:48.904227Z"),
                "We decided to use",
            ),
            (
                "assistant",
                iso("2025-02-11T14:11:51.675537Z"),
                "Exponential backoff with jitter",
            ),
            (
                "user",
                iso("2025-02-11T14:15:03.051998Z"),
                "I prefer full jitter",
            ),
            (
                "assistant",
                iso("2025-02-11T14:15:05.045002Z"),
                "Full jitter works well",
            ),
        ],
    );
    assert_eq!(all[1].id, "dd2e4a15-8c4a-4449-b11f-8936b09cb559");
    assert_eq!(all[1].turns.len(), 6);
    // The long reply (1,696 characters) is cut at sentence ends into pieces that each fit.
    let chunks = chunk_exchanges(&c.turns, 0);
    let pieces: Vec<_> = chunks.iter().filter(|ch| ch.first_turn == 1).collect();
    assert_eq!(pieces.len(), 3);
    for p in &pieces[..2] {
        assert!(
            p.text.trim_end().ends_with(['.', '!', '?', ':', '`', ')']) || p.text.ends_with('\n'),
            "{:?}",
            p.text
        );
    }
    for c in &all {
        check_chunks(c);
    }
}

#[test]
fn slack_day_file_names_its_people() {
    let (c, summary) = read_ok(
        "slack/engineering/2025-03-10.json",
        ConversationFormat::Slack,
    );
    let c = &c[0];
    assert_eq!(c.id, "slack/engineering/2025-03-10");
    assert_eq!(c.title.as_deref(), Some("#engineering 2025-03-10"));
    expect(
        c,
        &[
            (
                "Maya Okafor",
                unix("1741600000.000100"),
                "Heads up: the nightly",
            ),
            (
                "Jonas Weber",
                unix("1741600412.331829"),
                "Looking. My first guess",
            ),
            ("Jonas Weber", unix("1741603317.540169"), "Found it, and it"),
            (
                "Priya Raman",
                unix("1741611054.118409"),
                "Quick question about the",
            ),
            (
                "Maya Okafor",
                unix("1741611322.904779"),
                "Yes, Thursday 14:00 UTC",
            ),
        ],
    );
    assert_eq!(summary.skipped["channel event (join, leave, topic)"], 1);
    assert!(
        c.turns
            .iter()
            .all(|t| matches!(t.role, Role::Participant(_)))
    );
    check_chunks(c);
    let (next, _) = read_ok(
        "slack/engineering/2025-03-11.json",
        ConversationFormat::Slack,
    );
    assert_eq!(next[0].turns.len(), 4);
}

#[test]
fn gemini_cli_recording_and_jsonl() {
    let (c, summary) = read_ok(
        "gemini-cli/session-2025-04-01T09-00-cd17a7ae.json",
        ConversationFormat::GeminiCli,
    );
    let c = &c[0];
    assert_eq!(c.id, "cd17a7ae-0576-462e-a886-8d5da49e3b07");
    expect(
        c,
        &[
            (
                "user",
                iso("2025-04-01T09:00:12.331Z"),
                "I'm moving our feature-flag",
            ),
            (
                "assistant",
                iso("2025-04-01T09:00:41.077Z"),
                "There are four things",
            ),
            (
                "user",
                iso("2025-04-01T09:04:03.550Z"),
                "Let's use pgx directly,",
            ),
            (
                "assistant",
                iso("2025-04-01T09:04:14.880Z"),
                "Added `github.com/jackc/pgx/v5` v5.7.2",
            ),
            ("user", iso("2025-04-01T09:07:02.663Z"), "How should I run"),
            (
                "assistant",
                iso("2025-04-01T09:07:19.305Z"),
                "Use testcontainers-go with the",
            ),
        ],
    );
    assert!(c.turns[1].text.contains("[read_file]"));
    assert_eq!(summary.skipped["gemini info or error message"], 1);
    check_chunks(c);

    let (c, _) = read_ok(
        "gemini-cli/session-483e7421-9d51-4294-86ac-1b53dae87f0d.jsonl",
        ConversationFormat::GeminiCli,
    );
    let c = &c[0];
    assert_eq!(c.id, "483e7421-9d51-4294-86ac-1b53dae87f0d");
    expect(
        c,
        &[
            ("user", iso("2025-04-03T14:20:05.120Z"), "Our Redis for the"),
            (
                "assistant",
                iso("2025-04-03T14:20:31.907Z"),
                "For a cache, `noeviction`",
            ),
            ("user", iso("2025-04-03T14:25:48.002Z"), "We decided to use"),
            (
                "assistant",
                iso("2025-04-03T14:25:58.314Z"),
                "`maxmemory` is 4 GB",
            ),
            (
                "user",
                iso("2025-04-03T14:31:20.771Z"),
                "Done, thanks. I prefer",
            ),
            (
                "assistant",
                iso("2025-04-03T14:31:40.902Z"),
                "Good idea. Alert on",
            ),
        ],
    );
    check_chunks(c);
}

#[test]
fn plain_text_transcripts_in_both_styles() {
    for (file, first_user, first_reply) in [
        (
            "plain-text/angle-quote.txt",
            "Should our nightly report",
            "I'd use a systemd",
        ),
        (
            "plain-text/human-assistant.md",
            "We log with plain",
            "Yes, if anything consumes",
        ),
        (
            "plain-text/user-ai.txt",
            "Our public API needs",
            "Token bucket, in most",
        ),
    ] {
        let (c, _) = read_ok(file, ConversationFormat::PlainText);
        let c = &c[0];
        assert_eq!(c.turns.len(), 8, "{file}: {:#?}", outline(c));
        for (i, t) in c.turns.iter().enumerate() {
            let want = if i % 2 == 0 {
                Role::User
            } else {
                Role::Assistant
            };
            assert_eq!(t.role, want, "{file} turn {i}");
            assert_eq!(t.authored_at, None);
        }
        assert!(c.turns[0].text.starts_with(first_user), "{file}");
        assert!(c.turns[1].text.starts_with(first_reply), "{file}");
        check_chunks(c);
    }
}

#[test]
fn a_truncated_export_keeps_the_whole_conversations_before_the_break() {
    let (got, r) = read("broken/truncated-conversations.json");
    assert_eq!(got.len(), 1, "only the complete conversation is handed out");
    assert_eq!(got[0].id, "a6032593-f73e-4711-8b66-741770bdcaf8");
    assert_eq!(got[0].turns.len(), 4);
    match r {
        Err(ExportError::Malformed { position, .. }) => {
            assert!(position.starts_with("line 1, column 9"), "{position}")
        }
        other => panic!("expected a malformed export, got {other:?}"),
    }
}

#[test]
fn a_malformed_transcript_line_is_an_error_naming_the_line() {
    let (got, r) = read("broken/malformed.jsonl");
    assert!(
        got.is_empty(),
        "the conversation is never handed out half read"
    );
    match r {
        Err(e @ ExportError::Malformed { .. }) => {
            let text = e.to_string();
            assert!(text.contains("line 4"), "{text}");
        }
        other => panic!("expected a malformed line, got {other:?}"),
    }
}

#[test]
fn files_that_are_not_conversations_say_so() {
    for file in ["slack/users.json", "slack/channels.json", "README.md"] {
        let (got, r) = read(file);
        assert!(got.is_empty());
        assert!(
            matches!(r, Err(ExportError::NotAConversation(_))),
            "{file}: {r:?}"
        );
    }
}

fn read_bytes(name: &str, bytes: &[u8]) -> (Vec<Conversation>, Result<ReadSummary, ExportError>) {
    let mut got = Vec::new();
    let r = read_conversations(bytes, &SourceName::new(name), &mut |c| got.push(c));
    (got, r)
}

#[test]
fn text_that_only_looks_like_json_is_no_conversation_rather_than_a_broken_export() {
    for text in [
        "[2025-01-01 10:00] User: hello there\n[2025-01-01 10:01] Bot: hi\n",
        "[.ShellClassInfo]\nIconResource=foo.ico\n",
        "[INFO] server started\n",
        "{not json at all}\n",
        "{\"id\": 1}\n{\"unrelated\": true}\n",
    ] {
        let (got, r) = read_bytes("x", text.as_bytes());
        assert!(got.is_empty());
        assert!(
            matches!(r, Err(ExportError::NotAConversation(_))),
            "{text:?}: {r:?}"
        );
    }
}

#[test]
fn gemini_jsonl_with_an_untyped_header_is_read() {
    let text = concat!(
        r#"{"sessionId":"g-1","projectHash":"abc","startTime":"2025-05-01T10:00:00.000Z"}"#,
        "\n",
        r#"{"type":"user","timestamp":"2025-05-01T10:00:01.000Z","content":[{"text":"Which index should the events table get?"}]}"#,
        "\n",
        r#"{"type":"gemini","timestamp":"2025-05-01T10:00:09.000Z","content":[{"text":"A GIN index on the payload."}],"toolCalls":[{"name":"run_shell_command","args":{"command":"psql -c '\\d events'"}}]}"#,
        "\n",
    );
    let (got, r) = read_bytes("g", text.as_bytes());
    assert_eq!(r.unwrap().format, Some(ConversationFormat::GeminiCli));
    assert_eq!(got[0].id, "g-1");
    assert_eq!(got[0].turns.len(), 2);
    assert!(got[0].turns[1].text.contains("[run_shell_command]"));
}

#[test]
fn hostile_tool_arguments_do_not_panic() {
    let line = serde_json::json!({
        "type": "assistant", "sessionId": "s", "timestamp": "2025-01-01T00:00:00Z",
        "message": {"role": "assistant", "content": [
            {"type": "tool_use", "id": "t", "name": "Read",
             "input": {"file_path": "a", "offset": i64::MAX, "limit": 1}}]},
    });
    let user = serde_json::json!({
        "type": "user", "sessionId": "s", "timestamp": "2025-01-01T00:00:00Z",
        "message": {"role": "user", "content": "why?"},
    });
    let text = format!("{user}\n{line}\n");
    let (got, r) = read_bytes("s", text.as_bytes());
    r.unwrap();
    assert!(got[0].turns[1].text.contains("[Read a:"));
}

#[test]
fn slack_authors_without_a_profile_are_named_from_users_json() {
    let users = std::fs::read_to_string(fixture("slack/users.json")).unwrap();
    let people = mempalace_core::conversations::formats::slack_people(&users);
    assert_eq!(
        people.get("U07JWEB9R3T").map(String::as_str),
        Some("Jonas Weber")
    );
    let day = r#"[{"type":"message","user":"U07JWEB9R3T","text":"deploy is green","ts":"1741600000.000100"},
                 {"type":"message","user":"U0NOBODY","text":"thanks","ts":"1741600001.000100"}]"#;
    let mut got = Vec::new();
    read_conversations(
        day.as_bytes(),
        &SourceName::new("eng/2025-03-10").with_people(std::sync::Arc::new(people)),
        &mut |c| got.push(c),
    )
    .unwrap();
    let names: Vec<&str> = got[0].turns.iter().map(|t| t.role.label()).collect();
    assert_eq!(names, ["Jonas Weber", "U0NOBODY"]);
}

#[test]
fn broken_exports_are_named_broken_with_the_file_s_own_line_numbers() {
    // A bad line after blank lines is reported at its line in the file.
    let good = r#"{"type":"user","sessionId":"s","timestamp":"2025-01-01T00:00:00Z","message":{"role":"user","content":"hi"}}"#;
    let text = format!("\n{good}\n\n\n{good}\n{{\"type\": broken\n");
    let (_, r) = read_bytes("s", text.as_bytes());
    let e = r.unwrap_err().to_string();
    assert!(e.contains("line 6"), "{e}");
    // A ChatGPT export corrupt inside its first conversation is broken, not "no conversation".
    let export = std::fs::read_to_string(fixture("chatgpt/conversations.json")).unwrap();
    let corrupt = export.replacen("\"mapping\"", "\"mapping\" !", 1);
    let (_, r) = read_bytes("c", corrupt.as_bytes());
    assert!(matches!(r, Err(ExportError::Malformed { .. })), "{r:?}");
}
