//! Filing conversations: only the turns a source has not filed yet, each batch in one write,
//! so a conversation is never half filed by this call.

use serde::Serialize;

use super::Palace;
use crate::cancellation::Cancellation;
use crate::conversations::Conversation;
use crate::conversations::conversation_drawers::{
    ConversationFiling, ConversationProgress, conversation_drawers, record_drawers,
};
use crate::conversations::exchanges::exchange_ranges;
use std::collections::HashMap;

use crate::drawer::{AddedBy, Drawer};
use crate::error::Result;
use crate::filter::DrawerFilter;
use crate::temporal::now_iso;
use crate::validation::{validate_name, validate_source_file};

/// Texts per embedder call (a cancellation is seen between calls: about half a second of
/// embedding on two cores).
const EMBED_BATCH: usize = 32;

/// What filing conversations did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ConversationsFiled {
    /// Conversations with turns not filed before.
    pub conversations_grown: u64,
    /// Conversations with nothing new.
    pub conversations_unchanged: u64,
    /// Turns filed for the first time.
    pub new_turns: u64,
    /// Exchanges (a user turn and its replies) among them.
    pub new_exchanges: u64,
    /// Drawers written.
    pub drawers_filed: u64,
}

impl ConversationsFiled {
    /// Adds another batch's counts.
    pub fn add(&mut self, other: &ConversationsFiled) {
        self.conversations_grown += other.conversations_grown;
        self.conversations_unchanged += other.conversations_unchanged;
        self.new_turns += other.new_turns;
        self.new_exchanges += other.new_exchanges;
        self.drawers_filed += other.drawers_filed;
    }
}

impl Palace {
    /// The wing a conversation file's turns were filed into before (the first mined drawer
    /// from `source_file`, in id order), so that whoever files its next turns (a hook, a
    /// sweep) continues there instead of starting the file over in another wing.
    pub async fn conversation_wing(&self, source_file: &str) -> Result<Option<String>> {
        validate_source_file(source_file)?;
        if !self.is_initialised().await? {
            return Ok(None);
        }
        let mut wing = None;
        self.scan_until(&DrawerFilter::all().with_source_file(source_file), |d| {
            if d.metadata.added_by == AddedBy::Mine {
                wing = Some(d.metadata.wing);
                return std::ops::ControlFlow::Break(());
            }
            std::ops::ControlFlow::Continue(())
        })
        .await?;
        Ok(wing)
    }

    /// How far each conversation of `filing.source_file` in `filing.wing` is filed (read from
    /// the stored drawers; nothing is written).
    pub async fn conversation_progress(
        &self,
        filing: &ConversationFiling,
    ) -> Result<ConversationProgress> {
        validate_name("wing", &filing.wing)?;
        validate_source_file(&filing.source_file)?;
        if !self.is_initialised().await? {
            return Ok(ConversationProgress::new());
        }
        let filter = DrawerFilter::wing(&filing.wing).with_source_file(&filing.source_file);
        let mut progress = ConversationProgress::new();
        self.scan(&filter, |d| {
            if d.metadata.added_by == AddedBy::Mine {
                record_drawers(&mut progress, std::iter::once(&d), filing.extract);
            }
        })
        .await?;
        Ok(progress)
    }

    /// Files the turns of `conversations` (all from `filing.source_file`) that `progress`
    /// says are new, in one write, and moves `progress` on. Re-filing what is already there
    /// writes nothing; a conversation that grew gets drawers for its new exchanges only.
    pub async fn file_conversations(
        &self,
        conversations: &[Conversation],
        filing: &ConversationFiling,
        progress: &mut ConversationProgress,
    ) -> Result<ConversationsFiled> {
        self.file_conversations_cancellable(conversations, filing, progress, &Cancellation::new())
            .await
    }

