//! Which wing a session's memories go to: the project it ran in, named as MemPalace 3.11's
//! hooks name it (`my-proj` → `my_proj`; the diary's wing is `wing_my_proj`), so a 3.11
//! user's existing wings keep filling.

use std::sync::LazyLock;

use regex::Regex;

/// Parent folders 3.11 drops from an encoded Claude Code project folder name.
const ENCODED_PARENT_PREFIXES: [&str; 8] = [
    "git-",
    "dev-",
    "projects-",
    "Projects-",
    "src-",
    "code-",
    "work-",
    "Documents-",
];

/// The wing a session in the home folder goes to (it belongs to no project).
fn workstation_wing() -> &'static str {
    if cfg!(target_os = "macos") {
        "mac_workstation"
    } else if cfg!(windows) {
        "windows_workstation"
    } else {
        "linux_workstation"
    }
}

/// A folder name as a wing name: lower case, spaces and `-` as `_`, other characters
/// outside `[\w.']` as `_`, `..` collapsed, at most 120 characters, no `_ . '` at the ends;
/// `sessions` when nothing is left.
pub fn wing_slug(name: &str) -> String {
    static OTHER: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"[^\w.']+").expect("valid"));
    static DOTS: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\.{2,}").expect("valid"));
    let lowered = name.to_lowercase().replace([' ', '-'], "_");
    let replaced = OTHER.replace_all(&lowered, "_");
    let collapsed = DOTS.replace_all(&replaced, ".");
    let capped: String = collapsed.chars().take(120).collect();
    let trimmed = capped.trim_matches(|c| c == '_' || c == '.' || c == '\'');
    if trimmed.is_empty() {
        "sessions".to_string()
    } else {
        trimmed.to_string()
    }
}

/// The project wing (without 3.11's `wing_` prefix) for a session: from its working folder
/// (the home folder itself → the workstation wing), else from the transcript's path (a
/// Claude Code `projects/-home-me-dev-my-proj/` folder, or a `-Projects-<name>` segment),
/// else `sessions`.
pub fn project_wing(working_folder: Option<&str>, transcript_path: &str, home: &str) -> String {
    if let Some(cwd) = working_folder {
        let home_norm = home.replace('\\', "/").trim_end_matches('/').to_lowercase();
        if cwd.to_lowercase() == home_norm {
            return workstation_wing().to_string();
        }
        if let Some(leaf) = cwd.rsplit('/').next().filter(|l| !l.is_empty()) {
            return wing_slug(leaf);
        }
    }
    static ENCODED: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"/\.claude/projects/-([^/]+)").expect("valid"));
    static HOME_PREFIX: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"^(?:Users|home)-[^-]+-(.+)").expect("valid"));
    static LEGACY: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"-Projects-([^/]+?)(?:/|$)").expect("valid"));
    let normalized = transcript_path.replace('\\', "/");
    if let Some(m) = ENCODED.captures(&normalized) {
        let mut encoded = m[1].to_string();
        if let Some((project, _)) = encoded.split_once("-claude-worktrees-") {
            encoded = project.to_string();
        }
        if let Some(rest) = HOME_PREFIX.captures(&encoded) {
            encoded = rest[1].to_string();
        }
        if let Some(prefix) = ENCODED_PARENT_PREFIXES
            .iter()
            .find(|p| encoded.starts_with(*p))
        {
            encoded = encoded[prefix.len()..].to_string();
        }
        return wing_slug(&encoded);
    }
    if let Some(m) = LEGACY.captures(&normalized) {
        return wing_slug(&m[1]);
    }
    "sessions".to_string()
}

/// The diary wing 3.11 files a session's checkpoints under: `wing_` and the working folder's
/// name (the home folder's too: only mining goes to the workstation wing), else the
/// transcript path's project.
pub fn diary_wing_for(working_folder: Option<&str>, transcript_path: &str, home: &str) -> String {
    match working_folder.and_then(|cwd| cwd.rsplit('/').next().filter(|l| !l.is_empty())) {
        Some(leaf) => format!("wing_{}", wing_slug(leaf)),
        None => format!("wing_{}", project_wing(None, transcript_path, home)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_match_3_11() {
        for (name, slug) in [
            ("My App", "my_app"),
            ("+", "sessions"),
            ("a..b", "a.b"),
            ("Café-Ünï", "café_ünï"),
            ("-lead-", "lead"),
            ("it's.ok", "it's.ok"),
        ] {
            assert_eq!(wing_slug(name), slug, "{name}");
        }
        assert_eq!(wing_slug(&"x".repeat(130)), "x".repeat(120));
    }

    #[test]
    fn wings_match_3_11s_vectors() {
        let home = "/home/me";
        assert_eq!(
            project_wing(Some("/home/me/dev/my-proj"), "/t.jsonl", home),
            "my_proj"
        );
        assert_eq!(
            project_wing(Some("/home/me"), "/t.jsonl", home),
            workstation_wing()
        );
        assert_eq!(
            project_wing(
                None,
                "/home/u/.claude/projects/-home-u-git-claude-code/x.jsonl",
                home
            ),
            "claude_code"
        );
        assert_eq!(
            project_wing(
                None,
                "/Users/bob/.claude/projects/-Users-bob-Documents-My-App--claude-worktrees-feat/x.jsonl",
                home
            ),
            "my_app"
        );
        assert_eq!(
            project_wing(None, "/data/-Projects-foo-bar/x.jsonl", home),
            "foo_bar"
        );
        assert_eq!(project_wing(None, "/tmp/x.jsonl", home), "sessions");
        assert_eq!(
            diary_wing_for(Some("/home/me/dev/my-proj"), "/t.jsonl", home),
            "wing_my_proj"
        );
        assert_eq!(
            diary_wing_for(Some("/home/me"), "/t.jsonl", home),
            "wing_me"
        );
        assert_eq!(diary_wing_for(None, "/tmp/x.jsonl", home), "wing_sessions");
    }
}
