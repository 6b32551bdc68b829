//! The names a mined drawer mentions, found as MemPalace 3.11's miners find them, so hallways
//! and entity tunnels are built from the same `entities` 3.11 writes:
//!
//! - [`EntityTagger::tag`] (project files): names from the user's known-entity registry found
//!   anywhere in the text, known multi-word product names, and capitalised words seen at least
//!   twice in the first 5,000 characters that are neither sentence openers nor common English
//!   words; at most 25, sorted.
//! - [`structural_entities`] (conversations): code spans, URLs, paths, dotted and CamelCase
//!   identifiers and snake_case names, the most frequent 24.
//!
//! The word lists (`coca_content_words.txt`, `known_systems.txt`) are 3.11's data files
//! (MemPalace, MIT licence), one entry per line.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::Path;
use std::sync::LazyLock;

use regex::Regex;
use serde_json::Value;

/// At most this many names are kept per drawer (3.11's `_ENTITY_METADATA_LIMIT`).
pub const MAX_PROSE_ENTITIES: usize = 25;
/// Capitalised words are counted in this many leading characters (3.11's window).
pub const PROSE_WINDOW_CHARS: usize = 5000;
/// At most this many structural names are kept per drawer (3.11's `_MAX_ENTITIES`).
pub const MAX_STRUCTURAL_ENTITIES: usize = 24;
/// The registry file 3.11 reads known names from, in the user's configuration folder.
pub const KNOWN_ENTITIES_FILE: &str = "known_entities.json";

/// Sentence openers, pronouns, weekdays and months: capitalised but never a name (3.11's
/// closet stoplist, case-sensitive).
const SENTENCE_WORDS: &str = "The This That These Those When Where What Why Who Which How After \
Before Then Now Here There And But Or Yet So If Else Yes No Maybe Okay User Assistant System \
Tool Monday Tuesday Wednesday Thursday Friday Saturday Sunday January February March April May \
June July August September October November December";

static SENTENCE_STOPLIST: LazyLock<HashSet<&'static str>> =
    LazyLock::new(|| SENTENCE_WORDS.split_whitespace().collect());

/// Common English content words, lower case: capitalised at a sentence start or in a heading,
/// they are not names.
static CONTENT_WORDS: LazyLock<HashSet<&'static str>> = LazyLock::new(|| {
    include_str!("entity_extraction/coca_content_words.txt")
        .lines()
        .map(str::trim)
        .filter(|w| !w.is_empty())
        .collect()
});

/// Multi-word product names counted whole, longest first (ties keep the file's order).
static KNOWN_SYSTEMS: LazyLock<Vec<(&'static str, Regex)>> = LazyLock::new(|| {
    let mut names: Vec<&'static str> = include_str!("entity_extraction/known_systems.txt")
        .lines()
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .collect();
    names.sort_by_key(|n| std::cmp::Reverse(n.chars().count()));
    names
        .into_iter()
        .filter_map(|n| insensitive_literal(n).map(|r| (n, r)))
        .collect()
});

/// Unbroken printable-ASCII runs this long are blanked before candidate matching (3.11's
/// guard against pathological blobs).
static LONG_ASCII_RUN: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"[!-~]{24,}").expect("valid pattern"));

/// A capitalised word or CamelCase name (3.11's English candidate pattern).
static CANDIDATE_WORD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b([A-Z][a-z]+(?:[A-Z][a-z]+|[A-Z]{2,})+|[A-Z][a-z]{1,19})\b")
        .expect("valid pattern")
});

/// A case-insensitive regex matching `literal` exactly.
fn insensitive_literal(literal: &str) -> Option<Regex> {
    Regex::new(&format!("(?i){}", regex::escape(literal))).ok()
}

/// Python's `\w` for one character.
fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The first span from byte `at` where `pattern` matches with no word character on either
/// side (3.11's `(?<!\w)…(?!\w)`).
fn next_standalone(pattern: &Regex, text: &str, mut at: usize) -> Option<(usize, usize)> {
    while at <= text.len() {
        let m = pattern.find_at(text, at)?;
        let free_before = text[..m.start()]
            .chars()
            .next_back()
            .is_none_or(|c| !is_word_char(c));
        let free_after = text[m.end()..]
            .chars()
            .next()
            .is_none_or(|c| !is_word_char(c));
        if free_before && free_after && m.end() > m.start() {
            return Some((m.start(), m.end()));
        }
        at = m.start() + text[m.start()..].chars().next().map_or(1, char::len_utf8);
    }
    None
}

