//! How 3.11 tells tunnels apart and finds the entities worth a tunnel (`tunnels_tool.py`,
//! `palace_graph.py`): a link's identity across spellings and directions (`LinkIndex`), and
//! the entities whose hallways are strong in two or more wings ([`entity_tunnel_candidates`]).
//! `audit`, `tunnels prune`, `tunnels propose` and the miner's entity tunnels all judge by
//! these.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use serde_json::{Map, Value};

use crate::entity_spelling::{
    ambiguous_spellings, canonical_spellings, entity_spelling_key, is_generic_entity,
    same_file_spelling, spelling_clusters,
};
use crate::python_json::{int_or_zero, text_or_empty, truthy};
use crate::validation::normalize_wing_name;

/// A link's weaker side needs at least this strong a hallway for an entity tunnel.
pub const ENTITY_TUNNEL_MIN_COUNT: i64 = 3;
/// The label prefix of entity tunnels (`shared entity: <name>`).
pub const ENTITY_TUNNEL_LABEL: &str = "shared entity";
/// The miner links a wing to at most this many (entity, wing) pairs.
pub const ENTITY_TUNNEL_MAX_PER_WING: usize = 25;

/// A wing's normalised name, itself when that is empty.
pub(crate) fn norm_wing(wing: &str) -> String {
    let n = normalize_wing_name(wing);
    if n.is_empty() { wing.to_string() } else { n }
}

/// An endpoint object of a tunnel (`{}` when missing).
pub(crate) fn endpoint<'a>(t: &'a Value, key: &str) -> &'a Map<String, Value> {
    static EMPTY: std::sync::LazyLock<Map<String, Value>> = std::sync::LazyLock::new(Map::new);
    match t.get(key) {
        Some(Value::Object(o)) => o,
        _ => &EMPTY,
    }
}

/// Every `entity:` name at the ends of `tunnels` and the `extra` names, sorted (3.11's
/// `connection_spellings`, also a proposal's `entity_spellings`).
pub(crate) fn connection_spellings(tunnels: &[Value], extra: &[String]) -> BTreeSet<String> {
    let mut names: BTreeSet<String> = extra.iter().cloned().collect();
    names.extend(
        tunnels
            .iter()
            .filter(|t| t.is_object())
            .filter_map(tunnel_endpoints)
            .flat_map(|(a, b)| [a.1, b.1])
            .filter_map(|room| room.strip_prefix("entity:").map(str::to_string)),
    );
    names
}

/// A tunnel's two ends, each as (normalised wing, room).
pub(crate) type Ends = ((String, String), (String, String));

/// A tunnel record's two ends, or none when a wing is missing.
pub(crate) fn tunnel_endpoints(t: &Value) -> Option<Ends> {
    let (source, target) = (endpoint(t, "source"), endpoint(t, "target"));
    let wa = text_or_empty(source.get("wing"));
    let wb = text_or_empty(target.get("wing"));
    if wa.is_empty() || wb.is_empty() {
        return None;
    }
    Some((
        (norm_wing(&wa), text_or_empty(source.get("room"))),
        (norm_wing(&wb), text_or_empty(target.get("room"))),
    ))
}

/// A room's spelling key (`entity:` rooms by their entity's key).
fn room_spelling_key(room: &str) -> String {
    match room.strip_prefix("entity:") {
        Some(name) => format!("entity:{}", entity_spelling_key(name)),
        None => entity_spelling_key(room),
    }
}

/// Whether two rooms are spellings of one room.
fn rooms_match(a: &str, b: &str) -> bool {
    match (a.strip_prefix("entity:"), b.strip_prefix("entity:")) {
        (Some(x), Some(y)) => same_file_spelling(x, y),
        _ => room_spelling_key(a) == room_spelling_key(b),
    }
}

/// The links seen so far, matched as a reader would (3.11's `LinkIndex`).
pub(crate) struct LinkIndex {
    ambiguous: HashSet<String>,
    buckets: HashMap<Vec<(String, String)>, Vec<Ends>>,
}

