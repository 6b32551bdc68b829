//! Rule-based memory classification, a port of MemPalace 3.11's `general_extractor.py`
//! (what `--extract general` runs): no model, only keyword heuristics.
//!
//! A text is cut into segments (speaker turns, else paragraphs, else 25-line groups). Each
//! segment's prose (code lines and fenced blocks removed) is scored against five sets of regex
//! markers, one per [`MemoryKind`]; the best kind is corrected by sentiment and by whether a
//! problem was resolved, and segments below 3.11's confidence floor are dropped.
//!
//! The marker patterns are 3.11's, verbatim. Python's semantics are kept where they differ from
//! Rust's defaults: lengths count chars (Unicode scalar values), `str.strip()` also strips
//! U+001C..U+001F, and `str.isalpha()` means general category L (not `char::is_alphabetic`).
//! What remains different is inside the regex engines: Rust's `\w` (and so `\b`) also counts
//! combining marks and connector punctuation other than `_` as word characters and Python's
//! counts `No` numbers, and Rust's `\s` lacks U+001C..U+001F. No marker is affected on text
//! without such characters.

use std::borrow::Cow;
use std::collections::HashSet;
use std::sync::LazyLock;

use regex::Regex;
use serde::{Deserialize, Serialize};

/// The kinds of memory 3.11's `--extract general` files, each in its own room.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MemoryKind {
    /// A choice that was made, often with its reason ("we went with X because Y").
    Decision,
    /// A standing rule or taste ("always use X", "never do Y", "I prefer Z").
    Preference,
    /// Something that finally worked, shipped or was figured out.
    Milestone,
    /// Something broken or failing, or its root cause.
    Problem,
    /// Feelings, vulnerability, relationships.
    Emotional,
}

impl MemoryKind {
    /// Every kind, in 3.11's scoring order (which is also its tie-break order).
    pub const ALL: [MemoryKind; 5] = [
        MemoryKind::Decision,
        MemoryKind::Preference,
        MemoryKind::Milestone,
        MemoryKind::Problem,
        MemoryKind::Emotional,
    ];

    /// The room name 3.11 files it under: "decision", "preference", "milestone", "problem", "emotional".
    pub fn room(self) -> &'static str {
        match self {
            MemoryKind::Decision => "decision",
            MemoryKind::Preference => "preference",
            MemoryKind::Milestone => "milestone",
            MemoryKind::Problem => "problem",
            MemoryKind::Emotional => "emotional",
        }
    }

    /// 3.11's marker patterns for this kind (`DECISION_MARKERS` and its siblings).
    fn marker_patterns(self) -> &'static [&'static str] {
        match self {
            MemoryKind::Decision => DECISION_MARKERS,
            MemoryKind::Preference => PREFERENCE_MARKERS,
            MemoryKind::Milestone => MILESTONE_MARKERS,
            MemoryKind::Problem => PROBLEM_MARKERS,
            MemoryKind::Emotional => EMOTION_MARKERS,
        }
    }
}

/// One extracted memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExtractedMemory {
    /// The segment's text, stripped, or one verbatim slice of it when it was too long.
    pub text: String,
    /// The kind its whole segment was classified as.
    pub kind: MemoryKind,
}

/// Classifies one segment (a speaker turn or a paragraph) as 3.11's `extract_memories` does for one segment:
/// segments shorter than 20 chars (after trim) -> None; markers are scored on the prose only (code lines
/// removed), plus a length bonus (+2 over 500 chars, +1 over 200, counted on the untrimmed segment); the
/// highest score wins (ties go to the earlier kind in [`MemoryKind::ALL`]) and is corrected by sentiment
/// and resolution; confidence = min(1, score / 5), and below 0.3 -> None.
pub fn classify_segment(segment: &str) -> Option<MemoryKind> {
    if strip_python_whitespace(segment).chars().count() < MIN_SEGMENT_CHARS {
        return None;
    }
    let prose = extract_prose(segment);
    let scores = MarkerScores::count_in(&prose);
    let best = scores.best()?;
    let score = scores.of(best) + length_bonus(segment.chars().count());
    let confidence = (score as f64 / FULL_CONFIDENCE_SCORE).min(1.0);
    if confidence < MIN_CONFIDENCE {
        return None;
    }
    Some(disambiguate(best, &prose, &scores))
}

