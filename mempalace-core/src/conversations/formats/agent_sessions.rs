//! Agent session transcripts, one JSON record per line: Claude Code, OpenAI Codex CLI and
//! Gemini CLI. The whole file is one conversation, handed out only once every line has read.

use std::collections::HashMap;
use std::io::BufRead;

use serde_json::{Map, Value};

use super::tool_digest::{
    strip_agent_noise, tool_call_digest, tool_output_digest, tool_result_text,
};
use super::{ConversationFormat, ExportError, ReadSummary, SourceName, push_message};
use crate::conversations::timestamps::from_json;
use crate::conversations::{Conversation, Role, Turn};

/// Whether a one-line JSON object is a transcript record (it has a `type` and is not a whole
/// exported conversation).
pub(super) fn is_record(record: &Map<String, Value>) -> bool {
    record.get("type").is_some_and(Value::is_string)
        && !["mapping", "chat_messages", "contents"]
            .iter()
            .any(|k| record.contains_key(*k))
}

/// The transcript being read.
struct Session {
    format: Option<ConversationFormat>,
    id: Option<String>,
    title: Option<String>,
    turns: Vec<Turn>,
    /// Claude Code's tool-call ids → tool names, to digest each result by its tool.
    tools: HashMap<String, String>,
}

/// Reads the records after `first` (already parsed) to the end; `next_line` is the file's
/// line number of the reader's first line (blank lines before it were skipped), for error
/// positions.
pub(super) fn read_lines<R: BufRead>(
    first: Map<String, Value>,
    reader: R,
    next_line: usize,
    source: &SourceName,
    summary: &mut ReadSummary,
    emit: &mut dyn FnMut(Conversation, &mut ReadSummary),
) -> Result<(), ExportError> {
    let mut session = Session {
        format: None,
        id: None,
        title: None,
        turns: Vec::new(),
        tools: HashMap::new(),
    };
    session.record(&first, summary);
    for (n, line) in reader.lines().enumerate() {
        let number = next_line + n;
        let line = line.map_err(|e| ExportError::Malformed {
            what: "JSONL line",
            position: format!("line {number}"),
            message: e.to_string(),
        })?;
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Value>(&line) {
            Ok(Value::Object(record)) => session.record(&record, summary),
            Ok(_) => summary.skip("JSONL line that is not an object"),
            Err(e) => {
                return Err(ExportError::unless_recognised(
                    session.format.is_some(),
                    "JSONL line",
                    number - 1,
                    &e,
                ));
            }
        }
    }
    let Some(format) = session.format else {
        return Ok(());
    };
    summary.format = Some(format);
    emit(
        Conversation {
            id: session.id.unwrap_or_else(|| source.name.clone()),
            title: session.title,
            turns: session.turns,
        },
        summary,
    );
    Ok(())
}

fn text_of(v: Option<&Value>) -> &str {
    v.and_then(Value::as_str).unwrap_or("")
}

impl Session {
    fn record(&mut self, r: &Map<String, Value>, summary: &mut ReadSummary) {
        let kind = text_of(r.get("type"));
        let at = r.get("timestamp").and_then(from_json);
        match (self.format, kind) {
            // Gemini CLI's newer JSONL: a header without a type.
            (None, "")
                if r.contains_key("sessionId")
                    && (r.contains_key("projectHash") || r.contains_key("startTime")) =>
            {
                self.format = Some(ConversationFormat::GeminiCli);
                self.id = r
                    .get("sessionId")
                    .and_then(Value::as_str)
                    .map(str::to_string);
            }
            (_, "session_meta") => {
                self.format = Some(ConversationFormat::Codex);
                let payload = r.get("payload");
                self.id = payload
                    .and_then(|p| p.get("id"))
                    .and_then(Value::as_str)
                    .map(str::to_string);
            }
            (_, "session_metadata") => {
                self.format = Some(ConversationFormat::GeminiCli);
                self.id = r
                    .get("sessionId")
                    .and_then(Value::as_str)
                    .map(str::to_string);
            }
            (Some(ConversationFormat::Codex), "event_msg") => self.codex_event(r, at, summary),
            (Some(ConversationFormat::Codex), _) => {
                summary.skip("codex record other than a message event")
            }
            (Some(ConversationFormat::GeminiCli), "user" | "gemini") => {
                let role = if kind == "user" {
                    Role::User
                } else {
                    Role::Assistant
                };
                let text = gemini_message_text(r, summary);
                push_message(
                    &mut self.turns,
                    Turn {
                        role,
                        text,
                        authored_at: at,
                    },
                    summary,
                );
            }
            (Some(ConversationFormat::GeminiCli), _) => {
                summary.skip("gemini record without message text")
            }
            (None | Some(ConversationFormat::ClaudeCode), "user" | "assistant" | "summary")
                if r.contains_key("message") || r.contains_key("summary") =>
            {
                self.format = Some(ConversationFormat::ClaudeCode);
                self.claude_code(r, kind, at, summary);
            }
            _ => summary.skip("transcript record of another kind"),
        }
    }

