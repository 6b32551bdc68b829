//! Turn timestamps from exports (ISO 8601 with a zone, or Unix seconds) in the form drawers
//! store them: local wall-clock `YYYY-MM-DDTHH:MM:SS`, like `filed_at`, so one `since` /
//! `before` bound reads both the same way.

use chrono::{DateTime, Local, NaiveDateTime, TimeZone, Utc};
use serde_json::Value;

/// The stored form of an instant: local time, to the second.
pub fn local_iso(instant: DateTime<Utc>) -> String {
    instant
        .with_timezone(&Local)
        .format("%Y-%m-%dT%H:%M:%S")
        .to_string()
}

/// An ISO 8601 timestamp with a zone (`Z`, `+01:00`), read as that instant; one without a
/// zone is taken as local time already. `None` when it is not a timestamp.
pub fn from_iso(text: &str) -> Option<String> {
    let text = text.trim();
    if let Ok(t) = DateTime::parse_from_rfc3339(text) {
        return Some(local_iso(t.with_timezone(&Utc)));
    }
    ["%Y-%m-%dT%H:%M:%S%.f", "%Y-%m-%d %H:%M:%S%.f"]
        .iter()
        .find_map(|f| NaiveDateTime::parse_from_str(text, f).ok())
        .map(|t| t.format("%Y-%m-%dT%H:%M:%S").to_string())
}

/// Unix time in seconds (fractions allowed; values past the year 33658 are taken as
/// milliseconds), as ChatGPT's `create_time` and Slack's `ts` give it.
pub fn from_unix_seconds(seconds: f64) -> Option<String> {
    if !seconds.is_finite() || seconds <= 0.0 {
        return None;
    }
    let seconds = if seconds > 1e12 {
        seconds / 1000.0
    } else {
        seconds
    };
    let whole = seconds.trunc() as i64;
    let nanos = ((seconds - seconds.trunc()) * 1e9) as u32;
    Utc.timestamp_opt(whole, nanos).single().map(local_iso)
}

/// A JSON value holding a timestamp in any of those forms (a number, a numeric string, or
/// an ISO string).
pub fn from_json(value: &Value) -> Option<String> {
    match value {
        Value::Number(n) => n.as_f64().and_then(from_unix_seconds),
        Value::String(s) => match s.trim().parse::<f64>() {
            Ok(seconds) => from_unix_seconds(seconds),
            Err(_) => from_iso(s),
        },
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn utc(text: &str) -> String {
        local_iso(
            DateTime::parse_from_rfc3339(text)
                .unwrap()
                .with_timezone(&Utc),
        )
    }

    #[test]
    fn every_export_form_lands_on_the_same_local_instant() {
        let want = utc("2025-01-15T10:30:00Z");
        assert_eq!(
            from_iso("2025-01-15T10:30:00.123Z").as_deref(),
            Some(&*want)
        );
        assert_eq!(
            from_iso("2025-01-15T11:30:00+01:00").as_deref(),
            Some(&*want)
        );
        assert_eq!(from_unix_seconds(1_736_937_000.5).as_deref(), Some(&*want));
        assert_eq!(
            from_unix_seconds(1_736_937_000_000.0).as_deref(),
            Some(&*want)
        );
        assert_eq!(
            from_json(&Value::String("1736937000.000100".into())).as_deref(),
            Some(&*want)
        );
        assert_eq!(
            from_json(&serde_json::json!(1736937000)).as_deref(),
            Some(&*want)
        );
        assert_eq!(
            from_iso("2025-01-15T10:30:00").as_deref(),
            Some("2025-01-15T10:30:00")
        );
    }

    #[test]
    fn junk_is_no_timestamp() {
        assert_eq!(from_iso("yesterday"), None);
        assert_eq!(from_json(&Value::Null), None);
        assert_eq!(from_json(&serde_json::json!(-5)), None);
        assert_eq!(from_json(&serde_json::json!(f64::MAX)), None);
    }
}