/// 3.11's `extract_memories` on a whole text: split into segments (speaker turns when at least
/// 3 lines open a turn, else paragraphs, else 25-line groups), classify each, and cut a kept
/// segment longer than `chunk_size` chars into verbatim slices of `chunk_size` chars (chars =
/// Unicode scalar values, as Python counts), each keeping the kind.
///
/// # Panics
///
/// If `chunk_size` is 0 (3.11 raises `ValueError` once a kept segment needs slicing).
pub fn extract_memories(text: &str, chunk_size: usize) -> Vec<ExtractedMemory> {
    assert!(chunk_size > 0, "chunk_size must be at least one char");
    let mut memories = Vec::new();
    for segment in split_into_segments(text) {
        let Some(kind) = classify_segment(segment) else {
            continue;
        };
        let content = strip_python_whitespace(segment);
        memories.extend(
            char_slices(content, chunk_size).map(|slice| ExtractedMemory {
                text: slice.to_owned(),
                kind,
            }),
        );
    }
    memories
}

/// Segments with fewer chars than this (after stripping) are never memories.
const MIN_SEGMENT_CHARS: usize = 20;
/// `extract_memories`' default `min_confidence`.
const MIN_CONFIDENCE: f64 = 0.3;
/// The score at which confidence reaches 1.
const FULL_CONFIDENCE_SCORE: f64 = 5.0;
/// Lines per segment when a text has neither speaker turns nor paragraphs.
const LINES_PER_GROUP: usize = 25;
/// A text with more lines than this and at most one paragraph is cut into line groups.
const MAX_LINES_OF_ONE_SEGMENT: usize = 20;
/// How many speaker-turn lines make a text a conversation.
const MIN_TURN_LINES: usize = 3;

const DECISION_MARKERS: &[&str] = &[
    r"\blet'?s (use|go with|try|pick|choose|switch to)\b",
    r"\bwe (should|decided|chose|went with|picked|settled on)\b",
    r"\bi'?m going (to|with)\b",
    r"\bbetter (to|than|approach|option|choice)\b",
    r"\binstead of\b",
    r"\brather than\b",
    r"\bthe reason (is|was|being)\b",
    r"\bbecause\b",
    r"\btrade-?off\b",
    r"\bpros and cons\b",
    r"\bover\b.*\bbecause\b",
    r"\barchitecture\b",
    r"\bapproach\b",
    r"\bstrategy\b",
    r"\bpattern\b",
    r"\bstack\b",
    r"\bframework\b",
    r"\binfrastructure\b",
    r"\bset (it |this )?to\b",
    r"\bconfigure\b",
    r"\bdefault\b",
];

const PREFERENCE_MARKERS: &[&str] = &[
    r"\bi prefer\b",
    r"\balways use\b",
    r"\bnever use\b",
    r"\bdon'?t (ever |like to )?(use|do|mock|stub|import)\b",
    r"\bi like (to|when|how)\b",
    r"\bi hate (when|how|it when)\b",
    r"\bplease (always|never|don'?t)\b",
    r"\bmy (rule|preference|style|convention) is\b",
    r"\bwe (always|never)\b",
    r"\bfunctional\b.*\bstyle\b",
    r"\bimperative\b",
    r"\bsnake_?case\b",
    r"\bcamel_?case\b",
    r"\btabs\b.*\bspaces\b",
    r"\bspaces\b.*\btabs\b",
    r"\buse\b.*\binstead of\b",
];

const MILESTONE_MARKERS: &[&str] = &[
    r"\bit works\b",
    r"\bit worked\b",
    r"\bgot it working\b",
    r"\bfixed\b",
    r"\bsolved\b",
    r"\bbreakthrough\b",
    r"\bfigured (it )?out\b",
    r"\bnailed it\b",
    r"\bcracked (it|the)\b",
    r"\bfinally\b",
    r"\bfirst time\b",
    r"\bfirst ever\b",
    r"\bnever (done|been|had) before\b",
    r"\bdiscovered\b",
    r"\brealized\b",
    r"\bfound (out|that)\b",
    r"\bturns out\b",
    r"\bthe key (is|was|insight)\b",
    r"\bthe trick (is|was)\b",
    r"\bnow i (understand|see|get it)\b",
    r"\bbuilt\b",
    r"\bcreated\b",
    r"\bimplemented\b",
    r"\bshipped\b",
    r"\blaunched\b",
    r"\bdeployed\b",
    r"\breleased\b",
    r"\bprototype\b",
    r"\bproof of concept\b",
    r"\bdemo\b",
    r"\bversion \d",
    r"\bv\d+\.\d+",
    r"\d+x (compression|faster|slower|better|improvement|reduction)",
    r"\d+% (reduction|improvement|faster|better|smaller)",
];

