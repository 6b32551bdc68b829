//! Dates of knowledge-graph facts: parsing, canonical form and interval comparison.
//!
//! A fact's `valid_from` / `valid_to` may be a year (`2025`), a month (`2025-06`), a day
//! (`2025-06-01`) or a timestamp (`2025-06-01T09:30:00`, with or without `Z`/offset, `T` or a
//! space). Every value is stored in canonical form: the same precision, zero padded, and
//! timestamps with an offset converted to UTC and cut to whole seconds. A value stands for its
//! whole *granule* (the whole day, the whole second, ...), and both ends of a validity interval
//! are inclusive. Canonical strings sort chronologically, and a granule's first instant sorts as
//! the string itself while its last instant sorts as the string followed by `~` (which is above
//! every digit, `-`, `:` and `T`). So a fact is valid at `as_of` exactly when
//!
//! ```text
//! (valid_from IS NULL OR valid_from <= as_of || '~') AND (valid_to IS NULL OR valid_to || '~' >= as_of)
//! ```
//!
//! which a SQL backend evaluates on plain text columns, and [`valid_at`] evaluates in Rust.

use chrono::{DateTime, Datelike, Duration, Months, NaiveDate, NaiveDateTime, Utc};

use crate::error::{PalaceError, Result};

/// The suffix that turns a canonical value into the sort key of its granule's last instant.
pub const GRANULE_END_SUFFIX: char = '~';

