//! `tunnels propose`: MemPalace 3.11's reviewable plan of entity tunnels (`tunnels_tool.py`).
//!
//! Entities whose hallways are strong in two or more wings are ranked by their weaker side;
//! links that exist already (in any spelling or direction) are left out; the cap is filled
//! first with the best link for each wing no tunnel reaches yet, then by strength. The plan
//! is saved as 3.11's `tunnels/proposal.json` in the palace folder, where a user may delete
//! rows; [`plan_from_file`] checks it and [`apply_plan`] turns its rows into tunnels.

use std::collections::{BTreeSet, HashSet};

use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::palace_links::{NewTunnel, iso_timestamp, upsert_tunnel_record};
use crate::python_json::text_or_empty;
use crate::python_repr::python_value_repr;
use crate::tunnel_links::{
    ENTITY_TUNNEL_LABEL, ENTITY_TUNNEL_MIN_COUNT, Ends, LinkIndex, connection_spellings,
    entity_tunnel_candidates, norm_wing, tunnel_endpoints,
};

/// How many tunnels a plan proposes unless told otherwise (3.11's `--max` default).
pub const DEFAULT_MAX_PROPOSED_TUNNELS: usize = 60;
/// The plan format 3.11 writes.
pub const PROPOSAL_SCHEMA_VERSION: u64 = 2;

/// One proposed tunnel.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProposedTunnel {
    /// The shared entity (canonical spelling).
    pub entity: String,
    /// The wing where it is stronger (as its hallways spell it).
    pub wing_a: String,
    /// The other wing.
    pub wing_b: String,
    /// The weaker side's hallway count.
    pub strength: i64,
    /// Each wing's hallway count, `{wing_a: n, wing_b: n}`.
    pub counts: Value,
}

/// A saved or fresh tunnel plan, as 3.11's `proposal.json` holds it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TunnelPlan {
    /// Always [`PROPOSAL_SCHEMA_VERSION`] for a plan made here.
    pub schema_version: u64,
    /// When it was planned (UTC, Python's `isoformat`).
    pub planned_at: String,
    /// Links that could be proposed (before the cap).
    pub candidates: usize,
    /// Every entity spelling the plan was judged against (tunnels' and candidates'), so
    /// applying it later tells the same links apart.
    pub entity_spellings: Vec<String>,
    /// The proposed tunnels, strongest first.
    pub tunnels: Vec<ProposedTunnel>,
}

/// 3.11's `propose_tunnels`: the plan over the `hallways` records, for the wings that have
/// drawers, given the tunnels that exist.
pub fn propose(
    hallways: &[Value],
    existing_wings: &BTreeSet<String>,
    max_tunnels: usize,
    existing_tunnels: &[Value],
    now: DateTime<Utc>,
) -> TunnelPlan {
    let wings: HashSet<String> = existing_wings.iter().map(|w| norm_wing(w)).collect();
    let candidates = entity_tunnel_candidates(hallways, ENTITY_TUNNEL_MIN_COUNT);
    let names: Vec<String> = candidates.iter().map(|c| c.entity.clone()).collect();
    let known = LinkIndex::seeded(existing_tunnels, &names);
    let mut rows: Vec<ProposedTunnel> = Vec::new();
    for c in &candidates {
        let mut present: Vec<_> = c.wings.iter().filter(|w| wings.contains(&w.wing)).collect();
        present.sort_by_key(|w| std::cmp::Reverse(w.strength));
        let room = format!("entity:{}", c.entity);
        for (i, a) in present.iter().enumerate() {
            for b in &present[i + 1..] {
                let ends: Ends = (
                    (norm_wing(&a.display), room.clone()),
                    (norm_wing(&b.display), room.clone()),
                );
                if known.contains(&ends) {
                    continue;
                }
                let mut counts = Map::new();
                counts.insert(a.display.clone(), json!(a.strength));
                counts.insert(b.display.clone(), json!(b.strength));
                rows.push(ProposedTunnel {
                    entity: c.entity.clone(),
                    wing_a: a.display.clone(),
                    wing_b: b.display.clone(),
                    strength: a.strength.min(b.strength),
                    counts: Value::Object(counts),
                });
            }
        }
    }
    let rank = |r: &ProposedTunnel| {
        (
            std::cmp::Reverse(r.strength),
            r.entity.clone(),
            r.wing_a.clone(),
            r.wing_b.clone(),
        )
    };
    rows.sort_by_key(rank);
    let mut covered: HashSet<String> = existing_tunnels
        .iter()
        .filter(|t| t.is_object())
        .filter_map(tunnel_endpoints)
        .flat_map(|(a, b)| [a.0, b.0])
        .filter(|w| !w.is_empty())
        .collect();
    let mut chosen: Vec<usize> = Vec::new();
    for (i, row) in rows.iter().enumerate() {
        if chosen.len() >= max_tunnels {
            break;
        }
        let ends = [norm_wing(&row.wing_a), norm_wing(&row.wing_b)];
        if ends.iter().any(|w| !covered.contains(w)) {
            chosen.push(i);
            covered.extend(ends);
        }
    }
    for i in 0..rows.len() {
        if chosen.len() >= max_tunnels {
            break;
        }
        if !chosen.contains(&i) {
            chosen.push(i);
        }
    }
    let mut tunnels: Vec<ProposedTunnel> = chosen.iter().map(|&i| rows[i].clone()).collect();
    tunnels.sort_by_key(rank);
    TunnelPlan {
        schema_version: PROPOSAL_SCHEMA_VERSION,
        planned_at: iso_timestamp(now),
        candidates: rows.len(),
        entity_spellings: connection_spellings(existing_tunnels, &names)
            .into_iter()
            .collect(),
        tunnels,
    }
}

