//! Plain-text transcripts: MemPalace's own `> user` style (a line starting with `>` opens a
//! user turn, the lines after it are the reply), or named turns (`Human:` / `Assistant:`,
//! `User:` / `AI:`, ...), each running until the next turn mark.

use super::{ConversationFormat, ExportError, ReadSummary, SourceName, cap_message, push_turn};
use crate::conversations::{Conversation, Role, Turn};

/// Names that open a user turn (`Name:` at a line start, any case).
const USER_NAMES: [&str; 5] = ["human", "user", "me", "you", "q"];
/// Names that open an assistant turn.
const ASSISTANT_NAMES: [&str; 9] = [
    "assistant",
    "ai",
    "claude",
    "chatgpt",
    "gpt",
    "gemini",
    "bot",
    "model",
    "a",
];

/// The role and the rest of a line that opens a named turn.
fn named_turn(line: &str) -> Option<(Role, &str)> {
    let (name, rest) = line.split_once(':')?;
    let name = name.trim().to_lowercase();
    if USER_NAMES.contains(&name.as_str()) {
        Some((Role::User, rest.trim_start()))
    } else if ASSISTANT_NAMES.contains(&name.as_str()) {
        Some((Role::Assistant, rest.trim_start()))
    } else {
        None
    }
}

/// Reads one transcript; text with neither style (fewer than 3 `>` lines, or named turns
/// without both sides) is not a conversation.
pub(super) fn read_transcript(
    text: &str,
    source: &SourceName,
    summary: &mut ReadSummary,
    emit: &mut dyn FnMut(Conversation, &mut ReadSummary),
) -> Result<(), ExportError> {
    let lines: Vec<&str> = text.lines().collect();
    let quoted = lines
        .iter()
        .filter(|l| l.trim_start().starts_with('>'))
        .count();
    let mut turns = if quoted >= 3 {
        quoted_turns(&lines)
    } else {
        let named = named_turns(&lines);
        let has = |r: Role| named.iter().any(|t| t.role == r);
        if !(has(Role::User) && has(Role::Assistant)) {
            return Ok(());
        }
        named
    };
    summary.format = Some(ConversationFormat::PlainText);
    for turn in &mut turns {
        cap_message(&mut turn.text, summary);
    }
    emit(
        Conversation {
            id: source.name.clone(),
            title: None,
            turns,
        },
        summary,
    );
    Ok(())
}

/// Flushes the lines gathered for one turn.
fn flush(turns: &mut Vec<Turn>, role: &Role, body: &mut Vec<&str>) {
    let text = body.join("\n").trim().to_string();
    body.clear();
    push_turn(
        turns,
        Turn {
            role: role.clone(),
            text,
            authored_at: None,
        },
    );
}

fn quoted_turns(lines: &[&str]) -> Vec<Turn> {
    let mut turns = Vec::new();
    let mut body: Vec<&str> = Vec::new();
    // Text before the first quoted line is a note, not anyone's turn.
    let mut role = Role::Participant("note".into());
    for line in lines {
        let trimmed = line.trim_start();
        if let Some(user) = trimmed.strip_prefix('>') {
            if role != Role::User {
                flush(&mut turns, &role, &mut body);
                role = Role::User;
            }
            body.push(user.strip_prefix(' ').unwrap_or(user));
        } else {
            if role == Role::User {
                flush(&mut turns, &role, &mut body);
                role = Role::Assistant;
            }
            body.push(line);
        }
    }
    flush(&mut turns, &role, &mut body);
    turns
}

fn named_turns(lines: &[&str]) -> Vec<Turn> {
    let mut turns = Vec::new();
    let mut body: Vec<&str> = Vec::new();
    let mut role = Role::Participant("note".into());
    for line in lines {
        match named_turn(line) {
            Some((next, rest)) => {
                flush(&mut turns, &role, &mut body);
                role = next;
                body.push(rest);
            }
            None => body.push(line),
        }
    }
    flush(&mut turns, &role, &mut body);
    turns
}
