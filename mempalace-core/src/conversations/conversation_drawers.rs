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
    /// The first turn of the last drawer filed. Filing resumes at the start of its exchange:
    /// that exchange may have grown since (a reply to a waiting question, an assistant's
    /// tool loop that went on), and its drawers are cut again; those that come out the same
    /// are not filed again, the changed ones replace theirs under the same id.
    pub last_start: usize,
    /// The room its exchanges went to (kept when it grows, so one conversation stays in one
    /// room even when its first words change the routing).
    pub room: Option<String>,
    /// The stored drawers near the end (first turn, id): those a re-cut from the last
    /// exchange may no longer produce (a grown exchange that 3.11's extraction now files as
    /// another kind) are deleted.
    pub tail: Vec<(usize, String)>,
}

/// How many turns before the last drawer's start the tail reaches back (an exchange is a
/// user turn and its replies, merged into one turn per side by the readers).
const TAIL_TURNS: usize = 8;

impl FiledSoFar {
    /// Takes a filed drawer (its turn range and id) into account.
    pub fn record(&mut self, first_turn: usize, last_turn: usize, drawer_id: &str) {
        let next = last_turn + 1;
        if next > self.next_turn || (next == self.next_turn && first_turn > self.last_start) {
            self.next_turn = next;
            self.last_start = first_turn;
        }
        if !self.tail.iter().any(|(_, id)| id == drawer_id) {
            self.tail.push((first_turn, drawer_id.to_string()));
        }
        let keep_from = self.last_start.saturating_sub(TAIL_TURNS);
        self.tail.retain(|(first, _)| *first >= keep_from);
    }

    /// Where filing resumes in `turns`: the start of the exchange of the last filed drawer
    /// (0 when nothing is filed yet).
    pub fn resume_at(&self, turns: &[super::Turn]) -> usize {
        if self.next_turn == 0 {
            return 0;
        }
        exchange_start(turns, self.last_start.min(turns.len().saturating_sub(1)))
    }
}

/// Every conversation of one source already filed: conversation id → how far.
pub type ConversationProgress = HashMap<String, FiledSoFar>;

/// Adds the progress recorded by a source's stored drawers (those of `extract` mode).
pub fn record_drawers<'a>(
    progress: &mut ConversationProgress,
    drawers: impl IntoIterator<Item = &'a Drawer>,
    extract: ExtractMode,
) {
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
        entry.record(c.first_turn as usize, c.last_turn as usize, &d.id);
        if extract == ExtractMode::Exchange {
            entry.room.get_or_insert_with(|| d.metadata.room.clone());
        }
    }
}

/// The first turn of the exchange holding turn `i`: the user turn before it (every turn is
/// its own exchange in a chat without a user).
pub fn exchange_start(turns: &[super::Turn], i: usize) -> usize {
    if !turns.iter().any(|t| t.role == super::Role::User) {
        return i;
    }
    (0..=i)
        .rev()
        .find(|&j| turns.get(j).is_some_and(|t| t.role == super::Role::User))
        .unwrap_or(0)
}

fn md5_16(input: &str) -> String {
    hex::encode(Md5::digest(input.as_bytes()))[..16].to_string()
}

/// The id of a conversation drawer: md5 of wing, source, conversation id, mode, first turn
/// and piece, so re-mining the same turns writes the same ids and new turns never move old
/// ones. The source is part of it: two files holding the same conversation (a prefix copy,
/// a forked session) each keep their own drawers instead of overwriting each other's.
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

/// The drawers for the turns of `conversation` from where `so_far` resumes (see
/// [`FiledSoFar::resume_at`]), filed at `filed_at`. Drawers already stored come out again
/// with the same id and text: the caller skips them.
pub fn conversation_drawers(
    conversation: &Conversation,
    filing: &ConversationFiling,
    so_far: &FiledSoFar,
    filed_at: &str,
) -> Vec<Drawer> {
    let turns = &conversation.turns;
    let from = so_far.resume_at(turns);
    if from >= turns.len() {
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
            entities: crate::entity_extraction::structural_entities(&chunk.text),
        },
        text: chunk.text,
    };
    match filing.extract {
        ExtractMode::Exchange => {
            let room = so_far
                .room
                .clone()
                .unwrap_or_else(|| conversation_room(conversation).to_string());
            chunk_exchanges(turns, from)
                .into_iter()
                .filter(|c| !c.text.trim().is_empty())
                .map(|c| drawer(c, &room))
                .collect()
        }
        ExtractMode::General => exchange_ranges(turns, from)
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
            .filter(|(c, _)| !c.text.trim().is_empty())
            .map(|(c, room)| drawer(c, room))
            .collect(),
    }
}
