//! The lexical channel's shared rules: how text becomes search terms, and Okapi BM25.
//!
//! Terms are runs of letters and digits (Unicode), lower-cased, of at least two characters
//! (MemPalace's `\w{2,}`, without `_`), except that each CJK ideograph, kana or hangul
//! syllable is a term of its own (those scripts put no spaces between words). The reference
//! store's lexical index splits text this way; the fusion in [`crate::retrieval`] starts from
//! these terms and may drop stop words and stem them ([`crate::term_rules`]), as LanceDB's and
//! Qdrant's own indexes do.

use std::collections::{HashMap, HashSet};

use crate::term_rules::{TermMaker, TermRules};

/// BM25 term-frequency saturation (MemPalace 3.11 uses 1.5).
pub const BM25_K1: f64 = 1.5;
/// BM25 length normalisation.
pub const BM25_B: f64 = 0.75;
/// Longest term kept, in characters (longer runs are cut: no term is a whole blob).
pub const MAX_TERM_CHARS: usize = 40;

/// Whether `c` is written without spaces between words (CJK ideographs, kana, hangul).
fn is_unspaced_script(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30FF      // hiragana, katakana
        | 0x3400..=0x4DBF    // CJK extension A
        | 0x4E00..=0x9FFF    // CJK unified ideographs
        | 0xAC00..=0xD7AF    // hangul syllables
        | 0xF900..=0xFAFF    // CJK compatibility ideographs
        | 0x20000..=0x2FA1F  // CJK extensions B-F, compatibility supplement
    )
}

/// The terms of `text`, in order (repeats kept).
pub fn terms(text: &str) -> Vec<String> {
    /// Ends the word being read: kept when it has two characters or more.
    fn flush(out: &mut Vec<String>, current: &mut String, current_chars: &mut usize) {
        if *current_chars >= 2 {
            out.push(std::mem::take(current));
        } else {
            current.clear();
        }
        *current_chars = 0;
    }
    let mut out = Vec::new();
    let mut current = String::new();
    let mut current_chars = 0usize;
    for c in text.chars() {
        if is_unspaced_script(c) {
            flush(&mut out, &mut current, &mut current_chars);
            out.push(c.to_string());
        } else if c.is_alphanumeric() {
            if current_chars < MAX_TERM_CHARS {
                current.extend(c.to_lowercase());
                current_chars += 1;
            }
        } else {
            flush(&mut out, &mut current, &mut current_chars);
        }
    }
    flush(&mut out, &mut current, &mut current_chars);
    out
}

/// MemPalace 3.11's words (Python's `\w{2,}` over the lower-cased text): runs of two or more
/// letters, digits or `_`. Unlike [`terms`], `_` joins (`is_zipfile` is one word, as in code),
/// CJK text is not split per character and no length cap applies.
pub fn word_runs(text: &str) -> Vec<String> {
    // The whole text is lower-cased first, as Python's `text.lower()` (a final sigma is ς).
    let lower = text.to_lowercase();
    let mut out = Vec::new();
    let mut current = String::new();
    let mut chars = 0usize;
    for c in lower.chars().chain(std::iter::once(' ')) {
        if c.is_alphanumeric() || c == '_' {
            current.push(c);
            chars += 1;
        } else {
            if chars >= 2 {
                out.push(std::mem::take(&mut current));
            }
            current.clear();
            chars = 0;
        }
    }
    out
}

/// The distinct terms of a query, in first-seen order (a repeated query word counts once).
pub fn query_terms(query: &str) -> Vec<String> {
    let mut seen = HashSet::new();
    terms(query)
        .into_iter()
        .filter(|t| seen.insert(t.clone()))
        .collect()
}

