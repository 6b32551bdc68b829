//! Chat exports that are one JSON document: ChatGPT's and Claude.ai's `conversations.json`
//! (arrays of conversations, read one conversation at a time), Slack day files (arrays of
//! messages), and single-conversation documents (Gemini CLI recordings, Gemini API
//! `contents`, a lone ChatGPT or Claude.ai conversation, a flat `role`/`content` list).

use std::collections::HashSet;
use std::io::Read;

use serde::de::{Deserializer as _, SeqAccess, Visitor};
use serde_json::{Map, Value};

use super::agent_sessions::{gemini_message_text, gemini_text};
use super::tool_digest::tool_call_digest;
use super::{ConversationFormat, ExportError, ReadSummary, SourceName, push_message};
use crate::conversations::timestamps::from_json;
use crate::conversations::{Conversation, Role, Turn};

/// Hands each element of a top-level JSON array to `each`, holding one element at a time.
struct EachElement<'a>(&'a mut dyn FnMut(Value));

impl<'de> Visitor<'de> for EachElement<'_> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON array")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(v) = seq.next_element::<Value>()? {
            (self.0)(v);
        }
        Ok(())
    }
}

/// A many-message chat gathered from array elements (Slack messages, a flat message list).
#[derive(Default)]
struct Gathered {
    turns: Vec<Turn>,
    format: Option<ConversationFormat>,
}

/// Reads a top-level array: conversations are handed out one by one as they complete; a
/// Slack day or a flat message list is one conversation, handed out at the end.
pub(super) fn read_array<R: Read>(
    reader: R,
    line_offset: usize,
    source: &SourceName,
    summary: &mut ReadSummary,
    emit: &mut dyn FnMut(Conversation, &mut ReadSummary),
) -> Result<(), ExportError> {
    let mut gathered = Gathered::default();
    let mut index = 0usize;
    let mut recognised = false;
    let mut each = |element: Value| {
        index += 1;
        let Value::Object(o) = element else {
            summary.skip("array element that is not an object");
            return;
        };
        let known = if let Some(c) =
            whole_conversation(&o, &format!("{}#{index}", source.name), summary)
        {
            emit(c, summary);
            true
        } else if o.get("type").and_then(Value::as_str) == Some("message") && o.contains_key("ts") {
            gathered.format = Some(ConversationFormat::Slack);
            slack_message(&o, &source.people, &mut gathered.turns, summary);
            true
        } else if o.contains_key("role") {
            flat_message(&o, &mut gathered, summary);
            true
        } else {
            summary.skip("array element of an unknown kind");
            false
        };
        recognised |= known;
    };
    let mut de = serde_json::Deserializer::from_reader(reader);
    let parsed = de
        .deserialize_seq(EachElement(&mut each))
        .and_then(|()| de.end());
    if let Err(e) = parsed {
        return Err(ExportError::unless_recognised(
            recognised,
            "JSON",
            line_offset,
            &e,
        ));
    }
    if let Some(format) = gathered.format {
        summary.format = Some(format);
        emit(
            Conversation {
                id: source.name.clone(),
                title: slack_title(format, &source.name),
                turns: gathered.turns,
            },
            summary,
        );
    }
    Ok(())
}

/// `#engineering 2025-03-10` for a Slack day file named `engineering/2025-03-10`.
fn slack_title(format: ConversationFormat, name: &str) -> Option<String> {
    (format == ConversationFormat::Slack)
        .then(|| {
            let (folders, day) = name.rsplit_once('/')?;
            let channel = folders.rsplit('/').next().unwrap_or(folders);
            Some(format!("#{channel} {day}"))
        })
        .flatten()
}