/// A plan as read back from its file: its rows and the spellings it was judged against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SavedPlan {
    /// Each row's (entity, wing_a, wing_b).
    pub rows: Vec<(String, String, String)>,
    /// The plan's entity spellings.
    pub entity_spellings: Vec<String>,
}

/// 3.11's `load_proposal` and the checks of `apply_proposal`: the rows of a plan file's JSON,
/// or 3.11's message saying what is wrong with it.
pub fn plan_from_file(plan: &Value) -> std::result::Result<SavedPlan, String> {
    let rows = match plan.get("tunnels") {
        Some(Value::Array(rows)) if !rows.is_empty() => rows,
        _ => return Err("tunnel proposal has no tunnels".to_string()),
    };
    let mut parsed = Vec::new();
    for row in rows {
        if !row.is_object() {
            return Err(format!(
                "proposal row is not an object: {}",
                python_value_repr(row)
            ));
        }
        let mut fields = Vec::new();
        for key in ["entity", "wing_a", "wing_b"] {
            let value = text_or_empty(row.get(key)).trim().to_string();
            if value.is_empty() {
                return Err(format!(
                    "proposal row is missing '{key}': {}",
                    python_value_repr(row)
                ));
            }
            fields.push(value);
        }
        // 3.11 applies the row's values as written, not trimmed.
        let raw = |key: &str| text_or_empty(row.get(key));
        parsed.push((raw("entity"), raw("wing_a"), raw("wing_b")));
    }
    let entity_spellings = match plan.get("entity_spellings") {
        None | Some(Value::Null) if plan.get("schema_version") == Some(&json!(2)) => {
            return Err("tunnel proposal is missing entity_spellings; re-run propose".to_string());
        }
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) if items.iter().all(Value::is_string) => items
            .iter()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect(),
        Some(_) => return Err("tunnel proposal has invalid entity_spellings".to_string()),
    };
    Ok(SavedPlan {
        rows: parsed,
        entity_spellings,
    })
}

/// What applying a plan did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct PlanApplied {
    /// Tunnels created.
    pub created: usize,
    /// Rows whose link existed already (possibly under another spelling).
    pub existing: usize,
    /// Rows skipped because a wing no longer has drawers.
    pub stale: usize,
}

/// The plan's rows whose two wings still have drawers (3.11's stale-wing filter).
pub fn fresh_rows<'a>(
    plan: &'a SavedPlan,
    existing_wings: &BTreeSet<String>,
) -> Vec<&'a (String, String, String)> {
    let wings: HashSet<String> = existing_wings.iter().map(|w| norm_wing(w)).collect();
    plan.rows
        .iter()
        .filter(|(_, a, b)| wings.contains(&norm_wing(a)) && wings.contains(&norm_wing(b)))
        .collect()
}

