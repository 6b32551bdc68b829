//! The names our miners tag drawers with are the ones MemPalace 3.11's miners tag the same
//! texts with (`tests/fixtures/entities_3_11.json`, made with 3.11's own functions and an empty
//! known-entity registry).

use mempalace_core::entity_extraction::{EntityTagger, structural_entities};
use serde_json::Value;

fn cases() -> Vec<(String, String, String)> {
    let raw = include_str!("fixtures/entities_3_11.json");
    let cases: Vec<Value> = serde_json::from_str(raw).expect("fixture parses");
    cases
        .into_iter()
        .map(|c| {
            let field = |k: &str| c[k].as_str().expect("string field").to_string();
            (field("text"), field("prose"), field("structural"))
        })
        .collect()
}

#[test]
fn project_drawers_get_3_11s_names() {
    let tagger = EntityTagger::default();
    for (text, prose, _) in cases() {
        assert_eq!(tagger.tag(&text).join(";"), prose, "text: {text:.120}");
    }
}

#[test]
fn conversation_drawers_get_3_11s_structural_names() {
    for (text, _, structural) in cases() {
        assert_eq!(
            structural_entities(&text).join(";"),
            structural,
            "text: {text:.120}"
        );
    }
}