/// Reads a document that is one object (one conversation).
pub(super) fn read_document<R: Read>(
    reader: R,
    line_offset: usize,
    source: &SourceName,
    summary: &mut ReadSummary,
    emit: &mut dyn FnMut(Conversation, &mut ReadSummary),
) -> Result<(), ExportError> {
    let mut de = serde_json::Deserializer::from_reader(reader);
    let value: Value = serde::Deserialize::deserialize(&mut de)
        .map_err(|e| ExportError::unless_recognised(false, "JSON", line_offset, &e))?;
    de.end()
        .map_err(|e| ExportError::unless_recognised(false, "JSON", line_offset, &e))?;
    let Value::Object(o) = value else {
        return Ok(());
    };
    let name = &source.name;
    if let Some(c) = whole_conversation(&o, name, summary) {
        emit(c, summary);
    } else if let Some(Value::Array(items)) = o.get("contents").or_else(|| o.get("messages")) {
        let mut gathered = Gathered::default();
        for item in items {
            match item {
                Value::Object(m) if m.get("type").is_some_and(Value::is_string) => {
                    gemini_recorded(m, &mut gathered, summary)
                }
                Value::Object(m) => flat_message(m, &mut gathered, summary),
                _ => summary.skip("message that is not an object"),
            }
        }
        if let Some(format) = gathered.format {
            summary.format = Some(format);
            let id = ["sessionId", "id", "uuid"]
                .iter()
                .find_map(|k| o.get(*k).and_then(Value::as_str))
                .map_or_else(|| name.clone(), str::to_string);
            let title = ["title", "name"]
                .iter()
                .find_map(|k| o.get(*k).and_then(Value::as_str))
                .map(str::to_string);
            emit(
                Conversation {
                    id,
                    title,
                    turns: gathered.turns,
                },
                summary,
            );
        }
    }
    Ok(())
}

/// A whole exported conversation (a ChatGPT `mapping`, a Claude.ai `chat_messages`), with
/// its format noted in the summary; `None` for any other object.
fn whole_conversation(
    o: &Map<String, Value>,
    fallback_id: &str,
    summary: &mut ReadSummary,
) -> Option<Conversation> {
    if o.contains_key("mapping") {
        summary.format = Some(ConversationFormat::ChatGpt);
        Some(chatgpt(o, fallback_id, summary))
    } else if o.contains_key("chat_messages") {
        summary.format = Some(ConversationFormat::ClaudeAi);
        Some(claude_ai(o, fallback_id, summary))
    } else {
        None
    }
}

fn str_of<'a>(o: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    o.get(key).and_then(Value::as_str)
}

