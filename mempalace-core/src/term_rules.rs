//! How the fusion's BM25 turns text into terms: the words as they are, or without English
//! stop words, or also reduced to their Snowball English stems (the rules LanceDB's and
//! Qdrant's own lexical indexes apply).
//!
//! Stop words are only dropped when the query keeps a word that is not one: a query of
//! nothing but stop words ("who was it") is scored on those words rather than on nothing.

use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

use crate::lexical::{terms, word_runs};

/// Which terms the fusion's BM25 compares.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TermRules {
    /// The words as [`terms`] splits them.
    Words,
    /// MemPalace 3.11's own words ([`word_runs`]: `_` joins, no CJK split, no length cap),
    /// all kept: its re-rank exactly.
    MemPalace311,
    /// The words without English stop words ("how", "are", "the", ...): the default.
    #[default]
    WithoutStopWords,
    /// The words without English stop words, each reduced to its Snowball English stem
    /// ("artifacts" and "artifact" are one term, "signed" and "signs" another).
    Stems,
}

/// NLTK's English stop words, as [`terms`] would split them.
fn english_stop_words() -> &'static HashSet<String> {
    static WORDS: OnceLock<HashSet<String>> = OnceLock::new();
    WORDS.get_or_init(|| {
        stop_words::get("en")
            .iter()
            .flat_map(|w| terms(w))
            .collect()
    })
}

/// Whether `term` (lower case, as [`terms`] makes it) is an English stop word.
pub fn is_stop_word(term: &str) -> bool {
    english_stop_words().contains(term)
}

/// Turns texts into terms under one set of rules, decided by the query; stems are memoised.
pub struct TermMaker {
    split_as_3_11: bool,
    drop_stop_words: bool,
    stemmer: Option<frostem::Stemmer>,
    stems: HashMap<String, String>,
}

impl TermMaker {
    /// Rules for scoring documents against `query`: stop words are dropped only when the
    /// rules say so and the query has some other word.
    pub fn for_query(query: &str, rules: TermRules) -> Self {
        let drop_stop_words = matches!(rules, TermRules::WithoutStopWords | TermRules::Stems)
            && terms(query).iter().any(|t| !is_stop_word(t));
        TermMaker {
            split_as_3_11: rules == TermRules::MemPalace311,
            drop_stop_words,
            stemmer: (rules == TermRules::Stems)
                .then(|| frostem::Stemmer::new(frostem::Algorithm::English)),
            stems: HashMap::new(),
        }
    }

    /// The terms of `text`, in order.
    pub fn terms(&mut self, text: &str) -> Vec<String> {
        let mut out = if self.split_as_3_11 {
            word_runs(text)
        } else {
            terms(text)
        };
        if self.drop_stop_words {
            out.retain(|t| !is_stop_word(t));
        }
        if let Some(stemmer) = &self.stemmer {
            for t in &mut out {
                let stem = match self.stems.get(t.as_str()) {
                    Some(stem) => stem.clone(),
                    None => {
                        let stem = stemmer.stem(t).into_owned();
                        self.stems.insert(t.clone(), stem.clone());
                        stem
                    }
                };
                *t = stem;
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_kept_as_they_are() {
        let mut m = TermMaker::for_query("how are artifacts signed", TermRules::Words);
        assert_eq!(
            m.terms("How are artifacts signed?"),
            vec!["how", "are", "artifacts", "signed"]
        );
    }

    #[test]
    fn mempalace_3_11_words_keep_identifiers_whole() {
        let mut m = TermMaker::for_query("zip archive", TermRules::MemPalace311);
        assert_eq!(
            m.terms("The is_zipfile() check, a ZIP archive"),
            vec!["the", "is_zipfile", "check", "zip", "archive"]
        );
        let mut m = TermMaker::for_query("zip archive", TermRules::Words);
        assert_eq!(m.terms("is_zipfile"), vec!["is", "zipfile"]);
        // Lower-cased as a whole, as Python's str.lower(): a final sigma is ς.
        assert_eq!(crate::lexical::word_runs("ΟΔΟΣ"), vec!["οδος"]);
    }

    #[test]
    fn stop_words_go_when_the_query_has_another_word() {
        let mut m = TermMaker::for_query("how are artifacts signed", TermRules::WithoutStopWords);
        assert_eq!(
            m.terms("How are the artifacts signed?"),
            vec!["artifacts", "signed"]
        );
        let mut m = TermMaker::for_query("who was it", TermRules::WithoutStopWords);
        assert_eq!(m.terms("who was it"), vec!["who", "was", "it"]);
    }

    #[test]
    fn stems_join_forms_of_one_word() {
        let mut m = TermMaker::for_query("how are artifacts signed", TermRules::Stems);
        assert_eq!(
            m.terms("how are artifacts signed"),
            vec!["artifact", "sign"]
        );
        assert_eq!(
            m.terms("The pipeline signs every artifact"),
            vec!["pipelin", "sign", "everi", "artifact"]
        );
        assert!(is_stop_word("the") && is_stop_word("don") && !is_stop_word("cosign"));
    }
}
