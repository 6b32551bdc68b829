//! A session transcript named by a hook payload: checked before anything reads it, then read
//! line by line for what the checkpoint needs (how many messages the user sent, the last of
//! them, the session's working folder). Claude Code's JSONL and Codex's rollout JSONL alike.

use std::io::{BufRead, BufReader, Read};
use std::path::{Component, PathBuf};

use serde_json::{Map, Value};

/// How many of the last user messages a checkpoint summarizes (3.11's `_RECENT_MSG_COUNT`).
pub const RECENT_MESSAGES: usize = 30;
/// Characters kept of each recent message.
const RECENT_MESSAGE_CHARS: usize = 200;
/// Lines read looking for the session's working folder.
const CWD_SCAN_LINES: usize = 200;
/// Longest transcript record read (a longer line is passed over).
const MAX_RECORD_BYTES: u64 = 16 * 1024 * 1024;

/// Harness-injected text that lands in a transcript as a user message (3.11's list): a
/// message opening with one of these is not what the user said.
const HARNESS_BOILERPLATE: [&str; 11] = [
    "<command-message>",
    "<command-name>",
    "<command-args>",
    "<system-reminder>",
    "<local-command-caveat>",
    "<local-command-stdout>",
    "<task-notification>",
    "[SYSTEM NOTIFICATION",
    "[Request interrupted by user",
    "[Image:",
    "Base directory for this skill:",
];

/// Why a transcript path was not used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TranscriptRefusal {
    /// Not an absolute path (after `~`).
    #[error("transcript path {0:?} is not absolute")]
    NotAbsolute(String),
    /// A `..` component.
    #[error("transcript path {0:?} has a '..' component")]
    ParentComponent(String),
    /// Not `.jsonl` / `.json`.
    #[error("transcript path {0:?} is not a .jsonl or .json file")]
    NotJsonl(String),
    /// Missing, unreadable, a folder or a device.
    #[error("transcript {path:?} is not a readable regular file: {reason}")]
    NotARegularFile {
        /// The path.
        path: String,
        /// What it is instead.
        reason: String,
    },
    /// A symbolic link (a hook reads the file the harness wrote, not what a link points to).
    #[error("transcript path {0:?} is a symbolic link")]
    Symlink(String),
    /// Outside the folders transcripts may come from.
    #[error("transcript {path:?} is outside the allowed folders ({allowed})")]
    OutsideAllowedFolders {
        /// The resolved path.
        path: String,
        /// The folders allowed.
        allowed: String,
    },
    /// Larger than the limit.
    #[error("transcript {path:?} is {size} bytes, more than the {limit}-byte limit")]
    TooLarge {
        /// The path.
        path: String,
        /// Its size.
        size: u64,
        /// The limit.
        limit: u64,
    },
}

/// A transcript that passed the checks: an absolute, regular, non-symlinked `.jsonl`/`.json`
/// file inside an allowed folder and under the size limit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TranscriptFile {
    /// Its resolved path.
    pub path: PathBuf,
    /// Its size when checked.
    pub size: u64,
    /// Most bytes read from it (the size limit it was checked against).
    limit: u64,
}