const PROBLEM_MARKERS: &[&str] = &[
    r"\b(bug|error|crash|fail|broke|broken|issue|problem)\b",
    r"\bdoesn'?t work\b",
    r"\bnot working\b",
    r"\bwon'?t\b.*\bwork\b",
    r"\bkeeps? (failing|crashing|breaking|erroring)\b",
    r"\broot cause\b",
    r"\bthe (problem|issue|bug) (is|was)\b",
    r"\bturns out\b.*\b(was|because|due to)\b",
    r"\bthe fix (is|was)\b",
    r"\bworkaround\b",
    r"\bthat'?s why\b",
    r"\bthe reason it\b",
    r"\bfixed (it |the |by )\b",
    r"\bsolution (is|was)\b",
    r"\bresolved\b",
    r"\bpatched\b",
    r"\bthe answer (is|was)\b",
    r"\b(had|need) to\b.*\binstead\b",
];

const EMOTION_MARKERS: &[&str] = &[
    r"\blove\b",
    r"\bscared\b",
    r"\bafraid\b",
    r"\bproud\b",
    r"\bhurt\b",
    r"\bhappy\b",
    r"\bsad\b",
    r"\bcry\b",
    r"\bcrying\b",
    r"\bmiss\b",
    r"\bsorry\b",
    r"\bgrateful\b",
    r"\bangry\b",
    r"\bworried\b",
    r"\blonely\b",
    r"\bbeautiful\b",
    r"\bamazing\b",
    r"\bwonderful\b",
    r"i feel",
    r"i'm scared",
    r"i love you",
    r"i'm sorry",
    r"i can't",
    r"i wish",
    r"i miss",
    r"i need",
    r"never told anyone",
    r"nobody knows",
];

/// Words that make a segment's sentiment positive (3.11's `POSITIVE_WORDS`).
const POSITIVE_WORDS: &[&str] = &[
    "pride",
    "proud",
    "joy",
    "happy",
    "love",
    "loving",
    "beautiful",
    "amazing",
    "wonderful",
    "incredible",
    "fantastic",
    "brilliant",
    "perfect",
    "excited",
    "thrilled",
    "grateful",
    "warm",
    "breakthrough",
    "success",
    "works",
    "working",
    "solved",
    "fixed",
    "nailed",
    "heart",
    "hug",
    "precious",
    "adore",
];

/// Words that make a segment's sentiment negative (3.11's `NEGATIVE_WORDS`).
const NEGATIVE_WORDS: &[&str] = &[
    "bug",
    "error",
    "crash",
    "crashing",
    "crashed",
    "fail",
    "failed",
    "failing",
    "failure",
    "broken",
    "broke",
    "breaking",
    "breaks",
    "issue",
    "problem",
    "wrong",
    "stuck",
    "blocked",
    "unable",
    "impossible",
    "missing",
    "terrible",
    "horrible",
    "awful",
    "worse",
    "worst",
    "panic",
    "disaster",
    "mess",
];

/// Phrases saying a problem was resolved (the patterns of 3.11's `_has_resolution`).
const RESOLUTION_PATTERNS: &[&str] = &[
    r"\bfixed\b",
    r"\bsolved\b",
    r"\bresolved\b",
    r"\bpatched\b",
    r"\bgot it working\b",
    r"\bit works\b",
    r"\bnailed it\b",
    r"\bfigured (it )?out\b",
    r"\bthe (fix|answer|solution)\b",
];

/// Lines that look like shell, code or tables (3.11's `_CODE_LINE_PATTERNS`), tried on a stripped line.
const CODE_LINE_PATTERNS: &[&str] = &[
    r"^\s*[\$#]\s",
    r"^\s*(cd|source|echo|export|pip|npm|git|python|bash|curl|wget|mkdir|rm|cp|mv|ls|cat|grep|find|chmod|sudo|brew|docker)\s",
    r"^\s*```",
    r"^\s*(import|from|def|class|function|const|let|var|return)\s",
    r"^\s*[A-Z_]{2,}=",
    r"^\s*\|",
    r"^\s*[-]{2,}",
    r"^\s*[{}\[\]]\s*$",
    r"^\s*(if|for|while|try|except|elif|else:)\b",
    r"^\s*\w+\.\w+\(",
    r"^\s*\w+ = \w+\.\w+",
];

