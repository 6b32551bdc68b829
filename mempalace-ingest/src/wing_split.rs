//! `wings split`: a wing that holds many projects' transcripts (everything under
//! `~/.claude/projects` mined as one wing) re-keyed into one wing per source project, as
//! MemPalace 3.11's `wing_split.py` does.
//!
//! A drawer's *project key* comes from its source file alone: the folder right after
//! `.claude/projects/` for Claude Code, the last folder of the session's `cwd` (read from the
//! rollout file's first lines) for Codex. [`plan_wing_split`] groups a wing's drawers by key and
//! names a target wing for each ([`resolve_target`]: an existing wing the key ends with, else a
//! name derived from the key); [`save_plan`] writes it to `<palace>/wings/split-<wing>.json` for
//! the user to review and edit; [`apply_wing_split`] moves the drawers (ids, text and vectors
//! kept; closets follow) and drops the wing's hallways. An apply that was interrupted leaves a
//! `.pending` marker pinned to its plan; running it again finishes the job.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Read as _, Write};
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use mempalace_core::palace::DrawersMoved;
use mempalace_core::python_repr::python_repr;
pub use mempalace_core::transcript_projects::{TargetHow, claude_project_key, resolve_target};
use mempalace_core::validation::validate_name;
use mempalace_core::{DrawerFilter, DrawerMove, Page, Palace, PalaceError};
use regex::Regex;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::error::{IngestError, Result};

/// Drawers read per page while planning or applying.
const PAGE: usize = 1000;
/// Lines of a Codex rollout file read for its session's `cwd`.
const CODEX_HEAD_LINES: usize = 3;
static CODEX_SESSION: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"[/\\]\.codex[/\\]sessions[/\\]").expect("valid pattern"));
/// The project a transcript drawer came from, by its source file: the Claude Code project
/// folder's name, or the basename of a Codex session's working folder (read from the rollout
/// file, so a Codex file that is gone has none). `None` for anything else.
pub fn project_key(source_file: &str) -> Option<String> {
    if source_file.is_empty() {
        return None;
    }
    if let Some(key) = claude_project_key(source_file) {
        return Some(key);
    }
    if CODEX_SESSION.is_match(source_file) {
        let cwd = codex_cwd(Path::new(source_file))?;
        let normalized = cwd.replace('\\', "/");
        let base = normalized.trim_end_matches('/').rsplit('/').next()?;
        return (!base.is_empty()).then(|| base.to_string());
    }
    None
}

/// The `cwd` a Codex rollout file records in its first lines (top level or in `payload`).
fn codex_cwd(path: &Path) -> Option<String> {
    let file = mempalace_core::regular_file::open_regular(path).ok()?;
    let mut reader = BufReader::new(file);
    for _ in 0..CODEX_HEAD_LINES {
        let mut line = Vec::new();
        // A first line of a rollout is a few hundred bytes; a hostile file cannot make us read
        // more than this.
        let read = (&mut reader)
            .take(1 << 20)
            .read_until(b'\n', &mut line)
            .ok()?;
        if read == 0 {
            break;
        }
        let Ok(Value::Object(record)) = serde_json::from_slice::<Value>(&line) else {
            continue;
        };
        if let Some(Value::String(cwd)) = record.get("cwd") {
            return Some(cwd.clone());
        }
        if let Some(Value::String(cwd)) = record.get("payload").and_then(|p| p.get("cwd")) {
            return Some(cwd.clone());
        }
    }
    None
}

/// One source project of a split plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlannedProject {
    /// The wing its drawers move to (the user may edit it in the plan file).
    pub target: String,
    /// How the target was found.
    pub how: TargetHow,
    /// Its drawers in the wing when planned.
    pub drawers: u64,
}

/// A wing's split plan, as `<palace>/wings/split-<wing>.json` holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WingSplitPlan {
    /// The wing being split.
    pub wing: String,
    /// When the plan was made (ISO 8601, UTC).
    pub planned_at: String,
    /// Each project key and where it goes, most drawers first.
    pub projects: Vec<(String, PlannedProject)>,
    /// Drawers without a project key (they stay).
    pub unresolved: u64,
}

