//! Moving drawers between wings and rooms without re-embedding them; their closets follow.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::Palace;
use crate::closets::ClosetMove;
use crate::drawer::Drawer;
use crate::error::Result;
use crate::validation::{validate_name, validate_record_id};
use crate::vector_store::DrawerMove;

/// What [`Palace::move_drawers`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DrawersMoved {
    /// Drawers moved (ids not in the palace are skipped).
    pub drawers: usize,
    /// Closets that followed their source file's drawers.
    pub closets: usize,
}

/// The closet moves that follow `moved` drawers (each with its new place): a source file's
/// closets in a drawer's old wing go to that drawer's new wing, when all of the file's moved
/// drawers from that wing go to one wing.
pub(super) fn closets_following(moved: &[(Drawer, DrawerMove)]) -> Vec<ClosetMove> {
    let mut by_source: BTreeMap<(&str, &str), Option<&str>> = BTreeMap::new();
    for (drawer, m) in moved {
        let source = drawer.metadata.source_file.as_str();
        let from = drawer.metadata.wing.as_str();
        if source.is_empty() || from == m.wing {
            continue;
        }
        by_source
            .entry((source, from))
            .and_modify(|to| {
                if *to != Some(m.wing.as_str()) {
                    *to = None;
                }
            })
            .or_insert(Some(m.wing.as_str()));
    }
    by_source
        .into_iter()
        .filter_map(|((source, from), to)| {
            to.map(|wing| ClosetMove {
                source_file: source.to_string(),
                from_wing: from.to_string(),
                wing: wing.to_string(),
                from_room: None,
                room: None,
            })
        })
        .collect()
}

/// Every move's id, wing and room checked, before anything is written.
fn check_moves(moves: &[DrawerMove]) -> Result<()> {
    for m in moves {
        validate_record_id("drawer", &m.id)?;
        validate_name("wing", &m.wing)?;
        validate_name("room", &m.room)?;
    }
    Ok(())
}

/// `moves` with one move per id, the last one given winning (as applied one by one).
fn last_move_per_id(moves: &[DrawerMove]) -> Vec<DrawerMove> {
    let mut seen = std::collections::HashSet::new();
    let mut kept: Vec<DrawerMove> = moves
        .iter()
        .rev()
        .filter(|m| seen.insert(m.id.as_str()))
        .cloned()
        .collect();
    kept.reverse();
    kept
}

impl Palace {
    /// Moves drawers to new wings and rooms, keeping their ids, text, vectors and the rest of
    /// their metadata; the closets of their source files follow. Every id and name is checked
    /// before anything is written; ids not in the palace are skipped.
    pub async fn move_drawers(&self, moves: &[DrawerMove]) -> Result<DrawersMoved> {
        check_moves(moves)?;
        if moves.is_empty() {
            return Ok(DrawersMoved::default());
        }
        self.require_palace().await?;
        let _guard = self.write_lock.acquire().await?;
        self.move_drawers_locked(moves).await
    }

    /// [`Self::move_drawers`] that first runs `before_write` under the palace write lock (e.g.
    /// to record that a long move has started), so nothing is recorded when the palace is
    /// busy; an error from it moves nothing.
    pub async fn move_drawers_after(
        &self,
        moves: &[DrawerMove],
        before_write: impl FnOnce() -> Result<()> + Send,
    ) -> Result<DrawersMoved> {
        check_moves(moves)?;
        self.require_palace().await?;
        let _guard = self.write_lock.acquire().await?;
        before_write()?;
        if moves.is_empty() {
            return Ok(DrawersMoved::default());
        }
        self.move_drawers_locked(moves).await
    }

    /// [`Self::move_drawers`] for a caller that holds the write lock and checked the names.
    pub(super) async fn move_drawers_locked(&self, moves: &[DrawerMove]) -> Result<DrawersMoved> {
        let moves = last_move_per_id(moves);
        let ids: Vec<String> = moves.iter().map(|m| m.id.clone()).collect();
        let stored: BTreeMap<String, Drawer> = self
            .store
            .get(&ids)
            .await?
            .into_iter()
            .map(|d| (d.id.clone(), d))
            .collect();
        let moved: Vec<(Drawer, DrawerMove)> = moves
            .iter()
            .filter_map(|m| stored.get(&m.id).map(|d| (d.clone(), m.clone())))
            .collect();
        // Closets first: should the drawers' move then fail, running it again finds the
        // drawers still in their old wing and moves them (their closets are already there).
        let closet_moves = closets_following(&moved);
        let closets = if closet_moves.is_empty() {
            0
        } else {
            self.closets.relocate_sources(&closet_moves).await?
        };
        let drawers = self.store.relocate(&moves).await?;
        Ok(DrawersMoved { drawers, closets })
    }
}
