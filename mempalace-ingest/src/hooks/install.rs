//! `mempalace hook install`: the harness's settings entry that runs our hooks, added to the
//! user's settings file without touching their other hooks, and only once however often it
//! runs. Claude Code reads `~/.claude/settings.json`; Codex reads `~/.codex/hooks.json` (same
//! shape; Codex has no session-end event).

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use super::{Harness, Hook};

/// Seconds the harness lets one of our hooks run.
const HOOK_TIMEOUT_SECS: u64 = 60;
/// Largest settings file read.
const MAX_SETTINGS_BYTES: u64 = 4 * 1024 * 1024;

/// Why the settings could not be planned.
#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    /// The settings file could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The settings file is not a JSON object (it is left as it is).
    #[error("{} is not a JSON object ({reason}); fix or move it, then run this again", path.display())]
    NotAnObject {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// The settings could not be written.
    #[error("cannot write {}: {source}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// The settings file before and after the install.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookInstall {
    /// The harness's settings file.
    pub settings_file: PathBuf,
    /// Its text now (empty when it does not exist).
    pub before: String,
    /// Its text with our hooks.
    pub after: String,
    /// What the user should know (a feature flag to turn on, …).
    pub notes: Vec<String>,
}

impl HookInstall {
    /// Whether installing changes the file.
    pub fn changes(&self) -> bool {
        self.before != self.after
    }

    /// Writes the new settings (through a temporary file and a rename, keeping the file's
    /// permissions); nothing when nothing changes.
    pub fn write(&self) -> Result<(), InstallError> {
        use std::io::Write;
        use std::os::unix::fs::OpenOptionsExt;
        if !self.changes() {
            return Ok(());
        }
        let fail = |source| InstallError::Write {
            path: self.settings_file.clone(),
            source,
        };
        // A settings file that is a link (dotfiles managed elsewhere) is written where it
        // points, so the link stays.
        let target = match std::fs::symlink_metadata(&self.settings_file) {
            Ok(m) if m.file_type().is_symlink() => {
                std::fs::canonicalize(&self.settings_file).map_err(fail)?
            }
            _ => self.settings_file.clone(),
        };
        let dir = target.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir).map_err(fail)?;
        let name = target
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        // A temporary file of our own (created new, private: settings may hold keys), then
        // renamed over the settings in one step.
        let tmp = dir.join(format!(".{name}.mempalace-{}", std::process::id()));
        let written = (|| {
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&tmp)?;
            f.write_all(self.after.as_bytes())?;
            f.sync_all()?;
            if let Ok(meta) = std::fs::metadata(&target) {
                std::fs::set_permissions(&tmp, meta.permissions())?;
            }
            std::fs::rename(&tmp, &target)
        })();
        if written.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        written.map_err(fail)
    }

    /// The change as a line diff (`-` removed, `+` added, two lines of context).
    pub fn diff(&self) -> String {
        line_diff(&self.before, &self.after)
    }
}

/// The hooks a harness gets, with the event name its settings use.
fn harness_hooks(harness: Harness) -> Vec<Hook> {
    match harness {
        Harness::Codex => vec![Hook::SessionStart, Hook::Stop, Hook::Precompact],
        Harness::ClaudeCode | Harness::Dsh => Hook::ALL.to_vec(),
    }
}

/// The settings file a harness reads in `home`.
pub fn settings_file(harness: Harness, home: &Path) -> PathBuf {
    match harness {
        Harness::Codex => home.join(".codex").join("hooks.json"),
        Harness::ClaudeCode | Harness::Dsh => home.join(".claude").join("settings.json"),
    }
}

/// The command a hook entry runs: `program hook run --hook H --harness X`.
pub fn hook_command(program: &str, hook: Hook, harness: Harness) -> String {
    format!(
        "{} hook run --hook {} --harness {}",
        shell_word(program),
        hook.name(),
        harness.name()
    )
}