/// Every such span, left to right without overlap.
fn standalone_matches(pattern: &Regex, text: &str) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut at = 0;
    while let Some(span) = next_standalone(pattern, text, at) {
        spans.push(span);
        at = span.1;
    }
    spans
}

/// The first `n` characters of `text`.
fn leading_chars(text: &str, n: usize) -> &str {
    match text.char_indices().nth(n) {
        Some((i, _)) => &text[..i],
        None => text,
    }
}

/// The names in a user's known-entity registry (3.11's `known_entities.json`): every name of
/// every category (list items, or a map's keys), and the topic names of `topics_by_wing`. A
/// missing or unreadable file has none.
pub fn read_known_entities(path: &Path) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Vec::new();
    };
    let Ok(Value::Object(categories)) = serde_json::from_str::<Value>(&text) else {
        return Vec::new();
    };
    let name = |v: &Value| -> Option<String> {
        match v {
            Value::String(s) if !s.is_empty() => Some(s.clone()),
            Value::Number(n) => Some(n.to_string()),
            _ => None,
        }
    };
    let mut names = BTreeSet::new();
    for (category, value) in &categories {
        match value {
            Value::Object(topics) if category == "topics_by_wing" => {
                for list in topics.values() {
                    if let Value::Array(items) = list {
                        names.extend(items.iter().filter_map(name));
                    }
                }
            }
            Value::Array(items) => names.extend(items.iter().filter_map(name)),
            Value::Object(map) => names.extend(map.keys().filter(|k| !k.is_empty()).cloned()),
            _ => {}
        }
    }
    names.into_iter().collect()
}

/// Tags project-file drawers with the names they mention, as 3.11's miner does.
#[derive(Debug, Clone, Default)]
pub struct EntityTagger {
    known: Vec<(String, Regex)>,
}

impl EntityTagger {
    /// A tagger that also looks for these known names (case-insensitively, anywhere).
    pub fn with_known_names(names: impl IntoIterator<Item = String>) -> Self {
        let known = names
            .into_iter()
            .filter_map(|n| insensitive_literal(&n).map(|r| (n, r)))
            .collect();
        EntityTagger { known }
    }

    /// A tagger for the names in the registry file at `path` (none when it is missing).
    pub fn from_registry(path: &Path) -> Self {
        Self::with_known_names(read_known_entities(path))
    }

    /// The names `content` mentions: known names anywhere, product names and repeated
    /// capitalised words in the leading window; sorted, at most [`MAX_PROSE_ENTITIES`].
    pub fn tag(&self, content: &str) -> Vec<String> {
        let mut matched: BTreeSet<String> = BTreeSet::new();
        for (name, pattern) in &self.known {
            if next_standalone(pattern, content, 0).is_some() {
                matched.insert(name.clone());
            }
        }
        let mut window = leading_chars(content, PROSE_WINDOW_CHARS).to_string();
        let mut counts: HashMap<String, usize> = HashMap::new();
        for (name, pattern) in KNOWN_SYSTEMS.iter() {
            let spans = standalone_matches(pattern, &window);
            if spans.is_empty() {
                continue;
            }
            *counts.entry((*name).to_string()).or_default() += spans.len();
            for &(start, end) in spans.iter().rev() {
                let blank = " ".repeat(window[start..end].chars().count());
                window.replace_range(start..end, &blank);
            }
        }
        let collapsed = LONG_ASCII_RUN.replace_all(&window, " ");
        for word in CANDIDATE_WORD.find_iter(&collapsed).map(|m| m.as_str()) {
            if SENTENCE_STOPLIST.contains(word)
                || CONTENT_WORDS.contains(word.to_lowercase().as_str())
            {
                continue;
            }
            *counts.entry(word.to_string()).or_default() += 1;
        }
        matched.extend(
            counts
                .into_iter()
                .filter(|(w, c)| *c >= 2 && w.chars().count() > 2)
                .map(|(w, _)| w),
        );
        matched.into_iter().take(MAX_PROSE_ENTITIES).collect()
    }
}

