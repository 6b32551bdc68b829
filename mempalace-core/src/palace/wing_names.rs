//! `migrate-wings`: wings named before MemPalace 3.11's spelling rule (`_home_me_app`, `-app-`)
//! re-keyed to their normalised spelling, merging into an existing wing of that name.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::Palace;
use super::drawer_moves::DrawersMoved;
use crate::error::Result;
use crate::filter::DrawerFilter;
use crate::validation::{normalize_wing_name, validate_name};
use crate::vector_store::DrawerMove;

/// One wing whose name changes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WingRename {
    /// The stored spelling.
    pub from: String,
    /// The normalised spelling it becomes.
    pub to: String,
    /// Drawers filed under `from`.
    pub drawers: usize,
    /// Whether `to` already holds drawers (the two wings merge).
    pub merges: bool,
}

/// What `migrate-wings` would do, or did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WingNameMigration {
    /// The wings renamed, by stored spelling.
    pub renames: Vec<WingRename>,
    /// What was moved (absent in a dry run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub moved: Option<DrawersMoved>,
}

/// The wing `wing` should be called, when that differs and is a usable name.
fn normalized_target(wing: &str) -> Option<String> {
    let target = normalize_wing_name(wing);
    (!target.is_empty() && target != wing && validate_name("wing", &target).is_ok())
        .then_some(target)
}

impl Palace {
    /// Plans (`apply` false) or applies `migrate-wings`: every wing whose name is not in
    /// MemPalace 3.11's normalised spelling ([`normalize_wing_name`]) is re-keyed to it, its
    /// drawers keeping their ids and vectors, its closets following. Idempotent.
    pub async fn migrate_wing_names(&self, apply: bool) -> Result<WingNameMigration> {
        self.require_palace().await?;
        let _guard = if apply {
            Some(self.write_lock.acquire().await?)
        } else {
            None
        };
        let mut wings = BTreeSet::new();
        let mut moves: Vec<DrawerMove> = Vec::new();
        let mut per_wing: BTreeMap<(String, String), usize> = BTreeMap::new();
        self.scan(&DrawerFilter::all(), |d| {
            let wing = d.metadata.wing;
            if let Some(to) = normalized_target(&wing) {
                *per_wing.entry((wing.clone(), to.clone())).or_default() += 1;
                moves.push(DrawerMove {
                    id: d.id,
                    wing: to,
                    room: d.metadata.room,
                });
            }
            wings.insert(wing);
        })
        .await?;
        let renames = per_wing
            .into_iter()
            .map(|((from, to), drawers)| WingRename {
                merges: wings.contains(&to),
                from,
                to,
                drawers,
            })
            .collect();
        let moved = if apply && !moves.is_empty() {
            Some(self.move_drawers_locked(&moves).await?)
        } else if apply {
            Some(DrawersMoved::default())
        } else {
            None
        };
        Ok(WingNameMigration { renames, moved })
    }
}