impl WingSplitPlan {
    /// Drawers per target wing (summed over its projects), most first, with how each target
    /// was found.
    pub fn targets(&self) -> Vec<(String, u64, BTreeSet<TargetHow>)> {
        let mut order: Vec<String> = Vec::new();
        let mut sums: BTreeMap<String, (u64, BTreeSet<TargetHow>)> = BTreeMap::new();
        for (_, p) in &self.projects {
            let entry = sums.entry(p.target.clone()).or_insert_with(|| {
                order.push(p.target.clone());
                (0, BTreeSet::new())
            });
            entry.0 += p.drawers;
            entry.1.insert(p.how);
        }
        let mut targets: Vec<(String, u64, BTreeSet<TargetHow>)> = order
            .into_iter()
            .map(|t| {
                let (n, hows) = sums.remove(&t).unwrap_or_default();
                (t, n, hows)
            })
            .collect();
        targets.sort_by_key(|t| std::cmp::Reverse(t.1));
        targets
    }

    /// Drawers with a project key.
    pub fn keyed_drawers(&self) -> u64 {
        self.projects.iter().map(|(_, p)| p.drawers).sum()
    }

    /// The plan file's JSON (3.11's layout: two-space indent, keys in its order).
    pub fn to_json(&self) -> String {
        let mut projects = Map::new();
        for (key, p) in &self.projects {
            projects.insert(
                key.clone(),
                serde_json::json!({"target": p.target, "how": p.how.as_str(), "drawers": p.drawers}),
            );
        }
        // serde_json's map is sorted by key: write the fields in 3.11's order by hand.
        let mut out = String::from("{\n");
        out.push_str("  \"schema_version\": 1,\n");
        out.push_str(&format!(
            "  \"wing\": {},\n",
            Value::String(self.wing.clone())
        ));
        out.push_str(&format!(
            "  \"planned_at\": {},\n",
            Value::String(self.planned_at.clone())
        ));
        out.push_str("  \"projects\": {");
        for (i, (key, p)) in self.projects.iter().enumerate() {
            out.push_str(if i == 0 { "\n" } else { ",\n" });
            out.push_str(&format!(
                "    {}: {{\n      \"target\": {},\n      \"how\": \"{}\",\n      \"drawers\": {}\n    }}",
                Value::String(key.clone()),
                Value::String(p.target.clone()),
                p.how.as_str(),
                p.drawers
            ));
        }
        out.push_str(if self.projects.is_empty() {
            "},\n"
        } else {
            "\n  },\n"
        });
        out.push_str(&format!("  \"unresolved\": {}\n}}", self.unresolved));
        out
    }

    /// The fingerprint a `.pending` marker pins: SHA-256 of the wing and each key's target
    /// (3.11's compact, key-sorted, ASCII-escaped JSON).
    pub fn fingerprint(&self) -> String {
        let targets: BTreeMap<&str, &str> = self
            .projects
            .iter()
            .map(|(k, p)| (k.as_str(), p.target.as_str()))
            .collect();
        let mut text = String::from("{\"targets\":{");
        for (i, (k, t)) in targets.iter().enumerate() {
            if i > 0 {
                text.push(',');
            }
            text.push_str(&ascii_json(k));
            text.push(':');
            text.push_str(&ascii_json(t));
        }
        text.push_str("},\"wing\":");
        text.push_str(&ascii_json(&self.wing));
        text.push('}');
        hex::encode(Sha256::digest(text.as_bytes()))
    }
}

/// A JSON string with every non-ASCII character escaped (`\uXXXX`, surrogate pairs above the
/// BMP), as Python's `json.dumps` writes by default.
fn ascii_json(s: &str) -> String {
    let plain = Value::String(s.to_string()).to_string();
    let mut out = String::with_capacity(plain.len());
    for c in plain.chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            let mut units = [0u16; 2];
            for u in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{u:04x}"));
            }
        }
    }
    out
}

/// Why a saved plan cannot be applied.
#[derive(Debug, thiserror::Error)]
pub enum SplitPlanError {
    /// No plan has been made for the wing.
    #[error("No plan for {wing}. Run without --yes first to create {}.", path.display())]
    Missing {
        /// The wing.
        wing: String,
        /// Where the plan would be.
        path: PathBuf,
    },
    /// The plan file is not a usable plan.
    #[error("Plan at {} is invalid: {reason}", path.display())]
    Invalid {
        /// The plan file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// An interrupted apply was started from another plan (3.11's words).
    #[error(
        "split plan for {} changed since this split started (pinned {}, current {current}); restore the original plan targets before re-running --yes, or remove the pending marker only after deciding how to finish",
        mempalace_core::python_repr::python_repr(wing),
        pinned.as_deref().unwrap_or("missing")
    )]
    PlanChanged {
        /// The wing.
        wing: String,
        /// The fingerprint the marker pins (`None` when unreadable).
        pinned: Option<String>,
        /// The current plan's fingerprint.
        current: String,
    },
}