impl LinkIndex {
    /// An index with nothing in it yet, whose ambiguous spellings are judged over every
    /// `entity:` end of `tunnels` (3.11's `connection_index(tunnels, seed=False)`).
    pub(crate) fn empty_over(tunnels: &[Value]) -> Self {
        LinkIndex {
            ambiguous: ambiguous_spellings(&connection_spellings(tunnels, &[])),
            buckets: HashMap::new(),
        }
    }

    /// An index holding every link of `tunnels`, whose ambiguous spellings are judged over
    /// their `entity:` ends and `extra` names (3.11's `connection_index(tunnels, extra)`).
    pub(crate) fn seeded(tunnels: &[Value], extra: &[String]) -> Self {
        let mut index = LinkIndex {
            ambiguous: ambiguous_spellings(&connection_spellings(tunnels, extra)),
            buckets: HashMap::new(),
        };
        for ends in tunnels
            .iter()
            .filter(|t| t.is_object())
            .filter_map(tunnel_endpoints)
        {
            index.add(ends);
        }
        index
    }

    fn bucket(ends: &Ends) -> Vec<(String, String)> {
        let mut key = vec![
            (ends.0.0.clone(), room_spelling_key(&ends.0.1)),
            (ends.1.0.clone(), room_spelling_key(&ends.1.1)),
        ];
        key.sort();
        key
    }

    fn endpoint_match(&self, a: &str, b: &str) -> bool {
        if !rooms_match(a, b) {
            return false;
        }
        let (ea, eb) = (a.strip_prefix("entity:"), b.strip_prefix("entity:"));
        if ea.is_some_and(|e| self.ambiguous.contains(e))
            || eb.is_some_and(|e| self.ambiguous.contains(e))
        {
            return ea == eb;
        }
        true
    }

    /// Whether a link like `ends` (either direction, any spelling of its rooms) is there.
    pub(crate) fn contains(&self, ends: &Ends) -> bool {
        let ((wa, ra), (wb, rb)) = ends;
        self.buckets.get(&Self::bucket(ends)).is_some_and(|stored| {
            stored.iter().any(|((wa2, ra2), (wb2, rb2))| {
                (wa == wa2
                    && wb == wb2
                    && self.endpoint_match(ra, ra2)
                    && self.endpoint_match(rb, rb2))
                    || (wa == wb2
                        && wb == wa2
                        && self.endpoint_match(ra, rb2)
                        && self.endpoint_match(rb, ra2))
            })
        })
    }

    /// Records a link.
    pub(crate) fn add(&mut self, ends: Ends) {
        self.buckets
            .entry(Self::bucket(&ends))
            .or_default()
            .push(ends);
    }
}

/// Each spelling's file, as (spelling key, cluster index): the clusters of each key's
/// spellings in sorted order; a spelling that could be two files is in none.
pub(crate) fn cluster_ids(
    spellings_by_key: &BTreeMap<String, BTreeSet<String>>,
) -> HashMap<String, (String, usize)> {
    let mut ids = HashMap::new();
    for (key, spellings) in spellings_by_key {
        let sorted: Vec<String> = spellings.iter().cloned().collect();
        for (i, cluster) in spelling_clusters(&sorted).into_iter().enumerate() {
            for s in cluster {
                ids.insert(s, (key.clone(), i));
            }
        }
    }
    ids
}

/// One wing an entity tunnel candidate reaches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntityWing {
    /// The wing's normalised name.
    pub wing: String,
    /// The wing as its hallways spell it.
    pub display: String,
    /// The entity's strongest hallway count in that wing.
    pub strength: i64,
}

/// An entity whose hallways are strong in two or more wings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntityCandidate {
    /// The entity's canonical spelling.
    pub entity: String,
    /// The wings where it is strong enough, in order of first appearance.
    pub wings: Vec<EntityWing>,
}

impl EntityCandidate {
    /// The entry for a normalised wing name.
    pub fn wing(&self, normalised: &str) -> Option<&EntityWing> {
        self.wings.iter().find(|w| w.wing == normalised)
    }
}