/// The structural patterns, in the order 3.11 counts them: code spans (their inside), URLs,
/// paths with an extension, dotted identifiers, CamelCase, snake_case.
static STRUCTURAL_PATTERNS: LazyLock<Vec<Regex>> = LazyLock::new(|| {
    [
        r"`([^`\n]{2,64})`",
        r#"https?://[^\s)>\]}"']+"#,
        r"\b[\w.-]+/[\w./-]*\.[A-Za-z][A-Za-z0-9]{0,4}\b",
        r"\b[A-Za-z][A-Za-z0-9_]+(?:\.[A-Za-z][A-Za-z0-9_]+)+\b",
        r"\b[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]+)+\b",
        r"\b_?[a-z][a-z0-9]*(?:_[a-z0-9]+)+_?\b",
    ]
    .iter()
    .map(|p| Regex::new(p).expect("valid pattern"))
    .collect()
});

/// A structural token without separators or surrounding punctuation (3.11's `_clean`).
fn clean_token(token: &str) -> String {
    const EDGES: &[char] = &[
        '`', '.', ',', ':', '(', ')', '[', ']', '{', '}', '<', '>', '"', '\'',
    ];
    token
        .replace(';', " ")
        .trim()
        .trim_matches(EDGES)
        .trim()
        .to_string()
}

/// The structural names in a conversation's text (3.11's `extract_structural_entities`): the
/// most frequent [`MAX_STRUCTURAL_ENTITIES`], ties in order of first appearance, one per
/// spelling regardless of case (the first spelling seen).
pub fn structural_entities(text: &str) -> Vec<String> {
    let mut counts: HashMap<String, usize> = HashMap::new();
    let mut first_seen: Vec<(String, String)> = Vec::new();
    for (i, pattern) in STRUCTURAL_PATTERNS.iter().enumerate() {
        for caps in pattern.captures_iter(text) {
            let raw = if i == 0 { caps.get(1) } else { caps.get(0) };
            let token = clean_token(raw.map_or("", |m| m.as_str()));
            if !(2..=64).contains(&token.chars().count()) {
                continue;
            }
            let key = token.to_lowercase();
            let n = counts.entry(key.clone()).or_insert(0);
            if *n == 0 {
                first_seen.push((key, token));
            }
            *n += 1;
        }
    }
    let mut ranked: Vec<(usize, usize, String)> = first_seen
        .into_iter()
        .enumerate()
        .map(|(seq, (key, token))| (counts[&key], seq, token))
        .collect();
    ranked.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    ranked
        .into_iter()
        .take(MAX_STRUCTURAL_ENTITIES)
        .map(|(_, _, t)| t)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeated_capitalised_names_are_tagged_and_common_words_are_not() {
        let text = "Aya met Lumi. Aya and Lumi talked about Quintavex. Quintavex works. \
                    The Code was fine. The Code ran. Monday Monday. Bo Bo.";
        assert_eq!(
            EntityTagger::default().tag(text),
            vec!["Aya", "Lumi", "Quintavex"]
        );
    }

    #[test]
    fn product_names_count_whole_and_known_names_match_any_case() {
        let tagger = EntityTagger::with_known_names(["Pelleran".to_string()]);
        let text = "We used claude code and Claude Code again. pelleran said so. xpelleran";
        assert_eq!(tagger.tag(text), vec!["Claude Code", "Pelleran"]);
        // A known name inside a longer word does not count.
        assert!(tagger.tag("xpelleran").is_empty());
    }

    #[test]
    fn only_the_leading_window_is_scanned_for_capitalised_words() {
        let text = format!("{} Zorbrook Zorbrook", "x ".repeat(PROSE_WINDOW_CHARS));
        assert!(EntityTagger::default().tag(&text).is_empty());
    }

    #[test]
    fn the_registry_gives_names_of_every_category_but_not_wing_keys() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(KNOWN_ENTITIES_FILE);
        std::fs::write(
            &path,
            r#"{"people": ["Aya", ""], "projects": {"Quintavex": {}}, "topics_by_wing": {"alpha": ["rust"]}}"#,
        )
        .unwrap();
        assert_eq!(read_known_entities(&path), vec!["Aya", "Quintavex", "rust"]);
        std::fs::write(&path, "not json").unwrap();
        assert!(read_known_entities(&path).is_empty());
    }
}