/// The plan file of `wing` in `palace_dir`.
pub fn plan_path(palace_dir: &Path, wing: &str) -> PathBuf {
    palace_dir.join("wings").join(format!("split-{wing}.json"))
}

/// The marker an apply leaves until it has finished.
pub fn pending_path(palace_dir: &Path, wing: &str) -> PathBuf {
    palace_dir
        .join("wings")
        .join(format!("split-{wing}.pending"))
}

/// Every distinct wing of the palace.
async fn palace_wings(palace: &Palace) -> Result<BTreeSet<String>> {
    Ok(palace
        .store()
        .room_counts(&DrawerFilter::all())
        .await?
        .into_iter()
        .map(|c| c.wing)
        .collect())
}

/// Every drawer of `wing` as (id, room, source file).
async fn wing_rows(palace: &Palace, wing: &str) -> Result<Vec<(String, String, String)>> {
    let filter = DrawerFilter::wing(wing);
    let mut rows = Vec::new();
    let mut offset = 0;
    loop {
        let page = palace
            .store()
            .list(
                &filter,
                Page {
                    offset,
                    limit: PAGE,
                },
            )
            .await?;
        let done = page.len() < PAGE;
        offset += page.len();
        rows.extend(
            page.into_iter()
                .map(|d| (d.id, d.metadata.room, d.metadata.source_file)),
        );
        if done {
            return Ok(rows);
        }
    }
}

/// Groups `wing`'s drawers by project key and names a target wing for each (the wing's own
/// name excluded from the existing wings). Reads only; an empty `projects` means nothing to
/// split.
pub async fn plan_wing_split(palace: &Palace, wing: &str) -> Result<WingSplitPlan> {
    validate_name("wing", wing)?;
    if !palace.is_initialised().await? {
        return Err(PalaceError::NoPalace {
            palace_path: palace.path().to_path_buf(),
        }
        .into());
    }
    let mut existing = palace_wings(palace).await?;
    existing.remove(wing);
    let mut order: Vec<String> = Vec::new();
    let mut counts: BTreeMap<String, u64> = BTreeMap::new();
    let mut unresolved = 0;
    for (_, _, source) in wing_rows(palace, wing).await? {
        match project_key(&source) {
            Some(key) => {
                let n = counts.entry(key.clone()).or_insert_with(|| {
                    order.push(key);
                    0
                });
                *n += 1;
            }
            None => unresolved += 1,
        }
    }
    let mut projects: Vec<(String, PlannedProject)> = order
        .into_iter()
        .map(|key| {
            let (target, how) = resolve_target(&key, &existing);
            let drawers = counts[&key];
            (
                key,
                PlannedProject {
                    target,
                    how,
                    drawers,
                },
            )
        })
        .collect();
    projects.sort_by_key(|(_, p)| std::cmp::Reverse(p.drawers));
    Ok(WingSplitPlan {
        wing: wing.to_string(),
        planned_at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Micros, false),
        projects,
        unresolved,
    })
}

/// Writes `contents` to `path` through a temporary file beside it.
fn write_replacing(path: &Path, contents: &str) -> Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| IngestError::io(dir, e))?;
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(|e| IngestError::io(dir, e))?;
    tmp.write_all(contents.as_bytes())
        .and_then(|()| tmp.as_file().sync_all())
        .map_err(|e| IngestError::io(path, e))?;
    tmp.persist(path)
        .map_err(|e| IngestError::io(path, e.error))?;
    Ok(())
}

/// Saves `plan` to its plan file (replacing an older one); returns the file's path.
pub fn save_plan(palace_dir: &Path, plan: &WingSplitPlan) -> Result<PathBuf> {
    validate_name("wing", &plan.wing)?;
    let path = plan_path(palace_dir, &plan.wing);
    write_replacing(&path, &plan.to_json())?;
    Ok(path)
}

