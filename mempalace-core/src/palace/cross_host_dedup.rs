//! The duplicate check when several hosts write one shared store (e.g. one Qdrant collection),
//! where the palace's write lock, a file on one host, cannot serialise them.
//!
//! Each writer checks before it writes, as on one host; two hosts can still both pass that
//! check at once. So after writing, a writer looks again: if a near-identical drawer
//! (similarity ≥ the threshold) that is *earlier* by `(filed_at, id)` exists, it withdraws its
//! own drawer and reports a duplicate. The order is total and every host computes it alike,
//! so of two near-identical drawers exactly the later one withdraws. A writer looks twice,
//! right after its write and again after the *settle* time, because a drawer stamped earlier
//! on another host may become visible a little later than this host's first look: the settle
//! time must exceed that delay: the time between two hosts' checks before writing (both found
//! nothing) and the later write becoming visible. A drawer that withdrew for one that has
//! gone as well (near-duplicates are not transitive) is filed again.
//! A refusal, whether the first look or a later one found the duplicate, names the drawers
//! that remain, earliest (the survivor) first, read after the settle time so that other late
//! writers have withdrawn too.

use std::time::Duration;

use crate::drawer::Drawer;
use crate::error::Result;
use crate::filter::DrawerFilter;
use crate::palace::{DUPLICATE_THRESHOLD, Palace};
use crate::reports::{DuplicateMatch, DuplicateRefused, preview};
use crate::similarity::similarity_from_distance;

/// How long a writer on a shared store waits before its second look, by default.
pub const DEFAULT_SETTLE: Duration = Duration::from_millis(300);

/// What became of a drawer after the looks that follow its write.
pub(crate) enum AfterWrite {
    /// No earlier near-identical drawer: it stays.
    Stays,
    /// It withdrew for earlier ones, which remain.
    Refused(DuplicateRefused),
    /// It withdrew, and the earlier ones have gone too: it must be filed again.
    WithdrawnAlone,
}

/// A near-identical drawer seen after a write, with its order key.
struct Seen {
    filed_at: String,
    id: String,
    found: DuplicateMatch,
}

impl Palace {
    /// Near-identical drawers other than `mine` (at or above the duplicate threshold).
    async fn near_identical(&self, vector: &[f32], mine: &[Drawer]) -> Result<Vec<Seen>> {
        let neighbours = self
            .store
            .query(
                vector,
                &DrawerFilter::all(),
                self.limits.duplicate_candidates + mine.len(),
            )
            .await?;
        Ok(neighbours
            .into_iter()
            .map(|n| (similarity_from_distance(n.distance), n.drawer))
            .filter(|(similarity, d)| {
                *similarity >= DUPLICATE_THRESHOLD && !mine.iter().any(|m| m.id == d.id)
            })
            .map(|(similarity, d)| Seen {
                filed_at: d.metadata.filed_at.clone(),
                id: d.id.clone(),
                found: DuplicateMatch {
                    id: d.id,
                    wing: d.metadata.wing,
                    room: d.metadata.room,
                    similarity,
                    content: preview(&d.text, 200),
                },
            })
            .collect())
    }

    /// After filing `mine` (the drawer, or its chunks, first chunk first) on a shared store:
    /// withdraws it when an earlier near-identical drawer exists, now or after the settle
    /// time. If a look or the withdrawal fails, the drawer is withdrawn on a best-effort basis
    /// before the error is returned, so an error never leaves an unchecked copy behind.
    pub(crate) async fn yield_to_earlier_duplicate(
        &self,
        vector: &[f32],
        mine: &[Drawer],
        settle: Duration,
    ) -> Result<AfterWrite> {
        let Some(first) = mine.first() else {
            return Ok(AfterWrite::Stays);
        };
        let ids: Vec<String> = mine.iter().map(|d| d.id.clone()).collect();
        let my_key = (first.metadata.filed_at.as_str(), first.id.as_str());
        for look in 0..2 {
            if look == 1 {
                tokio::time::sleep(settle).await;
            }
            let seen = match self.near_identical(vector, mine).await {
                Ok(seen) => seen,
                Err(e) => {
                    let _ = self.store.delete(&ids).await;
                    return Err(e);
                }
            };
            if seen
                .iter()
                .any(|s| (s.filed_at.as_str(), s.id.as_str()) < my_key)
            {
                if let Err(e) = self.store.delete(&ids).await {
                    let _ = self.store.delete(&ids).await;
                    return Err(e);
                }
                return Ok(match self.remaining_duplicates(vector, settle).await? {
                    Some(refused) => AfterWrite::Refused(refused),
                    None => AfterWrite::WithdrawnAlone,
                });
            }
        }
        Ok(AfterWrite::Stays)
    }

    /// After twice the settle time (so that other late writers, whose own second look may
    /// come up to one settle time from now, have withdrawn), the refusal naming the
    /// near-identical drawers that remain, earliest (the survivor) first; `None` when none
    /// remains.
    pub(crate) async fn remaining_duplicates(
        &self,
        vector: &[f32],
        settle: Duration,
    ) -> Result<Option<DuplicateRefused>> {
        tokio::time::sleep(settle * 2).await;
        let mut remaining = self.near_identical(vector, &[]).await?;
        if remaining.is_empty() {
            return Ok(None);
        }
        remaining.sort_by(|a, b| (&a.filed_at, &a.id).cmp(&(&b.filed_at, &b.id)));
        Ok(Some(DuplicateRefused {
            success: false,
            reason: "duplicate".into(),
            matches: remaining.into_iter().map(|s| s.found).collect(),
        }))
    }
}
