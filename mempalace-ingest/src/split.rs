//! `mempalace split`: cuts terminal transcripts that hold several Claude Code sessions (a
//! folder's `*.txt` "mega-files") into one file per session, named by date, people and
//! subject, as MemPalace 3.11's `split` does. The original is kept, renamed `*.mega_backup`.
//!
//! A session starts at a `Claude Code v` line, unless the next lines say it is a context
//! restore (`Ctrl+E`, `previous messages`); parts under 10 lines are dropped. Unlike 3.11, a
//! missing output folder is created, and a part never writes through a link or into a
//! non-regular file.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use regex::Regex;
use serde::{Deserialize, Serialize};

/// Largest file read.
pub const MAX_FILE_BYTES: u64 = 500 * 1024 * 1024;
/// Parts shorter than this many lines are dropped.
const MIN_PART_LINES: usize = 10;
/// Lines after a session header that may reveal it as a context restore.
const RESTORE_WINDOW: usize = 6;

/// The people a user named in `~/.mempalace/known_names.json` (a list of names, or
/// `{"names": [...], "username_map": {"login": "Name"}}`), found in parts to name them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct KnownNames {
    /// Names looked for (whole words, any case).
    #[serde(default)]
    pub names: Vec<String>,
    /// A `/Users/<login>/` path in a part names the person mapped here.
    #[serde(default)]
    pub username_map: HashMap<String, String>,
}

impl KnownNames {
    /// Reads `path` (3.11's two shapes); a missing or malformed file names nobody.
    pub fn load(path: &Path) -> KnownNames {
        let Ok(text) = std::fs::read_to_string(path) else {
            return KnownNames::default();
        };
        match serde_json::from_str::<serde_json::Value>(&text) {
            Ok(serde_json::Value::Array(names)) => KnownNames {
                names: names
                    .into_iter()
                    .filter_map(|n| n.as_str().map(str::to_string))
                    .collect(),
                ..KnownNames::default()
            },
            Ok(v @ serde_json::Value::Object(_)) => serde_json::from_value(v).unwrap_or_default(),
            _ => KnownNames::default(),
        }
    }
}

/// What to split.
#[derive(Debug, Clone, PartialEq)]
pub struct SplitRequest {
    /// The folder whose `*.txt` files are looked at (not recursively).
    pub dir: PathBuf,
    /// Where parts go [default: beside their file].
    pub output_dir: Option<PathBuf>,
    /// Only files with at least this many sessions (3.11's default: 2).
    pub min_sessions: usize,
    /// Report what would be written; write and rename nothing.
    pub dry_run: bool,
    /// People to name parts by.
    pub known_names: KnownNames,
}

impl SplitRequest {
    /// Splitting `dir`'s mega-files beside them, 2 sessions or more, for real.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        SplitRequest {
            dir: dir.into(),
            output_dir: None,
            min_sessions: 2,
            dry_run: false,
            known_names: KnownNames::default(),
        }
    }
}

/// One session cut out of a mega-file.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SessionPart {
    /// Its file name.
    pub name: String,
    /// Its path.
    pub path: PathBuf,
    /// Its lines.
    pub lines: usize,
    /// Why it was not written (a non-regular file or a link in the way, a write error).
    pub skipped: Option<String>,
}

/// A file holding several sessions, and what became of it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MegaFile {
    /// The file.
    pub path: PathBuf,
    /// Sessions found.
    pub sessions: usize,
    /// Its size.
    pub size_bytes: u64,
    /// The parts written (or, in a dry run, that would be).
    pub parts: Vec<SessionPart>,
    /// Where the original went (`*.mega_backup`), once parts were written.
    pub backup: Option<PathBuf>,
}