/// Reads and checks `wing`'s saved plan: an object for this wing, with projects, each with a
/// target that is a valid wing name (trimmed).
pub fn load_plan(
    palace_dir: &Path,
    wing: &str,
) -> std::result::Result<WingSplitPlan, SplitPlanError> {
    let path = plan_path(palace_dir, wing);
    let invalid = |reason: String| SplitPlanError::Invalid {
        path: path.clone(),
        reason,
    };
    let bytes = match mempalace_core::regular_file::read_regular(&path, 64 << 20) {
        Ok(b) => b,
        Err(e) if !mempalace_core::regular_file::anything_at(&path) => {
            let _ = e;
            return Err(SplitPlanError::Missing {
                wing: wing.to_string(),
                path,
            });
        }
        Err(e) => return Err(invalid(e.to_string())),
    };
    let value: Value = serde_json::from_slice(&bytes).map_err(|e| invalid(e.to_string()))?;
    let Value::Object(plan) = value else {
        return Err(invalid("split plan is not an object".into()));
    };
    let planned_wing = plan.get("wing").and_then(Value::as_str).unwrap_or("");
    if planned_wing != wing {
        let planned = match plan.get("wing") {
            Some(Value::String(w)) if !w.is_empty() => python_repr(w),
            _ => "None".to_string(),
        };
        return Err(invalid(format!(
            "plan is for wing {planned}, not {}; re-run without --yes",
            python_repr(wing)
        )));
    }
    let projects = match plan.get("projects") {
        Some(Value::Object(p)) if !p.is_empty() => p,
        _ => return Err(invalid("split plan has no projects".into())),
    };
    let mut planned = Vec::with_capacity(projects.len());
    for (key, entry) in projects {
        let target = entry
            .get("target")
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .ok_or_else(|| invalid(format!("project {} has no target wing", python_repr(key))))?;
        validate_name("wing", target).map_err(|e| invalid(e.to_string()))?;
        let how = match entry.get("how").and_then(Value::as_str) {
            Some("existing") => TargetHow::Existing,
            _ => TargetHow::Derived,
        };
        let drawers = entry.get("drawers").and_then(Value::as_u64).unwrap_or(0);
        planned.push((
            key.clone(),
            PlannedProject {
                target: target.to_string(),
                how,
                drawers,
            },
        ));
    }
    planned.sort_by_key(|(_, p)| std::cmp::Reverse(p.drawers));
    Ok(WingSplitPlan {
        wing: wing.to_string(),
        planned_at: plan
            .get("planned_at")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string(),
        projects: planned,
        unresolved: plan.get("unresolved").and_then(Value::as_u64).unwrap_or(0),
    })
}

/// What [`apply_wing_split`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WingSplitApplied {
    /// Drawers moved out of the wing.
    pub moved: u64,
    /// Wings they went into.
    pub target_wings: usize,
    /// Closets that followed.
    pub closets_moved: u64,
    /// Drawers that stayed (no key, a key not in the plan, or a target that is the wing).
    pub skipped: u64,
    /// Hallway records of the wing dropped (their entities now live in other wings).
    pub hallways_dropped: u64,
    /// Whether this run finished an interrupted apply.
    pub resumed: bool,
}

/// Whether an apply of `wing`'s split was interrupted (its marker is still there).
pub fn split_pending(palace_dir: &Path, wing: &str) -> bool {
    pending_path(palace_dir, wing).exists()
}

/// Whether applying `plan` resumes an interrupted apply (its `.pending` marker is there and
/// pins this plan); a marker pinning another plan (or unreadable) is refused.
pub fn check_pending(
    palace_dir: &Path,
    plan: &WingSplitPlan,
) -> std::result::Result<bool, SplitPlanError> {
    let marker = pending_path(palace_dir, &plan.wing);
    if !marker.exists() {
        return Ok(false);
    }
    let current = plan.fingerprint();
    let pinned = std::fs::read_to_string(&marker)
        .ok()
        .and_then(|t| serde_json::from_str::<Value>(t.trim()).ok())
        .and_then(|v| {
            v.get("plan_sha256")
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
        });
    if pinned.as_deref() == Some(current.as_str()) {
        Ok(true)
    } else {
        Err(SplitPlanError::PlanChanged {
            wing: plan.wing.clone(),
            pinned,
            current,
        })
    }
}

