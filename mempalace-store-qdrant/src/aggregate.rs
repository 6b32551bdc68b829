//! Pure helpers for the read paths: id de-duplication, id-ordered pages and room counts.

use std::collections::{BTreeMap, HashSet};

use mempalace_core::{Page, RoomCount};
use qdrant_client::qdrant::FacetHit;
use qdrant_client::qdrant::facet_value::Variant;

/// `ids` without repeats, first occurrence kept, order preserved.
pub fn dedup_ids(ids: &[String]) -> Vec<&str> {
    let mut seen = HashSet::with_capacity(ids.len());
    ids.iter()
        .map(String::as_str)
        .filter(|id| seen.insert(*id))
        .collect()
}

/// The ids of one page: sorted by id (byte order, like `String`'s `Ord`), then `page.offset`
/// skipped and at most `page.limit` kept.
pub fn page_of(mut ids: Vec<String>, page: Page) -> Vec<String> {
    ids.sort_unstable();
    ids.dedup();
    ids.into_iter().skip(page.offset).take(page.limit).collect()
}

/// Room counts from ((wing, room), count) entries: summed, zero counts dropped, sorted by wing
/// then room.
pub fn room_counts(entries: impl IntoIterator<Item = ((String, String), u64)>) -> Vec<RoomCount> {
    let mut counts: BTreeMap<(String, String), u64> = BTreeMap::new();
    for (key, count) in entries {
        *counts.entry(key).or_default() += count;
    }
    counts
        .into_iter()
        .filter(|(_, count)| *count > 0)
        .map(|((wing, room), count)| RoomCount { wing, room, count })
        .collect()
}

/// The keyword and count of a facet hit (`None` for non-string values, which our keyword
/// fields never hold).
pub fn facet_keyword(hit: &FacetHit) -> Option<(String, u64)> {
    match hit.value.as_ref()?.variant.as_ref()? {
        Variant::StringValue(s) => Some((s.clone(), hit.count)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use qdrant_client::qdrant::FacetValue;

    use super::*;

    #[test]
    fn dedup_keeps_first_occurrence_order() {
        let ids: Vec<String> = ["b", "a", "b", "c", "a"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(dedup_ids(&ids), ["b", "a", "c"]);
        assert!(dedup_ids(&[]).is_empty());
    }

    #[test]
    fn pages_are_in_byte_order_and_cover_everything_once() {
        let ids: Vec<String> = ["d00010", "d00002", "项目", "Z", "a", "d00001"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let mut sorted = ids.clone();
        sorted.sort();
        let mut seen = Vec::new();
        let mut offset = 0;
        loop {
            let p = page_of(ids.clone(), Page { offset, limit: 4 });
            if p.is_empty() {
                break;
            }
            offset += p.len();
            seen.extend(p);
        }
        assert_eq!(seen, sorted);
        assert_eq!(seen[0], "Z");
        assert!(
            page_of(
                ids.clone(),
                Page {
                    offset: 100,
                    limit: 4
                }
            )
            .is_empty()
        );
        assert!(
            page_of(
                ids,
                Page {
                    offset: 0,
                    limit: 0
                }
            )
            .is_empty()
        );
    }

    #[test]
    fn room_counts_sum_sort_and_drop_zeroes() {
        let e = |w: &str, r: &str, c: u64| ((w.to_string(), r.to_string()), c);
        let got = room_counts([
            e("b", "x", 2),
            e("a", "z", 1),
            e("a", "y", 3),
            e("b", "x", 1),
            e("c", "q", 0),
        ]);
        let want = vec![
            RoomCount {
                wing: "a".into(),
                room: "y".into(),
                count: 3,
            },
            RoomCount {
                wing: "a".into(),
                room: "z".into(),
                count: 1,
            },
            RoomCount {
                wing: "b".into(),
                room: "x".into(),
                count: 3,
            },
        ];
        assert_eq!(got, want);
        assert!(room_counts([]).is_empty());
    }

    #[test]
    fn facet_hits_yield_their_keyword() {
        let hit = |v: Option<Variant>, count| FacetHit {
            value: Some(FacetValue { variant: v }),
            count,
        };
        assert_eq!(
            facet_keyword(&hit(Some(Variant::StringValue("🚀 launch".into())), 4)),
            Some(("🚀 launch".into(), 4))
        );
        assert_eq!(facet_keyword(&hit(Some(Variant::IntegerValue(3)), 4)), None);
        assert_eq!(facet_keyword(&hit(None, 4)), None);
        assert_eq!(
            facet_keyword(&FacetHit {
                value: None,
                count: 1
            }),
            None
        );
    }
}
