//! Input validation shared by every palace operation: names, content, limits, thresholds.

use crate::error::{PalaceError, Result};

/// Longest wing or room name accepted, in characters.
pub const MAX_NAME_CHARS: usize = 128;
/// Largest drawer content accepted, in bytes (a drawer is a chunk, not a whole book).
pub const MAX_CONTENT_BYTES: usize = 1024 * 1024;

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
}
