//! `rooms apply`: a wing's drawers given the nearest room of its room set, by their stored
//! vectors (no embedding of drawers, no LLM).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde::Serialize;

use super::Palace;
use super::drawer_moves::DrawersMoved;
use crate::closets::ClosetMove;
use crate::error::Result;
use crate::filter::DrawerFilter;
use crate::room_sets::{SetRoom, nearest_room};
use crate::validation::validate_name;
use crate::vector_store::DrawerMove;

/// Drawers whose vectors are read per store call.
const VECTOR_BATCH: usize = 500;
/// Examples kept per destination room.
const EXAMPLES_PER_ROOM: usize = 5;

/// What `rooms apply` would do (or did) to a wing.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct RoomPlan {
    /// The wing.
    pub wing: String,
    /// Each room's prototype source, in set order: "centroid of N" or "description".
    pub prototypes: Vec<(String, String)>,
    /// Drawers looked at.
    pub total: u64,
    /// Drawers that stay (outside the rooms to reclassify, or already in their nearest room).
    pub kept: u64,
    /// Drawers whose nearest room was below the threshold (they stay).
    pub below_threshold: u64,
    /// Drawers with no stored vector (they stay).
    pub no_embedding: u64,
    /// Drawers per room after the moves.
    pub per_room: BTreeMap<String, u64>,
    /// The moves: (drawer id, old room, new room).
    pub changes: Vec<(String, String, String)>,
    /// Up to five moves per destination room (in the order rooms got their first), with the
    /// cosine and the drawer's text.
    pub examples: Vec<(String, Vec<(f64, String)>)>,
    /// Closets that follow: (source file, old room, new room) where every drawer of that file
    /// and room goes to one room.
    pub closet_targets: Vec<(String, String, String)>,
    /// Moved drawers of files that only partly moved (their closets stay put).
    pub partly_moved: u64,
}

/// 3.11's `closet_targets`: a (file, room) whose drawers all go to one room takes its closets
/// along; one that splits or keeps some drawers does not (its moved drawers are counted).
fn closet_targets(
    source_moves: BTreeMap<(String, String), BTreeMap<String, u64>>,
) -> (Vec<(String, String, String)>, u64) {
    let mut targets = Vec::new();
    let mut partly = 0;
    for ((source, old), counts) in source_moves {
        let stayed = counts.get("").copied().unwrap_or(0);
        let dests: Vec<(&String, &u64)> = counts.iter().filter(|(r, _)| !r.is_empty()).collect();
        if dests.is_empty() {
            continue;
        }
        if dests.len() > 1 || stayed > 0 {
            partly += dests.iter().map(|(_, n)| **n).sum::<u64>();
        } else {
            targets.push((source, old, dests[0].0.clone()));
        }
    }
    (targets, partly)
}

