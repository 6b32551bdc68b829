//! The AAAK dialect compressor: MemPalace 3.11's rule-based, deterministic summary of a text
//! as one line of entity codes, topic words, a key quote, emotion codes and flags (see
//! [`crate::AAAK_SPEC`]), with an optional `wing|room|date|file` header. AAAK is lossy: it
//! points at the verbatim drawer, it does not replace it. The same input gives the same
//! lines as 3.11's `Dialect.compress` (checked against 3.11's own output).

use std::collections::HashMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

/// Emotion keywords and their codes, in 3.11's order (the first three found are kept).
const EMOTION_SIGNALS: &[(&str, &str)] = &[
    ("decided", "determ"),
    ("prefer", "convict"),
    ("worried", "anx"),
    ("excited", "excite"),
    ("frustrated", "frust"),
    ("confused", "confuse"),
    ("love", "love"),
    ("hate", "rage"),
    ("hope", "hope"),
    ("fear", "fear"),
    ("trust", "trust"),
    ("happy", "joy"),
    ("sad", "grief"),
    ("surprised", "surprise"),
    ("grateful", "grat"),
    ("curious", "curious"),
    ("wonder", "wonder"),
    ("anxious", "anx"),
    ("relieved", "relief"),
    ("satisf", "satis"),
    ("disappoint", "grief"),
    ("concern", "anx"),
];

/// Flag keywords and their flags, in 3.11's order (the first three flags found are kept).
const FLAG_SIGNALS: &[(&str, &str)] = &[
    ("decided", "DECISION"),
    ("chose", "DECISION"),
    ("switched", "DECISION"),
    ("migrated", "DECISION"),
    ("replaced", "DECISION"),
    ("instead of", "DECISION"),
    ("because", "DECISION"),
    ("founded", "ORIGIN"),
    ("created", "ORIGIN"),
    ("started", "ORIGIN"),
    ("born", "ORIGIN"),
    ("launched", "ORIGIN"),
    ("first time", "ORIGIN"),
    ("core", "CORE"),
    ("fundamental", "CORE"),
    ("essential", "CORE"),
    ("principle", "CORE"),
    ("belief", "CORE"),
    ("always", "CORE"),
    ("never forget", "CORE"),
    ("turning point", "PIVOT"),
    ("changed everything", "PIVOT"),
    ("realized", "PIVOT"),
    ("breakthrough", "PIVOT"),
    ("epiphany", "PIVOT"),
    ("api", "TECHNICAL"),
    ("database", "TECHNICAL"),
    ("architecture", "TECHNICAL"),
    ("deploy", "TECHNICAL"),
    ("infrastructure", "TECHNICAL"),
    ("algorithm", "TECHNICAL"),
    ("framework", "TECHNICAL"),
    ("server", "TECHNICAL"),
    ("config", "TECHNICAL"),
];

/// Words that make a sentence a likely key quote (3.11's `decision_words`).
const DECISION_WORDS: &[&str] = &[
    "decided",
    "because",
    "instead",
    "prefer",
    "switched",
    "chose",
    "realized",
    "important",
    "key",
    "critical",
    "discovered",
    "learned",
    "conclusion",
    "solution",
    "reason",
    "why",
    "breakthrough",
    "insight",
];

/// Filler words left out of topics and names (3.11's `_STOP_WORDS`).
const STOP_WORDS: &[&str] = &[
    "the", "a", "an", "is", "are", "was", "were", "be", "been", "being", "have", "has", "had",
    "do", "does", "did", "will", "would", "could", "should", "may", "might", "shall", "can", "to",
    "of", "in", "for", "on", "with", "at", "by", "from", "as", "into", "about", "between",
    "through", "during", "before", "after", "above", "below", "up", "down", "out", "off", "over",
    "under", "again", "further", "then", "once", "here", "there", "when", "where", "why", "how",
    "all", "each", "every", "both", "few", "more", "most", "other", "some", "such", "no", "nor",
    "not", "only", "own", "same", "so", "than", "too", "very", "just", "don", "now", "and", "but",
    "or", "if", "while", "that", "this", "these", "those", "it", "its", "i", "we", "you", "he",
    "she", "they", "me", "him", "her", "us", "them", "my", "your", "his", "our", "their", "what",
    "which", "who", "whom", "also", "much", "many", "like", "because", "since", "get", "got",
    "use", "used", "using", "make", "made", "thing", "things", "way", "well", "really", "want",
    "need",
];

fn is_stop_word(word: &str) -> bool {
    STOP_WORDS.contains(&word)
}

/// Entity names and their codes, and names never coded (3.11's `entities.json`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EntityCodes {
    /// Full name → short code, e.g. "Alice" → "ALC".
    #[serde(default)]
    pub entities: std::collections::BTreeMap<String, String>,
    /// Names to leave out (fictional characters, etc.).
    #[serde(default)]
    pub skip_names: Vec<String>,
}