    fn codex_event(
        &mut self,
        r: &Map<String, Value>,
        at: Option<String>,
        summary: &mut ReadSummary,
    ) {
        let payload = r.get("payload");
        let role = match text_of(payload.and_then(|p| p.get("type"))) {
            "user_message" => Role::User,
            "agent_message" => Role::Assistant,
            _ => {
                summary.skip("codex tool or status event");
                return;
            }
        };
        let text = text_of(payload.and_then(|p| p.get("message")))
            .trim()
            .to_string();
        push_message(
            &mut self.turns,
            Turn {
                role,
                text,
                authored_at: at,
            },
            summary,
        );
    }

    fn claude_code(
        &mut self,
        r: &Map<String, Value>,
        kind: &str,
        at: Option<String>,
        summary: &mut ReadSummary,
    ) {
        if kind == "summary" {
            if self.title.is_none() {
                self.title = r.get("summary").and_then(Value::as_str).map(str::to_string);
            }
            return;
        }
        if self.id.is_none() {
            self.id = r
                .get("sessionId")
                .and_then(Value::as_str)
                .map(str::to_string);
        }
        if r.get("isSidechain").and_then(Value::as_bool) == Some(true) {
            summary.skip("subagent (sidechain) message");
            return;
        }
        if r.get("isCompactSummary").and_then(Value::as_bool) == Some(true) {
            summary.skip("compaction summary written by the agent");
            return;
        }
        if r.get("isMeta").and_then(Value::as_bool) == Some(true) {
            summary.skip("meta message injected by the agent");
            return;
        }
        let content = r.get("message").and_then(|m| m.get("content"));
        let blocks: Vec<&Value> = match content {
            Some(Value::String(s)) => {
                let text = strip_agent_noise(s);
                let role = if kind == "user" {
                    Role::User
                } else {
                    Role::Assistant
                };
                push_message(
                    &mut self.turns,
                    Turn {
                        role,
                        text,
                        authored_at: at,
                    },
                    summary,
                );
                return;
            }
            Some(Value::Array(items)) => items.iter().collect(),
            _ => return,
        };
        let mut words = Vec::new();
        let mut results = Vec::new();
        for block in blocks {
            match text_of(block.get("type")) {
                "text" => words.push(text_of(block.get("text")).to_string()),
                "tool_use" => {
                    let name = text_of(block.get("name"));
                    let name = if name.is_empty() { "Unknown" } else { name };
                    if let Some(id) = block.get("id").and_then(Value::as_str) {
                        self.tools.insert(id.to_string(), name.to_string());
                    }
                    words.push(tool_call_digest(
                        name,
                        block.get("input").unwrap_or(&Value::Null),
                    ));
                    summary.skip("tool call kept as a one-line digest");
                }
                "tool_result" => {
                    let tool = block
                        .get("tool_use_id")
                        .and_then(Value::as_str)
                        .and_then(|id| self.tools.get(id))
                        .map_or("Unknown", String::as_str);
                    let output = tool_result_text(block.get("content").unwrap_or(&Value::Null));
                    match tool_output_digest(tool, &output) {
                        Some(d) => {
                            summary.skip("tool output cut to a digest");
                            results.push(d);
                        }
                        None => summary.skip("tool output of a file read or edit"),
                    }
                }
                "thinking" | "redacted_thinking" => summary.skip("assistant thinking"),
                _ => summary.skip("non-text content block (image, document)"),
            }
        }
        let text = strip_agent_noise(&words.join("\n"));
        if kind == "assistant" {
            let mut all = text;
            for r in results {
                all = format!("{all}\n{r}");
            }
            push_message(
                &mut self.turns,
                Turn {
                    role: Role::Assistant,
                    text: all.trim().to_string(),
                    authored_at: at,
                },
                summary,
            );
            return;
        }
        // A user record: its own words are a user turn; tool results belong to the assistant's
        // tool loop before it.
        if !results.is_empty() {
            let digest = results.join("\n");
            match self.turns.last_mut() {
                Some(last) if last.role == Role::Assistant => {
                    last.text.push('\n');
                    last.text.push_str(&digest);
                }
                _ => summary.skip("tool output without a tool call"),
            }
        }
        push_message(
            &mut self.turns,
            Turn {
                role: Role::User,
                text,
                authored_at: at,
            },
            summary,
        );
    }
}

/// A Gemini CLI message as a turn's text: its content, then a one-line digest of each of its
/// `toolCalls` (their results are left out).
pub(super) fn gemini_message_text(
    message: &Map<String, Value>,
    summary: &mut ReadSummary,
) -> String {
    let mut text = gemini_text(message.get("content"));
    for call in message
        .get("toolCalls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let name = call
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("Unknown");
        let args = call.get("args").unwrap_or(&Value::Null);
        text = format!("{text}\n{}", tool_call_digest(name, args));
        summary.skip("tool call kept as a one-line digest");
    }
    text.trim().to_string()
}

/// Gemini CLI message content: a string, or parts with `text`.
pub(super) fn gemini_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.trim().to_string(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| match p {
                Value::String(s) => Some(s.as_str()),
                _ => p.get("text").and_then(Value::as_str),
            })
            .filter(|t| !t.trim().is_empty())
            .collect::<Vec<_>>()
            .join("\n")
            .trim()
            .to_string(),
        _ => String::new(),
    }
}
