//! Which project a transcript came from, by its path, and the wing that project files into
//! (MemPalace 3.11's `wing_split.py` rules, shared by `wings split` and `audit`).

use std::collections::BTreeSet;
use std::sync::LazyLock;

use regex::Regex;
use serde::{Deserialize, Serialize};

use crate::validation::normalize_wing_name;

/// Folder names after which a Claude Code project key names the project (3.11's markers).
const PROJECT_ROOT_MARKERS: [&str; 7] = [
    "dev",
    "projects",
    "claude-projects",
    "src",
    "repos",
    "code",
    "work",
];

static CLAUDE_PROJECT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"[/\\]\.claude[/\\]projects[/\\]([^/\\]+)[/\\]").expect("valid pattern")
});
static CODEX_WORKTREE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"-codex-worktrees-[0-9a-f]+-(.+)$").expect("valid pattern"));
static DRIVE_PREFIX: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^[a-zA-Z]--").expect("valid pattern"));

/// The Claude Code project folder a transcript sits in (`…/.claude/projects/<key>/…`).
pub fn claude_project_key(source_file: &str) -> Option<String> {
    CLAUDE_PROJECT
        .captures(source_file)
        .map(|c| c[1].to_string())
}

/// How a project's target wing was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TargetHow {
    /// A name derived from the key.
    Derived,
    /// An existing wing whose name the project key ends with.
    Existing,
}

impl TargetHow {
    /// The word 3.11 prints and stores.
    pub fn as_str(self) -> &'static str {
        match self {
            TargetHow::Existing => "existing",
            TargetHow::Derived => "derived",
        }
    }
}

/// The wing a project key files into: the longest existing wing the key is or ends with (as
/// `_` or `-` spelling), else the part of the key after the last project-root folder (`dev`,
/// `src`, …; the home folder's two segments otherwise), normalised. Worktrees of a project
/// (`…--claude-worktrees-x`, `…-codex-worktrees-<hex>-x`) go with it.
pub fn resolve_target(key: &str, existing: &BTreeSet<String>) -> (String, TargetHow) {
    let lowered = key.to_lowercase();
    let lowered = lowered.trim_matches('-');
    if let Some(at) = lowered.find("-claude-worktrees-").filter(|&at| at > 0) {
        // 3.11 finds the marker in the trimmed lower-case key but cuts the original key there.
        let cut = key
            .char_indices()
            .nth(lowered[..at].chars().count())
            .map_or(key.len(), |(i, _)| i);
        return resolve_target(key[..cut].trim_end_matches('-'), existing);
    }
    if let Some(c) = CODEX_WORKTREE.captures(lowered) {
        return resolve_target(&c[1], existing);
    }
    let mut best: Option<(&str, usize)> = None;
    for wing in existing {
        let normalized = normalize_wing_name(wing);
        if normalized.is_empty() {
            continue;
        }
        for variant in [normalized.clone(), normalized.replace('_', "-")] {
            let matches = lowered == variant || lowered.ends_with(&format!("-{variant}"));
            if matches && best.is_none_or(|(_, len)| variant.len() > len) {
                best = Some((wing.as_str(), normalized.len()));
            }
        }
    }
    if let Some((wing, _)) = best {
        return (wing.to_string(), TargetHow::Existing);
    }
    let body = DRIVE_PREFIX.replace(key.trim_matches('-'), "").into_owned();
    let segments: Vec<&str> = body.split('-').filter(|s| !s.is_empty()).collect();
    let tail: &[&str] = match segments
        .iter()
        .rposition(|s| PROJECT_ROOT_MARKERS.contains(&s.to_lowercase().as_str()))
    {
        Some(i) => &segments[i + 1..],
        None if segments.len() > 2
            && matches!(segments[0].to_lowercase().as_str(), "users" | "home") =>
        {
            &segments[2..]
        }
        None => &segments,
    };
    let name = normalize_wing_name(&tail.join("_"));
    let name = if name.is_empty() {
        normalize_wing_name(&body)
    } else {
        name
    };
    (name, TargetHow::Derived)
}
