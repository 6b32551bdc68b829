//! Room counts remembered per table version: `status` and the taxonomy of an unchanged table
//! answer without a scan. Every commit, by this process or another, makes a new table version
//! (and reads check for the latest one), so a remembered count is never stale. An append made
//! here carries the unfiltered counts to its own version when it is the very next commit, so
//! `status` after `add_drawer` does not count the table again.

use std::collections::HashMap;
use std::sync::Mutex;

use mempalace_core::RoomCount;

/// Most filters remembered for one version.
const MAX_FILTERS: usize = 64;

/// The room counts of one table version, by filter predicate.
#[derive(Default)]
pub(crate) struct RoomCountCache {
    state: Mutex<CachedVersion>,
}

#[derive(Default)]
struct CachedVersion {
    version: u64,
    by_filter: HashMap<Option<String>, Vec<RoomCount>>,
}

impl RoomCountCache {
    /// The counts remembered for `predicate` at `version`, if any.
    pub(crate) fn get(&self, version: u64, predicate: &Option<String>) -> Option<Vec<RoomCount>> {
        let state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if state.version != version {
            return None;
        }
        state.by_filter.get(predicate).cloned()
    }

    /// Remembers `counts` for `predicate` at `version`, forgetting older versions.
    pub(crate) fn put(&self, version: u64, predicate: Option<String>, counts: &[RoomCount]) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if state.version != version {
            if version < state.version {
                return;
            }
            state.version = version;
            state.by_filter.clear();
        }
        if state.by_filter.len() >= MAX_FILTERS {
            state.by_filter.clear();
        }
        state.by_filter.insert(predicate, counts.to_vec());
    }

    /// After this process appended rows filed under `added` (a wing and room per row) in the
    /// commit that made version `committed`: when that commit directly follows the version
    /// remembered, the unfiltered counts move to it with the rows added. Filtered counts are
    /// forgotten (a filter may read other columns). Any other commit in between (another
    /// writer, a compaction) leaves the cache behind, and the next read counts again.
    pub(crate) fn after_append(&self, committed: u64, added: &[(&str, &str)]) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if committed != state.version + 1 {
            return;
        }
        let unfiltered = state.by_filter.remove(&None);
        state.by_filter.clear();
        state.version = committed;
        let Some(mut counts) = unfiltered else {
            return;
        };
        for &(wing, room) in added {
            match counts.binary_search_by(|c| (c.wing.as_str(), c.room.as_str()).cmp(&(wing, room)))
            {
                Ok(i) => counts[i].count += 1,
                Err(i) => counts.insert(
                    i,
                    RoomCount {
                        wing: wing.to_string(),
                        room: room.to_string(),
                        count: 1,
                    },
                ),
            }
        }
        state.by_filter.insert(None, counts);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(n: u64) -> Vec<RoomCount> {
        vec![RoomCount {
            wing: "w".into(),
            room: "r".into(),
            count: n,
        }]
    }

    #[test]
    fn remembers_per_version_and_filter() {
        let cache = RoomCountCache::default();
        assert_eq!(cache.get(3, &None), None);
        cache.put(3, None, &counts(5));
        cache.put(3, Some("wing = 'w'".into()), &counts(2));
        assert_eq!(cache.get(3, &None), Some(counts(5)));
        assert_eq!(cache.get(3, &Some("wing = 'w'".into())), Some(counts(2)));
        // A new version forgets everything remembered for the old one.
        assert_eq!(cache.get(4, &None), None);
        cache.put(4, None, &counts(6));
        assert_eq!(cache.get(3, &None), None);
        assert_eq!(cache.get(4, &Some("wing = 'w'".into())), None);
        // A late answer for an older version does not replace the newer one.
        cache.put(3, None, &counts(5));
        assert_eq!(cache.get(4, &None), Some(counts(6)));
    }

    fn room(wing: &str, room: &str, count: u64) -> RoomCount {
        RoomCount {
            wing: wing.into(),
            room: room.into(),
            count,
        }
    }

    #[test]
    fn an_append_that_is_the_next_commit_carries_the_unfiltered_counts_forward() {
        let cache = RoomCountCache::default();
        cache.put(7, None, &[room("a", "x", 2), room("c", "z", 1)]);
        cache.put(7, Some("wing = 'a'".into()), &[room("a", "x", 2)]);
        cache.after_append(8, &[("a", "x"), ("b", "y"), ("d", "w"), ("b", "y")]);
        assert_eq!(
            cache.get(8, &None),
            Some(vec![
                room("a", "x", 3),
                room("b", "y", 2),
                room("c", "z", 1),
                room("d", "w", 1),
            ]),
            "counts added in (wing, room) order, as a count reads them"
        );
        // A filtered count may depend on columns the append does not tell: counted again.
        assert_eq!(cache.get(8, &Some("wing = 'a'".into())), None);
        assert_eq!(cache.get(7, &None), None);
    }

    #[test]
    fn an_append_after_a_commit_not_seen_here_leaves_the_counts_to_be_counted_again() {
        let cache = RoomCountCache::default();
        cache.put(7, None, &[room("a", "x", 2)]);
        // Version 8 was another writer's (or a compaction's): 9 cannot be derived from 7.
        cache.after_append(9, &[("a", "x")]);
        assert_eq!(cache.get(9, &None), None);
        assert_eq!(cache.get(7, &None), Some(vec![room("a", "x", 2)]));
        // Nothing remembered to carry: the version moves on with nothing for it.
        let empty = RoomCountCache::default();
        empty.after_append(1, &[("a", "x")]);
        assert_eq!(empty.get(1, &None), None);
    }
}
