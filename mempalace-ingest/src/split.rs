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
    #[serde(serialize_with = "mempalace_core::reports::path_as_text")]
    pub path: PathBuf,
    /// Its session's number in the file (1-based, counting sessions too short to keep).
    pub number: usize,
    /// Its lines.
    pub lines: usize,
    /// Why it was not written (a link, FIFO or folder in the way, a write error).
    pub skipped: Option<String>,
}

/// A file holding several sessions, and what became of it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MegaFile {
    /// The file.
    #[serde(serialize_with = "mempalace_core::reports::path_as_text")]
    pub path: PathBuf,
    /// Sessions found.
    pub sessions: usize,
    /// Its size.
    pub size_bytes: u64,
    /// The parts written (or, in a dry run, that would be).
    pub parts: Vec<SessionPart>,
    /// Where the original went (`*.mega_backup`), once parts were written.
    #[serde(serialize_with = "mempalace_core::reports::optional_path_as_text")]
    pub backup: Option<PathBuf>,
}

/// A `*.txt` entry `split` left alone.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SkippedFile {
    /// The entry.
    #[serde(serialize_with = "mempalace_core::reports::path_as_text")]
    pub path: PathBuf,
    /// Why (not a regular file, too large, unreadable).
    pub reason: String,
}

/// What `split` did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SplitReport {
    /// The folder looked at.
    #[serde(serialize_with = "mempalace_core::reports::path_as_text")]
    pub source: PathBuf,
    /// Where parts went (none: beside their file).
    #[serde(serialize_with = "mempalace_core::reports::optional_path_as_text")]
    pub output_dir: Option<PathBuf>,
    /// Whether nothing was written.
    pub dry_run: bool,
    /// The least sessions a file needed.
    pub min_sessions: usize,
    /// Files with enough sessions.
    pub mega_files: Vec<MegaFile>,
    /// `*.txt` entries left alone, with why (not a regular file, too large).
    pub skipped: Vec<SkippedFile>,
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

