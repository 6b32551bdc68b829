//! Agent transcripts by rule, not by the megabyte: a tool call becomes a one-line digest, a
//! tool's output is cut to what a memory needs (MemPalace 3.11's rules), and the chrome agents
//! inject (system reminders, hook output) is stripped.

use serde_json::Value;

/// Lines kept from each end of a shell command's output.
pub const SHELL_OUTPUT_LINES: usize = 20;
/// Matches kept from a search tool's output.
pub const SEARCH_MATCHES: usize = 20;
/// Characters kept from any other tool's output.
pub const OTHER_OUTPUT_CHARS: usize = 2048;
/// Characters of a tool call's arguments kept in its digest.
pub const CALL_ARGUMENT_CHARS: usize = 200;

fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((b, _)) => format!("{}...", &text[..b]),
        None => text.to_string(),
    }
}

fn field<'a>(input: &'a Value, key: &str) -> &'a str {
    input.get(key).and_then(Value::as_str).unwrap_or("")
}

/// A tool call as one line: `[Bash] cargo test`, `[Read src/lib.rs]`, `[Grep] fn main in src`.
pub fn tool_call_digest(name: &str, input: &Value) -> String {
    match name {
        "Bash" => format!(
            "[Bash] {}",
            cut(field(input, "command"), CALL_ARGUMENT_CHARS)
        ),
        "Read" => {
            let path = input
                .get("file_path")
                .and_then(Value::as_str)
                .unwrap_or("?");
            match (
                input.get("offset").and_then(Value::as_i64),
                input.get("limit").and_then(Value::as_i64),
            ) {
                (Some(o), Some(l)) => match o.checked_add(l) {
                    Some(end) => format!("[Read {path}:{o}-{end}]"),
                    None => format!("[Read {path}:{o}+{l}]"),
                },
                _ => format!("[Read {path}]"),
            }
        }
        "Grep" => {
            let target = [field(input, "path"), field(input, "glob")]
                .into_iter()
                .find(|s| !s.is_empty())
                .unwrap_or("");
            format!("[Grep] {} in {target}", field(input, "pattern"))
        }
        "Glob" => format!("[Glob] {}", field(input, "pattern")),
        "Edit" | "Write" => format!(
            "[{name} {}]",
            input
                .get("file_path")
                .and_then(Value::as_str)
                .unwrap_or("?")
        ),
        _ => {
            let args = if input.is_object() {
                input.to_string()
            } else {
                "{}".to_string()
            };
            format!("[{name}] {}", cut(&args, CALL_ARGUMENT_CHARS))
        }
    }
}

/// A tool's output as a memory keeps it, each line marked `→ `: nothing for file reads and
/// edits (the files hold that), head and tail of a shell's output, the first matches of a
/// search, the first characters of anything else. `None` when nothing is kept.
pub fn tool_output_digest(tool: &str, output: &str) -> Option<String> {
    let text = output.trim();
    if text.is_empty() || matches!(tool, "Read" | "Edit" | "Write") {
        return None;
    }
    let lines: Vec<&str> = text.lines().collect();
    let marked = |ls: &[&str]| format!("→ {}", ls.join("\n→ "));
    Some(match tool {
        "Bash" if lines.len() > 2 * SHELL_OUTPUT_LINES => {
            let n = SHELL_OUTPUT_LINES;
            format!(
                "{}\n→ ... [{} lines omitted] ...\n{}",
                marked(&lines[..n]),
                lines.len() - 2 * n,
                marked(&lines[lines.len() - n..])
            )
        }
        "Bash" => marked(&lines),
        "Grep" | "Glob" if lines.len() > SEARCH_MATCHES => format!(
            "{}\n→ ... [{} more matches]",
            marked(&lines[..SEARCH_MATCHES]),
            lines.len() - SEARCH_MATCHES
        ),
        "Grep" | "Glob" => marked(&lines),
        _ if text.chars().count() > OTHER_OUTPUT_CHARS => format!(
            "→ {}... [truncated, {} chars]",
            cut(text, OTHER_OUTPUT_CHARS).trim_end_matches("..."),
            text.chars().count()
        ),
        _ => format!("→ {text}"),
    })
}

