//! Input validation shared by every palace operation: names, content, limits, thresholds.

use crate::drawer::Drawer;
use crate::error::{PalaceError, Result};

/// Longest wing or room name accepted, in characters.
pub const MAX_NAME_CHARS: usize = 128;
/// Largest drawer content accepted, in bytes (a drawer is a chunk, not a whole book).
pub const MAX_CONTENT_BYTES: usize = 1024 * 1024;

/// Longest `source_file` accepted, in bytes (Linux's PATH_MAX): it is echoed by every search.
pub const MAX_SOURCE_FILE_BYTES: usize = 4096;
/// Longest search query accepted, in bytes; the model reads only its first 256 tokens anyway.
pub const MAX_QUERY_BYTES: usize = 16 * 1024;

/// Checks a drawer's `source_file`: at most [`MAX_SOURCE_FILE_BYTES`], no control characters.
pub fn validate_source_file(source_file: &str) -> Result<()> {
    if source_file.len() > MAX_SOURCE_FILE_BYTES {
        return Err(PalaceError::invalid(
            "source_file",
            format!(
                "{} bytes is over the limit of {MAX_SOURCE_FILE_BYTES} bytes",
                source_file.len()
            ),
        ));
    }
    if source_file.chars().any(char::is_control) {
        return Err(PalaceError::invalid(
            "source_file",
            format!("{source_file:?} contains control characters"),
        ));
    }
    Ok(())
}

/// Checks a stored record's id (a drawer's or a closet's): not blank, no control characters.
pub fn validate_record_id(kind: &str, id: &str) -> Result<()> {
    if id.trim().is_empty() || id.chars().any(char::is_control) {
        return Err(PalaceError::invalid(
            "id",
            format!("{id:?} is not a {kind} id"),
        ));
    }
    Ok(())
}

/// Checks a whole drawer as it would be stored: its id, wing, room, text and source file.
pub fn validate_drawer(d: &Drawer) -> Result<()> {
    validate_record_id("drawer", &d.id)?;
    validate_name("wing", &d.metadata.wing)?;
    validate_name("room", &d.metadata.room)?;
    validate_content(&d.text)?;
    validate_source_file(&d.metadata.source_file)
}

/// Checks a whole closet as it would be stored: its id, wing, room, line and source file.
pub fn validate_closet(c: &crate::closets::Closet) -> Result<()> {
    validate_record_id("closet", &c.id)?;
    validate_name("wing", &c.wing)?;
    validate_name("room", &c.room)?;
    validate_content(&c.text)?;
    validate_source_file(&c.source_file)
}

/// Checks a search query: not blank, at most [`MAX_QUERY_BYTES`].
pub fn validate_query(query: &str) -> Result<()> {
    if query.trim().is_empty() {
        return Err(PalaceError::invalid("query", "must not be empty"));
    }
    if query.len() > MAX_QUERY_BYTES {
        return Err(PalaceError::invalid(
            "query",
            format!(
                "{} bytes is over the limit of {MAX_QUERY_BYTES} bytes; search with a shorter query",
                query.len()
            ),
        ));
    }
    Ok(())
}

/// Checks a listing offset is at most `max` (deeper pages cost a sort of everything before
/// them: narrow the listing by wing or room instead).
pub fn validate_offset(offset: usize, max: usize) -> Result<()> {
    if offset > max {
        return Err(PalaceError::invalid(
            "offset",
            format!("{offset} is over the limit of {max}; narrow the listing by wing or room"),
        ));
    }
    Ok(())
}

/// Checks a wing or room name: non-empty, no surrounding white space, at most
/// [`MAX_NAME_CHARS`] characters, and none of the characters that would break ids, paths or
/// filters (control characters, `/`, `\`). Any other Unicode (Chinese, emoji, quotes) is fine:
/// backends must escape filter values, never rely on the name being tame.
pub fn validate_name(field: &'static str, name: &str) -> Result<()> {
    if name.trim().is_empty() {
        return Err(PalaceError::invalid(field, "must not be empty"));
    }
    if name.trim() != name {
        return Err(PalaceError::invalid(
            field,
            format!("{name:?} has leading or trailing white space"),
        ));
    }
    if name.chars().count() > MAX_NAME_CHARS {
        return Err(PalaceError::invalid(
            field,
            format!("longer than {MAX_NAME_CHARS} characters"),
        ));
    }
    if let Some(bad) = name
        .chars()
        .find(|c| c.is_control() || *c == '/' || *c == '\\')
    {
        return Err(PalaceError::invalid(
            field,
            format!(
                "{name:?} contains the forbidden character {bad:?} (control characters, '/' and '\\' are not allowed)"
            ),
        ));
    }
    Ok(())
}

