//! Reading conversations out of AI chat exports and transcripts, each format recognised from
//! the content (not the file name), streamed so a 200 MB export never sits in memory whole:
//! a JSON array is read one element at a time, a JSONL transcript one line at a time.
//!
//! | format | shape | recognised by |
//! |---|---|---|
//! | Claude Code session | JSONL | `type` `user`/`assistant`/`summary` lines |
//! | OpenAI Codex CLI rollout | JSONL | a `session_meta` line |
//! | Gemini CLI session | JSONL, or JSON `{messages: [{type: user/gemini}]}` / `{contents}` | `session_metadata`; message types; role `model` |
//! | ChatGPT `conversations.json` | JSON array (or one object) | `mapping` |
//! | Claude.ai export | JSON array (or one object) | `chat_messages` |
//! | Slack export day file | JSON array | `type: message` with `ts` |
//! | plain text | `> user` lines, or `Human:` / `Assistant:` turns | the turn marks |

mod agent_sessions;
mod chat_exports;
mod plain_text;
pub mod tool_digest;

use std::collections::BTreeMap;
use std::io::{BufRead, Read};

use serde::Serialize;

use super::Conversation;

/// The export formats conversations are read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ConversationFormat {
    /// A Claude Code session (`~/.claude/projects/*/<session>.jsonl`).
    ClaudeCode,
    /// An OpenAI Codex CLI rollout (`~/.codex/sessions/**/rollout-*.jsonl`).
    Codex,
    /// A Gemini CLI session (JSONL or the chat-recording JSON).
    GeminiCli,
    /// A ChatGPT data export's `conversations.json`.
    ChatGpt,
    /// A Claude.ai data export's `conversations.json`.
    ClaudeAi,
    /// A day file of a Slack workspace export (`<channel>/<YYYY-MM-DD>.json`).
    Slack,
    /// A plain-text transcript.
    PlainText,
}

impl ConversationFormat {
    /// A short name for reports ("claude-code", "chatgpt", ...).
    pub fn name(self) -> &'static str {
        match self {
            ConversationFormat::ClaudeCode => "claude-code",
            ConversationFormat::Codex => "codex",
            ConversationFormat::GeminiCli => "gemini-cli",
            ConversationFormat::ChatGpt => "chatgpt",
            ConversationFormat::ClaudeAi => "claude-ai",
            ConversationFormat::Slack => "slack",
            ConversationFormat::PlainText => "plain-text",
        }
    }
}

/// Why an export could not be read. Conversations handed out before the error are complete;
/// the one being read when it struck is never handed out.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// The file is not valid JSON / JSONL (or ends early), at this position.
    #[error("malformed {what} at {position}: {message}")]
    Malformed {
        /// What was being read ("JSON", "JSONL line").
        what: &'static str,
        /// Where: `line L, column C` (1-based).
        position: String,
        /// The parser's complaint.
        message: String,
    },
    /// The file holds no conversation in a known format.
    #[error("not a conversation: {0}")]
    NotAConversation(String),
    /// Reading failed.
    #[error("read failed: {0}")]
    Io(#[from] std::io::Error),
}

impl ExportError {
    /// A parse failure right at the start of a file whose format is not recognised yet
    /// (the first 64 characters of its first line): such a file is simply not a
    /// conversation (a log line starting with `[`, an INI file). Anything later, once the
    /// format is known, or text that ends early (a truncated download) is a broken export.
    fn unless_recognised(
        recognised: bool,
        what: &'static str,
        line_offset: usize,
        e: &serde_json::Error,
    ) -> Self {
        let at_the_start = e.line() <= 1 && e.column() <= 64;
        if recognised || e.is_eof() || e.is_io() || !at_the_start {
            ExportError::json(what, line_offset, e)
        } else {
            ExportError::NotAConversation(format!("not {what}: {e}"))
        }
    }

    fn json(what: &'static str, line_offset: usize, e: &serde_json::Error) -> Self {
        if e.is_io() {
            return ExportError::Io(std::io::Error::other(e.to_string()));
        }
        let message = e.to_string();
        let message = message
            .rsplit_once(" at line ")
            .map_or(message.as_str(), |(m, _)| m)
            .to_string();
        ExportError::Malformed {
            what,
            position: format!("line {}, column {}", e.line() + line_offset, e.column()),
            message,
        }
    }
}