/// Moves `plan.wing`'s drawers into their projects' target wings (closets follow), then drops
/// the wing's hallways. A `.pending` marker pinned to the plan is written first and removed
/// last, so an interrupted apply is finished by running it again with the same plan (another
/// plan is refused).
pub async fn apply_wing_split(palace: &Palace, plan: &WingSplitPlan) -> Result<WingSplitApplied> {
    validate_name("wing", &plan.wing)?;
    for (_, p) in &plan.projects {
        validate_name("wing", &p.target)?;
    }
    let palace_dir = palace.path().to_path_buf();
    let marker = pending_path(&palace_dir, &plan.wing);
    let fingerprint = plan.fingerprint();
    let resumed = check_pending(&palace_dir, plan)?;
    let targets: BTreeMap<&str, &str> = plan
        .projects
        .iter()
        .map(|(k, p)| (k.as_str(), p.target.as_str()))
        .collect();
    let mut moves = Vec::new();
    let mut skipped = 0u64;
    for (id, room, source) in wing_rows(palace, &plan.wing).await? {
        match project_key(&source)
            .as_deref()
            .and_then(|k| targets.get(k))
            .filter(|t| **t != plan.wing)
        {
            Some(target) => moves.push(DrawerMove {
                id,
                wing: (*target).to_string(),
                room,
            }),
            None => skipped += 1,
        }
    }
    let target_wings = moves
        .iter()
        .map(|m| m.wing.as_str())
        .collect::<BTreeSet<_>>()
        .len();
    // The marker is written under the palace write lock, just before the first move: a busy
    // palace leaves none behind.
    let started = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Micros, false);
    let marker_text =
        format!("{{\n  \"started_at\": \"{started}\",\n  \"plan_sha256\": \"{fingerprint}\"\n}}\n");
    let marker_path = marker.clone();
    let DrawersMoved { drawers, closets } = palace
        .move_drawers_after(&moves, move || {
            if resumed {
                return Ok(());
            }
            write_replacing(&marker_path, &marker_text).map_err(|e| match e {
                IngestError::Palace(p) => p,
                IngestError::Io { path, source } => {
                    mempalace_core::PalaceError::Io { path, source }
                }
                other => mempalace_core::PalaceError::invalid("pending marker", other.to_string()),
            })
        })
        .await?;
    let hallways_dropped = if drawers > 0 || resumed {
        palace.drop_wing_hallways(&plan.wing).await?
    } else {
        0
    };
    std::fs::remove_file(&marker).map_err(|e| IngestError::io(&marker, e))?;
    Ok(WingSplitApplied {
        moved: drawers as u64,
        target_wings,
        closets_moved: closets as u64,
        skipped,
        hallways_dropped,
        resumed,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wings(names: &[&str]) -> BTreeSet<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    /// Cases captured from 3.11's own `resolve_target`.
    #[test]
    fn targets_resolve_as_in_3_11() {
        let cases: &[(&str, &[&str], &str, TargetHow)] = &[
            (
                "-Users-me-dev-acme-app",
                &[],
                "acme_app",
                TargetHow::Derived,
            ),
            (
                "-Users-me-dev-acme-app",
                &["acme_app"],
                "acme_app",
                TargetHow::Existing,
            ),
            (
                "-Users-me-dev-acme-app",
                &["app", "acme_app"],
                "acme_app",
                TargetHow::Existing,
            ),
            (
                "-Users-me-dev-acme-app",
                &["App"],
                "App",
                TargetHow::Existing,
            ),
            (
                "-Users-me-dev-acme-app",
                &["cme_app"],
                "acme_app",
                TargetHow::Derived,
            ),
            ("p--acme-portal", &["portal"], "portal", TargetHow::Existing),
            (
                "P--org-invoices",
                &["invoices", "org_invoices"],
                "org_invoices",
                TargetHow::Existing,
            ),
            (
                "-Users-me-dev-proj--claude-worktrees-agent1",
                &[],
                "proj",
                TargetHow::Derived,
            ),
            (
                "-Users-me-dev-proj--claude-worktrees-agent1",
                &["proj"],
                "proj",
                TargetHow::Existing,
            ),
            (
                "--Users-me-dev-proj--claude-worktrees-agent1",
                &[],
                "pro",
                TargetHow::Derived,
            ),
            (
                "-Users-x--codex-worktrees-1a2b3c-My-Project",
                &[],
                "my_project",
                TargetHow::Derived,
            ),
            ("-home-me-notes", &[], "notes", TargetHow::Derived),
            ("-home-me", &[], "home_me", TargetHow::Derived),
            ("-Users-me-dev", &[], "users_me_dev", TargetHow::Derived),
            (
                "C--Users-me-work-invoices",
                &[],
                "invoices",
                TargetHow::Derived,
            ),
            (
                "-opt-stuff-thing",
                &[],
                "opt_stuff_thing",
                TargetHow::Derived,
            ),
            ("-Users-me-Dev-Foo-Bar", &[], "foo_bar", TargetHow::Derived),
            ("-Users-me-dev-my.app", &[], "my.app", TargetHow::Derived),
            (
                "Billing-Service",
                &[],
                "billing_service",
                TargetHow::Derived,
            ),
            (
                "-Users-me-dev-acme-app",
                &["acme-app"],
                "acme-app",
                TargetHow::Existing,
            ),
            ("-tmp-x-code-", &[], "tmp_x_code", TargetHow::Derived),
        ];
        for (key, existing, target, how) in cases {
            assert_eq!(
                resolve_target(key, &wings(existing)),
                (target.to_string(), *how),
                "{key} with {existing:?}"
            );
        }
    }

    #[test]
    fn project_keys_come_from_the_transcript_path() {
        let cases = [
            (
                "/home/u/.claude/projects/-Users-me-dev-x/s.jsonl",
                Some("-Users-me-dev-x"),
            ),
            (
                "/home/u/.claude/projects/-Users-me-dev-x/abc/subagents/a.jsonl",
                Some("-Users-me-dev-x"),
            ),
            ("/home/u/.claude/projects/s.jsonl", None),
            (
                "C:\\Users\\me\\.claude\\projects\\C--Users-me-dev-x\\s.jsonl",
                Some("C--Users-me-dev-x"),
            ),
            ("/home/u/.Claude/projects/-x/s.jsonl", None),
            ("/nonexistent/.codex/sessions/2026/r.jsonl", None),
            ("relative/.claude/projects/k/s.jsonl", Some("k")),
            (".claude/projects/k/s.jsonl", None),
            ("", None),
        ];
        for (source, key) in cases {
            assert_eq!(project_key(source).as_deref(), key, "{source}");
        }
    }

    #[test]
    fn a_codex_key_is_the_basename_of_the_sessions_cwd() {
        let dir = tempfile::tempdir().unwrap();
        let sessions = dir.path().join(".codex/sessions/2026/01/02");
        std::fs::create_dir_all(&sessions).unwrap();
        let rollout = sessions.join("rollout-2026-01-02-abc.jsonl");
        std::fs::write(
            &rollout,
            "not json\n{\"type\":\"session_meta\",\"payload\":{\"id\":\"abc\",\"cwd\":\"/Users/me/src/Billing-Service/\"}}\n",
        )
        .unwrap();
        assert_eq!(
            project_key(&rollout.to_string_lossy()).as_deref(),
            Some("Billing-Service")
        );
    }

    #[test]
    fn the_fingerprint_is_3_11s() {
        let project = |target: &str| PlannedProject {
            target: target.into(),
            how: TargetHow::Derived,
            drawers: 1,
        };
        let plan = WingSplitPlan {
            wing: "wing_api".into(),
            planned_at: String::new(),
            projects: vec![
                ("-Users-me-dev-acme-app".into(), project("acme_app")),
                ("-home-me-notes".into(), project("notes")),
                ("C--Users-me-work-invoices".into(), project("invoices")),
                (
                    "-Users-me-dev-acme-app--claude-worktrees-agent7".into(),
                    project("acme_app"),
                ),
                ("-Users-me-dev-mempalace".into(), project("mempalace")),
                ("-Users-me-dev-acme-portal".into(), project("portal")),
                ("Billing-Service".into(), project("billing_service")),
            ],
            unresolved: 2,
        };
        assert_eq!(
            plan.fingerprint(),
            "fb964fd42281645f14548ebac302ce623e701413bc4ef5718fd7b2982fc91add"
        );
    }
}
