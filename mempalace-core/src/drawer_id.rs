//! Drawer ids: `drawer_{wing}_{room}_{16 hex of md5}`, as MemPalace forms them.

use md5::{Digest, Md5};

/// The first 16 hex digits of the md5 of `input`.
fn md5_16(input: &str) -> String {
    let digest = Md5::digest(input.as_bytes());
    hex::encode(digest)[..16].to_string()
}

/// The id of a drawer filed by an agent: md5 of the first 100 characters of the content plus
/// the filing timestamp (exactly MemPalace's `content[:100] + datetime.now().isoformat()`).
pub fn agent_drawer_id(wing: &str, room: &str, content: &str, timestamp: &str) -> String {
    let head: String = content.chars().take(100).collect();
    format!(
        "drawer_{wing}_{room}_{}",
        md5_16(&format!("{head}{timestamp}"))
    )
}

/// The deterministic id of a mined chunk: md5 of wing, source path and chunk index, so that
/// re-mining an unchanged file writes the same ids and a changed file replaces its chunks.
pub fn mined_drawer_id(wing: &str, room: &str, source_file: &str, chunk_index: u32) -> String {
    format!(
        "drawer_{wing}_{room}_{}",
        md5_16(&format!("{wing}\u{1f}{source_file}\u{1f}{chunk_index}"))
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agent_id_matches_python_md5_of_head_plus_timestamp() {
        // python: hashlib.md5(("hello" + "2026-01-01T00:00:00").encode()).hexdigest()[:16]
        let id = agent_drawer_id("w", "r", "hello", "2026-01-01T00:00:00");
        let expected = &hex::encode(Md5::digest(b"hello2026-01-01T00:00:00"))[..16];
        assert_eq!(id, format!("drawer_w_r_{expected}"));
        assert_eq!(id.len(), "drawer_w_r_".len() + 16);
    }

    #[test]
    fn agent_id_uses_only_first_100_characters_not_bytes() {
        let long_a = format!("{}{}", "é".repeat(100), "tail one");
        let long_b = format!("{}{}", "é".repeat(100), "tail two");
        assert_eq!(
            agent_drawer_id("w", "r", &long_a, "t"),
            agent_drawer_id("w", "r", &long_b, "t")
        );
        assert_ne!(
            agent_drawer_id("w", "r", "a", "t"),
            agent_drawer_id("w", "r", "b", "t")
        );
    }

    #[test]
    fn mined_ids_are_deterministic_and_distinct_per_chunk() {
        let a = mined_drawer_id("proj", "src", "/p/a.rs", 0);
        assert_eq!(a, mined_drawer_id("proj", "src", "/p/a.rs", 0));
        assert_ne!(a, mined_drawer_id("proj", "src", "/p/a.rs", 1));
        assert_ne!(a, mined_drawer_id("proj", "src", "/p/b.rs", 0));
        assert!(a.starts_with("drawer_proj_src_"));
    }
}
