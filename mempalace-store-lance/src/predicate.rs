//! Drawer filters as Lance SQL predicates, with every value quoted and escaped.

use mempalace_core::DrawerFilter;

/// A SQL string literal: single quotes, an inner `'` doubled. Lance's SQL dialect treats a
/// backslash as an ordinary character, so nothing else needs escaping.
pub fn sql_string(value: &str) -> String {
    format!("'{}'", value.replace('\'', "''"))
}

/// The predicate selecting a filter's drawers, or `None` for "everything". `dated`: the
/// table has the `authored_at` column, so time bounds compare `coalesce(authored_at,
/// filed_at)` (a drawer's words' date when known); without it they compare `filed_at`.
pub fn filter_predicate(filter: &DrawerFilter, dated: bool) -> Option<String> {
    let mut parts = Vec::new();
    if let Some(w) = &filter.wing {
        parts.push(format!("wing = {}", sql_string(w)));
    }
    if let Some(r) = &filter.room {
        parts.push(format!("room = {}", sql_string(r)));
    }
    if let Some(s) = &filter.source_file {
        parts.push(format!("source_file = {}", sql_string(s)));
    }
    if let Some(ids) = &filter.ids {
        parts.push(if ids.is_empty() {
            "false".to_string()
        } else {
            ids_predicate(ids)
        });
    }
    let date = if dated {
        "coalesce(authored_at, filed_at)"
    } else {
        "filed_at"
    };
    if let Some(from) = &filter.filed_from {
        parts.push(format!("{date} >= {}", sql_string(from)));
    }
    if let Some(before) = &filter.filed_before {
        parts.push(format!("{date} < {}", sql_string(before)));
    }
    (!parts.is_empty()).then(|| parts.join(" AND "))
}

/// `id IN ('a', 'b')` for a non-empty list of ids.
pub(crate) fn ids_predicate(ids: &[String]) -> String {
    let list: Vec<String> = ids.iter().map(|id| sql_string(id)).collect();
    format!("id IN ({})", list.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_are_doubled_and_nothing_else_changes() {
        assert_eq!(sql_string("o'brien"), "'o''brien'");
        assert_eq!(sql_string("x\" OR 1=1"), "'x\" OR 1=1'");
        assert_eq!(sql_string("a\\'b"), "'a\\''b'");
        assert_eq!(sql_string("' OR '1'='1"), "''' OR ''1''=''1'");
    }

    #[test]
    fn filters_combine_with_and() {
        assert_eq!(filter_predicate(&DrawerFilter::all(), true), None);
        assert_eq!(
            filter_predicate(&DrawerFilter::wing("w").with_room("r'x"), true).as_deref(),
            Some("wing = 'w' AND room = 'r''x'")
        );
        assert_eq!(
            ids_predicate(&["a".into(), "b'".into()]),
            "id IN ('a', 'b''')"
        );
        assert_eq!(
            filter_predicate(
                &DrawerFilter::wing("w")
                    .with_ids(vec!["x".into()])
                    .filed_between(Some("2026-01-01T00:00:00".into()), Some("2026-02'".into())),
                false
            )
            .as_deref(),
            Some(
                "wing = 'w' AND id IN ('x') AND filed_at >= '2026-01-01T00:00:00' AND filed_at < '2026-02'''"
            )
        );
        assert_eq!(
            filter_predicate(
                &DrawerFilter::all().filed_between(Some("2026-01-01".into()), None),
                true
            )
            .as_deref(),
            Some("coalesce(authored_at, filed_at) >= '2026-01-01'")
        );
        assert_eq!(
            filter_predicate(&DrawerFilter::all().with_ids(Vec::new()), true).as_deref(),
            Some("false")
        );
    }
}