impl TranscriptFile {
    /// Checks `raw` (as the payload gave it) against `allowed_roots` and `max_bytes`.
    pub fn check(
        raw: &str,
        allowed_roots: &[PathBuf],
        max_bytes: u64,
    ) -> Result<TranscriptFile, TranscriptRefusal> {
        let given = crate::hooks::expand_home(raw);
        if !given.is_absolute() {
            return Err(TranscriptRefusal::NotAbsolute(raw.to_string()));
        }
        if given.components().any(|c| c == Component::ParentDir) {
            return Err(TranscriptRefusal::ParentComponent(raw.to_string()));
        }
        let suffix_ok = given
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| e == "jsonl" || e == "json");
        if !suffix_ok {
            return Err(TranscriptRefusal::NotJsonl(raw.to_string()));
        }
        let not_regular = |reason: String| TranscriptRefusal::NotARegularFile {
            path: raw.to_string(),
            reason,
        };
        let meta = std::fs::symlink_metadata(&given).map_err(|e| not_regular(e.to_string()))?;
        if meta.file_type().is_symlink() {
            return Err(TranscriptRefusal::Symlink(raw.to_string()));
        }
        if !meta.is_file() {
            return Err(not_regular("not a regular file".to_string()));
        }
        // Folders on the way may be links (a home on another disk); the file's real place
        // must still be inside an allowed folder's real place.
        let resolved = given
            .canonicalize()
            .map_err(|e| not_regular(e.to_string()))?;
        let inside = allowed_roots.iter().any(|root| {
            root.canonicalize()
                .is_ok_and(|real_root| resolved.starts_with(real_root))
        });
        if !inside {
            return Err(TranscriptRefusal::OutsideAllowedFolders {
                path: resolved.display().to_string(),
                allowed: allowed_roots
                    .iter()
                    .map(|r| r.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        }
        if resolved.to_str().is_none() {
            return Err(not_regular("its real path is not UTF-8".to_string()));
        }
        if meta.len() > max_bytes {
            return Err(TranscriptRefusal::TooLarge {
                path: resolved.display().to_string(),
                size: meta.len(),
                limit: max_bytes,
            });
        }
        Ok(TranscriptFile {
            path: resolved,
            size: meta.len(),
            limit: max_bytes,
        })
    }

    /// Most bytes read from it.
    pub(crate) fn limit(&self) -> u64 {
        self.limit
    }

    /// Each line that is a JSON object, in order (others are passed over); stops at a read
    /// error.
    fn records(&self, mut each: impl FnMut(&Map<String, Value>) -> bool) {
        // Opened again without following links and only if still a regular file (a
        // transcript swapped for a link, a FIFO or a device since the check is not read), and
        // read no further than the size the check allowed.
        let Ok(file) = mempalace_core::regular_file::open_regular(&self.path) else {
            return;
        };
        let mut reader = BufReader::new(file.take(self.limit));
        let mut line = Vec::new();
        loop {
            line.clear();
            match (&mut reader)
                .take(MAX_RECORD_BYTES)
                .read_until(b'\n', &mut line)
            {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
            if line.len() as u64 >= MAX_RECORD_BYTES && !line.ends_with(b"\n") {
                // A record this long is not one to count: skip to the next line.
                let mut rest = Vec::new();
                if reader.read_until(b'\n', &mut rest).is_err() {
                    return;
                }
                continue;
            }
            if let Ok(Value::Object(record)) = serde_json::from_slice::<Value>(&line)
                && !each(&record)
            {
                return;
            }
        }
    }

    /// What the session has read so far, in one pass: the user's message count (as 3.11's
    /// `_count_human_messages` counts: tool results included, slash-command expansions not)
    /// and the last [`RECENT_MESSAGES`] things the user said.
    pub fn read_messages(&self) -> SessionMessages {
        let mut out = SessionMessages::default();
        self.records(|record| {
            if let Some(Value::Object(message)) = record.get("message") {
                if message.get("role").and_then(Value::as_str) == Some("user") {
                    let text = content_text(message.get("content"));
                    if !text.contains("<command-message>") {
                        out.human_messages += 1;
                    }
                    out.remember(&text);
                }
            } else if record.get("type").and_then(Value::as_str) == Some("event_msg")
                && let Some(Value::Object(payload)) = record.get("payload")
                && payload.get("type").and_then(Value::as_str) == Some("user_message")
                && let Some(text) = payload.get("message").and_then(Value::as_str)
            {
                if !text.contains("<command-message>") {
                    out.human_messages += 1;
                }
                out.remember(text);
            }
            true
        });
        out
    }

    /// The session's working folder: a Claude Code record's `cwd`, or a Codex rollout's
    /// `session_meta` / `turn_context` `payload.cwd`; a git worktree under
    /// `<project>/.claude/worktrees/` counts as `<project>`.
    pub fn working_folder(&self) -> Option<String> {
        let mut found = None;
        let mut lines = 0;
        self.records(|record| {
            lines += 1;
            let cwd = record.get("cwd").and_then(Value::as_str).or_else(|| {
                match record.get("type").and_then(Value::as_str) {
                    Some("session_meta") | Some("turn_context") => record
                        .get("payload")
                        .and_then(|p| p.get("cwd"))
                        .and_then(Value::as_str),
                    _ => None,
                }
            });
            if let Some(c) = cwd.map(normalize_folder).filter(|c| !c.is_empty()) {
                found = Some(c);
                return false;
            }
            lines < CWD_SCAN_LINES
        });
        found
    }
}

/// `\` as `/`, no trailing `/`, a `.claude/worktrees/<name>` worktree as its project.
pub fn normalize_folder(cwd: &str) -> String {
    let mut norm = cwd.replace('\\', "/").trim_end_matches('/').to_string();
    if let Some((project, _)) = norm.split_once("/.claude/worktrees/") {
        norm = project.to_string();
    }
    norm
}

/// A message's text: a string, or the `text` of each block joined by spaces (blocks without
/// text, such as tool results, add nothing).
fn content_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter_map(|b| b.as_object())
            .map(|b| b.get("text").and_then(Value::as_str).unwrap_or(""))
            .collect::<Vec<_>>()
            .join(" "),
        _ => String::new(),
    }
}

/// What a transcript says the user said.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionMessages {
    /// User messages so far (3.11's count, which the save interval is measured in).
    pub human_messages: u64,
    /// The last [`RECENT_MESSAGES`] of them that are the user's own words, each cut to 200
    /// characters.
    pub recent: Vec<String>,
}