/// 3.11's `apply_proposal` on the stored tunnel records: each row of a wing that still has
/// drawers becomes an entity tunnel unless a like link exists (or an earlier row made one).
pub fn apply_plan(
    plan: &SavedPlan,
    existing_wings: &BTreeSet<String>,
    records: &mut Vec<Value>,
    now: DateTime<Utc>,
) -> PlanApplied {
    let fresh = fresh_rows(plan, existing_wings);
    let mut applied = PlanApplied {
        stale: plan.rows.len() - fresh.len(),
        ..PlanApplied::default()
    };
    let mut extra = plan.entity_spellings.clone();
    extra.extend(plan.rows.iter().map(|(e, _, _)| e.clone()));
    let mut known = LinkIndex::seeded(records, &extra);
    for (entity, wing_a, wing_b) in fresh {
        let room = format!("entity:{entity}");
        let ends: Ends = (
            (norm_wing(wing_a), room.clone()),
            (norm_wing(wing_b), room.clone()),
        );
        if known.contains(&ends) {
            applied.existing += 1;
            continue;
        }
        known.add(ends);
        let tunnel = NewTunnel::new(wing_a.clone(), room.clone(), wing_b.clone(), room)
            .with_label(format!("{ENTITY_TUNNEL_LABEL}: {entity}"))
            .with_kind("entity");
        match upsert_tunnel_record(records, &tunnel, now) {
            Ok(_) => applied.created += 1,
            Err(e) => tracing::warn!(error = %e, entity, "skipping a proposal row"),
        }
    }
    applied
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hallway(wing: &str, a: &str, b: &str, n: i64) -> Value {
        json!({"wing": wing, "entity_a": a, "entity_b": b, "co_occurrence_count": n})
    }

    fn wings(names: &[&str]) -> BTreeSet<String> {
        names.iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn rows_rank_by_the_weaker_side_and_skip_existing_links() {
        let hallways = vec![
            hallway("alpha", "Aya", "Lumi", 5),
            hallway("beta", "Aya", "Quintavex", 4),
            hallway("gamma", "Lumi", "Quintavex", 4),
            hallway("alpha", "Quintavex", "Zorbrook", 3),
        ];
        let plan = propose(
            &hallways,
            &wings(&["alpha", "beta", "gamma"]),
            60,
            &[],
            Utc::now(),
        );
        let rows: Vec<(String, String, String, i64)> = plan
            .tunnels
            .iter()
            .map(|t| {
                (
                    t.entity.clone(),
                    t.wing_a.clone(),
                    t.wing_b.clone(),
                    t.strength,
                )
            })
            .collect();
        assert_eq!(
            rows,
            vec![
                ("Aya".into(), "alpha".into(), "beta".into(), 4),
                ("Lumi".into(), "alpha".into(), "gamma".into(), 4),
                ("Quintavex".into(), "beta".into(), "gamma".into(), 4),
                ("Quintavex".into(), "beta".into(), "alpha".into(), 3),
                ("Quintavex".into(), "gamma".into(), "alpha".into(), 3),
            ]
        );
        assert_eq!(plan.candidates, 5);
        // Applying it, then proposing again, proposes nothing.
        let saved = plan_from_file(&serde_json::to_value(&plan).unwrap()).unwrap();
        let mut records = Vec::new();
        let all = wings(&["alpha", "beta", "gamma"]);
        let applied = apply_plan(&saved, &all, &mut records, Utc::now());
        assert_eq!(applied.created, 5);
        assert!(
            propose(&hallways, &all, 60, &records, Utc::now())
                .tunnels
                .is_empty()
        );
        let again = apply_plan(&saved, &all, &mut records, Utc::now());
        assert_eq!((again.created, again.existing), (0, 5));
    }

    #[test]
    fn bad_plans_get_3_11s_messages() {
        let err = |v: Value| plan_from_file(&v).unwrap_err();
        assert_eq!(err(json!({})), "tunnel proposal has no tunnels");
        assert_eq!(
            err(json!({"tunnels": [3]})),
            "proposal row is not an object: 3"
        );
        assert_eq!(
            err(json!({"tunnels": [{"entity": "", "wing_a": "alpha", "wing_b": "gamma"}]})),
            "proposal row is missing 'entity': {'entity': '', 'wing_a': 'alpha', 'wing_b': 'gamma'}"
        );
        assert_eq!(
            err(
                json!({"schema_version": 2, "tunnels": [{"entity": "A", "wing_a": "a", "wing_b": "b"}]})
            ),
            "tunnel proposal is missing entity_spellings; re-run propose"
        );
    }
}