/// Lines that open a speaker turn (the `turn_patterns` of 3.11's `_split_into_segments`), tried on a stripped line.
const TURN_PATTERNS: &[&str] = &[
    r"^>\s",
    r"(?i)^(Human|User|Q)\s*:",
    r"(?i)^(Assistant|AI|A|Claude|ChatGPT)\s*:",
];

static MARKERS: LazyLock<[Vec<Regex>; 5]> =
    LazyLock::new(|| MemoryKind::ALL.map(|kind| compile(kind.marker_patterns())));
static RESOLUTIONS: LazyLock<Vec<Regex>> = LazyLock::new(|| compile(RESOLUTION_PATTERNS));
static CODE_LINES: LazyLock<Vec<Regex>> = LazyLock::new(|| compile(CODE_LINE_PATTERNS));
static TURN_LINES: LazyLock<Vec<Regex>> = LazyLock::new(|| compile(TURN_PATTERNS));
static WORD: LazyLock<Regex> = LazyLock::new(|| compile(&[r"\b\w+\b"]).remove(0));
/// One char Python's `str.isalpha()` accepts: general category L.
static LETTER: LazyLock<Regex> = LazyLock::new(|| compile(&[r"\p{L}"]).remove(0));

fn compile(patterns: &[&str]) -> Vec<Regex> {
    patterns
        .iter()
        .map(|pattern| Regex::new(pattern).expect("3.11's patterns are valid regexes"))
        .collect()
}

/// How many marker matches each kind has in a segment's prose, indexed in [`MemoryKind::ALL`] order.
struct MarkerScores([usize; 5]);

impl MarkerScores {
    /// Counts each kind's non-overlapping marker matches (Python's `re.findall`) in the lower-cased prose.
    fn count_in(prose: &str) -> Self {
        let lowered = prose.to_lowercase();
        MarkerScores(MARKERS.each_ref().map(|markers| {
            markers
                .iter()
                .map(|marker| marker.find_iter(&lowered).count())
                .sum()
        }))
    }

    fn of(&self, kind: MemoryKind) -> usize {
        self.0[kind as usize]
    }

    /// The kind with the highest non-zero score, the earliest on a tie (as Python's `max` over a dict).
    fn best(&self) -> Option<MemoryKind> {
        let mut best: Option<MemoryKind> = None;
        for kind in MemoryKind::ALL {
            if self.of(kind) > best.map_or(0, |b| self.of(b)) {
                best = Some(kind);
            }
        }
        best
    }
}

/// 3.11's `_disambiguate`: a resolved problem is a milestone (or emotional, when positive and
/// emotional), and a positive problem is a milestone or emotional when those kinds scored.
fn disambiguate(best: MemoryKind, prose: &str, scores: &MarkerScores) -> MemoryKind {
    if best != MemoryKind::Problem {
        return best;
    }
    let positive = sentiment(prose) == Sentiment::Positive;
    let has_emotion = scores.of(MemoryKind::Emotional) > 0;
    if has_resolution(prose) {
        return if has_emotion && positive {
            MemoryKind::Emotional
        } else {
            MemoryKind::Milestone
        };
    }
    if positive {
        if scores.of(MemoryKind::Milestone) > 0 {
            return MemoryKind::Milestone;
        }
        if has_emotion {
            return MemoryKind::Emotional;
        }
    }
    best
}

#[derive(Debug, PartialEq, Eq)]
enum Sentiment {
    Positive,
    Negative,
    Neutral,
}

/// 3.11's `_get_sentiment`: compares how many distinct positive and negative words occur.
fn sentiment(prose: &str) -> Sentiment {
    let words: HashSet<String> = WORD
        .find_iter(prose)
        .map(|word| word.as_str().to_lowercase())
        .collect();
    let present_in = |list: &[&str]| list.iter().filter(|w| words.contains(**w)).count();
    let (positive, negative) = (present_in(POSITIVE_WORDS), present_in(NEGATIVE_WORDS));
    match positive.cmp(&negative) {
        std::cmp::Ordering::Greater => Sentiment::Positive,
        std::cmp::Ordering::Less => Sentiment::Negative,
        std::cmp::Ordering::Equal => Sentiment::Neutral,
    }
}