impl SessionMessages {
    fn remember(&mut self, text: &str) {
        let trimmed = text.trim();
        if trimmed.is_empty() || HARNESS_BOILERPLATE.iter().any(|m| trimmed.starts_with(m)) {
            return;
        }
        if self.recent.len() == RECENT_MESSAGES {
            self.recent.remove(0);
        }
        self.recent
            .push(trimmed.chars().take(RECENT_MESSAGE_CHARS).collect());
    }
}

/// Words that say nothing of a session's theme (3.11's English list).
const THEME_STOPWORDS: &str = "the a an and or but in on at to for of is it i me my you your we our \
    this that with from by was were be been are not no yes can do did dont \
    will would should could have has had lets let just also like so if then \
    ok okay sure yeah hey hi here there what when where how why which some \
    all any each every about into out up down over after before between \
    get got make made need want use used using check look see run try \
    know think right now still already really very much more most too \
    file files code one two new first last next thing things way well";

/// Up to `max` topic words of the messages: the most frequent words of four or more letters
/// that are not stopwords, ties in the order first seen (3.11's `_extract_themes`).
pub fn themes(messages: &[String], max: usize) -> Vec<String> {
    let stop: std::collections::HashSet<&str> = THEME_STOPWORDS.split_whitespace().collect();
    let mut counts: Vec<(String, usize)> = Vec::new();
    for message in messages {
        for word in message.to_lowercase().split_whitespace() {
            let clean =
                word.trim_matches(|c: char| ".,;:!?\"'`()[]{}#<>/\\-_=+@$%^&*~".contains(c));
            if clean.chars().count() >= 4
                && !stop.contains(clean)
                && clean.chars().all(char::is_alphabetic)
            {
                match counts.iter_mut().find(|(w, _)| w == clean) {
                    Some((_, n)) => *n += 1,
                    None => counts.push((clean.to_string(), 1)),
                }
            }
        }
    }
    // A stable sort keeps first-seen order among equal counts.
    counts.sort_by_key(|(_, n)| std::cmp::Reverse(*n));
    counts.into_iter().take(max).map(|(w, _)| w).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    #[test]
    fn checks_refuse_what_a_hook_must_not_read() {
        let home = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let roots = vec![home.path().to_path_buf()];
        let ok = write(home.path(), "s.jsonl", "{}\n");
        let file = TranscriptFile::check(ok.to_str().unwrap(), &roots, 1 << 20).unwrap();
        assert_eq!(file.size, 3);
        let outside_file = write(outside.path(), "s.jsonl", "{}\n");
        assert!(matches!(
            TranscriptFile::check(outside_file.to_str().unwrap(), &roots, 1 << 20),
            Err(TranscriptRefusal::OutsideAllowedFolders { .. })
        ));
        let link = home.path().join("link.jsonl");
        std::os::unix::fs::symlink(&outside_file, &link).unwrap();
        assert!(matches!(
            TranscriptFile::check(link.to_str().unwrap(), &roots, 1 << 20),
            Err(TranscriptRefusal::Symlink(_))
        ));
        let dotdot = format!("{}/../x/s.jsonl", home.path().display());
        assert!(matches!(
            TranscriptFile::check(&dotdot, &roots, 1 << 20),
            Err(TranscriptRefusal::ParentComponent(_))
        ));
        assert!(matches!(
            TranscriptFile::check("s.jsonl", &roots, 1 << 20),
            Err(TranscriptRefusal::NotAbsolute(_))
        ));
        let txt = write(home.path(), "s.txt", "x");
        assert!(matches!(
            TranscriptFile::check(txt.to_str().unwrap(), &roots, 1 << 20),
            Err(TranscriptRefusal::NotJsonl(_))
        ));
        assert!(matches!(
            TranscriptFile::check(ok.to_str().unwrap(), &roots, 2),
            Err(TranscriptRefusal::TooLarge { .. })
        ));
        let dir = home.path().join("d.jsonl");
        std::fs::create_dir(&dir).unwrap();
        assert!(matches!(
            TranscriptFile::check(dir.to_str().unwrap(), &roots, 1 << 20),
            Err(TranscriptRefusal::NotARegularFile { .. })
        ));
    }

    #[test]
    fn messages_are_counted_and_summarized_as_3_11_does() {
        let home = tempfile::tempdir().unwrap();
        let text = [
            r#"{"type":"user","cwd":"/home/me/dev/my-proj/.claude/worktrees/w1","message":{"role":"user","content":"Please look into the database migration plan problem today"}}"#,
            r#"{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"ok"}]}}"#,
            r#"{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"out"}]}}"#,
            r#"{"type":"user","message":{"role":"user","content":"<command-message>init</command-message>"}}"#,
            r#"{"type":"user","message":{"role":"user","content":[{"type":"text","text":5}]}}"#,
            "not json",
            r#"{"type":"user","message":{"role":"user","content":"Please check the flaky login test problem"}}"#,
        ]
        .join("\n");
        let p = write(home.path(), "s.jsonl", &text);
        let file =
            TranscriptFile::check(p.to_str().unwrap(), &[home.path().into()], 1 << 20).unwrap();
        let m = file.read_messages();
        assert_eq!(m.human_messages, 4, "text, tool result, odd block, text");
        assert_eq!(m.recent.len(), 2);
        assert_eq!(themes(&m.recent, 3), ["please", "problem", "database"]);
        assert_eq!(
            file.working_folder().as_deref(),
            Some("/home/me/dev/my-proj")
        );
    }

    #[test]
    fn a_codex_rollout_is_read_too() {
        let home = tempfile::tempdir().unwrap();
        let text = [
            r#"{"timestamp":"2026-01-01T00:00:00Z","type":"session_meta","payload":{"id":"s1","cwd":"/home/me/code/api"}}"#,
            r#"{"timestamp":"2026-01-01T00:00:01Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}}"#,
            r#"{"timestamp":"2026-01-01T00:00:01Z","type":"event_msg","payload":{"type":"user_message","message":"How does caching work here?"}}"#,
        ]
        .join("\n");
        let p = write(home.path(), "rollout.jsonl", &text);
        let file =
            TranscriptFile::check(p.to_str().unwrap(), &[home.path().into()], 1 << 20).unwrap();
        let m = file.read_messages();
        assert_eq!(m.human_messages, 1);
        assert_eq!(m.recent, ["How does caching work here?"]);
        assert_eq!(file.working_folder().as_deref(), Some("/home/me/code/api"));
    }
}
