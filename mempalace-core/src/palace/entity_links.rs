//! Links built from the names drawers mention: each wing's hallways (`hallways --rebuild`,
//! and after `mine`), the miner's entity tunnels, and `tunnels propose`.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use chrono::Utc;
use serde_json::Value;

use super::Palace;
use crate::cancellation::Cancellation;
use crate::drawer::AddedBy;
use crate::entity_extraction::{EntityTagger, KNOWN_ENTITIES_FILE, structural_entities};
use crate::error::{PalaceError, Result};
use crate::filter::DrawerFilter;
use crate::hallway_builder::{
    DrawerNames, WingPairs, configured_hallway_min_count, replace_wing_hallways, wing_hallways,
};
use crate::layout::PalaceLayout;
use crate::palace_links::{Hallway, hallways_from_records, upsert_tunnel_record};
use crate::tunnel_links::wing_entity_tunnels;
use crate::tunnel_proposal::{
    PlanApplied, TunnelPlan, apply_plan, fresh_rows, plan_from_file, propose,
};

/// How a wing's hallways are rebuilt.
#[derive(Debug, Clone, Default)]
pub struct HallwayRebuild {
    /// Drawers a pair of names must share; `None`: `MEMPALACE_KG_HALLWAY_MIN_COUNT`, else
    /// `hallway_min_count` in `config.json`, else 2 (3.11's order).
    pub min_count: Option<u32>,
    /// Raised, the rebuild stops between pages of drawers and changes nothing.
    pub cancel: Cancellation,
}

/// One wing's part in a hallway rebuild.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct WingHallways {
    /// The wing.
    pub wing: String,
    /// Its hallways now.
    pub hallways: usize,
}

/// What applying a saved tunnel plan found.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum ProposalOutcome {
    /// There is no saved plan at this path.
    Missing {
        /// Where the plan was looked for.
        path: PathBuf,
    },
    /// Every row names a wing that has no drawers any more.
    AllStale {
        /// Rows in the plan.
        rows: usize,
    },
    /// The plan's rows were applied.
    Applied(PlanApplied),
}

impl Palace {
    /// The wings that have drawers.
    pub(super) async fn drawer_wings(&self) -> Result<BTreeSet<String>> {
        Ok(self
            .store
            .room_counts(&DrawerFilter::all())
            .await?
            .into_iter()
            .map(|c| c.wing)
            .filter(|w| !w.is_empty())
            .collect())
    }

    /// 3.11's `compute_hallways_for_wing`: rebuilds `wing`'s hallways from its drawers'
    /// names, replacing the wing's old ones in one locked rewrite (the pairs are counted
    /// before the lock is taken). Mined drawers filed before drawers carried names are named
    /// from their text first, as the miner would have. A wing without drawers, or a rebuild
    /// cancelled midway, is left as it is.
    pub async fn rebuild_wing_hallways(
        &self,
        wing: &str,
        options: &HallwayRebuild,
    ) -> Result<Vec<Hallway>> {
        self.require_palace().await?;
        let min_count = options
            .min_count
            .unwrap_or_else(configured_hallway_min_count);
        let mut tagger: Option<EntityTagger> = None;
        let mut seen: std::collections::HashSet<String> = std::collections::HashSet::new();
        let mut drawers: Vec<DrawerNames> = Vec::new();
        let cancel = options.cancel.clone();
        self.scan_until(&DrawerFilter::wing(wing), |d| {
            if cancel.is_cancelled() {
                return std::ops::ControlFlow::Break(());
            }
            if !seen.insert(d.id) {
                return std::ops::ControlFlow::Continue(());
            }
            let m = d.metadata;
            let entities = if m.entities.is_empty() && m.added_by == AddedBy::Mine {
                if m.conversation.is_some() {
                    structural_entities(&d.text)
                } else {
                    tagger
                        .get_or_insert_with(|| {
                            EntityTagger::from_registry(
                                &crate::locations::config_dir().join(KNOWN_ENTITIES_FILE),
                            )
                        })
                        .tag(&d.text)
                }
            } else {
                m.entities
            };
            drawers.push(DrawerNames {
                room: m.room,
                entities,
            });
            std::ops::ControlFlow::Continue(())
        })
        .await?;
        if drawers.is_empty() || options.cancel.is_cancelled() {
            return Ok(Vec::new());
        }
        let pairs = WingPairs::count(&drawers);
        drop(drawers);
        let slot: Arc<Mutex<Vec<Value>>> = Arc::default();
        let built = Arc::clone(&slot);
        let wing_name = wing.to_string();
        self.links
            .edit_hallway_records(Box::new(move |records| {
                let created = wing_hallways(&wing_name, &pairs, min_count, records, Utc::now());
                *built.lock().unwrap_or_else(|e| e.into_inner()) = created.clone();
                let before = records.len();
                replace_wing_hallways(records, &wing_name, created);
                before > 0 || !records.is_empty()
            }))
            .await?;
        let created = slot.lock().unwrap_or_else(|e| e.into_inner()).clone();
        Ok(hallways_from_records(&created, None))
    }

