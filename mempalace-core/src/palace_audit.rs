//! `audit`: MemPalace 3.11's read-only organisation score of a palace (`palace_audit.py`).
//!
//! Five layers are judged from what the palace already holds: rooms (how many drawers sit in
//! generic rooms), naming (wings or rooms spelled two ways, transcript wings that mix many
//! projects), tunnels (artifacts, and wings that share entities but no tunnel), hallways
//! (spelling artifacts among the strongest) and the knowledge graph (predicate reuse). Each
//! gets a 0–100 score or none; `overall` is their mean. [`audit`] is a pure function of
//! [`AuditInputs`]; [`crate::Palace::audit`] gathers them. The two prunes the findings
//! recommend are here too, judged by the same rules: [`tunnel_artifacts`] (`tunnels prune`)
//! and [`hallway_spelling_artifacts`] (`hallways --prune-spellings`).

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use serde_json::{Value, json};

use crate::entity_spelling::{
    canonical_spelling, entity_spelling_key, is_generic_entity, is_self_link, same_file_spelling,
};
use crate::python_json::{int_or_zero, text_or_empty, truthy};
use crate::tunnel_links::{
    ENTITY_TUNNEL_MIN_COUNT, LinkIndex, cluster_ids, endpoint, entity_tunnel_candidates, norm_wing,
    tunnel_endpoints,
};
use crate::validation::normalize_wing_name;

/// Rooms that say nothing about their drawers.
pub const GENERIC_ROOMS: [&str; 5] = [
    "general",
    "technical",
    "architecture",
    "planning",
    "problems",
];
/// A wing this big with one room holding [`FLAT_WING_SHARE`] of it is flat.
const FLAT_WING_MIN_DRAWERS: u64 = 100;
/// Share of a wing's drawers in one room that makes it flat.
const FLAT_WING_SHARE: f64 = 0.90;
/// Wings with at most this many drawers are tiny.
const TINY_WING_MAX: u64 = 5;
/// A transcript wing mixing this many projects…
const MIXED_WING_MIN_PROJECTS: u64 = 5;
/// …in at least this many drawers should be split.
const MIXED_WING_MIN_DRAWERS: u64 = 500;
/// The strongest hallways looked at for artifacts.
const HALLWAY_TOP_N: usize = 100;

/// A transcript wing's source projects (`naming`'s mixed-wing check).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectMix {
    /// Distinct projects.
    pub projects: u64,
    /// Transcript drawers in the wing.
    pub drawers: u64,
    /// The largest projects (target wing, drawers), at most five.
    pub top: Vec<(String, u64)>,
}

/// The knowledge graph's numbers the audit reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GraphCounts {
    /// Where the graph is (shown as is).
    pub path: String,
    /// Entities.
    pub entities: u64,
    /// Facts, open and closed.
    pub triples: u64,
    /// Open facts.
    pub current_facts: u64,
    /// Open facts per predicate.
    pub open_predicates: BTreeMap<String, u64>,
}

/// What an audit reads.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AuditInputs {
    /// The palace's path, as shown.
    pub palace: String,
    /// Where the drawer counts came from (3.11: "sqlite" or "collection").
    pub counts_source: String,
    /// Drawers per room per wing.
    pub wing_rooms: BTreeMap<String, BTreeMap<String, u64>>,
    /// Transcript wings' source projects (`None`: not known).
    pub project_mix: Option<BTreeMap<String, ProjectMix>>,
    /// Tunnel records (3.11's `tunnels.json` shape).
    pub tunnels: Vec<Value>,
    /// Hallway records (3.11's `hallways.json` shape).
    pub hallways: Vec<Value>,
    /// The knowledge graph (`None`: there is none).
    pub graph: Option<GraphCounts>,
}

/// Python's `round(x, 4)`.
fn round4(x: f64) -> f64 {
    format!("{x:.4}").parse().unwrap_or(x)
}

/// 3.11's `_clamp`: 0–100, rounded half to even.
fn clamp_score(v: f64) -> i64 {
    v.clamp(0.0, 100.0).round_ties_even() as i64
}

/// Python's `f"{x:.0%}"`.
fn percent(x: f64) -> String {
    format!("{:.0}%", x * 100.0)
}

/// `", ".join(items[:keep])` and `", +N more"` past `keep`.
fn name_list(items: &[String], keep: usize) -> String {
    if items.len() <= keep {
        items.join(", ")
    } else {
        format!("{}, +{} more", items[..keep].join(", "), items.len() - keep)
    }
}

