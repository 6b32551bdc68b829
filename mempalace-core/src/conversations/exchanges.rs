//! Cutting a conversation into drawers of whole exchanges.
//!
//! An exchange is a user turn and the replies up to the next user turn (in a chat with no
//! user, such as a Slack channel, every message is its own exchange). A drawer holds as many
//! consecutive whole exchanges as fit in [`EXCHANGE_WINDOW`] characters. An exchange that does
//! not fit alone is cut between its turns, and a turn that does not fit alone is cut at sentence
//! ends (else at spaces), every piece keeping its speaker's mark.

use super::{Role, Turn};

/// Most characters in one drawer (MemPalace 3.11's chunk size).
pub const EXCHANGE_WINDOW: usize = 800;

/// One drawer's worth of a conversation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExchangeChunk {
    /// Index of the first turn it holds (or holds a piece of).
    pub first_turn: u32,
    /// Index of the last turn it holds.
    pub last_turn: u32,
    /// Which piece of `first_turn` it is when that turn was cut (0 otherwise).
    pub piece: u32,
    /// The text as filed: user turns marked `> `, participants `[name] `, replies bare.
    pub text: String,
    /// The speakers, in order of first appearance.
    pub speakers: Vec<String>,
    /// The first known timestamp among its turns.
    pub authored_at: Option<String>,
    /// The last known timestamp among its turns.
    pub authored_until: Option<String>,
}

/// A turn as it reads in a drawer.
pub fn render_turn(role: &Role, text: &str) -> String {
    match role {
        Role::User => format!("> {text}"),
        Role::Assistant => text.to_string(),
        Role::Participant(name) => format!("[{name}] {text}"),
    }
}

/// The exchanges of `turns[from..]`, as half-open ranges of turn indices.
pub fn exchange_ranges(turns: &[Turn], from: usize) -> Vec<std::ops::Range<usize>> {
    let has_user = turns.iter().any(|t| t.role == Role::User);
    let mut ranges: Vec<std::ops::Range<usize>> = Vec::new();
    for (i, turn) in turns.iter().enumerate().skip(from) {
        let starts = !has_user || turn.role == Role::User || i == from;
        match ranges.last_mut() {
            Some(r) if !starts => r.end = i + 1,
            _ => ranges.push(i..i + 1),
        }
    }
    ranges
}

/// Cuts `turns[from..]` (the turns not filed yet) into drawer chunks of whole exchanges.
pub fn chunk_exchanges(turns: &[Turn], from: usize) -> Vec<ExchangeChunk> {
    let mut out = Vec::new();
    let mut open: Option<ExchangeChunk> = None;
    for range in exchange_ranges(turns, from) {
        let rendered: Vec<String> = range
            .clone()
            .map(|i| render_turn(&turns[i].role, &turns[i].text))
            .collect();
        let whole = rendered.join("\n");
        let chunk = |first: usize, last: usize, text: String| chunk_of(turns, first, last, 0, text);
        if char_len(&whole) <= EXCHANGE_WINDOW {
            // Exchanges share a drawer only on the same day: a drawer is dated by its first
            // turn, and a `since` bound must not miss the next day's words.
            let day = range
                .clone()
                .find_map(|i| turns[i].authored_at.as_deref())
                .map(|t| t.get(..10).unwrap_or(t));
            let fits = open.as_ref().is_some_and(|o| {
                char_len(&o.text) + 2 + char_len(&whole) <= EXCHANGE_WINDOW
                    && (day.is_none()
                        || o.authored_at.as_deref().map(|t| t.get(..10).unwrap_or(t)) == day)
            });
            if fits {
                let o = open.as_mut().expect("checked");
                o.text = format!("{}\n\n{whole}", o.text);
                extend(o, turns, range.start, range.end - 1);
            } else {
                out.extend(open.take());
                open = Some(chunk(range.start, range.end - 1, whole));
            }
            continue;
        }
        // Too long together: whole turns while they fit, a long turn in pieces.
        out.extend(open.take());
        for (i, text) in range.clone().zip(rendered) {
            if char_len(&text) > EXCHANGE_WINDOW {
                out.extend(open.take());
                for (piece, part) in split_turn(&turns[i].role, &turns[i].text)
                    .into_iter()
                    .enumerate()
                {
                    out.push(chunk_of(turns, i, i, piece as u32, part));
                }
                continue;
            }
            match open.as_mut() {
                Some(o) if char_len(&o.text) + 1 + char_len(&text) <= EXCHANGE_WINDOW => {
                    o.text = format!("{}\n{text}", o.text);
                    extend(o, turns, i, i);
                }
                _ => {
                    out.extend(open.take());
                    open = Some(chunk_of(turns, i, i, 0, text));
                }
            }
        }
        out.extend(open.take());
    }
    out.extend(open);
    out
}

