//! `audit` as a Palace method (the palace's counts, links and graph gathered for
//! [`crate::palace_audit::audit`]), and the prunes its findings recommend.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use serde_json::Value;

use super::Palace;
use crate::error::Result;
use crate::filter::DrawerFilter;
use crate::layout::PalaceLayout;
use crate::palace_audit::{
    AuditInputs, GraphCounts, HallwayPrune, ProjectMix, TunnelPrune, audit,
    hallway_spelling_artifacts, prune_hallway_records, prune_tunnel_records, tunnel_artifacts,
};
use crate::transcript_projects::{claude_project_key, resolve_target};

/// Largest projects a mixed transcript wing names.
const MIX_TOP: usize = 5;

/// Whether a source path is a Claude Code or Codex transcript (3.11's SQL `LIKE` patterns,
/// ASCII case-insensitive).
fn is_transcript_path(source: &str) -> bool {
    let lower = source.to_ascii_lowercase();
    let after = |a: &str, b: &str| {
        lower
            .find(a)
            .is_some_and(|i| lower[i + a.len()..].contains(b))
    };
    after(".claude", "projects") || after(".codex", "sessions")
}

impl Palace {
    /// MemPalace 3.11's `audit`: a read-only organisation score (rooms, naming, tunnels,
    /// hallways, knowledge graph, overall) with findings, as 3.11's JSON report. A folder
    /// with no palace is [`crate::PalaceError::NoPalace`].
    pub async fn audit(&self) -> Result<Value> {
        self.require_palace().await?;
        let mut wing_rooms: BTreeMap<String, BTreeMap<String, u64>> = BTreeMap::new();
        for c in self.store.room_counts(&DrawerFilter::all()).await? {
            let wing = if c.wing.is_empty() {
                "?".to_string()
            } else {
                c.wing
            };
            let room = if c.room.is_empty() {
                "?".to_string()
            } else {
                c.room
            };
            *wing_rooms.entry(wing).or_default().entry(room).or_default() += c.count;
        }
        // Transcript drawers per (wing, source file), for the mixed-wing check.
        let mut transcripts: BTreeMap<(String, String), u64> = BTreeMap::new();
        self.scan(&DrawerFilter::all(), |d| {
            if !d.metadata.wing.is_empty() && is_transcript_path(&d.metadata.source_file) {
                *transcripts
                    .entry((d.metadata.wing, d.metadata.source_file))
                    .or_default() += 1;
            }
        })
        .await?;
        let wings: std::collections::BTreeSet<String> =
            transcripts.keys().map(|(w, _)| w.clone()).collect();
        let mut drawers: BTreeMap<&str, u64> = BTreeMap::new();
        let mut per_wing: BTreeMap<&str, (Vec<String>, BTreeMap<String, u64>)> = BTreeMap::new();
        for ((wing, source), n) in &transcripts {
            *drawers.entry(wing).or_default() += n;
            let key = source
                .contains(".claude")
                .then(|| claude_project_key(source))
                .flatten();
            if let Some(key) = key {
                let (target, _) = resolve_target(&key, &wings);
                let (order, counts) = per_wing.entry(wing).or_default();
                if !counts.contains_key(&target) {
                    order.push(target.clone());
                }
                *counts.entry(target).or_default() += n;
            }
        }
        let project_mix = per_wing
            .into_iter()
            .map(|(wing, (order, counts))| {
                let mut top: Vec<(String, u64)> =
                    order.into_iter().map(|t| (t.clone(), counts[&t])).collect();
                top.sort_by_key(|(_, n)| std::cmp::Reverse(*n));
                top.truncate(MIX_TOP);
                (
                    wing.to_string(),
                    ProjectMix {
                        projects: counts.len() as u64,
                        drawers: drawers[wing],
                        top,
                    },
                )
            })
            .collect();
        let tunnels = self.links.tunnel_records().await?;
        let hallways = self.links.hallway_records().await?;
        let graph = if self.kg.exists().await? {
            let stats = self.kg.stats().await?;
            let file = self.path.join(PalaceLayout::KNOWLEDGE_GRAPH);
            Some(GraphCounts {
                path: if file.is_file() {
                    file.display().to_string()
                } else {
                    "knowledge graph".to_string()
                },
                entities: stats.entities,
                triples: stats.triples,
                current_facts: stats.current_facts,
                open_predicates: stats.current_predicates,
            })
        } else {
            None
        };
        Ok(audit(&AuditInputs {
            palace: std::path::absolute(&self.path)
                .unwrap_or_else(|_| self.path.clone())
                .display()
                .to_string(),
            counts_source: self.store.backend_name().to_string(),
            wing_rooms,
            project_mix: Some(project_mix),
            tunnels,
            hallways,
            graph,
        }))
    }

    /// `tunnels prune`: the tunnels on a generic entity, with an end in a wing that has no
    /// drawers, or duplicating another spelling of a kept tunnel; removed when `apply` (one
    /// locked rewrite of the records, the most followed first, as 3.11 saves them).
    pub async fn prune_tunnels(&self, apply: bool) -> Result<TunnelPrune> {
        self.require_palace().await?;
        let wings = self.drawer_wings().await?;
        if !apply {
            return Ok(tunnel_artifacts(
                &self.links.tunnel_records().await?,
                &wings,
            ));
        }
        let _guard = self.write_lock.acquire().await?;
        let report = Arc::new(Mutex::new(TunnelPrune::default()));
        let slot = Arc::clone(&report);
        self.links
            .edit_tunnel_records(Box::new(move |records| {
                let mut pruned = records.clone();
                let prune = prune_tunnel_records(&mut pruned, &wings);
                let changed = prune.removed > 0;
                if changed {
                    *records = pruned;
                }
                *slot.lock().unwrap_or_else(|e| e.into_inner()) = prune;
                changed
            }))
            .await?;
        let prune = report.lock().unwrap_or_else(|e| e.into_inner()).clone();
        Ok(prune)
    }

    /// `hallways --prune-spellings`: hallways joining two spellings of one entity, and weaker
    /// spellings of one association in a wing; removed when `apply` (the strongest of each
    /// association kept under its canonical spellings, in one locked rewrite).
    pub async fn prune_hallway_spellings(&self, apply: bool) -> Result<HallwayPrune> {
        self.require_palace().await?;
        if !apply {
            return Ok(hallway_spelling_artifacts(
                &self.links.hallway_records().await?,
            ));
        }
        let _guard = self.write_lock.acquire().await?;
        let report = Arc::new(Mutex::new(HallwayPrune::default()));
        let slot = Arc::clone(&report);
        self.links
            .edit_hallway_records(Box::new(move |records| {
                let prune = prune_hallway_records(records);
                let changed = prune.self_links + prune.duplicates > 0;
                *slot.lock().unwrap_or_else(|e| e.into_inner()) = prune;
                changed
            }))
            .await?;
        let prune = report.lock().unwrap_or_else(|e| e.into_inner()).clone();
        Ok(prune)
    }
}