impl Palace {
    /// Plans `rooms apply` for `wing`: every drawer of the wing whose room is in `from_rooms`
    /// (`None`: any room) goes to its nearest room of `rooms` when the cosine is at least
    /// `threshold`. Prototypes are the mean stored vector of a room's exemplar drawers (any
    /// wing), else its embedded [`SetRoom::prototype_text`]. Reads only.
    pub async fn plan_room_reclassification(
        &self,
        wing: &str,
        rooms: &[SetRoom],
        threshold: f64,
        from_rooms: Option<&BTreeSet<String>>,
    ) -> Result<RoomPlan> {
        validate_name("wing", wing)?;
        self.require_palace().await?;
        let wanted: Vec<String> = rooms.iter().flat_map(|r| r.exemplars.clone()).collect();
        let stored: HashMap<String, Vec<f32>> =
            self.store.vectors(&wanted).await?.into_iter().collect();
        let mut prototypes: Vec<(String, Vec<f64>)> = Vec::with_capacity(rooms.len());
        let mut sources = Vec::with_capacity(rooms.len());
        let mut by_description = Vec::new();
        for (i, room) in rooms.iter().enumerate() {
            let found: Vec<&Vec<f32>> = room
                .exemplars
                .iter()
                .filter_map(|id| stored.get(id))
                .collect();
            if found.is_empty() {
                by_description.push(i);
                prototypes.push((room.name.clone(), Vec::new()));
                sources.push((room.name.clone(), "description".to_string()));
                continue;
            }
            let mut mean = vec![0.0f64; found[0].len()];
            for v in &found {
                for (m, x) in mean.iter_mut().zip(v.iter()) {
                    *m += f64::from(*x);
                }
            }
            for m in &mut mean {
                *m /= found.len() as f64;
            }
            prototypes.push((room.name.clone(), mean));
            sources.push((
                room.name.clone(),
                format!("centroid of {}", room.exemplars.len()),
            ));
        }
        if !by_description.is_empty() {
            let texts: Vec<String> = by_description
                .iter()
                .map(|&i| rooms[i].prototype_text())
                .collect();
            let vectors = self.embed_all(&texts).await?;
            for (&i, v) in by_description.iter().zip(vectors) {
                prototypes[i].1 = v.into_iter().map(f64::from).collect();
            }
        }
        let mut rows: Vec<(String, String, String, String)> = Vec::new();
        self.scan(&DrawerFilter::wing(wing), |d| {
            rows.push((d.id, d.metadata.room, d.text, d.metadata.source_file));
        })
        .await?;
        let mut source_moves: BTreeMap<(String, String), BTreeMap<String, u64>> = BTreeMap::new();
        let mut plan = RoomPlan {
            wing: wing.to_string(),
            prototypes: sources,
            ..RoomPlan::default()
        };
        for batch in rows.chunks(VECTOR_BATCH) {
            let ids: Vec<String> = batch.iter().map(|(id, _, _, _)| id.clone()).collect();
            let vectors: HashMap<String, Vec<f32>> =
                self.store.vectors(&ids).await?.into_iter().collect();
            for (id, old, text, source) in batch {
                plan.total += 1;
                let mut record = |dest: &str| {
                    if !source.is_empty() {
                        *source_moves
                            .entry((source.clone(), old.clone()))
                            .or_default()
                            .entry(dest.to_string())
                            .or_default() += 1;
                    }
                };
                if from_rooms.is_some_and(|rooms| !rooms.contains(old)) {
                    plan.kept += 1;
                    *plan.per_room.entry(old.clone()).or_default() += 1;
                    record("");
                    continue;
                }
                let Some(vector) = vectors.get(id) else {
                    plan.no_embedding += 1;
                    *plan.per_room.entry(old.clone()).or_default() += 1;
                    record("");
                    continue;
                };
                let (room, confidence) = nearest_room(vector, &prototypes);
                if room.is_empty() || confidence < threshold {
                    plan.below_threshold += 1;
                    *plan.per_room.entry(old.clone()).or_default() += 1;
                    record("");
                    continue;
                }
                *plan.per_room.entry(room.to_string()).or_default() += 1;
                if room == old {
                    plan.kept += 1;
                    record("");
                    continue;
                }
                record(room);
                plan.changes
                    .push((id.clone(), old.clone(), room.to_string()));
                let slot = match plan.examples.iter().position(|(r, _)| r == room) {
                    Some(i) => i,
                    None => {
                        plan.examples.push((room.to_string(), Vec::new()));
                        plan.examples.len() - 1
                    }
                };
                if plan.examples[slot].1.len() < EXAMPLES_PER_ROOM {
                    plan.examples[slot].1.push((confidence, text.clone()));
                }
            }
        }
        (plan.closet_targets, plan.partly_moved) = closet_targets(source_moves);
        Ok(plan)
    }

    /// Applies a [`RoomPlan`]: the closets that follow move to their new rooms, then each
    /// planned drawer moves (ids, text and vectors kept). Running a plan again moves nothing
    /// twice.
    pub async fn apply_room_plan(&self, plan: &RoomPlan) -> Result<DrawersMoved> {
        for (_, _, room) in &plan.closet_targets {
            validate_name("room", room)?;
        }
        let moves: Vec<DrawerMove> = plan
            .changes
            .iter()
            .map(|(id, _, room)| DrawerMove {
                id: id.clone(),
                wing: plan.wing.clone(),
                room: room.clone(),
            })
            .collect();
        let closet_moves: Vec<ClosetMove> = plan
            .closet_targets
            .iter()
            .map(|(source, old, room)| ClosetMove {
                source_file: source.clone(),
                from_wing: plan.wing.clone(),
                wing: plan.wing.clone(),
                from_room: Some(old.clone()),
                room: Some(room.clone()),
            })
            .collect();
        // Closets first: a failed drawer move is finished by running the plan again.
        let closets = if closet_moves.is_empty() {
            0
        } else {
            self.require_palace().await?;
            let _guard = self.write_lock.acquire().await?;
            self.closets.relocate_sources(&closet_moves).await?
        };
        let moved = self.move_drawers(&moves).await?;
        Ok(DrawersMoved {
            drawers: moved.drawers,
            closets: moved.closets + closets,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closets_follow_only_a_file_room_that_moved_whole_to_one_room() {
        let mut moves: BTreeMap<(String, String), BTreeMap<String, u64>> = BTreeMap::new();
        let mut add = |source: &str, old: &str, dest: &str, n: u64| {
            *moves
                .entry((source.into(), old.into()))
                .or_default()
                .entry(dest.into())
                .or_default() += n;
        };
        add("/whole.md", "general", "testing", 3);
        add("/split.md", "general", "testing", 1);
        add("/split.md", "general", "release", 2);
        add("/partly.md", "general", "testing", 2);
        add("/partly.md", "general", "", 1);
        add("/stays.md", "general", "", 4);
        let (targets, partly) = closet_targets(moves);
        assert_eq!(
            targets,
            vec![(
                "/whole.md".to_string(),
                "general".to_string(),
                "testing".to_string()
            )]
        );
        assert_eq!(
            partly, 5,
            "the moved drawers of the split and the partly moved file"
        );
    }
}