/// What `split` did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SplitReport {
    /// The folder looked at.
    pub source: PathBuf,
    /// Where parts went (none: beside their file).
    pub output_dir: Option<PathBuf>,
    /// Whether nothing was written.
    pub dry_run: bool,
    /// The least sessions a file needed.
    pub min_sessions: usize,
    /// Files with enough sessions.
    pub mega_files: Vec<MegaFile>,
    /// `*.txt` entries left alone, with why (not a regular file, too large).
    pub skipped: Vec<(PathBuf, String)>,
    /// Parts written (or that would be).
    pub files_created: usize,
}

/// Why a split could not run.
#[derive(Debug, thiserror::Error)]
pub enum SplitError {
    /// The folder could not be listed.
    #[error("cannot read {path}: {source}")]
    ReadDir {
        /// The folder.
        path: PathBuf,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// The output folder could not be created.
    #[error("cannot create the output folder {path}: {source}")]
    OutputDir {
        /// The folder.
        path: PathBuf,
        /// The error.
        #[source]
        source: std::io::Error,
    },
}

/// Splits the mega-files of `request.dir` (see the module docs).
pub fn split_mega_files(request: &SplitRequest) -> Result<SplitReport, SplitError> {
    let source = request
        .dir
        .canonicalize()
        .unwrap_or_else(|_| request.dir.clone());
    let entries = std::fs::read_dir(&source).map_err(|e| SplitError::ReadDir {
        path: source.clone(),
        source: e,
    })?;
    let mut candidates: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "txt"))
        .collect();
    candidates.sort();
    let mut report = SplitReport {
        source: source.clone(),
        output_dir: request.output_dir.clone(),
        dry_run: request.dry_run,
        min_sessions: request.min_sessions,
        mega_files: Vec::new(),
        skipped: Vec::new(),
        files_created: 0,
    };
    let mut found = Vec::new();
    for path in candidates {
        // The type decides before any open: reading a FIFO named x.txt would block.
        let meta = match std::fs::symlink_metadata(&path) {
            Ok(m) if m.file_type().is_file() => m,
            _ => {
                report
                    .skipped
                    .push((path, "not a regular file".to_string()));
                continue;
            }
        };
        if meta.len() > MAX_FILE_BYTES {
            report.skipped.push((
                path,
                format!("exceeds {} MB limit", MAX_FILE_BYTES / (1024 * 1024)),
            ));
            continue;
        }
        let Ok(bytes) = std::fs::read(&path) else {
            report.skipped.push((path, "unreadable".to_string()));
            continue;
        };
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        let boundaries = session_starts(&lines);
        if boundaries.len() >= request.min_sessions.max(1) {
            found.push((path, meta.len(), text.clone(), boundaries.len()));
        }
    }
    if found.is_empty() {
        return Ok(report);
    }
    if let Some(out) = &request.output_dir
        && !request.dry_run
    {
        std::fs::create_dir_all(out).map_err(|e| SplitError::OutputDir {
            path: out.clone(),
            source: e,
        })?;
    }
    for (path, size, text, sessions) in found {
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        let out_dir = request
            .output_dir
            .clone()
            .unwrap_or_else(|| path.parent().map(Path::to_path_buf).unwrap_or_default());
        let parts = cut(
            &path,
            &lines,
            &out_dir,
            &request.known_names,
            request.dry_run,
        );
        let written = parts.iter().filter(|p| p.skipped.is_none()).count();
        report.files_created += written;
        let mut mega = MegaFile {
            path: path.clone(),
            sessions,
            size_bytes: size,
            parts,
            backup: None,
        };
        if !request.dry_run && written > 0 {
            let backup = path.with_extension("mega_backup");
            if std::fs::rename(&path, &backup).is_ok() {
                mega.backup = Some(backup);
            }
        }
        report.mega_files.push(mega);
    }
    Ok(report)
}

/// Line indexes where a new session (not a context restore) begins.
fn session_starts(lines: &[&str]) -> Vec<usize> {
    (0..lines.len())
        .filter(|&i| lines[i].contains("Claude Code v"))
        .filter(|&i| {
            let nearby: String = lines[i..(i + RESTORE_WINDOW).min(lines.len())].concat();
            !nearby.contains("Ctrl+E") && !nearby.contains("previous messages")
        })
        .collect()
}

