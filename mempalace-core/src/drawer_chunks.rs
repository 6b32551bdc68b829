//! Long `add_drawer` content filed as several chunk drawers, in MemPalace 3.11's layout:
//! content over [`CHUNK_SIZE`] characters is cut every [`CHUNK_SIZE`] characters, each piece
//! is its own drawer `{drawer_id}_chunk_{index:06}` (so no part of it lies past the
//! embedder's window), and the drawer id names the whole group for get, delete and search.

use crate::chunking::CHUNK_SIZE;

/// The id of piece `index` of the drawer `drawer_id`.
pub fn chunk_id(drawer_id: &str, index: usize) -> String {
    format!("{drawer_id}_chunk_{index:06}")
}

/// The drawer a chunk id belongs to (`None` for an id that is not a chunk's).
pub fn parent_of(id: &str) -> Option<&str> {
    let (parent, index) = id.rsplit_once("_chunk_")?;
    (index.len() == 6 && index.bytes().all(|b| b.is_ascii_digit()) && !parent.is_empty())
        .then_some(parent)
}

/// The pieces `content` is filed as: itself when it fits in [`CHUNK_SIZE`] characters, else
/// consecutive [`CHUNK_SIZE`]-character pieces (the last shorter), cut on characters.
pub fn split_content(content: &str) -> Vec<String> {
    let chars: Vec<char> = content.chars().collect();
    if chars.len() <= CHUNK_SIZE {
        return vec![content.to_string()];
    }
    chars
        .chunks(CHUNK_SIZE)
        .map(|piece| piece.iter().collect())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_name_their_drawer() {
        let id = chunk_id("drawer_w_r_0123456789abcdef", 7);
        assert_eq!(id, "drawer_w_r_0123456789abcdef_chunk_000007");
        assert_eq!(parent_of(&id), Some("drawer_w_r_0123456789abcdef"));
        assert_eq!(parent_of("drawer_w_r_0123456789abcdef"), None);
        assert_eq!(parent_of("x_chunk_12"), None);
        assert_eq!(parent_of("_chunk_000001"), None);
    }

    #[test]
    fn long_content_is_cut_on_characters_and_rejoins_exactly() {
        assert_eq!(split_content("short"), vec!["short".to_string()]);
        let exact = "a".repeat(CHUNK_SIZE);
        assert_eq!(split_content(&exact).len(), 1);
        let long = "记忆宫殿 and words ".repeat(200);
        let pieces = split_content(&long);
        assert_eq!(pieces.len(), long.chars().count().div_ceil(CHUNK_SIZE));
        assert!(pieces.iter().all(|p| p.chars().count() <= CHUNK_SIZE));
        assert_eq!(pieces.concat(), long);
    }
}