/// Parses a date or timestamp and returns its canonical text (see the module docs).
pub fn canonical_date(field: &'static str, value: &str) -> Result<String> {
    let v = value.trim();
    let bad = || {
        PalaceError::invalid(
            field,
            format!(
                "{value:?} is not a date (expected YYYY, YYYY-MM, YYYY-MM-DD or an ISO 8601 timestamp)"
            ),
        )
    };
    // Every accepted form starts with a four-digit year (0000-9999), as MemPalace's do: chrono
    // alone would also take signed and five-digit years, whose arithmetic overflows.
    let b = v.as_bytes();
    if b.len() < 4 || !b[..4].iter().all(u8::is_ascii_digit) || (b.len() > 4 && b[4] != b'-') {
        return Err(bad());
    }
    // Year or month.
    if v.len() == 4 && v.bytes().all(|b| b.is_ascii_digit()) {
        return Ok(v.to_string());
    }
    if v.len() == 7 && v.as_bytes()[4] == b'-' {
        let d = NaiveDate::parse_from_str(&format!("{v}-01"), "%Y-%m-%d").map_err(|_| bad())?;
        return Ok(format!("{:04}-{:02}", d.year(), d.month()));
    }
    if v.len() == 10 {
        let d = NaiveDate::parse_from_str(v, "%Y-%m-%d").map_err(|_| bad())?;
        return Ok(d.format("%Y-%m-%d").to_string());
    }
    // Timestamps: with an offset (converted to UTC) or naive.
    if let Ok(dt) = DateTime::parse_from_rfc3339(v) {
        return Ok(dt
            .with_timezone(&Utc)
            .format("%Y-%m-%dT%H:%M:%S")
            .to_string());
    }
    for fmt in [
        "%Y-%m-%dT%H:%M:%S%.f%:z",
        "%Y-%m-%d %H:%M:%S%.f%:z",
        "%Y-%m-%dT%H:%M%:z",
    ] {
        if let Ok(dt) = DateTime::parse_from_str(v, fmt) {
            return Ok(dt
                .with_timezone(&Utc)
                .format("%Y-%m-%dT%H:%M:%S")
                .to_string());
        }
    }
    parse_naive_timestamp(v)
        .map(|dt| dt.format("%Y-%m-%dT%H:%M:%S").to_string())
        .ok_or_else(bad)
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

/// The sort key of the last instant of a canonical value's granule.
pub fn granule_end_key(canonical: &str) -> String {
    format!("{canonical}{GRANULE_END_SUFFIX}")
}

/// Whether an interval with these (canonical, inclusive) ends is valid at `as_of`.
pub fn valid_at(valid_from: Option<&str>, valid_to: Option<&str>, as_of: &str) -> bool {
    valid_from.is_none_or(|from| from <= granule_end_key(as_of).as_str())
        && valid_to.is_none_or(|to| granule_end_key(to).as_str() >= as_of)
}

/// Whether `valid_to` ends before `valid_from` starts (an empty, invalid interval).
pub fn ends_before_start(valid_from: &str, valid_to: &str) -> bool {
    granule_end_key(valid_to).as_str() < valid_from
}

/// The granule just before a canonical value's (the previous year, month, day or second), used
/// to close an old fact when a new one starts, so no instant sees both. There is none before
/// the year 0000: that is an error, never an overflow.
pub fn previous_granule(canonical: &str) -> Result<String> {
    let bad = || PalaceError::invalid("date", format!("{canonical:?} is not a canonical date"));
    let too_early = || {
        PalaceError::invalid(
            "date",
            format!("{canonical:?} is the first representable instant; nothing comes before it"),
        )
    };
    let in_range = |year: i32| (0..=9999).contains(&year);
    match canonical.len() {
        4 => {
            let y: i32 = canonical.parse().map_err(|_| bad())?;
            let p = y
                .checked_sub(1)
                .filter(|p| in_range(*p))
                .ok_or_else(too_early)?;
            Ok(format!("{p:04}"))
        }
        7 => {
            let d = NaiveDate::parse_from_str(&format!("{canonical}-01"), "%Y-%m-%d")
                .map_err(|_| bad())?;
            let p = d
                .checked_sub_months(Months::new(1))
                .filter(|p| in_range(p.year()))
                .ok_or_else(too_early)?;
            Ok(format!("{:04}-{:02}", p.year(), p.month()))
        }
        10 => {
            let d = NaiveDate::parse_from_str(canonical, "%Y-%m-%d").map_err(|_| bad())?;
            let p = d
                .checked_sub_signed(Duration::days(1))
                .filter(|p| in_range(p.year()))
                .ok_or_else(too_early)?;
            Ok(p.format("%Y-%m-%d").to_string())
        }
        _ => {
            let dt =
                NaiveDateTime::parse_from_str(canonical, "%Y-%m-%dT%H:%M:%S").map_err(|_| bad())?;
            let p = dt
                .checked_sub_signed(Duration::seconds(1))
                .filter(|p| in_range(p.year()))
                .ok_or_else(too_early)?;
            Ok(p.format("%Y-%m-%dT%H:%M:%S").to_string())
        }
    }
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
    fn canonical_forms() {
        assert_eq!(canonical_date("d", "2025").unwrap(), "2025");
        assert_eq!(canonical_date("d", "2025-06").unwrap(), "2025-06");
        assert_eq!(canonical_date("d", " 2025-06-01 ").unwrap(), "2025-06-01");
        assert_eq!(
            canonical_date("d", "2025-06-01T09:30").unwrap(),
            "2025-06-01T09:30:00"
        );
        assert_eq!(
            canonical_date("d", "2025-06-01 09:30:15.123").unwrap(),
            "2025-06-01T09:30:15"
        );
        assert_eq!(
            canonical_date("d", "2025-06-01T23:30:00-02:00").unwrap(),
            "2025-06-02T01:30:00"
        );
        assert_eq!(
            canonical_date("d", "2025-06-01T09:30:00Z").unwrap(),
            "2025-06-01T09:30:00"
        );
        for bad in [
            "",
            "yesterday",
            "2025-13-01",
            "2025-02-30",
            "20250601",
            "2025-6-1",
            "-262143-01-01T00:00:00",
            "+2025-01-01",
            "12025-01-01",
            "12025",
            "-001",
            "99999-12-31T23:59:59",
            "2025x",
        ] {
            assert!(canonical_date("d", bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn inclusive_granules_compare_across_precisions() {
        // A fact from 2025-06-01 to 2025-06-30.
        let (f, t) = (Some("2025-06-01"), Some("2025-06-30"));
        assert!(!valid_at(f, t, "2025-05-31"));
        assert!(valid_at(f, t, "2025-06-01"));
        assert!(valid_at(f, t, "2025-06-01T00:00:00"));
        assert!(valid_at(f, t, "2025-06-30"));
        assert!(valid_at(f, t, "2025-06-30T23:59:59"));
        assert!(!valid_at(f, t, "2025-07-01"));
        assert!(valid_at(f, t, "2025-06"));
        assert!(valid_at(f, t, "2025"));
        assert!(!valid_at(f, t, "2024"));
        // Timestamp bounds against day queries.
        assert!(valid_at(Some("2025-06-01T15:00:00"), None, "2025-06-01"));
        assert!(!valid_at(Some("2025-06-02T00:00:00"), None, "2025-06-01"));
        assert!(valid_at(None, Some("2025-06-01T15:00:00"), "2025-06-01"));
        assert!(!valid_at(
            None,
            Some("2025-06-01T15:00:00"),
            "2025-06-01T15:00:01"
        ));
    }

    #[test]
    fn previous_granules_never_overlap_the_next() {
        for (v, p) in [
            ("2025", "2024"),
            ("2025-01", "2024-12"),
            ("2025-03-01", "2025-02-28"),
            ("2025-01-01T00:00:00", "2024-12-31T23:59:59"),
        ] {
            assert_eq!(previous_granule(v).unwrap(), p);
            assert!(!valid_at(None, Some(p), v));
            assert!(valid_at(Some(v), None, v));
        }
        for first in ["0000", "0000-01", "0000-01-01", "0000-01-01T00:00:00"] {
            assert!(previous_granule(first).is_err(), "{first}");
        }
        assert!(previous_granule("-262143-01-01T00:00:00").is_err());
        assert!(ends_before_start("2025-06-02", "2025-06-01"));
        assert!(!ends_before_start("2025-06-01", "2025-06-01"));
        assert!(!ends_before_start("2025-06-01T10:00:00", "2025-06-01"));
    }
}