/// The parts of one mega-file, written unless `dry_run`.
fn cut(
    path: &Path,
    lines: &[&str],
    out_dir: &Path,
    known: &KnownNames,
    dry_run: bool,
) -> Vec<SessionPart> {
    static NOT_WORD_OR_DASH: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"[^\w-]").expect("valid"));
    static NOT_NAME: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"[^\w.\-]").expect("valid"));
    static UNDERSCORES: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"_+").expect("valid"));
    let mut bounds = session_starts(lines);
    bounds.push(lines.len());
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem: String = NOT_WORD_OR_DASH
        .replace_all(&stem, "_")
        .chars()
        .take(40)
        .collect();
    let mut parts = Vec::new();
    for (i, pair) in bounds.windows(2).enumerate() {
        let chunk = &lines[pair[0]..pair[1]];
        if chunk.len() < MIN_PART_LINES {
            continue;
        }
        let when = timestamp(chunk).unwrap_or_else(|| format!("part{:02}", i + 1));
        let people = people(chunk, known);
        let people = if people.is_empty() {
            "unknown".to_string()
        } else {
            people.into_iter().take(3).collect::<Vec<_>>().join("-")
        };
        let name = format!("{stem}__{when}_{people}_{}.txt", subject(chunk));
        let name = NOT_NAME.replace_all(&name, "_");
        let name = UNDERSCORES.replace_all(&name, "_").into_owned();
        let out = out_dir.join(&name);
        let skipped = if dry_run {
            None
        } else {
            write_part(&out, &chunk.concat()).err()
        };
        parts.push(SessionPart {
            name,
            path: out,
            lines: chunk.len(),
            skipped,
        });
    }
    parts
}

/// Writes a part (replacing a regular file of that name, as 3.11 does), never through a link
/// or into anything but a regular file.
fn write_part(path: &Path, text: &str) -> Result<(), String> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_file() => {
            std::fs::remove_file(path).map_err(|e| e.to_string())?
        }
        Ok(_) => return Err("not a regular file".to_string()),
        Err(_) => {}
    }
    mempalace_core::regular_file::create_new_regular(path, text).map_err(|e| e.to_string())
}

/// `YYYY-MM-DD_HMMAM` from the first `⏺ H:MM AM Weekday, Month D, YYYY` of the first 50 lines.
fn timestamp(lines: &[&str]) -> Option<String> {
    static STAMP: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"⏺\s+(\d{1,2}:\d{2}\s+[AP]M)\s+\w+,\s+(\w+)\s+(\d{1,2}),\s+(\d{4})")
            .expect("valid")
    });
    const MONTHS: [&str; 12] = [
        "January",
        "February",
        "March",
        "April",
        "May",
        "June",
        "July",
        "August",
        "September",
        "October",
        "November",
        "December",
    ];
    lines.iter().take(50).find_map(|line| {
        let m = STAMP.captures(line)?;
        let month = MONTHS
            .iter()
            .position(|name| *name == &m[2])
            .map_or("00".to_string(), |i| format!("{:02}", i + 1));
        let time: String = m[1].chars().filter(|c| *c != ':' && *c != ' ').collect();
        Some(format!("{}-{month}-{:0>2}_{time}", &m[4], &m[3]))
    })
}

/// Known people named in the first 100 lines, sorted.
fn people(lines: &[&str], known: &KnownNames) -> Vec<String> {
    static USER_FOLDER: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"/Users/(\w+)/").expect("valid"));
    let text: String = lines.iter().take(100).copied().collect();
    let mut found = std::collections::BTreeSet::new();
    for person in &known.names {
        let pattern = format!(r"(?i)\b{}\b", regex::escape(person));
        if Regex::new(&pattern).is_ok_and(|r| r.is_match(&text)) {
            found.insert(person.clone());
        }
    }
    if let Some(m) = USER_FOLDER.captures(&text)
        && let Some(name) = known.username_map.get(&m[1])
    {
        found.insert(name.clone());
    }
    found.into_iter().collect()
}