/// Splits the mega-files of `request.dir` (see the module docs). A folder that does not exist
/// holds no mega-files (as in 3.11).
pub fn split_mega_files(request: &SplitRequest) -> Result<SplitReport, SplitError> {
    let source = request
        .dir
        .canonicalize()
        .unwrap_or_else(|_| request.dir.clone());
    let mut report = SplitReport {
        source: source.clone(),
        output_dir: request.output_dir.clone(),
        dry_run: request.dry_run,
        min_sessions: request.min_sessions,
        mega_files: Vec::new(),
        skipped: Vec::new(),
        files_created: 0,
    };
    let entries = match std::fs::read_dir(&source) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(report),
        Err(e) => {
            return Err(SplitError::ReadDir {
                path: source,
                source: e,
            });
        }
    };
    // 3.11's `glob("*.txt")`: hidden files are not matched.
    let mut candidates: Vec<PathBuf> = entries
        .flatten()
        .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "txt"))
        .collect();
    candidates.sort();
    // Only (path, size, sessions) is kept: each file is read again when its turn comes, so
    // memory holds one file at a time.
    let mut found = Vec::new();
    for path in &candidates {
        match read_transcript(path) {
            Ok(text) => {
                let sessions = session_starts(&python_lines(&text)).len();
                if sessions >= request.min_sessions {
                    let size = std::fs::symlink_metadata(path).map_or(0, |m| m.len());
                    found.push((path.clone(), size, sessions));
                }
            }
            Err(reason) => report.skipped.push(SkippedFile {
                path: path.clone(),
                reason,
            }),
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
    // Names taken in this run, and the files it read: no part replaces either.
    let mut taken: std::collections::HashSet<PathBuf> = candidates.into_iter().collect();
    for (path, size, sessions) in found {
        let mut mega = MegaFile {
            path: path.clone(),
            sessions,
            size_bytes: size,
            parts: Vec::new(),
            backup: None,
        };
        let text = match read_transcript(&path) {
            Ok(text) => text,
            Err(reason) => {
                report.skipped.push(SkippedFile { path, reason });
                continue;
            }
        };
        let out_dir = request
            .output_dir
            .clone()
            .unwrap_or_else(|| path.parent().map(Path::to_path_buf).unwrap_or_default());
        mega.parts = cut(
            &path,
            &python_lines(&text),
            &out_dir,
            &request.known_names,
            request.dry_run,
            &mut taken,
        );
        let written = mega.parts.iter().filter(|p| p.skipped.is_none()).count();
        report.files_created += written;
        if !request.dry_run && written > 0 {
            mega.backup = keep_as_backup(&path);
        }
        report.mega_files.push(mega);
    }
    Ok(report)
}

/// A transcript's text as 3.11 reads it (`\r\n` and `\r` as `\n`), read without following a
/// link, blocking on a FIFO or reading past [`MAX_FILE_BYTES`]; else why it was skipped.
fn read_transcript(path: &Path) -> Result<String, String> {
    use mempalace_core::regular_file::{RegularFileError, read_regular};
    match read_regular(path, MAX_FILE_BYTES) {
        Ok(bytes) => Ok(String::from_utf8_lossy(&bytes)
            .replace("\r\n", "\n")
            .replace('\r', "\n")),
        Err(RegularFileError::TooLarge { .. }) => Err(format!(
            "exceeds {} MB limit",
            MAX_FILE_BYTES / (1024 * 1024)
        )),
        Err(RegularFileError::Symlink { .. } | RegularFileError::NotRegular { .. }) => {
            Err("not a regular file".to_string())
        }
        Err(e) => Err(e.to_string()),
    }
}

/// Python's `str.splitlines(keepends=True)` on text whose line ends are already `\n`.
fn python_lines(text: &str) -> Vec<&str> {
    const BREAKS: [char; 9] = [
        '\n', '\x0b', '\x0c', '\x1c', '\x1d', '\x1e', '\u{85}', '\u{2028}', '\u{2029}',
    ];
    text.split_inclusive(&BREAKS[..]).collect()
}

/// Renames a split file to `*.mega_backup` (`*.mega_backup.N` when that exists: an earlier
/// backup is never replaced).
fn keep_as_backup(path: &Path) -> Option<PathBuf> {
    let first = path.with_extension("mega_backup");
    let candidates = std::iter::once(first.clone())
        .chain((1..1000).map(|n| first.with_extension(format!("mega_backup.{n}"))));
    for backup in candidates {
        // A hard link fails when the name is taken, so nothing is replaced.
        match std::fs::hard_link(path, &backup) {
            Ok(()) => {
                return std::fs::remove_file(path).ok().map(|()| backup);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(_) => return None,
        }
    }
    None
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

/// The parts of one mega-file (none with fewer than 2 sessions, as in 3.11), written unless
/// `dry_run`. A name already `taken` in this run, or held by a different file, gets `_2`,
/// `_3`, …: a part never replaces a transcript, another part or someone's file.
fn cut(
    path: &Path,
    lines: &[&str],
    out_dir: &Path,
    known: &KnownNames,
    dry_run: bool,
    taken: &mut std::collections::HashSet<PathBuf>,
) -> Vec<SessionPart> {
    static NOT_WORD_OR_DASH: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"[^\w-]").expect("valid"));
    static NOT_NAME: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"[^\w.\-]").expect("valid"));
    static UNDERSCORES: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"_+").expect("valid"));
    let mut bounds = session_starts(lines);
    if bounds.len() < 2 {
        return Vec::new();
    }
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
        let text = chunk.concat();
        let (out, skipped) = place_part(out_dir, &name, &text, dry_run, taken);
        parts.push(SessionPart {
            name: out
                .file_name()
                .map_or(name, |n| n.to_string_lossy().into_owned()),
            path: out,
            number: i + 1,
            lines: chunk.len(),
            skipped,
        });
    }
    parts
}

