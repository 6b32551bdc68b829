//! Dates of knowledge-graph facts, exactly as MemPalace 3.11 has them (the knowledge-graph
//! file is shared with it, so both must read every value the same way).
//!
//! A `valid_from`, `valid_to`, `ended`, `at` or `as_of` value is a date `YYYY-MM-DD` or a UTC
//! timestamp `YYYY-MM-DDTHH:MM:SSZ` (`+00:00` is stored as `Z`); nothing else is accepted,
//! because the values are compared as text. For comparison a date stands for its first
//! instant as a start (`T00:00:00Z`) and its last as an end (`T23:59:59Z`), and validity is
//! half-open at the top: a fact is valid at `as_of` when
//!
//! ```text
//! (valid_from IS NULL OR start_key(valid_from) <= start_key(as_of))
//!     AND (valid_to IS NULL OR end_key(valid_to) > start_key(as_of))
//! ```
//!
//! so a fact and its successor that share a boundary instant (see `supersede`) are never
//! valid together, while a fact ending on a date stays valid through that whole day.

use chrono::{DateTime, NaiveDate, NaiveDateTime, Utc};

use crate::error::{PalaceError, Result};

/// Validates a date or UTC timestamp and returns its stored form (see the module docs): a
/// surrounding space is dropped and `+00:00` becomes `Z`.
pub fn canonical_date(field: &'static str, value: &str) -> Result<String> {
    let v = value.trim();
    let bad = || {
        PalaceError::invalid(
            field,
            format!(
                "{field}={v:?} is not a valid ISO-8601 date or UTC datetime \
                 (expected YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ)"
            ),
        )
    };
    if is_date_only(v) {
        NaiveDate::parse_from_str(v, "%Y-%m-%d").map_err(|_| bad())?;
        return Ok(v.to_string());
    }
    if !v.is_ascii() {
        return Err(bad());
    }
    let b = v.as_bytes();
    let shaped = ((b.len() == 20 && b[19] == b'Z') || (b.len() == 25 && v.ends_with("+00:00")))
        && b[10] == b'T'
        && b[13] == b':'
        && b[16] == b':'
        && is_date_only(&v[..10])
        && [11, 12, 14, 15, 17, 18]
            .iter()
            .all(|&i| b[i].is_ascii_digit());
    if !shaped {
        return Err(bad());
    }
    let stored = format!("{}Z", &v[..19]);
    DateTime::parse_from_rfc3339(&stored).map_err(|_| bad())?;
    Ok(stored)
}

/// Whether a value has the shape of a date `YYYY-MM-DD` (ASCII digits and dashes only).
pub fn is_date_only(v: &str) -> bool {
    let b = v.as_bytes();
    b.len() == 10
        && b.iter().enumerate().all(|(i, c)| {
            if i == 4 || i == 7 {
                *c == b'-'
            } else {
                c.is_ascii_digit()
            }
        })
}

/// The comparable instant of a start (`valid_from`, `as_of`): a date's first second.
pub fn start_key(value: &str) -> String {
    if is_date_only(value) {
        format!("{value}T00:00:00Z")
    } else {
        value.to_string()
    }
}

/// The comparable instant of an end (`valid_to`): a date's last second.
pub fn end_key(value: &str) -> String {
    if is_date_only(value) {
        format!("{value}T23:59:59Z")
    } else {
        value.to_string()
    }
}

/// Whether a fact with these stored bounds is valid at `as_of` (half-open at the top).
pub fn valid_at(valid_from: Option<&str>, valid_to: Option<&str>, as_of: &str) -> bool {
    let at = start_key(as_of);
    valid_from.is_none_or(|from| start_key(from) <= at)
        && valid_to.is_none_or(|to| end_key(to) > at)
}

/// Whether `valid_to` ends before `valid_from` starts (an inverted interval, which no query
/// would ever return).
pub fn ends_before_start(valid_from: &str, valid_to: &str) -> bool {
    end_key(valid_to) < start_key(valid_from)
}

/// Where a fact's interval lies relative to an instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bucket {
    /// Started and not ended.
    Active,
    /// Ended before the instant.
    Historical,
    /// Starts after the instant.
    Future,
}

/// 3.11's grouping of a fact for `kg_query` at `now` (a UTC timestamp).
pub fn interval_bucket(valid_from: Option<&str>, valid_to: Option<&str>, now: &str) -> Bucket {
    if valid_from.is_some_and(|f| start_key(f).as_str() > now) {
        Bucket::Future
    } else if valid_to.is_some_and(|t| end_key(t).as_str() < now) {
        Bucket::Historical
    } else {
        Bucket::Active
    }
}

/// The comparable instant of a query's `as_of` ([`start_key`] of its canonical form), or
/// `None` for no date restriction.
pub fn as_of_key(as_of: Option<&str>) -> Result<Option<String>> {
    as_of
        .map(|d| canonical_date("as_of", d).map(|d| start_key(&d)))
        .transpose()
}