fn char_len(s: &str) -> usize {
    s.chars().count()
}

fn chunk_of(turns: &[Turn], first: usize, last: usize, piece: u32, text: String) -> ExchangeChunk {
    let mut chunk = ExchangeChunk {
        first_turn: first as u32,
        last_turn: first as u32,
        piece,
        text,
        speakers: Vec::new(),
        authored_at: None,
        authored_until: None,
    };
    extend(&mut chunk, turns, first, last);
    chunk
}

/// Adds turns `first..=last` to a chunk's turn range, speakers and times.
fn extend(chunk: &mut ExchangeChunk, turns: &[Turn], first: usize, last: usize) {
    chunk.last_turn = last as u32;
    for turn in &turns[first..=last] {
        let label = turn.role.label();
        if !chunk.speakers.iter().any(|s| s == label) {
            chunk.speakers.push(label.to_string());
        }
        if let Some(t) = &turn.authored_at {
            if chunk.authored_at.is_none() {
                chunk.authored_at = Some(t.clone());
            }
            chunk.authored_until = Some(t.clone());
        }
    }
}

/// A turn too long for one drawer, cut into rendered pieces that each fit: at sentence ends
/// (`.`, `!`, `?` then a space, or a line break), a sentence too long alone at spaces.
pub fn split_turn(role: &Role, text: &str) -> Vec<String> {
    let mark = char_len(&render_turn(role, ""));
    let room = EXCHANGE_WINDOW.saturating_sub(mark).max(1);
    let mut pieces: Vec<String> = Vec::new();
    let mut current = String::new();
    for sentence in sentences(text) {
        for part in bounded(sentence, room) {
            if !current.is_empty() && char_len(&current) + char_len(part) > room {
                pieces.push(std::mem::take(&mut current));
            }
            current.push_str(part);
        }
    }
    if !current.trim().is_empty() {
        pieces.push(current);
    }
    pieces
        .into_iter()
        .filter(|p| !p.trim().is_empty())
        .map(|p| render_turn(role, p.trim()))
        .collect()
}

/// Splits text after each sentence end, keeping every character (the pieces concatenate back).
fn sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut prev: Option<char> = None;
    for (i, c) in text.char_indices() {
        let ends = c == '\n' || (c.is_whitespace() && matches!(prev, Some('.' | '!' | '?')));
        if ends {
            let end = i + c.len_utf8();
            out.push(&text[start..end]);
            start = end;
        }
        prev = Some(c);
    }
    if start < text.len() {
        out.push(&text[start..]);
    }
    out
}

