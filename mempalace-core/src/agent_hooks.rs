//! What AI-client hooks share with the server, in MemPalace 3.11's files: the hook settings
//! (`hooks` in the config folder's `config.json`) and the acknowledgement of the latest silent
//! checkpoint (`~/.mempalace/hook_state/last_checkpoint`).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::error::{PalaceError, Result};

/// Largest config.json read (a bigger one is not a config file).
const MAX_CONFIG_BYTES: u64 = 1 << 20;

/// How the client's stop hook saves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct HookSettings {
    /// True: the stop hook saves directly; false: it blocks for MCP calls (default true).
    pub silent_save: bool,
    /// True: a desktop notification is shown on save (default false).
    pub desktop_toast: bool,
}

/// `hook_settings` result: the settings now, and what changed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HookSettingsReport {
    /// Always true (failures are errors).
    pub success: bool,
    /// The settings after the call.
    pub settings: HookSettings,
    /// "key → value" per setting changed by the call.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub updated: Vec<String>,
}

/// `memories_filed_away` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FiledAway {
    /// "quiet" (nothing new), "ok" or "error" (an unreadable acknowledgement).
    pub status: String,
    /// A line to show the user.
    pub message: String,
    /// Messages the checkpoint filed.
    pub count: u64,
    /// When it was filed, as the hook wrote it.
    pub timestamp: Option<Value>,
}

/// The hook files of one user: the config folder and the hook state folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentHooks {
    config_file: PathBuf,
    ack_file: PathBuf,
}

impl Default for AgentHooks {
    fn default() -> Self {
        let home = dirs::home_dir().unwrap_or_else(|| PathBuf::from("."));
        AgentHooks::new(
            crate::locations::config_dir(),
            home.join(".mempalace").join("hook_state"),
        )
    }
}

impl AgentHooks {
    /// The hook files under `config_dir` (config.json) and `state_dir` (last_checkpoint).
    pub fn new(config_dir: impl AsRef<Path>, state_dir: impl AsRef<Path>) -> Self {
        AgentHooks {
            config_file: config_dir.as_ref().join("config.json"),
            ack_file: state_dir.as_ref().join("last_checkpoint"),
        }
    }

    fn read_config(&self) -> Result<Map<String, Value>> {
        let io = |e| PalaceError::Io {
            path: self.config_file.clone(),
            source: e,
        };
        match std::fs::metadata(&self.config_file) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Map::new()),
            Err(e) => return Err(io(e)),
            Ok(m) if !m.is_file() || m.len() > MAX_CONFIG_BYTES => {
                return Err(PalaceError::invalid(
                    "config",
                    format!("{} is not a config file", self.config_file.display()),
                ));
            }
            Ok(_) => {}
        }
        let text = std::fs::read_to_string(&self.config_file).map_err(io)?;
        match serde_json::from_str::<Value>(&text) {
            Ok(Value::Object(map)) => Ok(map),
            _ => Err(PalaceError::invalid(
                "config",
                format!("{} is not a JSON object", self.config_file.display()),
            )),
        }
    }

    /// The hook settings now, after setting the ones given (other config keys are kept; the
    /// file is replaced atomically).
    pub fn settings(
        &self,
        silent_save: Option<bool>,
        desktop_toast: Option<bool>,
    ) -> Result<HookSettingsReport> {
        let mut config = self.read_config()?;
        let mut updated = Vec::new();
        if silent_save.is_some() || desktop_toast.is_some() {
            let hooks = config
                .entry("hooks")
                .or_insert_with(|| Value::Object(Map::new()));
            if !hooks.is_object() {
                *hooks = Value::Object(Map::new());
            }
            let hooks = hooks.as_object_mut().expect("just made an object");
            for (key, value) in [
                ("silent_save", silent_save),
                ("desktop_toast", desktop_toast),
            ] {
                if let Some(v) = value {
                    hooks.insert(key.into(), Value::Bool(v));
                    updated.push(format!("{key} → {v}"));
                }
            }
            self.write_config(&config)?;
        }
        let hooks = config.get("hooks").and_then(Value::as_object);
        let flag = |key: &str, default: bool| {
            hooks
                .and_then(|h| h.get(key))
                .and_then(Value::as_bool)
                .unwrap_or(default)
        };
        Ok(HookSettingsReport {
            success: true,
            settings: HookSettings {
                silent_save: flag("silent_save", true),
                desktop_toast: flag("desktop_toast", false),
            },
            updated,
        })
    }

    fn write_config(&self, config: &Map<String, Value>) -> Result<()> {
        let io = |e| PalaceError::Io {
            path: self.config_file.clone(),
            source: e,
        };
        let dir = self.config_file.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir).map_err(io)?;
        let tmp = self
            .config_file
            .with_extension(format!("json.tmp.{}", std::process::id()));
        let text = serde_json::to_string_pretty(config).unwrap_or_else(|_| "{}".into());
        std::fs::write(&tmp, text).map_err(io)?;
        std::fs::rename(&tmp, &self.config_file).map_err(io)
    }

    /// Acknowledges the latest silent checkpoint: its message count and time, once (the
    /// acknowledgement file is removed), or "quiet" when there is none.
    pub fn memories_filed_away(&self) -> FiledAway {
        let Ok(meta) = std::fs::symlink_metadata(&self.ack_file) else {
            return FiledAway {
                status: "quiet".into(),
                message: "No recent journal entry".into(),
                count: 0,
                timestamp: None,
            };
        };
        let data = if meta.is_file() && meta.len() <= MAX_CONFIG_BYTES {
            std::fs::read_to_string(&self.ack_file)
                .ok()
                .and_then(|t| serde_json::from_str::<Value>(&t).ok())
        } else {
            None
        };
        let _ = std::fs::remove_file(&self.ack_file);
        match data {
            Some(d) => {
                let count = d.get("msgs").and_then(Value::as_u64).unwrap_or(0);
                FiledAway {
                    status: "ok".into(),
                    message: format!("\u{2726} {count} messages tucked into drawers"),
                    count,
                    timestamp: d.get("ts").cloned(),
                }
            }
            None => FiledAway {
                status: "error".into(),
                message: "\u{2726} Journal entry filed in the palace".into(),
                count: 0,
                timestamp: None,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_round_trip_and_keep_other_keys() {
        let dir = std::env::temp_dir().join(format!("mp-hooks-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("config.json"), r#"{"palace_path": "/p"}"#).unwrap();
        let hooks = AgentHooks::new(&dir, dir.join("state"));
        let now = hooks.settings(None, None).unwrap();
        assert_eq!(
            now.settings,
            HookSettings {
                silent_save: true,
                desktop_toast: false
            }
        );
        let changed = hooks.settings(Some(false), None).unwrap();
        assert!(!changed.settings.silent_save);
        assert_eq!(changed.updated, vec!["silent_save → false".to_string()]);
        let text = std::fs::read_to_string(dir.join("config.json")).unwrap();
        assert!(text.contains("palace_path"), "{text}");
        assert!(!hooks.settings(None, None).unwrap().settings.silent_save);

        assert_eq!(hooks.memories_filed_away().status, "quiet");
        std::fs::create_dir_all(dir.join("state")).unwrap();
        std::fs::write(
            dir.join("state/last_checkpoint"),
            r#"{"msgs": 7, "ts": "2026-12-04T10:00:00"}"#,
        )
        .unwrap();
        let ack = hooks.memories_filed_away();
        assert_eq!((ack.status.as_str(), ack.count), ("ok", 7));
        assert_eq!(hooks.memories_filed_away().status, "quiet");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