/// 3.11's `entity_tunnel_candidates`: for each entity (spellings of one file merged, generic
/// names and ambiguous spellings left out), its strongest hallway count per wing; kept when
/// it is not everywhere (at most max(3, a quarter of the wings)) and at least `min_count` in
/// two or more wings. In order of first appearance.
pub fn entity_tunnel_candidates(hallways: &[Value], min_count: i64) -> Vec<EntityCandidate> {
    let usable = |e: Option<&Value>| -> Option<String> {
        match e {
            Some(Value::String(s)) if !s.trim().is_empty() && !is_generic_entity(s) => {
                Some(s.clone())
            }
            _ => None,
        }
    };
    let mut spellings_by_base: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for h in hallways.iter().filter(|h| h.is_object()) {
        for key in ["entity_a", "entity_b"] {
            if let Some(e) = usable(h.get(key)) {
                spellings_by_base
                    .entry(entity_spelling_key(&e))
                    .or_default()
                    .insert(e);
            }
        }
    }
    let canonical = canonical_spellings(&spellings_by_base);
    let mut candidates: Vec<EntityCandidate> = Vec::new();
    let mut position: HashMap<String, usize> = HashMap::new();
    for h in hallways.iter().filter(|h| h.is_object()) {
        let Some(Value::String(display)) = h.get("wing") else {
            continue;
        };
        if display.trim().is_empty() {
            continue;
        }
        let wing = normalize_wing_name(display.trim());
        let strength = match h.get("co_occurrence_count") {
            Some(v) => int_or_zero(Some(v)),
            None => min_count,
        };
        for key in ["entity_a", "entity_b"] {
            let Some(name) = usable(h.get(key)).and_then(|e| canonical.get(&e).cloned()) else {
                continue;
            };
            let at = *position.entry(name.clone()).or_insert_with(|| {
                candidates.push(EntityCandidate {
                    entity: name,
                    wings: Vec::new(),
                });
                candidates.len() - 1
            });
            let wings = &mut candidates[at].wings;
            match wings.iter_mut().find(|w| w.wing == wing) {
                Some(w) if strength > w.strength => {
                    w.display = display.clone();
                    w.strength = strength;
                }
                Some(_) => {}
                None => wings.push(EntityWing {
                    wing: wing.clone(),
                    display: display.clone(),
                    strength,
                }),
            }
        }
    }
    let all_wings: HashSet<String> = hallways
        .iter()
        .filter(|h| h.is_object() && truthy(h.get("wing")))
        .map(|h| normalize_wing_name(text_or_empty(h.get("wing")).trim()))
        .collect();
    let cap = 3usize.max((all_wings.len() as f64 * 0.25) as usize);
    candidates
        .into_iter()
        .filter(|c| c.wings.len() <= cap)
        .map(|mut c| {
            c.wings.retain(|w| w.strength >= min_count);
            c
        })
        .filter(|c| c.wings.len() >= 2)
        .collect()
}

/// 3.11's `entity_tunnels_for_wing`, run by the miner after a wing's hallways: a tunnel from
/// `wing` to each other wing sharing a candidate entity, the links ranked by their weaker
/// side (then entity and wing names), at most [`ENTITY_TUNNEL_MAX_PER_WING`].
pub fn wing_entity_tunnels(wing: &str, hallways: &[Value]) -> Vec<crate::palace_links::NewTunnel> {
    if hallways.is_empty() || wing.trim().is_empty() {
        return Vec::new();
    }
    let own_wing = normalize_wing_name(wing.trim());
    let candidates = entity_tunnel_candidates(hallways, ENTITY_TUNNEL_MIN_COUNT);
    let mut links: Vec<(std::cmp::Reverse<i64>, String, String, String, String)> = Vec::new();
    for c in &candidates {
        let Some(own) = c.wing(&own_wing) else {
            continue;
        };
        for other in c.wings.iter().filter(|w| w.wing != own_wing) {
            links.push((
                std::cmp::Reverse(own.strength.min(other.strength)),
                c.entity.clone(),
                other.wing.clone(),
                own.display.clone(),
                other.display.clone(),
            ));
        }
    }
    links.sort();
    links
        .into_iter()
        .take(ENTITY_TUNNEL_MAX_PER_WING)
        .map(|(_, entity, _, own, other)| {
            let room = format!("entity:{entity}");
            crate::palace_links::NewTunnel::new(own, room.clone(), other, room)
                .with_label(format!("{ENTITY_TUNNEL_LABEL}: {entity}"))
                .with_kind("entity")
        })
        .collect()
}