/// The text of a tool result's `content` (a string, or text blocks).
pub fn tool_result_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(items) => items
            .iter()
            .filter_map(|item| match item {
                Value::String(s) => Some(s.as_str()),
                Value::Object(o) if o.get("type").and_then(Value::as_str) == Some("text") => {
                    o.get("text").and_then(Value::as_str)
                }
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// Tags agents inject into user turns; a block from `<tag>` at a line start to `</tag>` is
/// dropped when it does not cross a blank line.
const NOISE_TAGS: [&str; 6] = [
    "system-reminder",
    "command-message",
    "command-name",
    "task-notification",
    "user-prompt-submit-hook",
    "hook_output",
];

/// Lines that are agent chrome when they start with these.
const NOISE_LINE_PREFIXES: [&str; 10] = [
    "CURRENT TIME:",
    "VERIFIED FACTS (do not contradict)",
    "AGENT SPECIALIZATION:",
    "Checking verified facts...",
    "Injecting timestamp...",
    "Starting background pipeline...",
    "Checking emotional weights...",
    "Auto-save reminder...",
    "Checking pipeline...",
    "MemPalace auto-save checkpoint.",
];

const HOOK_NAMES: [&str; 8] = [
    "Stop",
    "PreCompact",
    "PreToolUse",
    "PostToolUse",
    "UserPromptSubmit",
    "Notification",
    "SessionStart",
    "SessionEnd",
];

/// Removes injected tags, hook-run lines and UI chrome from a turn, as 3.11's `strip_noise`
/// does: everything is anchored at line starts, so prose that mentions them stays.
pub fn strip_agent_noise(text: &str) -> String {
    let mut text = text.to_string();
    for tag in NOISE_TAGS {
        text = drop_tag_blocks(&text, tag);
    }
    let kept: Vec<&str> = text
        .split('\n')
        .filter(|line| {
            let l = line.strip_prefix("> ").unwrap_or(line);
            !(NOISE_LINE_PREFIXES.iter().any(|p| l.starts_with(p))
                || is_hook_line(l)
                || is_collapsed_marker(l))
        })
        .collect();
    let mut out = kept.join("\n");
    while out.contains("\n\n\n\n") {
        out = out.replace("\n\n\n\n", "\n\n\n");
    }
    out.trim().to_string()
}

/// `Ran 2 Stop hooks`.
fn is_hook_line(line: &str) -> bool {
    let Some(rest) = line.strip_prefix("Ran ") else {
        return false;
    };
    let digits = rest.chars().take_while(char::is_ascii_digit).count();
    let Some(rest) = rest[digits..].strip_prefix(' ').filter(|_| digits > 0) else {
        return false;
    };
    HOOK_NAMES
        .iter()
        .any(|h| rest.strip_prefix(h).is_some_and(|r| r.starts_with(" hook")))
}

/// `… +42 lines (ctrl+o to expand)`.
fn is_collapsed_marker(line: &str) -> bool {
    line.strip_prefix('…')
        .map(str::trim_start)
        .and_then(|r| r.strip_prefix('+'))
        .is_some_and(|r| {
            let d = r.chars().take_while(char::is_ascii_digit).count();
            d > 0 && r[d..].starts_with(" lines")
        })
}

fn drop_tag_blocks(text: &str, tag: &str) -> String {
    let open = format!("<{tag}");
    let close = format!("</{tag}>");
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    loop {
        // The next opening tag at a line start (after an optional "> ").
        let found = line_starts(rest).find(|&start| {
            let line = &rest[start..];
            let after = line.strip_prefix("> ").unwrap_or(line);
            after.starts_with(&open)
                && after[open.len()..].starts_with(|c: char| c == '>' || c.is_whitespace())
        });
        let Some(start) = found else {
            out.push_str(rest);
            return out;
        };
        let Some(end) = rest[start..].find(&close).map(|e| start + e + close.len()) else {
            out.push_str(rest);
            return out;
        };
        let block = &rest[start..end];
        if crosses_blank_line(block) {
            out.push_str(&rest[..start + open.len()]);
            rest = &rest[start + open.len()..];
            continue;
        }
        out.push_str(&rest[..start]);
        let tail = &rest[end..];
        let spaces = tail.len() - tail.trim_start_matches([' ', '\t']).len();
        let tail = &tail[spaces..];
        rest = tail.strip_prefix('\n').unwrap_or(tail);
    }
}

fn line_starts(text: &str) -> impl Iterator<Item = usize> + '_ {
    std::iter::once(0).chain(text.match_indices('\n').map(|(i, _)| i + 1))
}

fn crosses_blank_line(block: &str) -> bool {
    block.split('\n').skip(1).any(|line| line.trim().is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn calls_become_one_line() {
        assert_eq!(
            tool_call_digest("Bash", &json!({"command": "cargo test"})),
            "[Bash] cargo test"
        );
        assert_eq!(
            tool_call_digest(
                "Read",
                &json!({"file_path": "a.rs", "offset": 10, "limit": 5})
            ),
            "[Read a.rs:10-15]"
        );
        assert_eq!(
            tool_call_digest("Grep", &json!({"pattern": "fn main", "path": "src"})),
            "[Grep] fn main in src"
        );
        let long = tool_call_digest("WebFetch", &json!({"url": "x".repeat(500)}));
        assert!(long.starts_with("[WebFetch] {\"url\":\"xxx") && long.ends_with("..."));
        assert!(long.chars().count() < 230);
    }

    #[test]
    fn outputs_are_cut_by_tool() {
        assert_eq!(tool_output_digest("Read", "fn main() {}"), None);
        let shell: Vec<String> = (1..=60).map(|i| format!("line {i}")).collect();
        let d = tool_output_digest("Bash", &shell.join("\n")).unwrap();
        assert!(d.starts_with("→ line 1\n"));
        assert!(d.contains("→ ... [20 lines omitted] ..."));
        assert!(d.ends_with("→ line 60"));
        assert!(!d.contains("line 21\n"));
        let other = tool_output_digest("Fetch", &"y".repeat(5000)).unwrap();
        assert!(other.ends_with("[truncated, 5000 chars]"));
        assert!(other.chars().count() < 2100);
    }

    #[test]
    fn injected_chrome_goes_and_prose_stays() {
        let text = "<system-reminder>\nBe brief.\n</system-reminder>\nWhy does the build fail?\nRan 2 Stop hooks\nI read about <system-reminder> tags today.";
        assert_eq!(
            strip_agent_noise(text),
            "Why does the build fail?\nI read about <system-reminder> tags today."
        );
        // A block that would cross a blank line is left alone.
        let open = "<system-reminder>\nkeep\n\nthis</system-reminder>";
        assert_eq!(strip_agent_noise(open), open);
    }
}
