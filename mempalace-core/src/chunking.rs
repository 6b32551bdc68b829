//! Splitting a file's text into drawer-sized chunks, as MemPalace's miner does.

/// Target chunk length in characters.
pub const CHUNK_SIZE: usize = 800;
/// Characters shared by consecutive chunks.
pub const CHUNK_OVERLAP: usize = 100;
/// Chunks shorter than this (after trimming) are dropped.
pub const MIN_CHUNK_SIZE: usize = 50;

/// One chunk of a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunk {
    /// Position among the file's kept chunks, from 0.
    pub index: u32,
    /// The chunk's text, trimmed.
    pub text: String,
}

/// Splits `content` into chunks of about [`CHUNK_SIZE`] characters with [`CHUNK_OVERLAP`]
/// characters of overlap, ending at a paragraph break, else a line break, when one lies in
/// the second half of the window; chunks under [`MIN_CHUNK_SIZE`] characters are dropped.
/// Lengths count Unicode characters (as Python does), so a cut never splits a character.
pub fn chunk_text(content: &str) -> Vec<Chunk> {
    let content = content.trim();
    // Byte offset of every character, plus the end.
    let offsets: Vec<usize> = content
        .char_indices()
        .map(|(i, _)| i)
        .chain([content.len()])
        .collect();
    let total = offsets.len() - 1;
    let slice = |from: usize, to: usize| &content[offsets[from]..offsets[to]];
    let mut chunks = Vec::new();
    let mut start = 0;
    while start < total {
        let mut end = (start + CHUNK_SIZE).min(total);
        if end < total {
            let window = slice(start, end);
            let half = start + CHUNK_SIZE / 2;
            let char_pos = |byte: usize| start + window[..byte].chars().count();
            if let Some(p) = window.rfind("\n\n").map(char_pos).filter(|&p| p > half) {
                end = p;
            } else if let Some(p) = window.rfind('\n').map(char_pos).filter(|&p| p > half) {
                end = p;
            }
        }
        let text = slice(start, end).trim();
        if text.chars().count() >= MIN_CHUNK_SIZE {
            chunks.push(Chunk {
                index: chunks.len() as u32,
                text: text.to_string(),
            });
        }
        start = if end < total {
            end - CHUNK_OVERLAP
        } else {
            end
        };
    }
    chunks
}

/// Longest first line that counts as a file's title (a heading, a date line, a subject).
pub const MAX_TITLE_CHARS: usize = 160;

/// Splits a file for mining into chunks that keep their meaning:
/// - a chunk ends at a paragraph break, else a line break, else a sentence end, else a space,
///   when one lies in the second half of the window (a transcript's turn, one per line, is not
///   cut unless it alone is longer than half a window);
/// - the next chunk starts at the beginning of a line (else of a word) inside the overlap, so
///   no chunk starts mid-word;
/// - every chunk that does not show them itself starts with the file's title (its first line,
///   when short: a heading, a session date, a subject) and the nearest Markdown heading above
///   it, so a chunk from the middle of a file still says what and when it is about.
///
/// A chat transcript (most lines open a speaker turn, `Name: text`) is instead cut into a few
/// whole turns per chunk ([`TURN_CHUNK_SIZE`]), each headed by the title.
///
/// The drawer holds exactly this text; chunks under [`MIN_CHUNK_SIZE`] characters of their
/// own are dropped.
pub fn chunk_document(content: &str) -> Vec<Chunk> {
    let content = content.trim();
    if let Some(chunks) = chunk_transcript(content) {
        return chunks;
    }
    let chars: Vec<(usize, char)> = content.char_indices().collect();
    let total = chars.len();
    let byte_at = |i: usize| chars.get(i).map_or(content.len(), |(b, _)| *b);
    let slice = |from: usize, to: usize| &content[byte_at(from)..byte_at(to)];
    let title = content
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .filter(|l| l.chars().count() <= MAX_TITLE_CHARS && total > CHUNK_SIZE)
        .map(|l| l.trim_start_matches('#').trim().to_string());
    let mut chunks = Vec::new();
    for (start, own) in windows(content) {
        if own.chars().count() >= MIN_CHUNK_SIZE {
            let heading = nearest_heading(slice(0, start));
            let mut context: Vec<&str> = Vec::new();
            if let Some(t) = title.as_deref()
                && !own.contains(t)
            {
                context.push(t);
            }
            if let Some(h) = heading
                && !own.contains(h)
                && title.as_deref() != Some(h)
            {
                context.push(h);
            }
            let text = if context.is_empty() {
                own.to_string()
            } else {
                format!("{}\n\n{own}", context.join(" › "))
            };
            chunks.push(Chunk {
                index: chunks.len() as u32,
                text,
            });
        }
    }
    chunks
}

