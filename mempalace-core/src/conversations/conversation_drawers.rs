//! A conversation's new turns as drawers: ids that stay put when the conversation grows,
//! the room, and the record of who spoke when.

use std::collections::HashMap;

use md5::{Digest, Md5};

use super::exchanges::{ExchangeChunk, chunk_exchanges, exchange_ranges, render_turn};
use super::general_extraction::classify_segment;
use super::topic_rooms::{ROUTING_CHARS, topic_room};
use super::{Conversation, ExtractMode};
use crate::drawer::{AddedBy, ConversationRef, Drawer, DrawerMetadata};

/// Where a source's conversations are filed, and how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConversationFiling {
    /// The wing (3.11 mines a folder of conversations into one wing).
    pub wing: String,
    /// The file (or any stable name) the conversations come from.
    pub source_file: String,
    /// Whole exchanges, or 3.11's general extraction.
    pub extract: ExtractMode,
}

/// How far a conversation is filed already.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FiledSoFar {
    /// The first turn not filed yet.
    pub next_turn: usize,
    /// The first turn of the last drawer filed: when that drawer ends on a question still
    /// waiting for its reply, the exchange is filed again from here once the reply comes, so
    /// question and answer share a drawer (the old drawer is replaced: same id).
    pub last_start: usize,
    /// The room its exchanges went to (kept when it grows, so one conversation stays in one
    /// room even when its first words change the routing).
    pub room: Option<String>,
}

impl FiledSoFar {
    /// Takes a filed drawer's turn range into account.
    pub fn record(&mut self, first_turn: usize, last_turn: usize) {
        let next = last_turn + 1;
        if next > self.next_turn || (next == self.next_turn && first_turn > self.last_start) {
            self.next_turn = next;
            self.last_start = first_turn;
        }
    }

    /// Where filing resumes in `turns`: after the last filed turn, or at the last drawer's
    /// start when that drawer ends on a user turn whose reply has come since.
    pub fn resume_at(&self, turns: &[super::Turn]) -> usize {
        let waiting = self.next_turn > 0
            && self.next_turn < turns.len()
            && turns[self.next_turn - 1].role == super::Role::User
            && self.last_start < self.next_turn;
        if waiting {
            self.last_start
        } else {
            self.next_turn
        }
    }
}

/// Every conversation of one source already filed: conversation id → how far.
pub type ConversationProgress = HashMap<String, FiledSoFar>;

/// The progress recorded by a source's stored drawers (those of `extract` mode).
pub fn progress_from<'a>(
    drawers: impl IntoIterator<Item = &'a Drawer>,
    extract: ExtractMode,
) -> ConversationProgress {
    let mut progress = ConversationProgress::new();
    for d in drawers {
        let Some(c) = d
            .metadata
            .conversation
            .as_ref()
            .filter(|c| c.extract == extract)
        else {
            continue;
        };
        let entry = progress.entry(c.id.clone()).or_default();
        entry.record(c.first_turn as usize, c.last_turn as usize);
        if extract == ExtractMode::Exchange {
            entry.room.get_or_insert_with(|| d.metadata.room.clone());
        }
    }
    progress
}

fn md5_16(input: &str) -> String {
    hex::encode(Md5::digest(input.as_bytes()))[..16].to_string()
}

/// The id of a conversation drawer: md5 of wing, source, conversation, mode, first turn and
/// piece, so re-mining the same turns writes the same ids and new turns never move old ones.
pub fn conversation_drawer_id(
    filing: &ConversationFiling,
    room: &str,
    conversation_id: &str,
    first_turn: u32,
    piece: u32,
) -> String {
    let key = [
        filing.wing.as_str(),
        filing.source_file.as_str(),
        conversation_id,
        filing.extract.as_str(),
        &first_turn.to_string(),
        &piece.to_string(),
    ]
    .join("\u{1f}");
    format!("drawer_{}_{room}_{}", filing.wing, md5_16(&key))
}

/// The room of a conversation's exchanges: by topic over its first turns, as 3.11 routes.
pub fn conversation_room(conversation: &Conversation) -> &'static str {
    let mut head = String::new();
    for t in &conversation.turns {
        if head.chars().count() >= ROUTING_CHARS {
            break;
        }
        head.push_str(&render_turn(&t.role, &t.text));
        head.push('\n');
    }
    topic_room(&head)
}

/// The drawers for the turns of `conversation` past `so_far`, filed at `filed_at`.
pub fn conversation_drawers(
    conversation: &Conversation,
    filing: &ConversationFiling,
    so_far: &FiledSoFar,
    filed_at: &str,
) -> Vec<Drawer> {
    let turns = &conversation.turns;
    if so_far.next_turn >= turns.len() {
        return Vec::new();
    }
    let drawer = |chunk: ExchangeChunk, room: &str| Drawer {
        id: conversation_drawer_id(
            filing,
            room,
            &conversation.id,
            chunk.first_turn,
            chunk.piece,
        ),
        metadata: DrawerMetadata {
            wing: filing.wing.clone(),
            room: room.to_string(),
            source_file: filing.source_file.clone(),
            chunk_index: chunk.first_turn,
            added_by: AddedBy::Mine,
            filed_at: filed_at.to_string(),
            authored_at: chunk.authored_at.clone(),
            conversation: Some(ConversationRef {
                id: conversation.id.clone(),
                title: conversation.title.clone(),
                speakers: chunk.speakers,
                first_turn: chunk.first_turn,
                last_turn: chunk.last_turn,
                authored_until: chunk.authored_until,
                extract: filing.extract,
            }),
        },
        text: chunk.text,
    };
    match filing.extract {
        ExtractMode::Exchange => {
            let room = so_far
                .room
                .clone()
                .unwrap_or_else(|| conversation_room(conversation).to_string());
            chunk_exchanges(turns, so_far.resume_at(turns))
                .into_iter()
                .map(|c| drawer(c, &room))
                .collect()
        }
        ExtractMode::General => exchange_ranges(turns, so_far.next_turn)
            .into_iter()
            .flat_map(|range| {
                let text: Vec<String> = range
                    .clone()
                    .map(|i| render_turn(&turns[i].role, &turns[i].text))
                    .collect();
                let kind = classify_segment(&text.join("\n"));
                kind.into_iter().flat_map(move |kind| {
                    chunk_exchanges(&turns[..range.end], range.start)
                        .into_iter()
                        .map(move |c| (c, kind.room()))
                })
            })
            .map(|(c, room)| drawer(c, room))
            .collect(),
    }
}
