//! DrawerFilter -> Qdrant filter: every set field becomes a `must` condition (keyword match,
//! id set, datetime range), evaluated by the server (nothing is filtered client-side).

use chrono::NaiveDateTime;
use mempalace_core::DrawerFilter;
use prost_types::Timestamp;
use qdrant_client::qdrant::r#match::MatchValue;
use qdrant_client::qdrant::{Condition, DatetimeRange, Filter};

use crate::ids::point_id;
use crate::payload::{AUTHORED_AT, FILED_AT, ROOM, SOURCE_FILE, WING};

/// An exact keyword match of `field` against `value`.
///
/// Built explicitly as `MatchValue::Keyword`: the client's `From<String>` conversion turns a
/// value containing whitespace (e.g. the room "🚀 launch") into a full-text match.
pub fn keyword(field: &str, value: &str) -> Condition {
    Condition::matches(field, MatchValue::Keyword(value.to_string()))
}

/// The `must` conditions for a drawer filter (wing, room, source file, ids, filing time, in
/// that order).
pub fn conditions(filter: &DrawerFilter) -> Vec<Condition> {
    let mut must: Vec<Condition> = [
        (WING, &filter.wing),
        (ROOM, &filter.room),
        (SOURCE_FILE, &filter.source_file),
    ]
    .into_iter()
    .filter_map(|(field, value)| value.as_deref().map(|v| keyword(field, v)))
    .collect();
    if let Some(ids) = &filter.ids {
        // The point ids are derived from the drawer ids; an empty list matches nothing.
        must.push(Condition::has_id(ids.iter().map(|id| point_id(id))));
    }
    if filter.filed_from.is_some() || filter.filed_before.is_some() {
        // A drawer's date: when its words were written if known, else when it was filed.
        let range = || DatetimeRange {
            gte: filter.filed_from.as_deref().map(timestamp),
            lt: filter.filed_before.as_deref().map(timestamp),
            ..DatetimeRange::default()
        };
        must.push(
            Filter::should([
                Condition::datetime_range(AUTHORED_AT, range()),
                Filter::must([
                    Condition::is_empty(AUTHORED_AT),
                    Condition::datetime_range(FILED_AT, range()),
                ])
                .into(),
            ])
            .into(),
        );
    }
    must
}

/// A canonical `YYYY-MM-DDTHH:MM:SS[.f]` bound as the timestamp Qdrant compares with: the
/// wall-clock time read as UTC, as Qdrant reads the stored `filed_at` (which has no zone).
fn timestamp(canonical: &str) -> Timestamp {
    let parsed = NaiveDateTime::parse_from_str(canonical, "%Y-%m-%dT%H:%M:%S%.f")
        .or_else(|_| NaiveDateTime::parse_from_str(canonical, "%Y-%m-%dT%H:%M:%S"))
        .unwrap_or_default()
        .and_utc();
    Timestamp {
        seconds: parsed.timestamp(),
        nanos: i32::try_from(parsed.timestamp_subsec_nanos()).unwrap_or(0),
    }
}

/// The Qdrant filter for a drawer filter; `None` when it matches everything.
pub fn to_qdrant_filter(filter: &DrawerFilter) -> Option<Filter> {
    let must = conditions(filter);
    (!must.is_empty()).then(|| Filter::must(must))
}

/// The Qdrant filter for a drawer filter narrowed to one wing (used for per-wing facets).
pub fn within_wing(filter: &DrawerFilter, wing: &str) -> Filter {
    let mut narrowed = filter.clone();
    narrowed.wing = Some(wing.to_string());
    Filter::must(conditions(&narrowed))
}

#[cfg(test)]
mod tests {
    use qdrant_client::qdrant::condition::ConditionOneOf;

    use super::*;

    fn keyword_of(c: &Condition) -> (String, String) {
        match &c.condition_one_of {
            Some(ConditionOneOf::Field(f)) => {
                match f.r#match.as_ref().and_then(|m| m.match_value.as_ref()) {
                    Some(MatchValue::Keyword(v)) => (f.key.clone(), v.clone()),
                    other => panic!("expected a keyword match, got {other:?}"),
                }
            }
            other => panic!("expected a field condition, got {other:?}"),
        }
    }

    #[test]
    fn empty_filter_is_none() {
        assert!(to_qdrant_filter(&DrawerFilter::all()).is_none());
        assert!(conditions(&DrawerFilter::all()).is_empty());
    }

    #[test]
    fn every_field_is_a_must_keyword_match() {
        let f = DrawerFilter::wing("wing_code")
            .with_room("auth")
            .with_source_file("/a/b.md");
        let q = to_qdrant_filter(&f).unwrap();
        assert!(q.should.is_empty() && q.must_not.is_empty());
        let got: Vec<_> = q.must.iter().map(keyword_of).collect();
        assert_eq!(
            got,
            vec![
                ("wing".to_string(), "wing_code".to_string()),
                ("room".to_string(), "auth".to_string()),
                ("source_file".to_string(), "/a/b.md".to_string()),
            ]
        );
        let only_room = to_qdrant_filter(&DrawerFilter::room("diary")).unwrap();
        assert_eq!(
            only_room.must.iter().map(keyword_of).collect::<Vec<_>>(),
            vec![("room".into(), "diary".into())]
        );
    }

    #[test]
    fn whitespace_and_hostile_values_stay_exact_keywords() {
        for v in [
            "🚀 launch",
            "x\" OR 1=1",
            "x' OR '1'='1",
            "a\\'b",
            "%",
            "_",
            "semi; DROP TABLE t; --",
            "",
            " ",
        ] {
            let q = to_qdrant_filter(&DrawerFilter::room(v)).unwrap();
            assert_eq!(keyword_of(&q.must[0]), ("room".to_string(), v.to_string()));
        }
    }

    #[test]
    fn within_wing_overrides_the_wing_and_keeps_the_rest() {
        let f = DrawerFilter::wing("a").with_room("r b");
        let q = within_wing(&f, "项目");
        let got: Vec<_> = q.must.iter().map(keyword_of).collect();
        assert_eq!(
            got,
            vec![
                ("wing".into(), "项目".into()),
                ("room".into(), "r b".into())
            ]
        );
        let q = within_wing(&DrawerFilter::all(), "w");
        assert_eq!(q.must.len(), 1);
    }
}