/// Target length of a chat transcript's chunk (its own text, without the title): a few whole
/// speaker turns. Small chunks keep one exchange's meaning in one embedding instead of
/// averaging it with the small talk around it (measured in `bench/retrieval`).
pub const TURN_CHUNK_SIZE: usize = 250;
/// A file is read as a chat transcript when at least this many of its lines open a turn...
const MIN_TRANSCRIPT_TURNS: usize = 4;
/// ...and they are at least this share (in percent) of its non-empty lines after the title.
const TRANSCRIPT_TURN_PERCENT: usize = 60;
/// A transcript has at least this many turns per distinct speaker.
const TURNS_PER_VOICE: usize = 3;
/// Longest speaker name in a `Name: text` turn.
const MAX_SPEAKER_CHARS: usize = 40;

/// Whether a line opens a speaker turn: `Name: text` (see [`speaker_of`]) or a quoted
/// `> text` line (MemPalace's transcript format).
fn opens_turn(line: &str) -> bool {
    line.trim_start().starts_with("> ") || speaker_of(line).is_some()
}

/// The speaker of a `Name: text` line: a name of up to four words (letters, digits, spaces,
/// `.'-_()`), optionally in Markdown bold or italics and after a `[time]` or `(time)` stamp,
/// then a colon, a space and something said.
fn speaker_of(line: &str) -> Option<&str> {
    let mut line = line.trim_start();
    for (open, close) in [('[', ']'), ('(', ')')] {
        if line.starts_with(open)
            && let Some(end) = line.find(close)
        {
            line = line[end + close.len_utf8()..].trim_start();
        }
    }
    let (name, said) = line.split_once(':')?;
    // `**Ann**: hi` and `**Ann:** hi` both name Ann.
    let said = said.trim_start_matches(['*', '_']);
    let name = name.trim_matches(['*', '_']).trim();
    let ok = name.chars().next().is_some_and(char::is_alphabetic)
        && name.chars().count() <= MAX_SPEAKER_CHARS
        && name.split_whitespace().count() <= 4
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, ' ' | '.' | '\'' | '-' | '_' | '(' | ')'))
        && said.starts_with(' ')
        && !said.trim().is_empty();
    ok.then_some(name)
}