/// What reading one file found besides its conversations.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ReadSummary {
    /// The format recognised (`None` when nothing was recognised).
    pub format: Option<ConversationFormat>,
    /// Conversations handed out.
    pub conversations: u64,
    /// What was left out of the turns, and how often (a reason → a count): hidden system
    /// messages, tool outputs kept only as a digest, meta lines, empty conversations.
    pub skipped: BTreeMap<String, u64>,
}

impl ReadSummary {
    /// Counts one thing left out, for `reason`.
    pub fn skip(&mut self, reason: &str) {
        *self.skipped.entry(reason.to_string()).or_default() += 1;
    }
}

/// Where a file sits, for formats that name their conversation by it: `name` is used as the
/// id of a conversation whose export has none (a Slack channel's day file:
/// `engineering/2025-03-10`; a plain transcript: its file name).
#[derive(Debug, Clone, Default)]
pub struct SourceName {
    /// The id to give a conversation without one.
    pub name: String,
    /// Display names by user id (a Slack export's `users.json`), for messages that do not
    /// carry their author's profile.
    pub people: std::sync::Arc<std::collections::HashMap<String, String>>,
}

impl SourceName {
    /// A source named `name`, with no directory of people.
    pub fn new(name: impl Into<String>) -> Self {
        SourceName {
            name: name.into(),
            people: Default::default(),
        }
    }

    /// Adds a directory of people: user id → display name.
    pub fn with_people(
        mut self,
        people: std::sync::Arc<std::collections::HashMap<String, String>>,
    ) -> Self {
        self.people = people;
        self
    }
}

/// The people of a Slack export's `users.json` (an array of users with `id` and
/// `real_name` or `profile.real_name` / `display_name` / `name`): user id → display name.
pub fn slack_people(users_json: &str) -> std::collections::HashMap<String, String> {
    let Ok(serde_json::Value::Array(users)) = serde_json::from_str(users_json) else {
        return Default::default();
    };
    users
        .iter()
        .filter_map(|u| {
            let id = u.get("id")?.as_str()?;
            let profile = u.get("profile");
            let name = [
                u.get("real_name"),
                profile.and_then(|p| p.get("real_name")),
                profile.and_then(|p| p.get("display_name")),
                u.get("name"),
            ]
            .into_iter()
            .flatten()
            .filter_map(serde_json::Value::as_str)
            .find(|n| !n.trim().is_empty())?;
            Some((id.to_string(), name.to_string()))
        })
        .collect()
}

/// Reads every conversation in one file, handing each to `sink` as soon as it is complete,
/// oldest first as the file has them. The format is recognised from the content.
pub fn read_conversations<R: BufRead>(
    mut reader: R,
    source: &SourceName,
    sink: &mut dyn FnMut(Conversation),
) -> Result<ReadSummary, ExportError> {
    let mut summary = ReadSummary::default();
    let (first, leading_lines) = first_meaningful_byte(&mut reader)?;
    let mut emit = |c: Conversation, summary: &mut ReadSummary| {
        if c.turns.is_empty() {
            summary.skip("conversation without any text");
        } else {
            summary.conversations += 1;
            sink(c);
        }
    };
    match first {
        None => return Err(ExportError::NotAConversation("the file is empty".into())),
        Some(b'[') => {
            chat_exports::read_array(reader, leading_lines, source, &mut summary, &mut emit)?
        }
        Some(b'{') => {
            let mut line = String::new();
            reader.read_line(&mut line)?;
            // JSONL when the first line is a whole record and another object follows it (a
            // JSON document has nothing after its one value); a lone line that is a
            // transcript record counts too.
            let parsed = serde_json::from_str::<serde_json::Value>(&line);
            let (next, between) = match parsed {
                Ok(serde_json::Value::Object(_)) => first_meaningful_byte(&mut reader)?,
                _ => (None, 0),
            };
            match parsed {
                Ok(serde_json::Value::Object(record))
                    if next == Some(b'{') || agent_sessions::is_record(&record) =>
                {
                    agent_sessions::read_lines(
                        record,
                        reader,
                        leading_lines + 2 + between,
                        source,
                        &mut summary,
                        &mut emit,
                    )?
                }
                // A whole JSON document on one line, or spread over many.
                _ => {
                    let rest = std::io::Cursor::new(line).chain(reader);
                    chat_exports::read_document(
                        rest,
                        leading_lines,
                        source,
                        &mut summary,
                        &mut emit,
                    )?
                }
            }
        }
        Some(_) => {
            let mut text = String::new();
            reader.read_to_string(&mut text).map_err(|e| {
                if e.kind() == std::io::ErrorKind::InvalidData {
                    ExportError::NotAConversation("the file is not UTF-8 text".into())
                } else {
                    ExportError::Io(e)
                }
            })?;
            plain_text::read_transcript(&text, source, &mut summary, &mut emit)?
        }
    }
    if summary.format.is_none() {
        return Err(ExportError::NotAConversation(
            "no known chat export or transcript format".into(),
        ));
    }
    Ok(summary)
}