/// Where a part goes (its name, else the first free `name_N.txt`) and, unless `dry_run`,
/// writes it there; a file already holding exactly this text counts as written.
fn place_part(
    out_dir: &Path,
    name: &str,
    text: &str,
    dry_run: bool,
    taken: &mut std::collections::HashSet<PathBuf>,
) -> (PathBuf, Option<String>) {
    let stem = name.strip_suffix(".txt").unwrap_or(name);
    for n in 1..1000 {
        let candidate = if n == 1 {
            out_dir.join(name)
        } else {
            out_dir.join(format!("{stem}_{n}.txt"))
        };
        if taken.contains(&candidate) {
            continue;
        }
        let existing = match std::fs::symlink_metadata(&candidate) {
            Err(_) => None,
            Ok(meta) if meta.file_type().is_file() => Some(
                mempalace_core::regular_file::read_regular(&candidate, text.len() as u64)
                    .is_ok_and(|b| b == text.as_bytes()),
            ),
            // 3.11 skips a part whose name holds a link, FIFO or folder.
            Ok(_) => {
                taken.insert(candidate.clone());
                return (candidate, Some("not a regular file".to_string()));
            }
        };
        match existing {
            Some(false) => continue,
            Some(true) => {}
            None if dry_run => {}
            None => {
                if let Err(e) = mempalace_core::regular_file::create_new_regular(&candidate, text) {
                    taken.insert(candidate.clone());
                    return (candidate, Some(e.to_string()));
                }
            }
        }
        taken.insert(candidate.clone());
        return (candidate, None);
    }
    (out_dir.join(name), Some("no free name".to_string()))
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
        // The link is left alone (listed as skipped) and the part takes the next free name.
        assert_eq!(report.files_created, 2);
        assert_eq!(report.skipped.len(), 1);
        let first = &report.mega_files[0].parts[0];
        assert!(first.skipped.is_none());
        assert!(first.name.ends_with("_2.txt"), "{}", first.name);
        assert!(!target.exists());
        assert!(dir.path().join(name).is_symlink());
    }

    #[test]
    fn no_session_is_lost_to_a_name_clash_a_second_split_or_a_single_session_file() {
        let dir = tempfile::tempdir().unwrap();
        // Two sessions that would get the same name (same minute, subject and people).
        let twin = session("Same subject", false);
        std::fs::write(dir.path().join("big.txt"), twin.repeat(2)).unwrap();
        std::fs::write(dir.path().join("one.txt"), session("alone", false)).unwrap();
        let mut request = SplitRequest::new(dir.path());
        request.min_sessions = 1;
        let report = split_mega_files(&request).unwrap();
        let names: Vec<&str> = report
            .mega_files
            .iter()
            .flat_map(|m| m.parts.iter().map(|p| p.name.as_str()))
            .collect();
        assert_eq!(names.len(), 2, "{names:?}");
        assert_ne!(names[0], names[1]);
        for name in &names {
            let part = std::fs::read_to_string(dir.path().join(name)).unwrap();
            assert_eq!(part.matches("> Same subject").count(), 1, "{name}: {part}");
        }
        assert!(
            dir.path().join("one.txt").is_file(),
            "one session: never split"
        );
        // A new dump under the same name: the first backup is kept.
        std::fs::write(
            dir.path().join("big.txt"),
            session("Other", false).repeat(2),
        )
        .unwrap();
        request.min_sessions = 2;
        split_mega_files(&request).unwrap();
        assert!(dir.path().join("big.mega_backup").is_file());
        assert!(dir.path().join("big.mega_backup.1").is_file());
        assert_eq!(
            std::fs::read_to_string(dir.path().join("big.mega_backup")).unwrap(),
            twin.repeat(2)
        );
    }

    #[test]
    fn carriage_returns_break_lines_as_in_3_11() {
        let dir = tempfile::tempdir().unwrap();
        let text = session("Fix the bug", false).replace('\n', "\r\n")
            + &session("Plan it", false).replace('\n', "\r");
        std::fs::write(dir.path().join("crlf.txt"), text).unwrap();
        let report = split_mega_files(&SplitRequest::new(dir.path())).unwrap();
        let parts = &report.mega_files[0].parts;
        assert_eq!(parts.len(), 2);
        assert!(
            parts[0].name.ends_with("_Fix-the-bug.txt"),
            "{}",
            parts[0].name
        );
        assert!(parts[1].name.ends_with("_Plan-it.txt"), "{}", parts[1].name);
        let written = std::fs::read_to_string(&parts[1].path).unwrap();
        assert!(!written.contains('\r'));
        assert_eq!(parts[1].lines, written.lines().count());
    }
}
