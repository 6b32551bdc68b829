//! `wake_up` (L0 + L1) and `recall` (L2) as Palace methods; see [`crate::wake_up`].

use futures::{StreamExt, TryStreamExt};

use super::Palace;
use crate::error::Result;
use crate::filter::DrawerFilter;
use crate::validation::validate_name;
use crate::wake_up::{
    L1_CANDIDATES, L1_MAX_DRAWERS, Layer, WakeUp, WakeUpRequest, choose_essential, essential_text,
    read_identity,
};

/// Rooms looked up at once for L1's candidates.
const ROOM_PROBES_AT_ONCE: usize = 8;

impl Palace {
    /// Token counts of `texts` by the embedder's tokenizer, or estimated (4 characters a
    /// token) when it has none; the second value says which.
    pub(super) async fn tokens_of(&self, texts: &[String]) -> Result<(Vec<usize>, &'static str)> {
        match self.embedder.count_tokens(texts).await? {
            Some(counts) => Ok((counts, "tokenizer")),
            None => Ok((
                texts
                    .iter()
                    .map(|t| t.chars().count().div_ceil(4))
                    .collect(),
                "estimate",
            )),
        }
    }

    /// L1's candidates within `filter`: the newest drawers. When they fill the candidate
    /// list, the drawers left out that share the oldest candidate's filing moment are tied
    /// with it (one `mine` files hundreds of drawers at one moment, and the ids then decide
    /// which rooms get in), so every room with drawers of that moment is looked up and adds
    /// its drawers of that moment: rooms take turns whatever the ids. Older rooms are not
    /// brought in.
    async fn essential_candidates(&self, filter: &DrawerFilter) -> Result<Vec<crate::Drawer>> {
        let mut newest = self.store.recent(filter, L1_CANDIDATES).await?;
        let Some(boundary) = newest
            .last()
            .filter(|_| newest.len() == L1_CANDIDATES)
            .map(|d| d.metadata.filed_at.clone())
        else {
            return Ok(newest);
        };
        let seen: std::collections::HashSet<(String, String)> = newest
            .iter()
            .map(|d| (d.metadata.wing.clone(), d.metadata.room.clone()))
            .collect();
        let missing: Vec<DrawerFilter> = self
            .store
            .room_counts(filter)
            .await?
            .into_iter()
            .filter(|c| !seen.contains(&(c.wing.clone(), c.room.clone())))
            .map(|c| {
                let mut f = filter.clone();
                f.wing = Some(c.wing);
                f.room = Some(c.room);
                f
            })
            .collect();
        let per_room: Vec<Vec<crate::Drawer>> = futures::stream::iter(missing)
            .map(|f| async move { self.store.recent(&f, L1_MAX_DRAWERS).await })
            .buffer_unordered(ROOM_PROBES_AT_ONCE)
            .try_collect()
            .await?;
        newest.extend(
            per_room
                .into_iter()
                .flatten()
                .filter(|d| d.metadata.filed_at >= boundary),
        );
        // Newest first, as `choose_essential` takes them; ties by room, then id.
        newest.sort_by(|a, b| {
            b.metadata
                .filed_at
                .cmp(&a.metadata.filed_at)
                .then_with(|| a.metadata.wing.cmp(&b.metadata.wing))
                .then_with(|| a.metadata.room.cmp(&b.metadata.room))
                .then_with(|| a.id.cmp(&b.id))
        });
        Ok(newest)
    }

    /// The wake-up context for a new session: L0 (identity) + L1 (the palace's essential
    /// story: drawers chosen among the newest, rooms taking turns, within
    /// `request.l1_tokens` by the embedder's tokenizer).
    pub async fn wake_up(&self, request: &WakeUpRequest) -> Result<WakeUp> {
        if let Some(w) = &request.wing {
            validate_name("wing", w)?;
        }
        let (identity, identity_source) =
            read_identity(request.identity_path.as_deref(), &self.path);
        let exists = self.store.exists().await?;
        let newest = if exists {
            let filter = match &request.wing {
                Some(w) => DrawerFilter::wing(w.clone()),
                None => DrawerFilter::all(),
            };
            self.essential_candidates(&filter).await?
        } else {
            Vec::new()
        };
        let chosen = choose_essential(newest, L1_MAX_DRAWERS);
        // Keep drawers in the chosen order while the whole of L1 stays in the budget.
        let mut shown = vec![false; chosen.len()];
        let mut essential = if exists {
            essential_text(&chosen, &shown)
        } else {
            // The same words as every other read of a missing palace.
            format!(
                "## L1 — {}",
                crate::PalaceError::NoPalace {
                    palace_path: self.path.clone()
                }
            )
        };
        let (mut l1_tokens, mut counter) = {
            let (c, how) = self.tokens_of(std::slice::from_ref(&essential)).await?;
            (c[0], how)
        };
        for i in 0..chosen.len() {
            shown[i] = true;
            let candidate = essential_text(&chosen, &shown);
            let (c, how) = self.tokens_of(std::slice::from_ref(&candidate)).await?;
            counter = how;
            if c[0] > request.l1_tokens {
                shown[i] = false;
                continue;
            }
            essential = candidate;
            l1_tokens = c[0];
        }
        let text = format!("{identity}\n\n{essential}");
        let (counts, _) = self.tokens_of(&[identity.clone(), text.clone()]).await?;
        let drawer_ids = chosen
            .iter()
            .zip(&shown)
            .filter(|(_, s)| **s)
            .map(|(d, _)| d.id.clone())
            .collect();
        Ok(WakeUp {
            tokens: counts[1],
            text,
            identity: Layer {
                text: identity,
                tokens: counts[0],
            },
            identity_source,
            essential: Layer {
                text: essential,
                tokens: l1_tokens,
            },
            drawer_ids,
            l1_budget: request.l1_tokens,
            token_counter: match counter {
                "tokenizer" => format!("{} tokenizer", self.embedder.model_name()),
                _ => "estimate (4 characters a token)".into(),
            },
        })
    }
}
