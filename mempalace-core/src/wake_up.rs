//! What an agent should know when a session starts: MemPalace's memory layers. L0 is the
//! identity (a short text the user writes), L1 the palace's essential story (its most
//! important drawers, compact), L2 on-demand recall of a wing or room, L3 deep search
//! ([`crate::Palace::search_with`]). `wake_up` is L0 + L1, for a system prompt; its token
//! budget is counted with the embedder's own tokenizer.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::drawer::Drawer;

/// The identity file's name (in the palace folder, else in `~/.mempalace`, as 3.11 reads it).
pub const IDENTITY_FILE: &str = crate::PalaceLayout::IDENTITY;
/// L1's default token budget (3.11 aims at 500–800 tokens).
pub const DEFAULT_L1_TOKENS: usize = 800;
/// Most drawers L1 shows (3.11's `MAX_DRAWERS`).
pub const L1_MAX_DRAWERS: usize = 15;
/// How many of the newest drawers L1 chooses from.
pub const L1_CANDIDATES: usize = 200;
/// Characters of a drawer L1 shows (3.11's snippet length).
pub const L1_SNIPPET_CHARS: usize = 200;
/// Largest identity file read.
const MAX_IDENTITY_BYTES: u64 = 64 * 1024;

/// What `wake_up` is asked for.
#[derive(Debug, Clone, PartialEq)]
pub struct WakeUpRequest {
    /// Only this wing's drawers in L1 (a project-specific wake-up).
    pub wing: Option<String>,
    /// Most tokens L1 may take.
    pub l1_tokens: usize,
    /// The identity file to read instead of the palace's or the user's.
    pub identity_path: Option<PathBuf>,
}

impl Default for WakeUpRequest {
    fn default() -> Self {
        WakeUpRequest {
            wing: None,
            l1_tokens: DEFAULT_L1_TOKENS,
            identity_path: None,
        }
    }
}

/// One layer of the wake-up text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Layer {
    /// The layer's text.
    pub text: String,
    /// Its length in tokens.
    pub tokens: usize,
}

/// The wake-up context: L0 + L1, with token counts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WakeUp {
    /// L0 and L1 joined, ready to paste into a system prompt.
    pub text: String,
    /// Tokens of `text`.
    pub tokens: usize,
    /// L0: the identity.
    pub identity: Layer,
    /// Where the identity came from (a file path, or "default").
    pub identity_source: String,
    /// L1: the essential story.
    pub essential: Layer,
    /// The drawers L1 shows, in the order shown.
    pub drawer_ids: Vec<String>,
    /// L1's token budget.
    pub l1_budget: usize,
    /// How tokens were counted: the embedder's tokenizer, or an estimate (4 characters a
    /// token) for an embedder without one.
    pub token_counter: String,
}

/// The identity text and where it came from: `explicit`, else the palace folder's
/// identity.txt, else `~/.mempalace/identity.txt`, else 3.11's default line.
pub fn read_identity(explicit: Option<&Path>, palace: &Path) -> (String, String) {
    let home = dirs::home_dir().map(|h| h.join(".mempalace").join(IDENTITY_FILE));
    let candidates: Vec<PathBuf> = match explicit {
        Some(p) => vec![p.to_path_buf()],
        None => std::iter::once(palace.join(IDENTITY_FILE))
            .chain(home)
            .collect(),
    };
    for path in candidates {
        let Ok(meta) = std::fs::metadata(&path) else {
            continue;
        };
        if !meta.is_file() || meta.len() > MAX_IDENTITY_BYTES {
            continue;
        }
        if let Ok(text) = std::fs::read_to_string(&path) {
            return (text.trim().to_string(), path.display().to_string());
        }
    }
    (
        "## L0 — IDENTITY\nNo identity configured. Create ~/.mempalace/identity.txt".into(),
        "default".into(),
    )
}

/// L1's choice among the newest drawers (newest first): rooms take turns, the room with the
/// newest drawer first, so one busy room does not crowd out the rest of the palace (3.11
/// takes the 15 newest whatever their room); texts already shown are skipped.
pub fn choose_essential(newest: Vec<Drawer>, max: usize) -> Vec<Drawer> {
    let mut rooms: Vec<(String, std::collections::VecDeque<Drawer>)> = Vec::new();
    for d in newest {
        let key = format!("{}/{}", d.metadata.wing, d.metadata.room);
        match rooms.iter_mut().find(|(k, _)| *k == key) {
            Some((_, q)) => q.push_back(d),
            None => rooms.push((key, std::collections::VecDeque::from([d]))),
        }
    }
    let mut chosen = Vec::new();
    let mut seen: HashSet<String> = HashSet::new();
    while chosen.len() < max && rooms.iter().any(|(_, q)| !q.is_empty()) {
        for (_, q) in rooms.iter_mut() {
            if chosen.len() == max {
                break;
            }
            while let Some(d) = q.pop_front() {
                if seen.insert(d.text.trim().to_string()) {
                    chosen.push(d);
                    break;
                }
            }
        }
    }
    chosen
}

/// One drawer as an L1 line: its text on one line, cut at 200 characters, and its file.
pub fn essential_line(d: &Drawer) -> String {
    let flat: String = d.text.split_whitespace().collect::<Vec<_>>().join(" ");
    let snippet = if flat.chars().count() > L1_SNIPPET_CHARS {
        let cut: String = flat.chars().take(L1_SNIPPET_CHARS - 3).collect();
        format!("{cut}...")
    } else {
        flat
    };
    let source = Path::new(&d.metadata.source_file)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if source.is_empty() {
        format!("  - {snippet}")
    } else {
        format!("  - {snippet}  ({source})")
    }
}

/// L1's text from the chosen drawers, grouped by room (rooms in name order, as 3.11 shows
/// them), keeping only the drawers in `shown`.
pub fn essential_text(chosen: &[Drawer], shown: &[bool]) -> String {
    if chosen.is_empty() {
        return "## L1 — No memories yet.".into();
    }
    let mut by_room: BTreeMap<&str, Vec<&Drawer>> = BTreeMap::new();
    for (d, keep) in chosen.iter().zip(shown) {
        if *keep {
            by_room.entry(d.metadata.room.as_str()).or_default().push(d);
        }
    }
    let mut lines = vec!["## L1 — ESSENTIAL STORY".to_string()];
    for (room, drawers) in by_room {
        lines.push(format!("\n[{room}]"));
        lines.extend(drawers.into_iter().map(essential_line));
    }
    if shown.iter().any(|k| !k) {
        lines.push("  ... (more in L3 search)".into());
    }
    lines.join("\n")
}