/// One ChatGPT conversation: the branch the user last saw (from `current_node` up to the
/// root), else the first child at every fork; system and tool messages are left out.
fn chatgpt(o: &Map<String, Value>, fallback_id: &str, summary: &mut ReadSummary) -> Conversation {
    let id = str_of(o, "conversation_id")
        .or_else(|| str_of(o, "id"))
        .unwrap_or(fallback_id)
        .to_string();
    let title = str_of(o, "title").map(str::to_string);
    let empty = Map::new();
    let mapping = o
        .get("mapping")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let node = |id: &str| mapping.get(id).and_then(Value::as_object);
    let mut path: Vec<&Map<String, Value>> = Vec::new();
    let mut seen = HashSet::new();
    if let Some(current) = str_of(o, "current_node").filter(|c| mapping.contains_key(*c)) {
        let mut at = Some(current);
        while let Some(id) = at.filter(|id| seen.insert(*id)) {
            let Some(n) = node(id) else { break };
            path.push(n);
            at = str_of(n, "parent");
        }
        path.reverse();
    } else {
        let root = mapping
            .iter()
            .filter_map(|(id, n)| Some((id.as_str(), n.as_object()?)))
            .filter(|(_, n)| n.get("parent").is_none_or(Value::is_null))
            .min_by_key(|(_, n)| !n.get("message").is_none_or(Value::is_null))
            .map(|(id, _)| id);
        let mut at = root;
        while let Some(id) = at.filter(|id| seen.insert(*id)) {
            let Some(n) = node(id) else { break };
            path.push(n);
            at = n
                .get("children")
                .and_then(Value::as_array)
                .and_then(|c| c.first())
                .and_then(Value::as_str);
        }
    }
    let mut turns = Vec::new();
    for n in path {
        let Some(m) = n.get("message").and_then(Value::as_object) else {
            continue;
        };
        let role = m
            .get("author")
            .and_then(|a| a.get("role"))
            .and_then(Value::as_str)
            .unwrap_or("");
        let hidden = m
            .get("metadata")
            .and_then(|md| md.get("is_visually_hidden_from_conversation"))
            .and_then(Value::as_bool)
            == Some(true);
        let content = m.get("content").and_then(Value::as_object);
        let kind = content
            .and_then(|c| str_of(c, "content_type"))
            .unwrap_or("text");
        let to_tool = str_of(m, "recipient").is_some_and(|r| r != "all");
        let role = match role {
            "user" => Role::User,
            "assistant" => Role::Assistant,
            "tool" => {
                summary.skip("tool output (ChatGPT tool message)");
                continue;
            }
            _ => {
                summary.skip("system or hidden message");
                continue;
            }
        };
        if hidden {
            summary.skip("system or hidden message");
            continue;
        }
        if to_tool || !matches!(kind, "text" | "multimodal_text") {
            summary.skip("tool call (ChatGPT code or browsing)");
            continue;
        }
        let text = content
            .and_then(|c| c.get("parts"))
            .and_then(Value::as_array)
            .map(|parts| {
                parts
                    .iter()
                    .filter_map(Value::as_str)
                    .filter(|p| !p.is_empty())
                    .collect::<Vec<_>>()
                    .join("\n")
            })
            .unwrap_or_default();
        let at = m.get("create_time").and_then(from_json);
        push_message(
            &mut turns,
            Turn {
                role,
                text: text.trim().to_string(),
                authored_at: at,
            },
            summary,
        );
    }
    Conversation { id, title, turns }
}

/// One Claude.ai conversation (`uuid`, `name`, `chat_messages`).
fn claude_ai(o: &Map<String, Value>, fallback_id: &str, summary: &mut ReadSummary) -> Conversation {
    let id = str_of(o, "uuid").unwrap_or(fallback_id).to_string();
    let title = str_of(o, "name")
        .filter(|n| !n.is_empty())
        .map(str::to_string);
    let mut turns = Vec::new();
    for m in o
        .get("chat_messages")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_object)
    {
        let role = match str_of(m, "sender").or_else(|| str_of(m, "role")) {
            Some("human" | "user") => Role::User,
            Some("assistant" | "ai") => Role::Assistant,
            _ => {
                summary.skip("message from neither side");
                continue;
            }
        };
        let text = claude_blocks(m.get("content"), summary)
            .filter(|t| !t.trim().is_empty())
            .or_else(|| str_of(m, "text").map(str::to_string))
            .unwrap_or_default();
        let at = m.get("created_at").and_then(from_json);
        push_message(
            &mut turns,
            Turn {
                role,
                text: text.trim().to_string(),
                authored_at: at,
            },
            summary,
        );
    }
    Conversation { id, title, turns }
}

/// The text of Claude.ai content blocks; tool uses become digests, tool results are dropped.
fn claude_blocks(content: Option<&Value>, summary: &mut ReadSummary) -> Option<String> {
    let blocks = content?.as_array()?;
    let mut parts = Vec::new();
    for b in blocks {
        match b.get("type").and_then(Value::as_str) {
            Some("text") => parts.push(
                b.get("text")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string(),
            ),
            Some("tool_use") => {
                let name = b.get("name").and_then(Value::as_str).unwrap_or("Unknown");
                parts.push(tool_call_digest(
                    name,
                    b.get("input").unwrap_or(&Value::Null),
                ));
                summary.skip("tool call kept as a one-line digest");
            }
            Some("tool_result") => summary.skip("tool output (Claude.ai tool result)"),
            _ => summary.skip("non-text content block (image, document)"),
        }
    }
    Some(parts.join("\n"))
}