/// Chunks a chat transcript (see [`TRANSCRIPT_TURN_PERCENT`]) into groups of whole speaker
/// turns of about [`TURN_CHUNK_SIZE`] characters, each headed by the file's title (a session
/// date, a subject) and the Markdown heading above it. A turn is never cut unless it alone
/// is longer than [`CHUNK_SIZE`]; then it is cut as plain text is. `None` when `content` is
/// not a transcript.
fn chunk_transcript(content: &str) -> Option<Vec<Chunk>> {
    let mut lines = content.lines().map(str::trim).filter(|l| !l.is_empty());
    let first = lines.next()?;
    // The first line is the title (`Date: …`, `# Session 7`) unless it is a turn of a speaker
    // who speaks again.
    let first_speaks_again = first.starts_with("> ")
        || speaker_of(first)
            .is_some_and(|name| content.lines().skip(1).any(|l| speaker_of(l) == Some(name)));
    let title = (first.chars().count() <= MAX_TITLE_CHARS && !first_speaks_again)
        .then(|| first.trim_start_matches('#').trim());
    let body: Vec<&str> = if title.is_some() {
        lines.collect()
    } else {
        content
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect()
    };
    let turns = body.iter().filter(|l| opens_turn(l)).count();
    if turns < MIN_TRANSCRIPT_TURNS || turns * 100 < body.len() * TRANSCRIPT_TURN_PERCENT {
        return None;
    }
    // A conversation is a few voices speaking again and again; `key: value` lines (YAML, mail
    // headers, glossaries) name a new "speaker" on almost every line.
    let quoted = body.iter().any(|l| l.starts_with("> "));
    let voices = body
        .iter()
        .filter_map(|l| speaker_of(l))
        .collect::<std::collections::HashSet<_>>()
        .len()
        + usize::from(quoted);
    if voices * TURNS_PER_VOICE > turns {
        return None;
    }
    // Units: a turn with its continuation lines, or a heading line.
    let mut units: Vec<(bool, String)> = Vec::new();
    for line in body {
        let heading = line.starts_with('#') && line.trim_start_matches('#').starts_with(' ');
        match units.last_mut() {
            Some((false, unit)) if !heading && !opens_turn(line) => {
                unit.push('\n');
                unit.push_str(line);
            }
            _ => units.push((heading, line.to_string())),
        }
    }
    let mut chunks: Vec<Chunk> = Vec::new();
    let mut heading: Option<String> = None;
    let mut pending: Vec<String> = Vec::new();
    let mut pending_chars = 0usize;
    let flush = |pending: &mut Vec<String>,
                 pending_chars: &mut usize,
                 heading: &Option<String>,
                 chunks: &mut Vec<Chunk>| {
        if pending.is_empty() {
            return;
        }
        let own = pending.join("\n");
        pending.clear();
        *pending_chars = 0;
        if own.chars().count() < MIN_CHUNK_SIZE
            && let Some(last) = chunks.last_mut()
        {
            // Too short to stand alone (a closing "bye"): it joins the chunk before.
            last.text.push('\n');
            last.text.push_str(&own);
            return;
        }
        let mut context: Vec<&str> = Vec::new();
        if let Some(t) = title {
            context.push(t);
        }
        if let Some(h) = heading.as_deref()
            && !own.contains(h)
        {
            context.push(h);
        }
        let text = if context.is_empty() {
            own
        } else {
            format!("{}\n\n{own}", context.join(" › "))
        };
        chunks.push(Chunk {
            index: chunks.len() as u32,
            text,
        });
    };
    for (is_heading, unit) in units {
        if is_heading {
            flush(&mut pending, &mut pending_chars, &heading, &mut chunks);
            heading = Some(unit.trim_start_matches('#').trim().to_string());
            continue;
        }
        let n = unit.chars().count();
        if n > CHUNK_SIZE {
            flush(&mut pending, &mut pending_chars, &heading, &mut chunks);
            for (_, piece) in windows(&unit) {
                pending.push(piece.to_string());
                flush(&mut pending, &mut pending_chars, &heading, &mut chunks);
            }
            continue;
        }
        if pending_chars >= MIN_CHUNK_SIZE && pending_chars + n > TURN_CHUNK_SIZE {
            flush(&mut pending, &mut pending_chars, &heading, &mut chunks);
        }
        pending_chars += n + 1;
        pending.push(unit);
    }
    flush(&mut pending, &mut pending_chars, &heading, &mut chunks);
    Some(chunks)
}

/// The windows of `content` (trimmed, with the character index where each starts): about
/// [`CHUNK_SIZE`] characters, ending at a cut point ([`cut_point`]) and overlapping the next
/// from a line or word start ([`overlap_start`]).
fn windows(content: &str) -> Vec<(usize, &str)> {
    let chars: Vec<(usize, char)> = content.char_indices().collect();
    let total = chars.len();
    let byte_at = |i: usize| chars.get(i).map_or(content.len(), |(b, _)| *b);
    let mut out = Vec::new();
    let mut start = 0;
    while start < total {
        let mut end = (start + CHUNK_SIZE).min(total);
        if end < total {
            end = cut_point(&chars, start, end);
        }
        out.push((start, content[byte_at(start)..byte_at(end)].trim()));
        if end >= total {
            break;
        }
        start = overlap_start(&chars, start, end);
    }
    out
}

/// Where a window `[start, end)` should end: the last paragraph break, line break, sentence
/// end or space in its second half, else `end`.
fn cut_point(chars: &[(usize, char)], start: usize, end: usize) -> usize {
    let half = start + CHUNK_SIZE / 2;
    let window = &chars[half..end];
    let last =
        |pred: &dyn Fn(usize) -> bool| (0..window.len()).rev().find(|&i| pred(i)).map(|i| half + i);
    let c = |i: usize| window[i].1;
    last(&|i| c(i) == '\n' && i > 0 && c(i - 1) == '\n')
        .or_else(|| last(&|i| c(i) == '\n'))
        .or_else(|| {
            last(&|i| c(i).is_whitespace() && i > 0 && matches!(c(i - 1), '.' | '?' | '!' | '。'))
        })
        .or_else(|| last(&|i| c(i).is_whitespace()))
        .unwrap_or(end)
}

