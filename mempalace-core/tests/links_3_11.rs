//! Hallways, entity tunnels and tunnel plans built from a palace MemPalace 3.11 mined
//! (`tests/fixtures/links_3_11`: its drawers with their `entities`, and the `hallways.json`,
//! `tunnels.json` and `proposal.json` 3.11 wrote) are 3.11's, timestamps aside.

use std::collections::BTreeSet;

use chrono::Utc;
use mempalace_core::entity_extraction::EntityTagger;
use mempalace_core::hallway_builder::{
    DrawerNames, WingPairs, replace_wing_hallways, wing_hallways,
};
use mempalace_core::palace_links::upsert_tunnel_record;
use mempalace_core::tunnel_links::wing_entity_tunnels;
use mempalace_core::tunnel_proposal::propose;
use serde_json::Value;

fn fixture(name: &str) -> Value {
    let path = format!(
        "{}/tests/fixtures/links_3_11/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    serde_json::from_str(&std::fs::read_to_string(path).expect("fixture")).expect("json")
}

/// A record without the fields that hold the time it was made.
fn timeless(mut v: Value) -> Value {
    if let Some(map) = v.as_object_mut() {
        for key in ["created_at", "last_activated", "updated_at", "planned_at"] {
            map.remove(key);
        }
    }
    v
}

fn drawers() -> Vec<Value> {
    fixture("drawers.json").as_array().expect("list").clone()
}

fn names(d: &Value) -> Vec<String> {
    mempalace_core::drawer::entities_from_field(d["entities"].as_str().unwrap_or(""))
}

#[test]
fn the_miner_tags_3_11s_drawers_with_3_11s_names() {
    let tagger = EntityTagger::default();
    for d in drawers() {
        assert_eq!(
            tagger.tag(d["text"].as_str().unwrap()),
            names(&d),
            "{}",
            d["id"]
        );
    }
}

/// Mines the fixture's wings in 3.11's order: each wing's hallways, then its entity tunnels.
fn mine_links() -> (Vec<Value>, Vec<Value>) {
    let all = drawers();
    let (mut hallways, mut tunnels) = (Vec::new(), Vec::new());
    for wing in ["alpha", "beta", "gamma"] {
        let of_wing: Vec<DrawerNames> = all
            .iter()
            .filter(|d| d["wing"] == wing)
            .map(|d| DrawerNames {
                room: d["room"].as_str().unwrap().to_string(),
                entities: names(d),
            })
            .collect();
        let created = wing_hallways(wing, &WingPairs::count(&of_wing), 2, &hallways, Utc::now());
        replace_wing_hallways(&mut hallways, wing, created);
        for t in wing_entity_tunnels(wing, &hallways) {
            upsert_tunnel_record(&mut tunnels, &t, Utc::now()).unwrap();
        }
    }
    (hallways, tunnels)
}

fn timeless_list(records: Vec<Value>) -> Vec<Value> {
    records.into_iter().map(timeless).collect()
}

#[test]
fn mining_wing_by_wing_builds_3_11s_hallways_and_entity_tunnels() {
    let (hallways, tunnels) = mine_links();
    let expected = fixture("hallways_after_mine.json")["hallways"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(timeless_list(hallways), timeless_list(expected));
    let expected = fixture("tunnels_after_mine.json")
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(timeless_list(tunnels), timeless_list(expected));
}

#[test]
fn proposals_over_3_11s_hallways_are_3_11s() {
    let (hallways, _) = mine_links();
    let wings: BTreeSet<String> = ["alpha", "beta", "gamma"].map(String::from).into();
    for (max, file) in [(60, "proposal_full.json"), (2, "proposal_max2.json")] {
        let plan = propose(&hallways, &wings, max, &[], Utc::now());
        assert_eq!(
            timeless(serde_json::to_value(&plan).unwrap()),
            timeless(fixture(file)),
            "{file}"
        );
    }
}