fn has_resolution(prose: &str) -> bool {
    let lowered = prose.to_lowercase();
    RESOLUTIONS.iter().any(|pattern| pattern.is_match(&lowered))
}

fn length_bonus(segment_chars: usize) -> usize {
    if segment_chars > 500 {
        2
    } else if segment_chars > 200 {
        1
    } else {
        0
    }
}

/// 3.11's `_extract_prose`: the segment without fenced blocks and code lines, stripped; the whole
/// segment when nothing is left.
fn extract_prose(segment: &str) -> Cow<'_, str> {
    let mut prose_lines = Vec::new();
    let mut in_fence = false;
    for line in segment.split('\n') {
        if strip_python_whitespace(line).starts_with("```") {
            in_fence = !in_fence;
            continue;
        }
        if !in_fence && !is_code_line(line) {
            prose_lines.push(line);
        }
    }
    let joined = prose_lines.join("\n");
    match strip_python_whitespace(&joined) {
        "" => Cow::Borrowed(segment),
        prose => Cow::Owned(prose.to_owned()),
    }
}

/// 3.11's `_is_code_line`: a code pattern matches, or over 10 chars of which under 40% are letters.
fn is_code_line(line: &str) -> bool {
    let stripped = strip_python_whitespace(line);
    if stripped.is_empty() {
        return false;
    }
    if CODE_LINES.iter().any(|pattern| pattern.is_match(stripped)) {
        return true;
    }
    let chars = stripped.chars().count();
    let letter_ratio = LETTER.find_iter(stripped).count() as f64 / chars as f64;
    letter_ratio < 0.4 && chars > 10
}

/// 3.11's `_split_into_segments`; every segment is a slice of `text`.
fn split_into_segments(text: &str) -> Vec<&str> {
    let lines: Vec<(usize, &str)> = text
        .split('\n')
        .scan(0, |offset, line| {
            let start = *offset;
            *offset += line.len() + 1;
            Some((start, line))
        })
        .collect();
    let turn_lines = lines.iter().filter(|(_, line)| is_turn_line(line)).count();
    if turn_lines >= MIN_TURN_LINES {
        return split_by_turns(text, &lines);
    }
    let paragraphs: Vec<&str> = text
        .split("\n\n")
        .map(strip_python_whitespace)
        .filter(|paragraph| !paragraph.is_empty())
        .collect();
    if paragraphs.len() <= 1 && lines.len() > MAX_LINES_OF_ONE_SEGMENT {
        return lines
            .chunks(LINES_PER_GROUP)
            .map(|group| {
                let (first_start, _) = group[0];
                let (last_start, last_line) = group[group.len() - 1];
                strip_python_whitespace(&text[first_start..last_start + last_line.len()])
            })
            .filter(|group| !group.is_empty())
            .collect();
    }
    paragraphs
}

/// 3.11's `_split_by_turns`: a new segment starts at every turn line but the first line.
fn split_by_turns<'t>(text: &'t str, lines: &[(usize, &str)]) -> Vec<&'t str> {
    let mut segments = Vec::new();
    let mut segment_start = 0;
    for &(line_start, line) in lines {
        if line_start > segment_start && is_turn_line(line) {
            segments.push(&text[segment_start..line_start - 1]);
            segment_start = line_start;
        }
    }
    segments.push(&text[segment_start..]);
    segments
}

fn is_turn_line(line: &str) -> bool {
    let stripped = strip_python_whitespace(line);
    TURN_LINES.iter().any(|pattern| pattern.is_match(stripped))
}

/// Python's `str.strip()`: Unicode White_Space plus the separators U+001C..U+001F.
fn strip_python_whitespace(text: &str) -> &str {
    text.trim_matches(|c: char| c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c))
}

/// Consecutive slices of `text` of `chars_per_slice` chars each (the last may be shorter).
fn char_slices(text: &str, chars_per_slice: usize) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let cut = rest
            .char_indices()
            .nth(chars_per_slice)
            .map_or(rest.len(), |(index, _)| index);
        let (slice, tail) = rest.split_at(cut);
        rest = tail;
        Some(slice)
    })
}

#[cfg(test)]
mod tests {
    //! Every expectation here is what MemPalace 3.11's `general_extractor.extract_memories` (or
    //! its `_is_code_line`) returns for the same input.

    use super::*;

    fn kinds_and_lengths(text: &str, chunk_size: usize) -> Vec<(MemoryKind, usize)> {
        extract_memories(text, chunk_size)
            .iter()
            .map(|memory| (memory.kind, memory.text.chars().count()))
            .collect()
    }

