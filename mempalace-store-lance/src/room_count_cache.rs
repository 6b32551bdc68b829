//! Room counts remembered per table version: `status` and the taxonomy of an unchanged table
//! answer without a scan. Every commit, by this process or another, makes a new table version
//! (and reads check for the latest one), so a remembered count is never stale.

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
}