/// `decode` result: an AAAK text taken apart, with 3.11's field names.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Decoded {
    /// The header line's fields (`file`, `entities`, `date`, `title` as 3.11 names them).
    pub header: HashMap<String, String>,
    /// The emotional arc line, without `ARC:`.
    pub arc: String,
    /// The zettel lines (`ZID:ENTITIES|topics|"quote"|…`).
    pub zettels: Vec<String>,
    /// The tunnel lines (`T:…`).
    pub tunnels: Vec<String>,
}

/// What to say of a text in its AAAK header: where it is filed and when.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AaakMetadata {
    /// The drawer's wing.
    pub wing: Option<String>,
    /// The drawer's room.
    pub room: Option<String>,
    /// A date for the header.
    pub date: Option<String>,
    /// The source file (its stem is shown).
    pub source_file: Option<String>,
}

/// The AAAK compressor, with a palace's entity codes.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Dialect {
    /// Name → code, as given and lower-cased, in the order given (3.11 keeps both forms).
    codes: Vec<(String, String)>,
    skip_names: Vec<String>,
}

impl Dialect {
    /// A compressor with `entities`' codes (none: names are coded by their first 3 letters).
    pub fn new(entities: &EntityCodes) -> Self {
        let mut codes = Vec::new();
        for (name, code) in &entities.entities {
            codes.push((name.clone(), code.clone()));
            codes.push((name.to_lowercase(), code.clone()));
        }
        Dialect {
            codes,
            skip_names: entities
                .skip_names
                .iter()
                .map(|n| n.to_lowercase())
                .collect(),
        }
    }

    /// The code of an entity name: its stored code, else the first 3 letters upper-cased;
    /// `None` for a name to skip.
    pub fn encode_entity(&self, name: &str) -> Option<String> {
        let lower = name.to_lowercase();
        if self.skip_names.iter().any(|s| lower.contains(s.as_str())) {
            return None;
        }
        if let Some((_, c)) = self.codes.iter().find(|(n, _)| n == name || *n == lower) {
            return Some(c.clone());
        }
        if let Some((_, c)) = self
            .codes
            .iter()
            .find(|(n, _)| lower.contains(&n.to_lowercase()))
        {
            return Some(c.clone());
        }
        Some(name.chars().take(3).collect::<String>().to_uppercase())
    }

    /// Summarises `text` as AAAK: a `wing|room|date|file` header when a wing or source file
    /// is known, then `0:ENTITIES|topics|"key quote"|emotions|flags`.
    pub fn compress(&self, text: &str, metadata: &AaakMetadata) -> String {
        let entities = self.entities_in(text);
        let entity_str = if entities.is_empty() {
            "???".to_string()
        } else {
            entities
                .iter()
                .take(3)
                .cloned()
                .collect::<Vec<_>>()
                .join("+")
        };
        let topics = topics(text, 3);
        let topic_str = if topics.is_empty() {
            "misc".to_string()
        } else {
            topics.join("_")
        };
        let quote = key_sentence(text);
        let emotions = signals(text, EMOTION_SIGNALS);
        let flags = signals(text, FLAG_SIGNALS);

        let mut lines = Vec::new();
        let source = metadata.source_file.as_deref().unwrap_or("");
        let wing = metadata.wing.as_deref().unwrap_or("");
        if !source.is_empty() || !wing.is_empty() {
            let stem = Path::new(source)
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            let or_unknown = |v: &str| {
                if v.is_empty() {
                    "?".to_string()
                } else {
                    v.to_string()
                }
            };
            lines.push(
                [
                    or_unknown(wing),
                    or_unknown(metadata.room.as_deref().unwrap_or("")),
                    or_unknown(metadata.date.as_deref().unwrap_or("")),
                    or_unknown(&stem),
                ]
                .join("|"),
            );
        }
        let mut parts = vec![format!("0:{entity_str}"), topic_str];
        if !quote.is_empty() {
            parts.push(format!("\"{quote}\""));
        }
        if !emotions.is_empty() {
            parts.push(emotions.join("+"));
        }
        if !flags.is_empty() {
            parts.push(flags.join("+"));
        }
        lines.push(parts.join("|"));
        lines.join("\n")
    }

    /// Known entities named in `text`, else capitalised words that look like names (not the
    /// first word), coded; at most 3 of the latter.
    fn entities_in(&self, text: &str) -> Vec<String> {
        let lower = text.to_lowercase();
        let mut found: Vec<String> = Vec::new();
        for (name, code) in &self.codes {
            let is_lower =
                name.chars().any(char::is_alphabetic) && !name.chars().any(char::is_uppercase);
            if !is_lower && lower.contains(&name.to_lowercase()) && !found.contains(code) {
                found.push(code.clone());
            }
        }
        if !found.is_empty() {
            return found;
        }
        for (i, word) in text.split_whitespace().enumerate() {
            let clean: String = word.chars().filter(char::is_ascii_alphabetic).collect();
            let mut chars = clean.chars();
            let Some(first) = chars.next() else { continue };
            let rest: String = chars.collect();
            if clean.len() >= 2
                && first.is_ascii_uppercase()
                && rest.chars().all(|c| c.is_ascii_lowercase())
                && i > 0
                && !is_stop_word(&clean.to_lowercase())
            {
                let code = clean.chars().take(3).collect::<String>().to_uppercase();
                if !found.contains(&code) {
                    found.push(code);
                }
                if found.len() >= 3 {
                    break;
                }
            }
        }
        found
    }