    /// `hallways --rebuild`: every wing's hallways rebuilt (wings in name order), with how
    /// many each has now.
    pub async fn rebuild_hallways(&self, options: &HallwayRebuild) -> Result<Vec<WingHallways>> {
        self.require_palace().await?;
        let mut out = Vec::new();
        for wing in self.drawer_wings().await? {
            let hallways = self.rebuild_wing_hallways(&wing, options).await?.len();
            out.push(WingHallways { wing, hallways });
        }
        Ok(out)
    }

    /// The miner's entity tunnels (3.11's `_compute_entity_tunnels_for_wing`): `wing` linked
    /// to each other wing whose hallways share a strong entity with it, in one locked
    /// rewrite; how many tunnels were created or refreshed.
    pub async fn link_wing_entities(&self, wing: &str) -> Result<usize> {
        let hallways = self.links.hallway_records().await?;
        let tunnels = wing_entity_tunnels(wing, &hallways);
        if tunnels.is_empty() {
            return Ok(0);
        }
        let count = Arc::new(Mutex::new(0usize));
        let slot = Arc::clone(&count);
        self.links
            .edit_tunnel_records(Box::new(move |records| {
                let now = Utc::now();
                let made = tunnels
                    .iter()
                    .filter(|t| upsert_tunnel_record(records, t, now).is_ok())
                    .count();
                *slot.lock().unwrap_or_else(|e| e.into_inner()) = made;
                made > 0
            }))
            .await?;
        let made = *count.lock().unwrap_or_else(|e| e.into_inner());
        Ok(made)
    }

    /// Where `tunnels propose` saves its plan (`tunnels/proposal.json` in the palace folder,
    /// as 3.11 does).
    pub fn tunnel_proposal_path(&self) -> PathBuf {
        PalaceLayout::new(&self.path).tunnel_proposal()
    }

    /// `tunnels propose`: a plan of at most `max_tunnels` entity tunnels worth making (see
    /// [`crate::tunnel_proposal`]). Nothing is written; [`Palace::save_tunnel_proposal`]
    /// keeps it for review.
    pub async fn propose_tunnels(&self, max_tunnels: usize) -> Result<TunnelPlan> {
        self.require_palace().await?;
        let wings = self.drawer_wings().await?;
        let hallways = self.links.hallway_records().await?;
        let tunnels = self.links.tunnel_records().await?;
        Ok(propose(
            &hallways,
            &wings,
            max_tunnels,
            &tunnels,
            Utc::now(),
        ))
    }

    /// Saves a plan where `tunnels propose --yes` reads it (replacing the file atomically);
    /// its path.
    pub fn save_tunnel_proposal(&self, plan: &TunnelPlan) -> Result<PathBuf> {
        let path = self.tunnel_proposal_path();
        let io = |e: std::io::Error| PalaceError::io(&path, e);
        let folder = path.parent().unwrap_or(&self.path).to_path_buf();
        std::fs::create_dir_all(&folder).map_err(io)?;
        let text = serde_json::to_string_pretty(plan)
            .map_err(|e| PalaceError::store("palace-links", "save_tunnel_proposal", e))?;
        let mut file = tempfile::NamedTempFile::new_in(&folder).map_err(io)?;
        std::io::Write::write_all(&mut file, text.as_bytes()).map_err(io)?;
        file.persist(&path).map_err(|e| io(e.error))?;
        Ok(path)
    }

    /// `tunnels propose --yes`: the saved plan's rows made into entity tunnels (rows of wings
    /// that no longer have drawers skipped; links that exist in any spelling not made twice).
    /// A plan the user broke while editing is [`PalaceError::InvalidInput`] with 3.11's
    /// message.
    pub async fn apply_tunnel_proposal(&self) -> Result<ProposalOutcome> {
        self.require_palace().await?;
        let path = self.tunnel_proposal_path();
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(ProposalOutcome::Missing { path });
            }
            Err(e) => return Err(PalaceError::io(&path, e)),
        };
        let json: Value = serde_json::from_str(&text)
            .map_err(|e| PalaceError::invalid("proposal", e.to_string()))?;
        let plan = plan_from_file(&json).map_err(|m| PalaceError::invalid("proposal", m))?;
        let wings = self.drawer_wings().await?;
        if fresh_rows(&plan, &wings).is_empty() {
            return Ok(ProposalOutcome::AllStale {
                rows: plan.rows.len(),
            });
        }
        let result = Arc::new(Mutex::new(PlanApplied::default()));
        let slot = Arc::clone(&result);
        self.links
            .edit_tunnel_records(Box::new(move |records| {
                let applied = apply_plan(&plan, &wings, records, Utc::now());
                let changed = applied.created > 0;
                *slot.lock().unwrap_or_else(|e| e.into_inner()) = applied;
                changed
            }))
            .await?;
        let applied = result.lock().unwrap_or_else(|e| e.into_inner()).clone();
        Ok(ProposalOutcome::Applied(applied))
    }
}