/// 3.11's drift key: ASCII letters and digits of the lower-case name, one trailing `s` off.
pub fn drift_key(name: &str) -> String {
    let mut k: String = name
        .to_lowercase()
        .chars()
        .filter(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        .collect();
    if k.chars().count() > 3 && k.ends_with('s') {
        k.pop();
    }
    k
}

// ── Rooms ────────────────────────────────────────────────────────────────

fn analyze_rooms(wing_rooms: &BTreeMap<String, BTreeMap<String, u64>>) -> Value {
    let total: u64 = wing_rooms.values().flat_map(|r| r.values()).sum();
    let generic: u64 = wing_rooms
        .values()
        .flat_map(|r| r.iter())
        .filter(|(room, _)| GENERIC_ROOMS.contains(&room.as_str()))
        .map(|(_, n)| n)
        .sum();
    let mut room_totals: BTreeMap<&str, u64> = BTreeMap::new();
    let mut room_wings: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for (wing, rooms) in wing_rooms {
        for (room, n) in rooms {
            *room_totals.entry(room).or_default() += n;
            room_wings.entry(room).or_default().insert(wing);
        }
    }
    let mut flat: Vec<(u64, Value)> = Vec::new();
    for (wing, rooms) in wing_rooms {
        let wt: u64 = rooms.values().sum();
        if wt < FLAT_WING_MIN_DRAWERS || rooms.is_empty() {
            continue;
        }
        // The first room with the most drawers (rooms in name order, as 3.11's rows come).
        let mut top: Option<(&str, u64)> = None;
        for (room, n) in rooms {
            if top.is_none_or(|(_, best)| *n > best) {
                top = Some((room, *n));
            }
        }
        let Some((top_room, top_n)) = top else {
            continue;
        };
        let share = top_n as f64 / wt as f64;
        if share >= FLAT_WING_SHARE {
            flat.push((
                wt,
                json!({"wing": wing, "room": top_room, "drawers": wt, "share": round4(share)}),
            ));
        }
    }
    flat.sort_by_key(|(wt, _)| std::cmp::Reverse(*wt));
    let mut cross: Vec<(&str, usize)> = room_wings
        .iter()
        .filter(|(_, ws)| ws.len() >= 2)
        .map(|(r, ws)| (*r, ws.len()))
        .collect();
    cross.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let cross: Vec<Value> = cross
        .into_iter()
        .take(10)
        .map(|(room, wings)| json!({"room": room, "wings": wings, "drawers": room_totals[room]}))
        .collect();
    let generic_share = if total == 0 {
        0.0
    } else {
        generic as f64 / total as f64
    };
    json!({
        "total_drawers": total,
        "wings": wing_rooms.len(),
        "distinct_rooms": room_totals.len(),
        "room_instances": wing_rooms.values().map(BTreeMap::len).sum::<usize>(),
        "generic_drawers": generic,
        "generic_share": round4(generic_share),
        "flat_wings": flat.into_iter().map(|(_, v)| v).collect::<Vec<_>>(),
        "cross_wing_rooms": cross,
    })
}

// ── Naming ───────────────────────────────────────────────────────────────

fn analyze_naming(
    wing_rooms: &BTreeMap<String, BTreeMap<String, u64>>,
    project_mix: Option<&BTreeMap<String, ProjectMix>>,
) -> Value {
    let wings: Vec<&String> = wing_rooms.keys().collect();
    let mut groups: Vec<(String, Vec<String>)> = Vec::new();
    for w in &wings {
        let k = drift_key(w);
        match groups.iter_mut().find(|(key, _)| *key == k) {
            Some((_, g)) => g.push((*w).clone()),
            None => groups.push((k, vec![(*w).clone()])),
        }
    }
    let wing_drift: Vec<Vec<String>> = groups
        .into_iter()
        .filter(|(_, g)| g.len() > 1)
        .map(|(_, mut g)| {
            g.sort();
            g
        })
        .collect();
    let mut seen: HashSet<Vec<String>> = wing_drift.iter().cloned().collect();
    let mut prefix_pairs: Vec<Vec<String>> = Vec::new();
    for a in &wings {
        let na = normalize_wing_name(a);
        if na.is_empty() {
            continue;
        }
        for b in &wings {
            if a == b {
                continue;
            }
            let nb = normalize_wing_name(b);
            if nb.chars().count() > na.chars().count() + 1
                && nb.starts_with(&na)
                && nb[na.len()..].starts_with('_')
            {
                let mut pair = vec![(*a).clone(), (*b).clone()];
                pair.sort();
                if seen.insert(pair.clone()) {
                    prefix_pairs.push(pair);
                }
            }
        }
    }
    let mut room_groups: BTreeMap<String, BTreeMap<&str, BTreeSet<&str>>> = BTreeMap::new();
    for (wing, rooms) in wing_rooms {
        for room in rooms.keys() {
            room_groups
                .entry(drift_key(room))
                .or_default()
                .entry(room)
                .or_default()
                .insert(wing);
        }
    }
    let mut room_drift: Vec<(Vec<String>, Vec<String>)> = room_groups
        .into_values()
        .filter(|spellings| spellings.len() > 1)
        .map(|spellings| {
            let rooms: Vec<String> = spellings.keys().map(|r| r.to_string()).collect();
            let wings: BTreeSet<&str> = spellings.values().flatten().copied().collect();
            (rooms, wings.into_iter().map(str::to_string).collect())
        })
        .collect();
    room_drift.sort_by(|a, b| a.0.cmp(&b.0));
    let tiny: Vec<Value> = wing_rooms
        .iter()
        .filter_map(|(w, rooms)| {
            let n: u64 = rooms.values().sum();
            (n <= TINY_WING_MAX).then(|| json!({"wing": w, "drawers": n}))
        })
        .collect();
    let mut mixed: Vec<Value> = Vec::new();
    if let Some(mix) = project_mix {
        let mut ordered: Vec<(&String, &ProjectMix)> = mix.iter().collect();
        ordered.sort_by_key(|(_, m)| std::cmp::Reverse(m.drawers));
        for (wing, m) in ordered {
            if m.projects >= MIXED_WING_MIN_PROJECTS
                && m.drawers >= MIXED_WING_MIN_DRAWERS
                && wing_rooms.contains_key(wing)
            {
                mixed.push(json!({
                    "wing": wing,
                    "projects": m.projects,
                    "drawers": m.drawers,
                    "top": m.top.iter().map(|(k, n)| json!([k, n])).collect::<Vec<_>>(),
                }));
            }
        }
    }
    json!({
        "wing_drift": wing_drift,
        "wing_prefix_pairs": prefix_pairs,
        "room_drift": room_drift.into_iter().map(|(rooms, wings)| json!({"rooms": rooms, "wings": wings})).collect::<Vec<_>>(),
        "tiny_wings": tiny,
        "mixed_wings": mixed,
    })
}

// ── Tunnels ──────────────────────────────────────────────────────────────

fn analyze_tunnels(
    tunnels: &[Value],
    wing_rooms: &BTreeMap<String, BTreeMap<String, u64>>,
    hallways: &[Value],
) -> Value {
    let total = tunnels.len();
    let wings_norm: HashSet<String> = wing_rooms.keys().map(|w| norm_wing(w)).collect();
    let mut kinds: BTreeMap<String, u64> = BTreeMap::new();
    let (mut never_used, mut dangling, mut duplicates, mut artifacts) = (0u64, 0u64, 0u64, 0u64);
    let mut generic: Vec<String> = Vec::new();
    let mut seen = LinkIndex::empty_over(tunnels);
    let mut tunneled: HashSet<String> = HashSet::new();
    let mut records: Vec<&Value> = tunnels.iter().filter(|t| t.is_object()).collect();
    records.sort_by_key(|t| std::cmp::Reverse(int_or_zero(t.get("access_count"))));
    for t in records {
        let kind = match t.get("kind") {
            Some(v) if truthy(Some(v)) => text_or_empty(Some(v)),
            _ => "unknown".to_string(),
        };
        *kinds.entry(kind).or_default() += 1;
        if !truthy(t.get("access_count")) {
            never_used += 1;
        }
        let ends_raw = [endpoint(t, "source"), endpoint(t, "target")];
        let mut bad = false;
        for end in ends_raw {
            let room = text_or_empty(end.get("room"));
            if let Some(name) = room.strip_prefix("entity:")
                && is_generic_entity(name)
            {
                bad = true;
                if !generic.iter().any(|g| g == name) {
                    generic.push(name.to_string());
                }
            }
            let ew = text_or_empty(end.get("wing")).trim().to_string();
            if !wings_norm.contains(&norm_wing(&ew)) {
                bad = true;
                dangling += 1;
            }
        }
        if let Some(ends) = tunnel_endpoints(t)
            && !bad
        {
            if seen.contains(&ends) {
                bad = true;
                duplicates += 1;
            } else {
                seen.add(ends);
            }
        }
        if bad {
            artifacts += 1;
        } else {
            for end in ends_raw {
                let w = text_or_empty(end.get("wing")).trim().to_string();
                if !w.is_empty() {
                    tunneled.insert(norm_wing(&w));
                }
            }
        }
    }
    let mut linkable: BTreeMap<String, String> = BTreeMap::new();
    if !hallways.is_empty() {
        for candidate in entity_tunnel_candidates(hallways, ENTITY_TUNNEL_MIN_COUNT) {
            let present: BTreeMap<String, String> = candidate
                .wings
                .into_iter()
                .filter(|w| wing_rooms.contains_key(&w.display) || wing_rooms.contains_key(&w.wing))
                .map(|w| (w.wing, w.display))
                .collect();
            if present.len() >= 2 {
                linkable.extend(present);
            }
        }
    }
    let mut unlinked: Vec<String> = linkable
        .iter()
        .filter(|(w, _)| !tunneled.contains(*w))
        .map(|(_, d)| d.clone())
        .collect();
    unlinked.sort();
    let coverage = if linkable.is_empty() {
        1.0
    } else {
        1.0 - unlinked.len() as f64 / linkable.len() as f64
    };
    generic.sort();
    let share = |n: u64| {
        if total == 0 {
            0.0
        } else {
            round4(n as f64 / total as f64)
        }
    };
    json!({
        "total": total,
        "by_kind": kinds,
        "never_traversed": never_used,
        "never_traversed_share": share(never_used),
        "generic_entities": generic,
        "dangling_endpoints": dangling,
        "duplicates": duplicates,
        "artifacts": artifacts,
        "artifact_share": share(artifacts),
        "linkable_wings": linkable.len(),
        "unlinked_wings": unlinked,
        "coverage": round4(coverage),
    })
}

// ── Hallways ─────────────────────────────────────────────────────────────

/// 3.11's `is_self_link(record)`: both entities present (not null) and spellings of one file.
fn is_self_link_record(h: &Value) -> bool {
    let entity = |key: &str| {
        h.get(key).filter(|v| !v.is_null()).map(|v| match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
    };
    is_self_link(entity("entity_a").as_deref(), entity("entity_b").as_deref())
}

fn entity_text(h: &Value, key: &str) -> String {
    match h.get(key) {
        None | Some(Value::Null) => "None".to_string(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    }
}

/// Hallway records that are one association, per wing (3.11's `association_groups`), as
/// indexes into `records`.
fn association_groups(records: &[&Value], members_of: &[usize]) -> Vec<Vec<usize>> {
    let mut wing_order: Vec<String> = Vec::new();
    let mut by_wing: HashMap<String, Vec<usize>> = HashMap::new();
    for &i in members_of {
        let w = text_or_empty(records[i].get("wing"));
        by_wing
            .entry(w.clone())
            .or_insert_with(|| {
                wing_order.push(w);
                Vec::new()
            })
            .push(i);
    }
    let mut groups = Vec::new();
    for w in wing_order {
        let members = &by_wing[&w];
        let mut spellings: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for &i in members {
            for key in ["entity_a", "entity_b"] {
                let e = entity_text(records[i], key);
                spellings
                    .entry(entity_spelling_key(&e))
                    .or_default()
                    .insert(e);
            }
        }
        let cluster_of = cluster_ids(&spellings);
        let mut bucket_order: Vec<Vec<(String, usize)>> = Vec::new();
        let mut buckets: HashMap<Vec<(String, usize)>, Vec<usize>> = HashMap::new();
        for &i in members {
            let ca = cluster_of.get(&entity_text(records[i], "entity_a"));
            let cb = cluster_of.get(&entity_text(records[i], "entity_b"));
            match (ca, cb) {
                (Some(a), Some(b)) => {
                    let mut key = vec![a.clone(), b.clone()];
                    key.sort();
                    buckets
                        .entry(key.clone())
                        .or_insert_with(|| {
                            bucket_order.push(key);
                            Vec::new()
                        })
                        .push(i);
                }
                _ => groups.push(vec![i]),
            }
        }
        for key in bucket_order {
            if let Some(g) = buckets.remove(&key) {
                groups.push(g);
            }
        }
    }
    groups
}

fn analyze_hallways(hallways: &[Value]) -> Value {
    let total = hallways.len();
    let records: Vec<&Value> = hallways.iter().filter(|h| h.is_object()).collect();
    let strength = |i: usize| std::cmp::Reverse(int_or_zero(records[i].get("co_occurrence_count")));
    let self_links: Vec<usize> = (0..records.len())
        .filter(|&i| is_self_link_record(records[i]))
        .collect();
    let mut artifacts: HashSet<usize> = self_links.iter().copied().collect();
    let others: Vec<usize> = (0..records.len())
        .filter(|i| !artifacts.contains(i))
        .collect();
    let mut duplicates = 0usize;
    for mut group in association_groups(&records, &others) {
        group.sort_by_key(|&i| strength(i));
        duplicates += group.len() - 1;
        artifacts.extend(group.into_iter().skip(1));
    }
    let mut by_strength: Vec<usize> = (0..records.len()).collect();
    by_strength.sort_by_key(|&i| strength(i));
    let sample: Vec<String> = by_strength
        .iter()
        .filter(|i| artifacts.contains(i))
        .take(10)
        .map(|&i| {
            format!(
                "{} \u{2194} {}",
                entity_text(records[i], "entity_a"),
                entity_text(records[i], "entity_b")
            )
        })
        .collect();
    let top: Vec<usize> = by_strength.into_iter().take(HALLWAY_TOP_N).collect();
    let top_artifacts = top.iter().filter(|i| artifacts.contains(i)).count();
    let share = |n: usize, of: usize| {
        if of == 0 {
            0.0
        } else {
            round4(n as f64 / of as f64)
        }
    };
    json!({
        "total": total,
        "self_links": self_links.len(),
        "duplicates": duplicates,
        "artifact_share": share(self_links.len() + duplicates, total),
        "top_n": top.len(),
        "top_artifacts": top_artifacts,
        "top_artifact_share": share(top_artifacts, top.len()),
        "artifact_sample": sample,
    })
}

// ── Knowledge graph ──────────────────────────────────────────────────────

fn analyze_graph(graph: &GraphCounts) -> Value {
    let mut one_off: Vec<&String> = graph
        .open_predicates
        .iter()
        .filter(|(_, n)| **n == 1)
        .map(|(p, _)| p)
        .collect();
    one_off.sort();
    let reuse = if graph.current_facts == 0 {
        0.0
    } else {
        1.0 - graph.open_predicates.len() as f64 / graph.current_facts as f64
    };
    json!({
        "path": graph.path,
        "entities": graph.entities,
        "triples": graph.triples,
        "current_facts": graph.current_facts,
        "expired_facts": graph.triples.saturating_sub(graph.current_facts),
        "distinct_predicates": graph.open_predicates.len(),
        "one_off_predicates": one_off.len(),
        "one_off_sample": one_off.into_iter().take(10).collect::<Vec<_>>(),
        "predicate_reuse": round4(reuse),
    })
}

// ── Prunes ───────────────────────────────────────────────────────────────

/// What `tunnels prune` finds: tunnels on a generic entity, with an end in a wing that has no
/// drawers, or another spelling of a tunnel already kept (the most followed is kept).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct TunnelPrune {
    /// Tunnels looked at.
    pub total: usize,
    /// On a generic entity name.
    pub generic: usize,
    /// With an end in a wing that has no drawers.
    pub dangling: usize,
    /// Another spelling of a kept tunnel.
    pub duplicates: usize,
    /// Records that go (the three kinds, and entries that are not tunnel objects).
    pub removed: usize,
}

/// 3.11's `prune_tunnels` on the stored records: each tunnel, most followed first, is generic
/// (an `entity:` end naming no project), dangling (an end's wing has no drawers) or a
/// duplicate of one kept; `records` becomes the kept ones in that order (as 3.11 saves them).
pub fn prune_tunnel_records(
    records: &mut Vec<Value>,
    existing_wings: &BTreeSet<String>,
) -> TunnelPrune {
    let wings: HashSet<String> = existing_wings
        .iter()
        .filter(|w| !w.is_empty())
        .map(|w| norm_wing(w))
        .collect();
    let mut seen = LinkIndex::empty_over(records);
    let mut out = TunnelPrune {
        total: records.len(),
        ..TunnelPrune::default()
    };
    let mut visiting: Vec<Value> = records.drain(..).filter(Value::is_object).collect();
    visiting.sort_by_key(|t| std::cmp::Reverse(int_or_zero(t.get("access_count"))));
    for t in visiting {
        let mut bad = false;
        for end in [endpoint(&t, "source"), endpoint(&t, "target")] {
            let room = text_or_empty(end.get("room"));
            if room.strip_prefix("entity:").is_some_and(is_generic_entity) {
                out.generic += 1;
                bad = true;
                break;
            }
            if !wings.contains(&norm_wing(&text_or_empty(end.get("wing")))) {
                out.dangling += 1;
                bad = true;
                break;
            }
        }
        if !bad && let Some(ends) = tunnel_endpoints(&t) {
            if seen.contains(&ends) {
                out.duplicates += 1;
                bad = true;
            } else {
                seen.add(ends);
            }
        }
        if !bad {
            records.push(t);
        }
    }
    out.removed = out.total - records.len();
    out
}

/// [`prune_tunnel_records`] as a report only (the records are not changed).
pub fn tunnel_artifacts(tunnels: &[Value], existing_wings: &BTreeSet<String>) -> TunnelPrune {
    prune_tunnel_records(&mut tunnels.to_vec(), existing_wings)
}

/// What `hallways --prune-spellings` finds: hallways joining two spellings of one entity
/// (self-links) and weaker spellings of one association in a wing (duplicates).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct HallwayPrune {
    /// Hallways looked at.
    pub total: usize,
    /// Self-links.
    pub self_links: usize,
    /// Duplicate spellings.
    pub duplicates: usize,
    /// Artifacts per wing, most first.
    pub by_wing: Vec<(String, usize)>,
    /// Up to ten artifacts, strongest first, as `a ↔ b`.
    pub sample: Vec<String>,
}

/// 3.11's spelling prune on the stored records: self-links go; in each association group
/// the strongest record stays (the first of equal strength), renamed to the group's canonical
/// spellings with the matching id, and the others go. When anything goes, `records` becomes
/// the kept ones in 3.11's order; otherwise it is left as it was.
pub fn prune_hallway_records(records: &mut Vec<Value>) -> HallwayPrune {
    let objects: Vec<&Value> = records.iter().filter(|h| h.is_object()).collect();
    let count = |h: &Value| std::cmp::Reverse(int_or_zero(h.get("co_occurrence_count")));
    let mut self_links: Vec<usize> = (0..objects.len())
        .filter(|&i| is_self_link_record(objects[i]))
        .collect();
    let self_set: HashSet<usize> = self_links.iter().copied().collect();
    let candidates: Vec<usize> = (0..objects.len())
        .filter(|i| !self_set.contains(i))
        .collect();
    let mut kept: Vec<Value> = Vec::new();
    let mut duplicates: Vec<usize> = Vec::new();
    for mut group in association_groups(&objects, &candidates) {
        if group.len() == 1 {
            kept.push(objects[group[0]].clone());
            continue;
        }
        group.sort_by_key(|&i| count(objects[i]));
        let mut survivor = objects[group[0]].clone();
        let (sa, sb) = (
            entity_text(&survivor, "entity_a"),
            entity_text(&survivor, "entity_b"),
        );
        let (mut side_a, mut side_b) = (vec![sa.clone()], vec![sb.clone()]);
        for &m in &group[1..] {
            let (ma, mb) = (
                entity_text(objects[m], "entity_a"),
                entity_text(objects[m], "entity_b"),
            );
            if same_file_spelling(&ma, &sa) && same_file_spelling(&mb, &sb) {
                side_a.push(ma);
                side_b.push(mb);
            } else if same_file_spelling(&mb, &sa) && same_file_spelling(&ma, &sb) {
                side_a.push(mb);
                side_b.push(ma);
            }
        }
        let (a, b) = (canonical_spelling(&side_a), canonical_spelling(&side_b));
        if let Value::Object(map) = &mut survivor {
            let wing = text_or_empty(map.get("wing"));
            map.insert(
                "id".into(),
                Value::String(crate::palace_links::hallway_id(&wing, &a, &b)),
            );
            map.insert("entity_a".into(), Value::String(a));
            map.insert("entity_b".into(), Value::String(b));
        }
        kept.push(survivor);
        duplicates.extend(group.into_iter().skip(1));
    }
    let mut by_wing: Vec<(String, usize)> = Vec::new();
    for &i in self_links.iter().chain(&duplicates) {
        let w = text_or_empty(objects[i].get("wing"));
        let w = if w.is_empty() { "?".to_string() } else { w };
        match by_wing.iter_mut().find(|(name, _)| *name == w) {
            Some((_, n)) => *n += 1,
            None => by_wing.push((w, 1)),
        }
    }
    by_wing.sort_by_key(|(_, n)| std::cmp::Reverse(*n));
    self_links.sort_by_key(|&i| count(objects[i]));
    duplicates.sort_by_key(|&i| count(objects[i]));
    let sample = self_links
        .iter()
        .chain(&duplicates)
        .take(10)
        .map(|&i| {
            format!(
                "{} \u{2194} {}",
                entity_text(objects[i], "entity_a"),
                entity_text(objects[i], "entity_b")
            )
        })
        .collect();
    let prune = HallwayPrune {
        total: records.len(),
        self_links: self_links.len(),
        duplicates: duplicates.len(),
        by_wing,
        sample,
    };
    if prune.self_links + prune.duplicates > 0 {
        *records = kept;
    }
    prune
}

/// [`prune_hallway_records`] as a report only (the records are not changed).
pub fn hallway_spelling_artifacts(hallways: &[Value]) -> HallwayPrune {
    prune_hallway_records(&mut hallways.to_vec())
}

// ── Scores and findings ──────────────────────────────────────────────────

fn num(v: &Value, key: &str) -> f64 {
    v.get(key).and_then(Value::as_f64).unwrap_or(0.0)
}

fn int(v: &Value, key: &str) -> u64 {
    v.get(key).and_then(Value::as_u64).unwrap_or(0)
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

fn scores(rooms: &Value, naming: &Value, tunnels: &Value, hallways: &Value, kg: &Value) -> Value {
    let len = |v: &Value, key: &str| v.get(key).and_then(Value::as_array).map_or(0, Vec::len);
    let rooms_score = (int(rooms, "total_drawers") > 0)
        .then(|| clamp_score(100.0 * (1.0 - num(rooms, "generic_share"))));
    let naming_score = (int(rooms, "wings") > 0).then(|| {
        let drift =
            len(naming, "wing_drift") + len(naming, "room_drift") + len(naming, "mixed_wings");
        clamp_score(100.0 - 10.0 * drift as f64)
    });
    let tunnels_score =
        (int(tunnels, "total") > 0 || int(tunnels, "linkable_wings") > 0).then(|| {
            clamp_score(100.0 * (1.0 - num(tunnels, "artifact_share")) * num(tunnels, "coverage"))
        });
    let hallways_score = (int(hallways, "total") > 0)
        .then(|| clamp_score(100.0 * (1.0 - num(hallways, "top_artifact_share"))));
    let kg_score = (kg.is_object() && int(kg, "triples") > 0)
        .then(|| clamp_score(100.0 * num(kg, "predicate_reuse")));
    let present: Vec<i64> = [
        rooms_score,
        naming_score,
        tunnels_score,
        hallways_score,
        kg_score,
    ]
    .into_iter()
    .flatten()
    .collect();
    let overall = (!present.is_empty())
        .then(|| clamp_score(present.iter().sum::<i64>() as f64 / present.len() as f64));
    json!({
        "overall": overall,
        "rooms": rooms_score,
        "naming": naming_score,
        "tunnels": tunnels_score,
        "hallways": hallways_score,
        "knowledge_graph": kg_score,
    })
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

fn findings(
    rooms: &Value,
    naming: &Value,
    tunnels: &Value,
    hallways: &Value,
    kg: &Value,
) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    let mut add = |layer: &str, text: String| out.push(json!({"layer": layer, "text": text}));
    let empty = Vec::new();
    let arr = |v: &Value, key: &str| {
        v.get(key)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    // Rooms.
    let total = int(rooms, "total_drawers");
    if total > 0 && num(rooms, "generic_share") >= 0.5 {
        add(
            "rooms",
            format!(
                "{} of {total} drawers ({}) sit in generic rooms; the room layer carries little information.",
                int(rooms, "generic_drawers"),
                percent(num(rooms, "generic_share"))
            ),
        );
    }
    let flat = arr(rooms, "flat_wings");
    for f in flat.iter().take(3) {
        add(
            "rooms",
            format!(
                "{} keeps {} of its {} drawers in {}.",
                f["wing"].as_str().unwrap_or(""),
                percent(num(f, "share")),
                int(f, "drawers"),
                f["room"].as_str().unwrap_or("")
            ),
        );
    }
    if flat.len() > 3 {
        let extra = flat.len() - 3;
        add(
            "rooms",
            format!("{extra} more flat wing{}; see --json.", plural(extra)),
        );
    }
    // Naming.
    for g in arr(naming, "wing_drift") {
        add(
            "naming",
            format!("{}: one wing spelled two ways.", strings(&g).join(" / ")),
        );
    }
    let room_drift = arr(naming, "room_drift");
    for d in room_drift.iter().take(5) {
        add(
            "naming",
            format!(
                "{}: one room spelled two ways (in {}).",
                strings(&d["rooms"]).join(" / "),
                name_list(&strings(&d["wings"]), 4)
            ),
        );
    }
    if room_drift.len() > 5 {
        let extra = room_drift.len() - 5;
        add(
            "naming",
            format!(
                "{extra} more room spelling group{}; see --json.",
                plural(extra)
            ),
        );
    }
    let pairs: Vec<String> = arr(naming, "wing_prefix_pairs")
        .iter()
        .map(|p| strings(p).join(" / "))
        .collect();
    if !pairs.is_empty() {
        add(
            "naming",
            format!(
                "May be one project filed twice (not scored): {}.",
                name_list(&pairs, 5)
            ),
        );
    }
    let mixed = arr(naming, "mixed_wings");
    for m in mixed.iter().take(4) {
        let wing = m["wing"].as_str().unwrap_or("");
        let top: Vec<String> = m["top"]
            .as_array()
            .unwrap_or(&empty)
            .iter()
            .take(3)
            .map(|kn| {
                format!(
                    "{} ({})",
                    kn[0].as_str().unwrap_or(""),
                    kn[1].as_u64().unwrap_or(0)
                )
            })
            .collect();
        add(
            "naming",
            format!(
                "{wing} mixes {} projects in {} drawers (largest: {}); run `mempalace wings split --wing {wing}`.",
                int(m, "projects"),
                int(m, "drawers"),
                top.join(", ")
            ),
        );
    }
    if mixed.len() > 4 {
        add(
            "naming",
            format!("{} more mixed wings; see --json.", mixed.len() - 4),
        );
    }
    let tiny: Vec<String> = arr(naming, "tiny_wings")
        .iter()
        .filter_map(|t| t["wing"].as_str().map(str::to_string))
        .collect();
    if tiny.len() >= 3 {
        add(
            "naming",
            format!(
                "{} wings hold 5 drawers or fewer: {}.",
                tiny.len(),
                name_list(&tiny, 6)
            ),
        );
    }
    // Tunnels.
    let t_total = int(tunnels, "total");
    if t_total > 0 && num(tunnels, "artifact_share") >= 0.1 {
        add(
            "tunnels",
            format!(
                "{} of {t_total} tunnels are artifacts ({} dangling endpoints, {} duplicate spellings, generic tokens below); run `mempalace tunnels prune`.",
                int(tunnels, "artifacts"),
                int(tunnels, "dangling_endpoints"),
                int(tunnels, "duplicates")
            ),
        );
    }
    let unlinked = strings(&tunnels["unlinked_wings"]);
    if !unlinked.is_empty() {
        add(
            "tunnels",
            format!(
                "{} of {} wings share entities with another wing but no tunnel reaches them: {}; run `mempalace tunnels propose`.",
                unlinked.len(),
                int(tunnels, "linkable_wings"),
                name_list(&unlinked, 6)
            ),
        );
    } else if t_total == 0 {
        add(
            "tunnels",
            "No tunnels; run `mempalace tunnels propose` to link related wings.".to_string(),
        );
    }
    if t_total > 0 && num(tunnels, "never_traversed_share") >= 0.9 {
        add(
            "tunnels",
            format!(
                "{} of {t_total} tunnels have never been followed (not scored; mempalace_follow_tunnels records each crossing).",
                int(tunnels, "never_traversed")
            ),
        );
    }
    let generic = strings(&tunnels["generic_entities"]);
    if !generic.is_empty() {
        add(
            "tunnels",
            format!(
                "Tunnels on generic entity names: {}.",
                name_list(&generic, 6)
            ),
        );
    }
    // Hallways.
    if int(hallways, "total") > 0 && num(hallways, "top_artifact_share") >= 0.1 {
        add(
            "hallways",
            format!(
                "{} of the {} strongest hallways ({}) are spelling artifacts: an entity paired with its own path or file spelling, or a duplicate of another spelling. {} self-links and {} duplicates of {} overall; run `mempalace hallways --prune-spellings`.",
                int(hallways, "top_artifacts"),
                int(hallways, "top_n"),
                percent(num(hallways, "top_artifact_share")),
                int(hallways, "self_links"),
                int(hallways, "duplicates"),
                int(hallways, "total")
            ),
        );
    }
    // Knowledge graph.
    if kg.is_null() {
        add(
            "knowledge graph",
            "No knowledge graph file found.".to_string(),
        );
    } else if int(kg, "triples") == 0 {
        add("knowledge graph", "Knowledge graph is empty.".to_string());
    } else if num(kg, "predicate_reuse") < 0.5 {
        add(
            "knowledge graph",
            format!(
                "{} predicates for {} open facts ({} used once); not queryable by relation.",
                int(kg, "distinct_predicates"),
                int(kg, "current_facts"),
                int(kg, "one_off_predicates")
            ),
        );
    }
    out
}

/// `value` with every object's keys in sorted order (3.11 writes `sort_keys=True`; serde_json
/// keeps insertion order when a dependency enables its `preserve_order` feature).
fn with_sorted_keys(value: Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(String, Value)> = map.into_iter().collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            Value::Object(
                entries
                    .into_iter()
                    .map(|(k, v)| (k, with_sorted_keys(v)))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.into_iter().map(with_sorted_keys).collect()),
        other => other,
    }
}

/// The audit report (3.11's JSON: every key, objects' keys sorted).
pub fn audit(inputs: &AuditInputs) -> Value {
    let rooms = analyze_rooms(&inputs.wing_rooms);
    let naming = analyze_naming(&inputs.wing_rooms, inputs.project_mix.as_ref());
    let tunnels = analyze_tunnels(&inputs.tunnels, &inputs.wing_rooms, &inputs.hallways);
    let hallways = analyze_hallways(&inputs.hallways);
    let kg = inputs.graph.as_ref().map_or(Value::Null, analyze_graph);
    let scores = scores(&rooms, &naming, &tunnels, &hallways, &kg);
    let findings = findings(&rooms, &naming, &tunnels, &hallways, &kg);
    with_sorted_keys(json!({
        "palace": inputs.palace,
        "counts_source": inputs.counts_source,
        "rooms": rooms,
        "naming": naming,
        "tunnels": tunnels,
        "hallways": hallways,
        "knowledge_graph": kg,
        "scores": scores,
        "findings": findings,
    }))
}

/// The overall score of a report (`None`: nothing to score).
pub fn overall_score(report: &Value) -> Option<i64> {
    report["scores"]["overall"].as_i64()
}

/// Python's `textwrap.fill` with `break_long_words=False, break_on_hyphens=False`.
fn wrap(text: &str, width: usize, first: &str, rest: &str) -> String {
    // `expandtabs()` (tab stops every 8 columns), then each ASCII white-space character as a
    // space; chunks split on runs of those only (textwrap's `_whitespace`).
    let is_ascii_space = |c: char| matches!(c, ' ' | '\t' | '\n' | '\x0b' | '\x0c' | '\r');
    let mut cleaned = String::with_capacity(text.len());
    let mut column = 0usize;
    for c in text.chars() {
        match c {
            '\t' => {
                let pad = 8 - column % 8;
                cleaned.extend(std::iter::repeat_n(' ', pad));
                column += pad;
            }
            '\n' | '\r' => {
                cleaned.push(' ');
                column = 0;
            }
            c if is_ascii_space(c) => {
                cleaned.push(' ');
                column += 1;
            }
            c => {
                cleaned.push(c);
                column += 1;
            }
        }
    }
    let mut chunks: Vec<String> = Vec::new();
    let mut current = String::new();
    let mut in_space = None;
    for c in cleaned.chars() {
        let space = is_ascii_space(c);
        if in_space.is_some_and(|s| s != space) {
            chunks.push(std::mem::take(&mut current));
        }
        in_space = Some(space);
        current.push(c);
    }
    if !current.is_empty() {
        chunks.push(current);
    }
    let mut lines: Vec<String> = Vec::new();
    let mut i = 0;
    while i < chunks.len() {
        let indent = if lines.is_empty() { first } else { rest };
        let avail = width.saturating_sub(indent.chars().count());
        if !lines.is_empty() && chunks[i].chars().all(is_ascii_space) {
            i += 1;
            continue;
        }
        let mut line: Vec<&str> = Vec::new();
        let mut len = 0;
        while i < chunks.len() {
            let n = chunks[i].chars().count();
            if len + n <= avail {
                line.push(&chunks[i]);
                len += n;
                i += 1;
            } else {
                break;
            }
        }
        if line.is_empty() && i < chunks.len() {
            line.push(&chunks[i]);
            i += 1;
        }
        if line.last().is_some_and(|c| c.chars().all(is_ascii_space)) {
            line.pop();
        }
        if !line.is_empty() {
            lines.push(format!("{indent}{}", line.concat()));
        }
    }
    lines.join("\n")
}

/// The text report at `width` columns (3.11's `render_audit`; only findings wrap).
pub fn render_audit(report: &Value, width: usize) -> String {
    let width = width.clamp(40, 100);
    let scores = &report["scores"];
    let mut lines = vec![
        String::new(),
        format!(
            "MemPalace audit: {}",
            report["palace"].as_str().unwrap_or("")
        ),
        String::new(),
    ];
    for (key, label, meaning) in [
        ("overall", "overall", ""),
        ("rooms", "rooms", "drawers outside generic rooms"),
        (
            "naming",
            "naming",
            "wing/room spellings that do not collide",
        ),
        (
            "tunnels",
            "tunnels",
            "sound tunnels x linkable wings they reach",
        ),
        (
            "hallways",
            "hallways",
            "strongest hallways that are not spelling artifacts",
        ),
        (
            "knowledge_graph",
            "knowledge graph",
            "predicate reuse across facts",
        ),
    ] {
        let score = scores[key].as_i64();
        let num = score.map_or("n/a".to_string(), |s| format!("{s:>3}"));
        let bar = match score {
            None => " ".repeat(10),
            Some(s) => {
                let filled = ((s as f64) / 100.0 * 10.0)
                    .round_ties_even()
                    .clamp(0.0, 10.0) as usize;
                format!("{}{}", "#".repeat(filled), ".".repeat(10 - filled))
            }
        };
        lines.push(
            format!("  {label:<16}{num:>4}  {bar}  {meaning}")
                .trim_end()
                .to_string(),
        );
    }
    lines.push(String::new());
    let kg_facts = report["knowledge_graph"]["triples"].as_u64().unwrap_or(0);
    lines.push(format!(
        "  {} drawers, {} wings, {} rooms, {} tunnels, {} hallways, {kg_facts} facts",
        int(&report["rooms"], "total_drawers"),
        int(&report["rooms"], "wings"),
        int(&report["rooms"], "distinct_rooms"),
        int(&report["tunnels"], "total"),
        int(&report["hallways"], "total"),
    ));
    lines.push(String::new());
    let findings = report["findings"].as_array().cloned().unwrap_or_default();
    if findings.is_empty() {
        lines.push("  No findings. The palace is well organized.".to_string());
    } else {
        let mut layer = "";
        for f in &findings {
            let this = f["layer"].as_str().unwrap_or("");
            if this != layer {
                lines.push(format!("  {}", this.to_uppercase()));
                layer = this;
            }
            lines.push(wrap(
                f["text"].as_str().unwrap_or(""),
                width,
                "    - ",
                "      ",
            ));
        }
    }
    lines.push(String::new());
    lines.join("\n") + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drift_keys_are_3_11s() {
        for (name, key) in [
            ("my-app", "myapp"),
            ("My_App", "myapp"),
            ("my apps", "myapp"),
            ("release-3.6.0", "release360"),
            ("docs", "doc"),
            ("bus", "bus"),
            ("Café", "caf"),
            ("concierge-automations", "conciergeautomation"),
            ("s", "s"),
            ("ss", "ss"),
            ("abcs", "abc"),
        ] {
            assert_eq!(drift_key(name), key, "{name}");
        }
    }

    #[test]
    fn wrapping_breaks_only_at_spaces() {
        let text = "4 of the 31 strongest hallways (13%) are spelling artifacts: run `mempalace hallways --prune-spellings`.";
        assert_eq!(
            wrap(text, 40, "    - ", "      "),
            "    - 4 of the 31 strongest hallways\n      (13%) are spelling artifacts: run\n      `mempalace hallways\n      --prune-spellings`."
        );
        // A no-break space is not a break point (textwrap splits on ASCII white space only).
        assert_eq!(
            wrap("aaaa\u{a0}bbbb cc", 12, "- ", "  "),
            "- aaaa\u{a0}bbbb\n  cc"
        );
        assert_eq!(wrap("a\tb c", 12, "- ", "  "), "- a       b\n  c");
    }
}
