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
}