/// The instant a supersede happens at: `at` validated, a date taken as its first second
/// (`T00:00:00Z`), or now in UTC when `at` is not given.
pub fn supersede_boundary(at: Option<&str>) -> Result<String> {
    match at.map(str::trim).filter(|a| !a.is_empty()) {
        None => Ok(Utc::now().format("%Y-%m-%dT%H:%M:%SZ").to_string()),
        Some(a) => Ok(start_key(&canonical_date("at", a)?)),
    }
}

/// A timestamp without a time zone (a trailing `Z` is dropped): `YYYY-MM-DD`, then `T` or a
/// space, then `HH:MM`, optionally `:SS` and a fraction.
pub fn parse_naive_timestamp(v: &str) -> Option<NaiveDateTime> {
    let naive = v.strip_suffix('Z').unwrap_or(v);
    [
        "%Y-%m-%dT%H:%M:%S%.f",
        "%Y-%m-%d %H:%M:%S%.f",
        "%Y-%m-%dT%H:%M",
        "%Y-%m-%d %H:%M",
    ]
    .iter()
    .find_map(|fmt| NaiveDateTime::parse_from_str(naive, fmt).ok())
}

/// Today's date in local time, `YYYY-MM-DD` (the default end of an invalidated fact).
pub fn today() -> String {
    chrono::Local::now().format("%Y-%m-%d").to_string()
}

/// The current local time as MemPalace writes `filed_at`: ISO 8601 with microseconds.
pub fn now_iso() -> String {
    chrono::Local::now()
        .format("%Y-%m-%dT%H:%M:%S%.6f")
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepted_forms_are_3_11s() {
        assert_eq!(canonical_date("d", " 2025-06-01 ").unwrap(), "2025-06-01");
        assert_eq!(
            canonical_date("d", "2025-06-01T09:30:00Z").unwrap(),
            "2025-06-01T09:30:00Z"
        );
        assert_eq!(
            canonical_date("d", "2025-06-01T09:30:00+00:00").unwrap(),
            "2025-06-01T09:30:00Z"
        );
        for bad in [
            "",
            "yesterday",
            "2025",
            "2025-06",
            "2025-13-01",
            "2025-02-30",
            "20250601",
            "2025-6-1",
            "2025-06-01T09:30",
            "2025-06-01T09:30:00",
            "2025-06-01 09:30:00Z",
            "2025-06-01T09:30:00.5Z",
            "2025-06-01T23:30:00-02:00",
            "2025-06-01T24:00:00Z",
            "2025-06-01T09:60:00Z",
            "+2025-01-01",
            "12025-01-01",
            "\u{ff12}025-06-01",
        ] {
            assert!(canonical_date("d", bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn validity_is_half_open_with_whole_day_dates() {
        // A fact from 2025-06-01 to 2025-06-30 (dates: the whole last day is included).
        let (f, t) = (Some("2025-06-01"), Some("2025-06-30"));
        assert!(!valid_at(f, t, "2025-05-31"));
        assert!(!valid_at(f, t, "2025-05-31T23:59:59Z"));
        assert!(valid_at(f, t, "2025-06-01"));
        assert!(valid_at(f, t, "2025-06-01T00:00:00Z"));
        assert!(valid_at(f, t, "2025-06-30"));
        assert!(valid_at(f, t, "2025-06-30T23:59:58Z"));
        assert!(!valid_at(f, t, "2025-06-30T23:59:59Z"));
        assert!(!valid_at(f, t, "2025-07-01"));
        // A supersede boundary: the old fact ends where the new one starts.
        let b = "2025-06-15T12:00:00Z";
        assert!(valid_at(None, Some(b), "2025-06-15T11:59:59Z"));
        assert!(!valid_at(None, Some(b), b));
        assert!(valid_at(Some(b), None, b));
        // A timestamp start is not valid earlier on its day.
        assert!(!valid_at(Some(b), None, "2025-06-15"));
    }

    #[test]
    fn inverted_intervals_and_boundaries() {
        assert!(ends_before_start("2025-06-02", "2025-06-01"));
        assert!(!ends_before_start("2025-06-01", "2025-06-01"));
        assert!(!ends_before_start("2025-06-01T10:00:00Z", "2025-06-01"));
        assert!(ends_before_start(
            "2025-06-01T10:00:00Z",
            "2025-06-01T09:00:00Z"
        ));
        assert_eq!(
            supersede_boundary(Some("2025-06-01")).unwrap(),
            "2025-06-01T00:00:00Z"
        );
        assert_eq!(
            supersede_boundary(Some("2025-06-01T08:00:00+00:00")).unwrap(),
            "2025-06-01T08:00:00Z"
        );
        assert!(supersede_boundary(Some("June")).is_err());
        let now = supersede_boundary(None).unwrap();
        assert!(canonical_date("at", &now).is_ok(), "{now}");
    }
}