/// Okapi BM25 inverse document frequency, `ln(1 + (n - df + 0.5) / (df + 0.5))` (never negative).
pub fn idf(documents: usize, document_frequency: usize) -> f64 {
    let (n, df) = (documents as f64, document_frequency as f64);
    (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
}

/// The BM25 weight of a term that occurs `tf` times in a document of `length` terms, when
/// documents average `average_length` terms (before multiplying by the term's IDF).
pub fn term_weight(tf: usize, length: usize, average_length: f64) -> f64 {
    if tf == 0 {
        return 0.0;
    }
    let tf = tf as f64;
    let norm = 1.0 - BM25_B + BM25_B * (length as f64 / average_length.max(1.0));
    tf * (BM25_K1 + 1.0) / (tf + BM25_K1 * norm)
}

/// BM25 of every document in `documents` for `query`, with statistics (N, df, average length)
/// taken over `documents` themselves and terms made under `rules`. Returns one score per
/// document, in order.
pub fn bm25_over(query: &str, documents: &[&str], rules: TermRules) -> Vec<f64> {
    let mut maker = TermMaker::for_query(query, rules);
    let mut seen = HashSet::new();
    let q: Vec<String> = maker
        .terms(query)
        .into_iter()
        .filter(|t| seen.insert(t.clone()))
        .collect();
    if q.is_empty() || documents.is_empty() {
        return vec![0.0; documents.len()];
    }
    let wanted: HashSet<&str> = q.iter().map(String::as_str).collect();
    let mut lengths = Vec::with_capacity(documents.len());
    let mut counts: Vec<HashMap<String, usize>> = Vec::with_capacity(documents.len());
    for doc in documents {
        let ts = maker.terms(doc);
        lengths.push(ts.len());
        let mut tf: HashMap<String, usize> = HashMap::new();
        for t in ts {
            if wanted.contains(t.as_str()) {
                *tf.entry(t).or_default() += 1;
            }
        }
        counts.push(tf);
    }
    let n = documents.len();
    let average = lengths.iter().sum::<usize>() as f64 / n as f64;
    let idfs: Vec<f64> = q
        .iter()
        .map(|t| idf(n, counts.iter().filter(|c| c.contains_key(t)).count()))
        .collect();
    counts
        .iter()
        .zip(&lengths)
        .map(|(tf, &len)| {
            q.iter()
                .zip(&idfs)
                .map(|(t, idf)| idf * term_weight(tf.get(t).copied().unwrap_or(0), len, average))
                .sum()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terms_are_lowercased_unicode_words_and_cjk_characters() {
        assert_eq!(
            terms("Caroline's LGBTQ-support group, 2023! a I x"),
            vec!["caroline", "lgbtq", "support", "group", "2023"]
        );
        assert_eq!(terms("Émile ÜBER straße"), vec!["émile", "über", "straße"]);
        assert_eq!(terms("代码评审ok"), vec!["代", "码", "评", "审", "ok"]);
        assert_eq!(terms("snake_case"), vec!["snake", "case"]);
        assert_eq!(terms(&"x".repeat(100))[0].chars().count(), MAX_TERM_CHARS);
        assert!(terms("").is_empty());
        assert_eq!(
            query_terms("the cat and the hat"),
            vec!["the", "cat", "and", "hat"]
        );
    }

    #[test]
    fn bm25_prefers_rare_terms_and_shorter_documents() {
        let docs = [
            "the lighthouse keeper logs the beacon",
            "the harbour master logs the tides and the weather and the ships",
            "the beacon",
            "nothing relevant here at all",
        ];
        let s = bm25_over("beacon logs", &docs, TermRules::Words);
        assert!(s[2] > 0.0 && s[0] > s[1], "{s:?}");
        assert_eq!(s[3], 0.0);
        // A rare term outweighs a common one.
        let s = bm25_over("lighthouse the", &docs, TermRules::Words);
        assert!(s[0] > s[1] && s[0] > s[2], "{s:?}");
        assert_eq!(bm25_over("", &docs, TermRules::Words), vec![0.0; 4]);
        assert!(idf(10, 10) > 0.0, "IDF never goes negative");
    }
}