/// A word as a POSIX shell reads it back: as it is when it holds only characters a shell
/// leaves alone, else in single quotes.
pub fn shell_word(word: &str) -> String {
    if !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+=:,@".contains(c))
    {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// Whether a settings entry's command is one of ours for `hook` (any program path).
fn is_ours(command: &str, hook: Hook) -> bool {
    command.contains(&format!("hook run --hook {} ", hook.name()))
}

/// Plans adding our hooks for `harness` to its settings file in `home`, running `program`.
/// An entry of ours already there (for any program path) is updated in place; everything
/// else is kept.
pub fn plan_install(
    harness: Harness,
    home: &Path,
    program: &str,
) -> Result<HookInstall, InstallError> {
    let path = settings_file(harness, home);
    let before = match std::fs::metadata(&path) {
        Ok(meta) if meta.len() > MAX_SETTINGS_BYTES => {
            return Err(InstallError::NotAnObject {
                path,
                reason: format!("larger than {MAX_SETTINGS_BYTES} bytes"),
            });
        }
        Ok(_) => std::fs::read_to_string(&path).map_err(|source| InstallError::Read {
            path: path.clone(),
            source,
        })?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(source) => return Err(InstallError::Read { path, source }),
    };
    let mut root = if before.trim().is_empty() {
        Map::new()
    } else {
        match serde_json::from_str::<Value>(&before) {
            Ok(Value::Object(map)) => map,
            Ok(_) => {
                return Err(InstallError::NotAnObject {
                    path,
                    reason: "not an object".into(),
                });
            }
            Err(e) => {
                return Err(InstallError::NotAnObject {
                    path,
                    reason: e.to_string(),
                });
            }
        }
    };
    let hooks = root
        .entry("hooks")
        .or_insert_with(|| Value::Object(Map::new()));
    if !hooks.is_object() {
        return Err(InstallError::NotAnObject {
            path,
            reason: "its \"hooks\" is not an object".into(),
        });
    }
    let hooks = hooks.as_object_mut().expect("checked");
    for hook in harness_hooks(harness) {
        let command = hook_command(program, hook, harness);
        let ours = json!({"type": "command", "command": command, "timeout": HOOK_TIMEOUT_SECS});
        let groups = hooks
            .entry(hook.event_name())
            .or_insert_with(|| Value::Array(Vec::new()));
        if !groups.is_array() {
            return Err(InstallError::NotAnObject {
                path,
                reason: format!("its hooks.{} is not a list", hook.event_name()),
            });
        }
        let groups = groups.as_array_mut().expect("checked");
        let mut found = false;
        for group in groups.iter_mut() {
            let Some(entries) = group.get_mut("hooks").and_then(Value::as_array_mut) else {
                continue;
            };
            for entry in entries.iter_mut() {
                let mine = entry
                    .get("command")
                    .and_then(Value::as_str)
                    .is_some_and(|c| is_ours(c, hook));
                if mine && !found {
                    *entry = ours.clone();
                    found = true;
                }
            }
        }
        if !found {
            groups.push(json!({"matcher": "", "hooks": [ours]}));
        }
    }
    let mut after = serde_json::to_string_pretty(&Value::Object(root)).expect("JSON values print");
    after.push('\n');
    if !before.trim().is_empty() && same_json(&before, &after) {
        after = before.clone();
    }
    let mut notes = Vec::new();
    if harness == Harness::Codex {
        notes.push(
            "Codex runs hooks when `codex_hooks = true` is set under [features] in ~/.codex/config.toml"
                .to_string(),
        );
    }
    Ok(HookInstall {
        settings_file: path,
        before,
        after,
        notes,
    })
}

fn same_json(a: &str, b: &str) -> bool {
    matches!(
        (serde_json::from_str::<Value>(a), serde_json::from_str::<Value>(b)),
        (Ok(x), Ok(y)) if x == y
    )
}

/// A line diff of two texts (longest common subsequence), with two lines of context.
fn line_diff(before: &str, after: &str) -> String {
    let a: Vec<&str> = before.lines().collect();
    let b: Vec<&str> = after.lines().collect();
    if a.len().saturating_mul(b.len()) > 4_000_000 {
        return after.lines().map(|l| format!("+{l}\n")).collect();
    }
    let mut lcs = vec![vec![0u32; b.len() + 1]; a.len() + 1];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            lcs[i][j] = if a[i] == b[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let mut ops: Vec<(char, &str)> = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        if i < a.len() && j < b.len() && a[i] == b[j] {
            ops.push((' ', a[i]));
            i += 1;
            j += 1;
        } else if j < b.len() && (i == a.len() || lcs[i][j + 1] >= lcs[i + 1][j]) {
            ops.push(('+', b[j]));
            j += 1;
        } else {
            ops.push(('-', a[i]));
            i += 1;
        }
    }
    let near_change = |k: usize| {
        let lo = k.saturating_sub(2);
        let hi = (k + 2).min(ops.len() - 1);
        ops[lo..=hi].iter().any(|(op, _)| *op != ' ')
    };
    let mut out = String::new();
    let mut skipped = false;
    for (k, (op, line)) in ops.iter().enumerate() {
        if *op != ' ' || near_change(k) {
            if skipped {
                out.push_str("…\n");
                skipped = false;
            }
            out.push_str(&format!("{op}{line}\n"));
        } else {
            skipped = true;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn install_keeps_other_hooks_and_is_idempotent() {
        let home = tempfile::tempdir().unwrap();
        let file = settings_file(Harness::ClaudeCode, home.path());
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(
            &file,
            r#"{"model":"opus","hooks":{"Stop":[{"matcher":"","hooks":[{"type":"command","command":"notify-send done"}]}]}}"#,
        )
        .unwrap();
        let plan = plan_install(Harness::ClaudeCode, home.path(), "/usr/bin/mempalace").unwrap();
        assert!(plan.changes());
        assert!(plan.diff().contains("+"));
        plan.write().unwrap();
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        assert_eq!(v["model"], "opus");
        let stop = v["hooks"]["Stop"].as_array().unwrap();
        assert_eq!(stop.len(), 2, "the user's hook and ours");
        assert_eq!(stop[0]["hooks"][0]["command"], "notify-send done");
        assert_eq!(
            stop[1]["hooks"][0]["command"],
            "/usr/bin/mempalace hook run --hook stop --harness claude-code"
        );
        for event in ["SessionStart", "PreCompact", "SessionEnd"] {
            assert_eq!(v["hooks"][event].as_array().unwrap().len(), 1, "{event}");
        }
        let again = plan_install(Harness::ClaudeCode, home.path(), "/usr/bin/mempalace").unwrap();
        assert!(!again.changes(), "{}", again.diff());
        // A moved binary updates our entries in place.
        let moved = plan_install(Harness::ClaudeCode, home.path(), "/opt/mp/mempalace").unwrap();
        moved.write().unwrap();
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        assert_eq!(v["hooks"]["Stop"].as_array().unwrap().len(), 2);
        assert!(
            v["hooks"]["Stop"][1]["hooks"][0]["command"]
                .as_str()
                .unwrap()
                .starts_with("/opt/mp/")
        );
    }

    #[test]
    fn a_linked_settings_file_stays_a_link() {
        let home = tempfile::tempdir().unwrap();
        let dotfiles = home.path().join("dotfiles");
        std::fs::create_dir_all(&dotfiles).unwrap();
        std::fs::write(dotfiles.join("settings.json"), r#"{"model":"opus"}"#).unwrap();
        let file = settings_file(Harness::ClaudeCode, home.path());
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(dotfiles.join("settings.json"), &file).unwrap();
        plan_install(Harness::ClaudeCode, home.path(), "mempalace")
            .unwrap()
            .write()
            .unwrap();
        assert!(
            std::fs::symlink_metadata(&file)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        let v: Value =
            serde_json::from_str(&std::fs::read_to_string(dotfiles.join("settings.json")).unwrap())
                .unwrap();
        assert_eq!(v["model"], "opus");
        assert!(v["hooks"]["Stop"].is_array());
    }

    #[test]
    fn codex_gets_its_three_events_and_bad_settings_are_left_alone() {
        let home = tempfile::tempdir().unwrap();
        let plan = plan_install(Harness::Codex, home.path(), "mempalace").unwrap();
        assert_eq!(plan.settings_file, home.path().join(".codex/hooks.json"));
        let v: Value = serde_json::from_str(&plan.after).unwrap();
        assert_eq!(v["hooks"].as_object().unwrap().len(), 3);
        assert!(!plan.notes.is_empty());
        let file = settings_file(Harness::ClaudeCode, home.path());
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, "{ not json").unwrap();
        assert!(matches!(
            plan_install(Harness::ClaudeCode, home.path(), "mempalace"),
            Err(InstallError::NotAnObject { .. })
        ));
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "{ not json");
        assert_eq!(
            hook_command("/a b/mp", Hook::Stop, Harness::Codex),
            "'/a b/mp' hook run --hook stop --harness codex"
        );
    }
}