/// Slices of at most `max` characters, cut after the last whitespace in the back half of
/// each window when there is one (3.11's `_split_bounded`). Linear: each window is scanned
/// once, never the rest of the text.
fn bounded(text: &str, max: usize) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = text;
    // The window's end: the byte after its `max`th character, or none when the rest fits.
    while let Some((limit, _)) = rest.char_indices().nth(max) {
        let floor = rest.char_indices().nth(max / 2).map_or(0, |(b, _)| b);
        let cut = rest[floor..limit]
            .rfind(char::is_whitespace)
            .map(|p| {
                let at = floor + p;
                at + rest[at..].chars().next().map_or(1, char::len_utf8)
            })
            .unwrap_or(limit);
        out.push(&rest[..cut]);
        rest = &rest[cut..];
    }
    if !rest.is_empty() {
        out.push(rest);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn turn(role: Role, text: &str, at: Option<&str>) -> Turn {
        Turn {
            role,
            text: text.to_string(),
            authored_at: at.map(str::to_string),
        }
    }

    #[test]
    fn short_exchanges_share_a_drawer_and_keep_their_turns_whole() {
        let turns = vec![
            turn(Role::User, "Which database?", Some("2025-01-01T10:00:00")),
            turn(Role::Assistant, "Postgres.", Some("2025-01-01T10:00:05")),
            turn(Role::User, "Why?", Some("2025-01-01T10:01:00")),
            turn(Role::Assistant, "Because the team knows it.", None),
        ];
        let chunks = chunk_exchanges(&turns, 0);
        assert_eq!(chunks.len(), 1);
        let c = &chunks[0];
        assert_eq!(
            c.text,
            "> Which database?\nPostgres.\n\n> Why?\nBecause the team knows it."
        );
        assert_eq!((c.first_turn, c.last_turn, c.piece), (0, 3, 0));
        assert_eq!(c.speakers, ["user", "assistant"]);
        assert_eq!(c.authored_at.as_deref(), Some("2025-01-01T10:00:00"));
        assert_eq!(c.authored_until.as_deref(), Some("2025-01-01T10:01:00"));
        // Resuming after turn 2 files only the last exchange's remaining turn... from turn 2.
        let tail = chunk_exchanges(&turns, 2);
        assert_eq!(tail.len(), 1);
        assert_eq!(tail[0].first_turn, 2);
        assert_eq!(tail[0].text, "> Why?\nBecause the team knows it.");
    }

    #[test]
    fn exchanges_of_different_days_never_share_a_drawer() {
        let turns = vec![
            turn(Role::User, "Late question?", Some("2025-01-01T23:58:00")),
            turn(
                Role::Assistant,
                "Short answer.",
                Some("2025-01-01T23:59:00"),
            ),
            turn(Role::User, "Next morning?", Some("2025-01-02T08:00:00")),
            turn(Role::Assistant, "Yes.", Some("2025-01-02T08:00:05")),
        ];
        let chunks = chunk_exchanges(&turns, 0);
        assert_eq!(chunks.len(), 2);
        assert_eq!(
            chunks[1].authored_at.as_deref(),
            Some("2025-01-02T08:00:00")
        );
    }

    #[test]
    fn an_exchange_never_straddles_two_drawers_unless_it_is_too_long() {
        let long_reply = "Word ".repeat(100); // 500 chars
        let turns = vec![
            turn(Role::User, "First question here?", None),
            turn(Role::Assistant, long_reply.trim(), None),
            turn(Role::User, "Second question here?", None),
            turn(Role::Assistant, long_reply.trim(), None),
        ];
        let chunks = chunk_exchanges(&turns, 0);
        assert_eq!(chunks.len(), 2);
        assert_eq!((chunks[0].first_turn, chunks[0].last_turn), (0, 1));
        assert_eq!((chunks[1].first_turn, chunks[1].last_turn), (2, 3));
        assert!(
            chunks
                .iter()
                .all(|c| c.text.chars().count() <= EXCHANGE_WINDOW)
        );
    }

    #[test]
    fn a_turn_longer_than_the_window_is_cut_at_sentences_with_its_speaker() {
        let sentence = "This sentence is exactly about fifty characters. ";
        let long = sentence.repeat(40); // ~2,000 chars
        let turns = vec![
            turn(Role::User, "Explain it all?", None),
            turn(Role::Assistant, long.trim(), None),
            turn(Role::User, &long, None),
        ];
        let chunks = chunk_exchanges(&turns, 0);
        assert!(
            chunks
                .iter()
                .all(|c| c.text.chars().count() <= EXCHANGE_WINDOW)
        );
        // The question stands alone, then the reply in pieces, then the user's long turn in
        // pieces each marked as the user's.
        assert_eq!(chunks[0].text, "> Explain it all?");
        let reply: Vec<&ExchangeChunk> = chunks.iter().filter(|c| c.first_turn == 1).collect();
        assert!(reply.len() >= 3);
        for (i, c) in reply.iter().enumerate() {
            assert_eq!(c.piece, i as u32);
            assert!(c.text.ends_with("characters."), "{:?}", c.text);
            assert_eq!(c.speakers, ["assistant"]);
        }
        let user: Vec<&ExchangeChunk> = chunks.iter().filter(|c| c.first_turn == 2).collect();
        assert!(user.len() >= 3 && user.iter().all(|c| c.text.starts_with("> This")));
        // Nothing but whitespace is lost.
        let joined: String = reply
            .iter()
            .map(|c| c.text.as_str())
            .collect::<Vec<_>>()
            .join(" ");
        assert_eq!(
            joined.split_whitespace().collect::<Vec<_>>(),
            long.split_whitespace().collect::<Vec<_>>()
        );
    }

    #[test]
    fn a_chat_without_a_user_packs_messages_with_their_names() {
        let turns = vec![
            turn(Role::Participant("Ana".into()), "deploy is green", None),
            turn(Role::Participant("Bo".into()), "thanks!", None),
        ];
        assert_eq!(exchange_ranges(&turns, 0), vec![0..1, 1..2]);
        let chunks = chunk_exchanges(&turns, 0);
        assert_eq!(chunks.len(), 1);
        assert_eq!(chunks[0].text, "[Ana] deploy is green\n\n[Bo] thanks!");
        assert_eq!(chunks[0].speakers, ["Ana", "Bo"]);
    }

    #[test]
    fn a_word_longer_than_the_window_is_cut_hard() {
        let word = "x".repeat(2000);
        let pieces = split_turn(&Role::Assistant, &word);
        assert_eq!(pieces.len(), 3);
        assert!(pieces.iter().all(|p| p.chars().count() <= EXCHANGE_WINDOW));
        assert_eq!(pieces.concat(), word);
    }
}