/// Slack message subtypes that are people talking; every other subtype is a channel event.
const SLACK_SPOKEN: [&str; 4] = [
    "bot_message",
    "thread_broadcast",
    "me_message",
    "file_share",
];

fn slack_message(
    o: &Map<String, Value>,
    people: &std::collections::HashMap<String, String>,
    turns: &mut Vec<Turn>,
    summary: &mut ReadSummary,
) {
    if let Some(sub) = str_of(o, "subtype")
        && !SLACK_SPOKEN.contains(&sub)
    {
        summary.skip("channel event (join, leave, topic)");
        return;
    }
    let profile = o.get("user_profile").and_then(Value::as_object);
    let name = profile
        .and_then(|p| str_of(p, "real_name").or_else(|| str_of(p, "display_name")))
        .filter(|n| !n.trim().is_empty())
        .or_else(|| {
            str_of(o, "user")
                .and_then(|u| people.get(u))
                .map(String::as_str)
        })
        .or_else(|| str_of(o, "user"))
        .or_else(|| str_of(o, "username"))
        .or_else(|| str_of(o, "bot_id"))
        .unwrap_or("unknown");
    // No brackets or control characters in a name: it is rendered as `[name]`.
    let name: String = name
        .chars()
        .map(|c| {
            if c == '[' || c == ']' || c.is_control() {
                '_'
            } else {
                c
            }
        })
        .collect();
    let text = str_of(o, "text").unwrap_or("").trim().to_string();
    if text.is_empty() {
        summary.skip("message without text (a file or reaction only)");
        return;
    }
    push_message(
        turns,
        Turn {
            role: Role::Participant(name.trim().to_string()),
            text,
            authored_at: o.get("ts").and_then(from_json),
        },
        summary,
    );
}

/// A `{role, content|parts}` message of a flat list (Gemini API or a Claude-style list).
fn flat_message(o: &Map<String, Value>, gathered: &mut Gathered, summary: &mut ReadSummary) {
    let role = match str_of(o, "role") {
        Some("user" | "human") => Role::User,
        Some("model") => {
            gathered.format = Some(ConversationFormat::GeminiCli);
            Role::Assistant
        }
        Some("assistant" | "ai") => {
            gathered.format.get_or_insert(ConversationFormat::ClaudeAi);
            Role::Assistant
        }
        _ => {
            summary.skip("system or hidden message");
            return;
        }
    };
    let text = match o.get("parts") {
        Some(parts) => gemini_text(Some(parts)),
        None => match o.get("content") {
            Some(c @ Value::Array(_)) => claude_blocks(Some(c), summary).unwrap_or_default(),
            c => gemini_text(c),
        },
    };
    let at = o
        .get("timestamp")
        .or_else(|| o.get("created_at"))
        .and_then(from_json);
    push_message(
        &mut gathered.turns,
        Turn {
            role,
            text: text.trim().to_string(),
            authored_at: at,
        },
        summary,
    );
}

/// A Gemini CLI chat-recording message (`type` user / gemini / info / error).
fn gemini_recorded(o: &Map<String, Value>, gathered: &mut Gathered, summary: &mut ReadSummary) {
    let role = match str_of(o, "type") {
        Some("user") => Role::User,
        Some("gemini" | "model") => Role::Assistant,
        _ => {
            summary.skip("gemini info or error message");
            return;
        }
    };
    gathered.format = Some(ConversationFormat::GeminiCli);
    let text = gemini_message_text(o, summary);
    push_message(
        &mut gathered.turns,
        Turn {
            role,
            text,
            authored_at: o.get("timestamp").and_then(from_json),
        },
        summary,
    );
}