    #[test]
    fn a_decision_with_its_reason_is_a_decision() {
        let text = "We decided to go with Postgres because the team knows it and the trade-off on write speed is fine";
        assert_eq!(classify_segment(text), Some(MemoryKind::Decision));
        assert_eq!(
            extract_memories(text, 800),
            vec![ExtractedMemory {
                text: text.to_owned(),
                kind: MemoryKind::Decision
            }]
        );
    }

    #[test]
    fn a_stated_rule_is_a_preference() {
        let text = "I prefer tabs over spaces, please never use camelCase in this repo";
        assert_eq!(classify_segment(text), Some(MemoryKind::Preference));
    }

    #[test]
    fn a_resolved_problem_is_a_milestone() {
        let text = "The bug was a race in the cache; we fixed it by adding a lock and now it works";
        assert_eq!(classify_segment(text), Some(MemoryKind::Milestone));
    }

    #[test]
    fn an_unresolved_negative_problem_stays_a_problem() {
        let text = "The build keeps failing with an error and the crash is a real problem for us";
        assert_eq!(classify_segment(text), Some(MemoryKind::Problem));
        assert_eq!(
            classify_segment("The crash is back and the error too"),
            Some(MemoryKind::Problem)
        );
    }

    #[test]
    fn a_positive_problem_with_milestone_markers_is_a_milestone() {
        let text = "The crash and the error remain, but the release shipped and it is a brilliant, fantastic, perfect success";
        assert_eq!(classify_segment(text), Some(MemoryKind::Milestone));
    }

    #[test]
    fn a_positive_problem_with_emotion_markers_is_emotional() {
        let unresolved = "There is still an error in the nightly job but I'm so happy and proud, it's a wonderful success";
        assert_eq!(classify_segment(unresolved), Some(MemoryKind::Emotional));
        let resolved = "The bug was nasty but we fixed it and I'm so happy and proud, it's a wonderful feeling";
        assert_eq!(classify_segment(resolved), Some(MemoryKind::Emotional));
    }

    #[test]
    fn sentiment_counts_distinct_words_not_occurrences() {
        // Four "bug"s are one negative word against two positive ones, so the problem turns emotional.
        let text = "bug, bug, bug, and another bug here, yet I am happy and proud of us";
        assert_eq!(classify_segment(text), Some(MemoryKind::Emotional));
    }

    #[test]
    fn a_segment_under_twenty_chars_is_skipped_despite_its_markers() {
        assert_eq!(classify_segment("we decided because"), None);
        assert_eq!(classify_segment("   we decided because   "), None);
        assert!(extract_memories("we decided because", 800).is_empty());
    }

    #[test]
    fn one_marker_needs_the_length_bonus() {
        let short = "This is about the overall architecture of things";
        assert_eq!(classify_segment(short), None);
        let long = format!(
            "{short}. {}",
            "Lorem ipsum dolor sit amet consectetur. ".repeat(5)
        );
        assert_eq!(classify_segment(&long), Some(MemoryKind::Decision));
    }

    #[test]
    fn a_tie_goes_to_the_earlier_kind() {
        let text = "We decided, and we should stay with it; I prefer it and always use it";
        assert_eq!(classify_segment(text), Some(MemoryKind::Decision));
    }

    #[test]
    fn code_lines_and_fenced_blocks_do_not_score() {
        let with_code = "Please never use global state in this module again.\n\
                         $ git checkout default architecture strategy\n\
                         ```\n\
                         let approach = default; // architecture strategy pattern stack\n\
                         ```";
        assert_eq!(classify_segment(with_code), Some(MemoryKind::Preference));
        let as_prose = "Please never use global state in this module again.\n\
                        the default architecture strategy\n\
                        let approach = default; architecture strategy pattern stack";
        assert_eq!(classify_segment(as_prose), Some(MemoryKind::Decision));
    }

    #[test]
    fn a_segment_that_is_all_code_is_scored_whole() {
        assert_eq!(
            classify_segment("```\nwe decided because\n```"),
            Some(MemoryKind::Decision)
        );
    }

    #[test]
    fn code_lines_are_recognised_as_in_python() {
        // Roman numerals are alphabetic in Rust but not letters for Python's `isalpha`.
        assert!(is_code_line("ⅫⅫⅫⅫⅫⅫ abcd"));
        assert!(is_code_line("x = os.path.join(a)"));
        assert!(is_code_line("else:x"));
        assert!(!is_code_line("else: nothing"));
        assert!(!is_code_line("   "));
    }

