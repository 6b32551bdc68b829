//! How hooks behave, from the environment and the config folder's `config.json`, as
//! MemPalace 3.11 reads them (`hooks.auto_save`, `hooks.silent_save`,
//! `MEMPALACE_HOOKS_AUTO_SAVE`, `MEMPAL_DIR`), plus our own limits.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use crate::conversation_mine::MAX_EXPORT_BYTES;

/// Checkpoint every this many user messages (3.11's `SAVE_INTERVAL`).
pub const SAVE_INTERVAL: u64 = 15;
/// Characters of context a session-start hook adds: Claude Code keeps at most 10,000 of a
/// hook's added context.
pub const CONTEXT_CHARS: usize = 10_000;
/// Folders (besides the home folder) transcripts may come from, separated by `:`.
pub const TRANSCRIPT_ROOTS_VAR: &str = "MEMPALACE_HOOK_TRANSCRIPT_ROOTS";
/// Seconds a stop or precompact hook may spend filing.
pub const DEADLINE_VAR: &str = "MEMPALACE_HOOK_DEADLINE_SECS";
/// The longest deadline `$MEMPALACE_HOOK_DEADLINE_SECS` may set.
const MAX_DEADLINE: Duration = Duration::from_secs(3600);
/// Largest `config.json` read.
const MAX_CONFIG_BYTES: u64 = 1024 * 1024;

/// What hooks do and may touch.
#[derive(Debug, Clone)]
pub struct HookSettings {
    /// Hooks act at all: false when neither `~/.mempalace`, the config folder nor the palace
    /// exists (3.11's kill switch: a machine where MemPalace was never set up is not touched).
    pub enabled: bool,
    /// The state folder (`~/.mempalace/hook_state`).
    pub state_dir: PathBuf,
    /// The user's home folder.
    pub home: PathBuf,
    /// Stop, precompact and session-end file and checkpoint (`hooks.auto_save`,
    /// `MEMPALACE_HOOKS_AUTO_SAVE`; default true).
    pub auto_save: bool,
    /// Checkpoints are written by the hook (true, the default) rather than asked of the agent
    /// with `decision: block` (`hooks.silent_save`).
    pub silent_save: bool,
    /// User messages between checkpoints.
    pub save_interval: u64,
    /// Folders transcripts may come from (the home folder, and `$MEMPALACE_HOOK_TRANSCRIPT_ROOTS`).
    pub allowed_roots: Vec<PathBuf>,
    /// Largest transcript read.
    pub max_transcript_bytes: u64,
    /// Time a stop or precompact hook may spend filing (`$MEMPALACE_HOOK_DEADLINE_SECS`).
    pub deadline: Duration,
    /// Time the detached half of session-end may spend.
    pub detached_deadline: Duration,
    /// Most characters of context session-start adds.
    pub context_chars: usize,
    /// A project folder precompact also mines (`$MEMPAL_DIR`).
    pub project_dir: Option<PathBuf>,
}

impl HookSettings {
    /// The settings for a palace at `palace`, read from the environment and `config_dir`'s
    /// `config.json`.
    pub fn from_env(palace: &Path, config_dir: &Path) -> HookSettings {
        // Without a home folder there are no "user's folders" to allow: hooks stay off.
        let known_home = dirs::home_dir().filter(|h| h.is_absolute() && h != Path::new("/"));
        let home = known_home
            .clone()
            .unwrap_or_else(|| PathBuf::from("/nonexistent"));
        let legacy_root = home.join(".mempalace");
        let enabled = known_home.is_some()
            && (legacy_root.is_dir() || config_dir.is_dir() || palace.is_dir());
        let hooks = read_config(config_dir)
            .and_then(|c| c.get("hooks").cloned())
            .unwrap_or(Value::Null);
        let flag = |key: &str| hooks.get(key).map(truthy);
        let auto_save = match std::env::var("MEMPALACE_HOOKS_AUTO_SAVE") {
            Ok(v) => !matches!(v.to_lowercase().as_str(), "false" | "0" | "no"),
            Err(_) => flag("auto_save").unwrap_or(true),
        };
        let mut allowed_roots = vec![home.clone()];
        if let Ok(extra) = std::env::var(TRANSCRIPT_ROOTS_VAR) {
            allowed_roots.extend(
                extra
                    .split(':')
                    .filter(|p| !p.trim().is_empty())
                    .map(PathBuf::from)
                    .filter(|p| p.is_absolute()),
            );
        }
        let deadline = std::env::var(DEADLINE_VAR)
            .ok()
            .and_then(|v| v.trim().parse::<f64>().ok())
            .and_then(|s| Duration::try_from_secs_f64(s).ok())
            .filter(|d| !d.is_zero())
            .map(|d| d.min(MAX_DEADLINE))
            .unwrap_or(super::DEFAULT_DEADLINE);
        let project_dir = std::env::var("MEMPAL_DIR")
            .ok()
            .filter(|v| !v.trim().is_empty())
            .map(|v| mempalace_core::locations::expand_home(&v))
            .filter(|p| p.is_dir());
        HookSettings {
            enabled,
            state_dir: legacy_root.join("hook_state"),
            home,
            auto_save,
            silent_save: flag("silent_save").unwrap_or(true),
            save_interval: SAVE_INTERVAL,
            allowed_roots,
            max_transcript_bytes: MAX_EXPORT_BYTES,
            deadline,
            detached_deadline: Duration::from_secs(600),
            context_chars: CONTEXT_CHARS,
            project_dir,
        }
    }
}

/// The config folder's `config.json` when it is a readable JSON object.
fn read_config(config_dir: &Path) -> Option<Value> {
    let file = config_dir.join("config.json");
    let meta = std::fs::metadata(&file).ok()?;
    if !meta.is_file() || meta.len() > MAX_CONFIG_BYTES {
        return None;
    }
    let bytes = std::fs::read(&file).ok()?;
    let bytes = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(&bytes);
    serde_json::from_slice::<Value>(bytes)
        .ok()
        .filter(Value::is_object)
}

/// Python's truthiness of a JSON value (3.11 reads these flags so).
fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
    }
}