    /// An AAAK text taken apart into header, arc, zettel and tunnel lines (3.11's `decode`).
    pub fn decode(text: &str) -> Decoded {
        let mut out = Decoded::default();
        for line in text.trim().split('\n') {
            if let Some(arc) = line.strip_prefix("ARC:") {
                out.arc = arc.to_string();
            } else if line.starts_with("T:") {
                out.tunnels.push(line.to_string());
            } else if line.contains('|') && line.split('|').next().is_some_and(|f| f.contains(':'))
            {
                out.zettels.push(line.to_string());
            } else if line.contains('|') {
                let parts: Vec<&str> = line.split('|').collect();
                let field = |i: usize| parts.get(i).copied().unwrap_or("").to_string();
                out.header = HashMap::from([
                    ("file".to_string(), field(0)),
                    ("entities".to_string(), field(1)),
                    ("date".to_string(), field(2)),
                    ("title".to_string(), field(3)),
                ]);
            }
        }
        out
    }
}

/// The codes of the keywords found in `text` (lower-cased), each code once, at most 3.
fn signals(text: &str, table: &[(&str, &'static str)]) -> Vec<&'static str> {
    let lower = text.to_lowercase();
    let mut found: Vec<&'static str> = Vec::new();
    for (keyword, code) in table {
        if lower.contains(keyword) && !found.contains(code) {
            found.push(code);
        }
    }
    found.truncate(3);
    found
}

/// Words as 3.11's `[a-zA-Z][a-zA-Z_-]{2,}` finds them, left to right.
fn topic_words(text: &str) -> Vec<&str> {
    let bytes = text.as_bytes();
    let word_char = |b: u8| b.is_ascii_alphabetic() || b == b'_' || b == b'-';
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i].is_ascii_alphabetic() {
            let mut j = i + 1;
            while j < bytes.len() && word_char(bytes[j]) {
                j += 1;
            }
            if j - i >= 3 {
                out.push(&text[i..j]);
                i = j;
                continue;
            }
        }
        i += 1;
    }
    out
}

/// The `max` most frequent non-filler words, proper nouns and technical terms counting more
/// (ties in order of first appearance, as 3.11's stable sort keeps them).
fn topics(text: &str, max: usize) -> Vec<String> {
    let words = topic_words(text);
    let mut order: Vec<String> = Vec::new();
    let mut freq: HashMap<String, i64> = HashMap::new();
    for w in &words {
        let lower = w.to_lowercase();
        if is_stop_word(&lower) || lower.len() < 3 {
            continue;
        }
        if !freq.contains_key(&lower) {
            order.push(lower.clone());
        }
        *freq.entry(lower).or_insert(0) += 1;
    }
    for w in &words {
        let lower = w.to_lowercase();
        if is_stop_word(&lower) {
            continue;
        }
        let Some(count) = freq.get_mut(&lower) else {
            continue;
        };
        if w.starts_with(|c: char| c.is_ascii_uppercase()) {
            *count += 2;
        }
        if w.contains('_') || w.contains('-') || w.chars().skip(1).any(|c| c.is_ascii_uppercase()) {
            *count += 2;
        }
    }
    let mut ranked: Vec<(usize, &String)> = order.iter().enumerate().collect();
    ranked.sort_by_key(|(i, w)| (-freq[*w], *i));
    ranked
        .into_iter()
        .take(max)
        .map(|(_, w)| w.clone())
        .collect()
}

/// The sentence most likely to matter (decision words, short ones), cut at 55 characters.
fn key_sentence(text: &str) -> String {
    let sentences: Vec<&str> = text
        .split(['.', '!', '?', '\n'])
        .map(str::trim)
        .filter(|s| s.chars().count() > 10)
        .collect();
    let mut best: Option<(i64, &str)> = None;
    for s in sentences {
        let lower = s.to_lowercase();
        let len = s.chars().count();
        let mut score = 2 * DECISION_WORDS.iter().filter(|w| lower.contains(*w)).count() as i64;
        if len < 80 {
            score += 1;
        }
        if len < 40 {
            score += 1;
        }
        if len > 150 {
            score -= 2;
        }
        if best.is_none_or(|(b, _)| score > b) {
            best = Some((score, s));
        }
    }
    let Some((_, best)) = best else {
        return String::new();
    };
    if best.chars().count() > 55 {
        format!("{}...", best.chars().take(52).collect::<String>())
    } else {
        best.to_string()
    }
}

/// 3.11's token estimate for compression statistics: 1.3 tokens a word, at least 1.
pub fn estimated_tokens(text: &str) -> usize {
    ((text.split_whitespace().count() as f64) * 1.3)
        .floor()
        .max(1.0) as usize
}