    /// [`Palace::file_conversations`] that stops between embedding steps once `cancel` is
    /// raised, with [`crate::PalaceError::Cancelled`]: nothing of the batch is written and
    /// `progress` is left as it was, so filing the same turns again completes it.
    pub async fn file_conversations_cancellable(
        &self,
        conversations: &[Conversation],
        filing: &ConversationFiling,
        progress: &mut ConversationProgress,
        cancel: &Cancellation,
    ) -> Result<ConversationsFiled> {
        cancel.check()?;
        validate_name("wing", &filing.wing)?;
        validate_source_file(&filing.source_file)?;
        let filed_at = now_iso();
        let mut report = ConversationsFiled::default();
        let mut cut = Vec::new();
        let mut stale: Vec<String> = Vec::new();
        for c in conversations {
            let so_far = progress.get(&c.id).cloned().unwrap_or_default();
            let candidates = conversation_drawers(c, filing, &so_far, &filed_at);
            // Stored drawers of the re-cut exchange that it no longer produces.
            if so_far.next_turn > 0 {
                let from = so_far.resume_at(&c.turns);
                stale.extend(
                    so_far
                        .tail
                        .iter()
                        .filter(|(first, id)| {
                            *first >= from && !candidates.iter().any(|d| &d.id == id)
                        })
                        .map(|(_, id)| id.clone()),
                );
            }
            cut.push((c, candidates, so_far));
        }
        // The re-cut tail of a conversation filed before comes out mostly as stored: those
        // drawers are not embedded again. (A conversation new to this source has none.)
        let ids: Vec<String> = cut
            .iter()
            .filter(|(_, _, so_far)| so_far.next_turn > 0)
            .flat_map(|(_, ds, _)| ds.iter().map(|d| d.id.clone()))
            .collect();
        let stored: HashMap<String, Drawer> = if ids.is_empty() || !self.is_initialised().await? {
            HashMap::new()
        } else {
            self.store
                .get(&ids)
                .await?
                .into_iter()
                .map(|d| (d.id.clone(), d))
                .collect()
        };
        let mut drawers = Vec::new();
        let mut moved = Vec::new();
        for (c, candidates, so_far) in cut {
            let filed: Vec<(usize, usize, String)> = candidates
                .iter()
                .filter_map(|d| {
                    let r = d.metadata.conversation.as_ref()?;
                    Some((r.first_turn as usize, r.last_turn as usize, d.id.clone()))
                })
                .collect();
            let room = candidates
                .first()
                .map(|d| d.metadata.room.clone())
                .or(so_far.room.clone());
            let new: Vec<Drawer> = candidates
                .into_iter()
                .filter(|d| {
                    stored.get(&d.id).is_none_or(|s| {
                        s.text != d.text || s.metadata.conversation != d.metadata.conversation
                    })
                })
                .collect();
            if new.is_empty() {
                report.conversations_unchanged += 1;
            } else {
                report.conversations_grown += 1;
                if so_far.next_turn < c.turns.len() {
                    report.new_turns += (c.turns.len() - so_far.next_turn) as u64;
                    report.new_exchanges +=
                        exchange_ranges(&c.turns, so_far.next_turn).len() as u64;
                }
            }
            moved.push((c.id.clone(), c.turns.len(), filed, room));
            drawers.extend(new);
        }
        if !drawers.is_empty() || !stale.is_empty() {
            let texts: Vec<String> = drawers.iter().map(|d| d.text.clone()).collect();
            let mut vectors = Vec::with_capacity(texts.len());
            for batch in texts.chunks(EMBED_BATCH) {
                cancel.check()?;
                vectors.extend(self.embed_all(batch).await?);
            }
            cancel.check()?;
            self.file_mined(&drawers, &vectors, &stale).await?;
        }
        report.drawers_filed = drawers.len() as u64;
        for (id, next_turn, filed, room) in moved {
            let entry = progress.entry(id).or_default();
            entry.tail.retain(|(_, id)| !stale.contains(id));
            for (first, last, drawer_id) in &filed {
                entry.record(*first, *last, drawer_id);
            }
            entry.next_turn = entry.next_turn.max(next_turn);
            if filing.extract == crate::conversations::ExtractMode::Exchange && entry.room.is_none()
            {
                entry.room = room;
            }
        }
        Ok(report)
    }

    /// Files one conversation's new turns: looks up how far it is filed, then files the rest
    /// (the call an agent makes for its own transcript after every exchange).
    pub async fn file_conversation(
        &self,
        conversation: &Conversation,
        filing: &ConversationFiling,
    ) -> Result<ConversationsFiled> {
        let mut progress = self.conversation_progress(filing).await?;
        self.file_conversations(std::slice::from_ref(conversation), filing, &mut progress)
            .await
    }
}