/// MemPalace 3.11's wing spelling (`normalize_wing_name`): lower case, spaces and `-` as
/// `_`, no `_` at either end (so a path-encoded folder `-home-me-app` is `home_me_app`).
/// Empty when nothing is left.
pub fn normalize_wing_name(name: &str) -> String {
    name.to_lowercase()
        .replace([' ', '-'], "_")
        .trim_matches('_')
        .to_string()
}

/// Checks drawer content: not empty or white space only, at most [`MAX_CONTENT_BYTES`].
pub fn validate_content(content: &str) -> Result<()> {
    if content.trim().is_empty() {
        return Err(PalaceError::invalid(
            "content",
            "must not be empty or white space only",
        ));
    }
    if content.len() > MAX_CONTENT_BYTES {
        return Err(PalaceError::invalid(
            "content",
            format!(
                "{} bytes is over the limit of {MAX_CONTENT_BYTES} bytes; split it into several drawers",
                content.len()
            ),
        ));
    }
    Ok(())
}

/// Checks a store write pairs each drawer with one vector (`drawers[i]` goes with
/// `vectors[i]`), as every [`crate::VectorStore`] write takes them.
pub fn validate_vector_pairs(drawers: &[Drawer], vectors: &[Vec<f32>]) -> Result<()> {
    if drawers.len() != vectors.len() {
        return Err(PalaceError::invalid(
            "vectors",
            format!("{} drawers but {} vectors", drawers.len(), vectors.len()),
        ));
    }
    Ok(())
}

/// Checks a similarity threshold is a number in [0, 1].
pub fn validate_threshold(threshold: f64) -> Result<()> {
    if !(0.0..=1.0).contains(&threshold) {
        return Err(PalaceError::invalid(
            "threshold",
            format!("{threshold} is outside [0, 1]"),
        ));
    }
    Ok(())
}

/// Checks a result limit is at least 1 and caps it at `max`.
pub fn clamp_limit(limit: usize, max: usize) -> Result<usize> {
    if limit == 0 {
        return Err(PalaceError::invalid("limit", "must be at least 1"));
    }
    Ok(limit.min(max))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_accept_unicode_and_quotes() {
        for ok in [
            "wing_code",
            "项目",
            "🚀 launch",
            "o'brien",
            "x\" OR 1=1",
            "my-project.v2",
        ] {
            validate_name("wing", ok).unwrap();
        }
    }

    #[test]
    fn names_reject_empty_padded_control_and_separators() {
        for bad in [
            "",
            "   ",
            " lead",
            "trail ",
            "a/b",
            "a\\b",
            "new\nline",
            "nul\0",
        ] {
            assert!(
                validate_name("room", bad).is_err(),
                "{bad:?} should be rejected"
            );
        }
        assert!(validate_name("room", &"x".repeat(MAX_NAME_CHARS + 1)).is_err());
        validate_name("room", &"字".repeat(MAX_NAME_CHARS)).unwrap();
    }

    #[test]
    fn content_threshold_and_limit_rules() {
        assert!(validate_content(" \n\t").is_err());
        assert!(validate_content(&"a".repeat(MAX_CONTENT_BYTES + 1)).is_err());
        validate_content("fine").unwrap();
        assert!(validate_threshold(-0.01).is_err());
        assert!(validate_threshold(1.01).is_err());
        assert!(validate_threshold(f64::NAN).is_err());
        validate_threshold(0.9).unwrap();
        assert!(clamp_limit(0, 100).is_err());
        assert_eq!(clamp_limit(5, 100).unwrap(), 5);
        assert_eq!(clamp_limit(1_000_000, 100).unwrap(), 100);
    }

    #[test]
    fn source_file_query_and_offset_bounds() {
        validate_source_file("/home/u/notes.md").unwrap();
        validate_source_file("").unwrap();
        assert!(validate_source_file(&"a".repeat(MAX_SOURCE_FILE_BYTES + 1)).is_err());
        assert!(validate_source_file("a\u{1b}[2Jb").is_err());
        validate_query("fox").unwrap();
        assert!(validate_query("  ").is_err());
        assert!(validate_query(&"q".repeat(MAX_QUERY_BYTES + 1)).is_err());
        validate_offset(10, 10).unwrap();
        assert!(validate_offset(11, 10).is_err());
    }
}