/// Skips a byte-order mark and white space; the first byte after them (unread), and the
/// line breaks skipped (to number lines as the file does).
fn first_meaningful_byte<R: BufRead>(reader: &mut R) -> std::io::Result<(Option<u8>, usize)> {
    let mut at_start = true;
    let mut lines = 0;
    loop {
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            return Ok((None, lines));
        }
        if at_start && buf.starts_with(&[0xEF, 0xBB, 0xBF]) {
            reader.consume(3);
            at_start = false;
            continue;
        }
        at_start = false;
        match buf.iter().position(|b| !b.is_ascii_whitespace()) {
            Some(i) => {
                let b = buf[i];
                lines += buf[..i].iter().filter(|&&c| c == b'\n').count();
                reader.consume(i);
                return Ok((Some(b), lines));
            }
            None => {
                let n = buf.len();
                lines += buf.iter().filter(|&&c| c == b'\n').count();
                reader.consume(n);
            }
        }
    }
}

/// Most characters of one message filed: a message longer than this is a pasted document or
/// log, not conversation (ChatGPT's own messages stay far below it). Its first
/// `MAX_MESSAGE_CHARS` characters are kept with a note of what was left out, and the read's
/// summary counts it, so one 50 MB line cannot turn into 60,000 drawers.
pub const MAX_MESSAGE_CHARS: usize = 100_000;

/// The summary's reason for a message cut at [`MAX_MESSAGE_CHARS`].
pub const CUT_MESSAGE_REASON: &str =
    "message over 100000 characters (the rest left out; mine a pasted document as a project file)";

/// Cuts `text` to [`MAX_MESSAGE_CHARS`] characters with a note of how many were left out,
/// counting the cut in `summary`. Linear in the text's length.
pub(crate) fn cap_message(text: &mut String, summary: &mut ReadSummary) {
    if text.len() <= MAX_MESSAGE_CHARS {
        return;
    }
    let Some((cut, _)) = text.char_indices().nth(MAX_MESSAGE_CHARS) else {
        return;
    };
    let left_out = text[cut..].chars().count();
    text.truncate(cut);
    text.push_str(&format!(
        "\n[… {left_out} more characters of this message were not filed]"
    ));
    summary.skip(CUT_MESSAGE_REASON);
}

/// [`push_turn`] for one message of an export, cut at [`MAX_MESSAGE_CHARS`] first.
pub(crate) fn push_message(
    turns: &mut Vec<super::Turn>,
    mut turn: super::Turn,
    summary: &mut ReadSummary,
) {
    cap_message(&mut turn.text, summary);
    push_turn(turns, turn);
}

/// Appends `text` to the last turn when it has the same role (an assistant's tool loop, a
/// user's consecutive messages), else starts a new turn; a participant's every message is a
/// turn of its own, with its own time.
pub(crate) fn push_turn(turns: &mut Vec<super::Turn>, turn: super::Turn) {
    if turn.text.trim().is_empty() {
        return;
    }
    match turns.last_mut() {
        Some(last)
            if last.role == turn.role && !matches!(turn.role, super::Role::Participant(_)) =>
        {
            last.text.push('\n');
            last.text.push_str(&turn.text);
            if last.authored_at.is_none() {
                last.authored_at = turn.authored_at;
            }
        }
        _ => turns.push(turn),
    }
}