/// Where the chunk after `[start, end)` starts: at a line start inside the last
/// [`CHUNK_OVERLAP`] characters, else at a word start there, else exactly `end - overlap`;
/// always after `start`.
fn overlap_start(chars: &[(usize, char)], start: usize, end: usize) -> usize {
    let from = end.saturating_sub(CHUNK_OVERLAP).max(start + 1);
    let region = from..end;
    let after = |pred: &dyn Fn(char) -> bool| {
        region
            .clone()
            .find(|&i| i > 0 && pred(chars[i - 1].1) && !chars[i].1.is_whitespace())
    };
    after(&|p| p == '\n')
        .or_else(|| after(&char::is_whitespace))
        .unwrap_or(from)
}

/// The text of the last Markdown heading (`#` to `######`) in `before`, if any.
fn nearest_heading(before: &str) -> Option<&str> {
    before
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| l.starts_with('#') && l.trim_start_matches('#').starts_with(' '))
        .map(|l| l.trim_start_matches('#').trim())
        .filter(|h| !h.is_empty() && h.chars().count() <= MAX_TITLE_CHARS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_and_empty_texts() {
        assert!(chunk_text("   \n ").is_empty());
        assert!(chunk_text("too short").is_empty());
        let one = chunk_text(&"a".repeat(60));
        assert_eq!(one.len(), 1);
        assert_eq!(one[0].index, 0);
    }

    #[test]
    fn long_text_overlaps_and_prefers_paragraphs() {
        let para = "word ".repeat(100); // 500 chars
        let text = format!("{}\n\n{}\n\n{}", para.trim(), para.trim(), para.trim());
        let chunks = chunk_text(&text);
        assert!(chunks.len() >= 3);
        // The first chunk ends at the first paragraph break (it lies past the half).
        assert_eq!(chunks[0].text, para.trim());
        for c in &chunks {
            assert!(c.text.chars().count() <= CHUNK_SIZE);
        }
        let indices: Vec<u32> = chunks.iter().map(|c| c.index).collect();
        assert_eq!(indices, (0..chunks.len() as u32).collect::<Vec<_>>());
    }

    #[test]
    fn multibyte_text_is_cut_on_characters_with_overlap() {
        let text = "记忆宫殿".repeat(500); // 2000 chars, 6000 bytes, no line breaks
        let chunks = chunk_text(&text);
        assert_eq!(chunks[0].text.chars().count(), 800);
        // The second chunk starts 100 characters before the first ended.
        let tail: String = chunks[0].text.chars().skip(700).collect();
        assert!(chunks[1].text.starts_with(&tail));
        let emoji = "🚀".repeat(900);
        assert!(
            chunk_text(&emoji)
                .iter()
                .all(|c| c.text.chars().all(|ch| ch == '🚀'))
        );
    }

    #[test]
    fn every_character_is_covered() {
        let text: String = (0..3000)
            .map(|i| {
                if i % 97 == 0 {
                    '\n'
                } else {
                    char::from(b'a' + (i % 26) as u8)
                }
            })
            .collect();
        let chunks = chunk_text(&text);
        let joined_len: usize = chunks.iter().map(|c| c.text.len()).sum();
        assert!(joined_len >= text.trim().len());
        assert!(text.ends_with(chunks.last().unwrap().text.as_str()));
    }

    #[test]
    fn documents_keep_title_and_heading_and_never_cut_a_short_turn() {
        let mut text = String::from("Session 7 — 2023-05-08\n\n");
        for i in 0..40 {
            text.push_str(&format!(
                "{}: turn number {i} talks about the lighthouse, the beacon and the harbour.\n",
                if i % 2 == 0 { "Caroline" } else { "Melanie" }
            ));
        }
        text.push_str("\n## Plans\n\n");
        text.push_str(&"We will visit the museum on Saturday morning. ".repeat(30));
        let chunks = chunk_document(&text);
        assert!(chunks.len() >= 4, "{}", chunks.len());
        for c in &chunks {
            assert!(c.text.contains("Session 7 — 2023-05-08"), "{:?}", c.text);
            // Every line is a whole turn or sentence run: none starts mid-word.
            let body = c
                .text
                .split_once("\n\n")
                .map_or(c.text.as_str(), |(_, b)| b);
            let at = text
                .find(body)
                .expect("the body is verbatim text of the file");
            assert!(
                at == 0 || text[..at].ends_with(char::is_whitespace),
                "starts mid-word: {body:?}"
            );
        }
        let turns: Vec<&Chunk> = chunks
            .iter()
            .filter(|c| c.text.contains("turn number"))
            .collect();
        for c in turns {
            for line in c.text.lines().filter(|l| l.contains("turn number")) {
                assert!(line.ends_with("harbour."), "a turn was cut: {line:?}");
            }
        }
        let last = chunks.last().unwrap();
        assert!(
            last.text.contains("Session 7 — 2023-05-08 › Plans"),
            "{:?}",
            last.text
        );
        // Short files are one chunk, with no prefix.
        let short = chunk_document("# Note\n\nThe beacon was repaired on Tuesday by the keeper.");
        assert_eq!(short.len(), 1);
        assert!(short[0].text.starts_with("# Note"));
        // Text with no spaces at all still advances and covers everything.
        let dense = "记忆宫殿".repeat(500);
        let c = chunk_document(&dense);
        assert!(c.len() >= 2 && c.iter().all(|c| c.text.chars().count() <= CHUNK_SIZE + 200));
    }

    #[test]
    fn transcripts_are_cut_into_whole_turns_under_their_date() {
        let mut text = String::from("Date: Sunday, 25 September 2022, 10:55\n");
        for i in 0..30 {
            let who = if i % 2 == 0 { "Daniel" } else { "Sofia" };
            text.push_str(&format!(
                "{who}: message {i} about hiking and photography today\n"
            ));
            if i == 7 {
                text.push_str("and a second line of message 7, still Sofia's turn\n");
            }
        }
        text.push_str("Sofia: bye!\n");
        let chunks = chunk_document(&text);
        assert!(chunks.len() >= 6, "{} chunks", chunks.len());
        let mut seen = Vec::new();
        for (i, c) in chunks.iter().enumerate() {
            assert_eq!(c.index as usize, i);
            let (head, body) = c.text.split_once("\n\n").expect("a title line");
            assert_eq!(head, "Date: Sunday, 25 September 2022, 10:55");
            assert!(body.chars().count() <= TURN_CHUNK_SIZE + 60, "{body:?}");
            assert!(text.contains(body), "not verbatim: {body:?}");
            for line in body.lines() {
                assert!(
                    line.starts_with("Daniel: ")
                        || line.starts_with("Sofia: ")
                        || line.starts_with("and a"),
                    "{line:?}"
                );
            }
            assert!(
                !body.starts_with("and a"),
                "a turn's continuation was cut off its turn"
            );
            seen.extend(body.lines().map(str::to_string));
        }
        // Every turn is kept once, in order, the short last one included.
        let expected: Vec<&str> = text.lines().skip(1).collect();
        assert_eq!(seen, expected);
        // A first line that is a speaker's turn is not taken for a title.
        let chat = "Ann: hello there, how was the trip to Lisbon?\nBob: great, we saw the tram\n\
                    Ann: did you try the custard tarts?\nBob: every single day, twice\n";
        let c = chunk_document(chat);
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].text, chat.trim());
        // Time stamps, Markdown emphasis and a role in parentheses still name the speaker.
        assert_eq!(speaker_of("[10:55] Ann: hi there"), Some("Ann"));
        assert_eq!(speaker_of("(1:56 pm) Bob Lee: hello"), Some("Bob Lee"));
        assert_eq!(speaker_of("**Ann**: hi"), Some("Ann"));
        assert_eq!(speaker_of("**Ann:** hi"), Some("Ann"));
        assert_eq!(
            speaker_of("Speaker 1 (Caroline): yes"),
            Some("Speaker 1 (Caroline)")
        );
        assert_eq!(speaker_of("https://example.com/a: b"), None);
        assert_eq!(speaker_of("The plan for the next four weeks: ship"), None);
        assert_eq!(speaker_of("Ann:"), None);
        let stamped: String = (0..12)
            .map(|i| {
                format!(
                    "[{i}:00] {}: line {i} of a long chat about boats and ropes\n",
                    if i % 2 == 0 { "Ann" } else { "Bob" }
                )
            })
            .collect();
        let c = chunk_document(&format!("Session 3\n{stamped}"));
        assert!(c.len() >= 2, "{c:?}");
        assert!(
            c.iter().all(|c| c.text.starts_with("Session 3\n\n[")),
            "{c:?}"
        );
        // `key: value` lines are not a conversation.
        let yaml: String = (0..30)
            .map(|i| format!("setting_{i}: value number {i} for the service configuration\n"))
            .collect();
        assert!(chunk_transcript(yaml.trim()).is_none());
        // Prose with a few colons is not a transcript.
        let prose = format!(
            "Notes\n{}",
            "The plan: we ship on Friday after review.\nIt is long enough to need windows. "
                .repeat(30)
        );
        assert!(chunk_transcript(prose.trim()).is_none());
    }
}