    #[test]
    fn a_long_segment_is_sliced_verbatim_in_chars() {
        let text = "We decided to go with Postgres because the trade-off is fine — café ☕ naïve. "
            .repeat(15);
        let memories = extract_memories(&text, 300);
        assert_eq!(
            memories
                .iter()
                .map(|memory| (memory.kind, memory.text.chars().count()))
                .collect::<Vec<_>>(),
            vec![
                (MemoryKind::Decision, 300),
                (MemoryKind::Decision, 300),
                (MemoryKind::Decision, 300),
                (MemoryKind::Decision, 254),
            ]
        );
        let rejoined: String = memories.iter().map(|memory| memory.text.as_str()).collect();
        assert_eq!(rejoined, text.trim_end());
    }

    #[test]
    fn quoted_lines_split_a_conversation_into_turns() {
        let conversation = "> We decided to use Postgres because it fits\n\
                            Sure, that's a good call and the trade-off is fine.\n\
                            > I prefer tabs, please never use spaces\n\
                            Noted.\n\
                            > ok\n\
                            The bug was fixed and now it works";
        let memories = extract_memories(conversation, 800);
        assert_eq!(
            memories,
            vec![
                ExtractedMemory {
                    text: "> We decided to use Postgres because it fits\n\
                           Sure, that's a good call and the trade-off is fine."
                        .to_owned(),
                    kind: MemoryKind::Decision,
                },
                ExtractedMemory {
                    text: "> I prefer tabs, please never use spaces\nNoted.".to_owned(),
                    kind: MemoryKind::Preference,
                },
                ExtractedMemory {
                    text: "> ok\nThe bug was fixed and now it works".to_owned(),
                    kind: MemoryKind::Milestone,
                },
            ]
        );
    }

    #[test]
    fn speaker_labels_split_turns_whatever_their_case() {
        let conversation = "Preamble line that mentions nothing\n\
                            user: We decided to use Postgres because it fits\n\
                            Assistant: good, the trade-off is fine\n\
                            human: I prefer tabs, please never use spaces\n\
                            ai: The bug was fixed and now it works";
        assert_eq!(
            kinds_and_lengths(conversation, 800),
            vec![
                (MemoryKind::Decision, 48),
                (MemoryKind::Preference, 45),
                (MemoryKind::Milestone, 38),
            ]
        );
    }

    #[test]
    fn without_turns_blank_lines_split_paragraphs() {
        let text = "We decided to use Postgres because it fits.\n\n\n\n\
                    I prefer tabs, please never use spaces.\n\nok\n\n\
                    The bug was fixed and now it works";
        assert_eq!(
            kinds_and_lengths(text, 800),
            vec![
                (MemoryKind::Decision, 43),
                (MemoryKind::Preference, 39),
                (MemoryKind::Milestone, 34),
            ]
        );
    }

    #[test]
    fn one_long_block_splits_into_groups_of_25_lines() {
        let block = (0..30)
            .map(|i| match i {
                3 | 27 => format!("line {i} we decided because of the architecture"),
                _ => format!("line {i} plain words only here"),
            })
            .collect::<Vec<_>>()
            .join("\n");
        assert_eq!(
            kinds_and_lengths(&block, 800),
            vec![(MemoryKind::Decision, 756), (MemoryKind::Decision, 166)]
        );
    }

    #[test]
    fn memories_are_stripped_as_python_strips() {
        let text = "\u{1c}  We decided to go with Postgres because the trade-off is fine \u{1f}\n";
        assert_eq!(
            extract_memories(text, 800),
            vec![ExtractedMemory {
                text: "We decided to go with Postgres because the trade-off is fine".to_owned(),
                kind: MemoryKind::Decision,
            }]
        );
    }

    #[test]
    fn rooms_are_the_serialized_kind_names() {
        let rooms: Vec<&str> = MemoryKind::ALL.iter().map(|kind| kind.room()).collect();
        assert_eq!(
            rooms,
            [
                "decision",
                "preference",
                "milestone",
                "problem",
                "emotional"
            ]
        );
        for kind in MemoryKind::ALL {
            assert_eq!(
                serde_json::to_string(&kind).unwrap(),
                format!("\"{}\"", kind.room())
            );
        }
    }
}