/// The first real prompt (`> ` not a shell command), as a file-name-safe subject of at most
/// 60 characters; else `session`.
fn subject(lines: &[&str]) -> String {
    static SHELL: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^(\./|cd |ls |python|bash|git |cat |source |export |claude|./activate)")
            .expect("valid")
    });
    static NOT_WORD_SPACE_DASH: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"[^\w\s-]").expect("valid"));
    static SPACES: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\s+").expect("valid"));
    for line in lines {
        let Some(prompt) = line.strip_prefix("> ") else {
            continue;
        };
        let prompt = prompt.trim();
        if !prompt.is_empty() && !SHELL.is_match(prompt) && prompt.chars().count() > 5 {
            let cleaned = NOT_WORD_SPACE_DASH.replace_all(prompt, "");
            let dashed = SPACES.replace_all(cleaned.trim(), "-");
            return dashed.chars().take(60).collect();
        }
    }
    "session".to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session(prompt: &str, restore: bool) -> String {
        let mut s = String::from("╭───╮\n│ ✻ Welcome to Claude Code v1.0.80 │\n");
        if restore {
            s.push_str("  Ctrl+E to show 12 previous messages\n");
        }
        s.push_str("⏺ 3:07 PM Tuesday, March 31, 2026\n");
        s.push_str(&format!("> cd /Users/ben/dev\n> {prompt}\n"));
        for n in 0..10 {
            s.push_str(&format!("⏺ answer line {n}\n"));
        }
        s
    }

    #[test]
    fn a_mega_file_is_cut_at_true_session_starts_and_kept_as_a_backup() {
        let dir = tempfile::tempdir().unwrap();
        let text = session("Fix the login bug, please!", false)
            + &session("ignored restore", true)
            + &session("Plan the release", false);
        std::fs::write(dir.path().join("big.txt"), &text).unwrap();
        std::fs::write(dir.path().join("one.txt"), session("only one", false)).unwrap();
        let mut request = SplitRequest::new(dir.path());
        request.known_names = KnownNames {
            names: vec!["Alice".into()],
            username_map: [("ben".to_string(), "Ben".to_string())].into(),
        };
        let report = split_mega_files(&request).unwrap();
        assert_eq!(report.mega_files.len(), 1);
        let mega = &report.mega_files[0];
        assert_eq!(mega.sessions, 2);
        let names: Vec<&str> = mega.parts.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "big_2026-03-31_307PM_Ben_Fix-the-login-bug-please.txt",
                "big_2026-03-31_307PM_Ben_Plan-the-release.txt"
            ]
        );
        assert!(dir.path().join("big.mega_backup").is_file());
        assert!(!dir.path().join("big.txt").exists());
        let first = std::fs::read_to_string(dir.path().join(names[0])).unwrap();
        assert!(
            first.contains("ignored restore"),
            "a restore stays in its session"
        );
        assert!(dir.path().join("one.txt").is_file());
    }

    #[test]
    fn a_dry_run_writes_nothing_and_a_link_in_the_way_is_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let text = session("first task here", false) + &session("second task here", false);
        std::fs::write(dir.path().join("big.txt"), &text).unwrap();
        let mut request = SplitRequest::new(dir.path());
        request.dry_run = true;
        let report = split_mega_files(&request).unwrap();
        assert_eq!(report.files_created, 2);
        assert!(dir.path().join("big.txt").is_file());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);

        let elsewhere = tempfile::tempdir().unwrap();
        let target = elsewhere.path().join("victim");
        let name = &report.mega_files[0].parts[0].name;
        std::os::unix::fs::symlink(&target, dir.path().join(name)).unwrap();
        request.dry_run = false;
        request.output_dir = None;
        let report = split_mega_files(&request).unwrap();
        assert_eq!(report.files_created, 1);
        assert!(report.mega_files[0].parts[0].skipped.is_some());
        assert!(!target.exists());
    }
}
