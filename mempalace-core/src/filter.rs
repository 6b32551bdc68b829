//! Drawer filters by wing, room, source file, id and filing time.

use serde::{Deserialize, Serialize};

use crate::drawer::Drawer;

/// Restricts an operation to drawers matching every field that is set (all unset: everything).
///
/// `filed_from` / `filed_before` compare a drawer's date ([`crate::DrawerMetadata::dated_at`]:
/// when its words were written if known, else when it was filed) as text; [`crate::Palace`]
/// hands stores canonical `YYYY-MM-DDTHH:MM:SS[.ffffff]` bounds, which sort chronologically.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct DrawerFilter {
    /// Only drawers in this wing.
    pub wing: Option<String>,
    /// Only drawers in this room.
    pub room: Option<String>,
    /// Only drawers from this source file (exact match on the stored path).
    pub source_file: Option<String>,
    /// Only drawers with one of these ids (an empty list matches nothing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ids: Option<Vec<String>>,
    /// Only drawers dated at or after this instant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filed_from: Option<String>,
    /// Only drawers dated before this instant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filed_before: Option<String>,
}

impl DrawerFilter {
    /// A filter that matches everything.
    pub fn all() -> Self {
        Self::default()
    }

    /// A filter on one wing.
    pub fn wing(wing: impl Into<String>) -> Self {
        Self {
            wing: Some(wing.into()),
            ..Self::default()
        }
    }

    /// A filter on one room (in any wing).
    pub fn room(room: impl Into<String>) -> Self {
        Self {
            room: Some(room.into()),
            ..Self::default()
        }
    }

    /// Adds a wing condition.
    pub fn with_wing(mut self, wing: impl Into<String>) -> Self {
        self.wing = Some(wing.into());
        self
    }

    /// Adds a room condition.
    pub fn with_room(mut self, room: impl Into<String>) -> Self {
        self.room = Some(room.into());
        self
    }

    /// Adds a source-file condition.
    pub fn with_source_file(mut self, source_file: impl Into<String>) -> Self {
        self.source_file = Some(source_file.into());
        self
    }

    /// Adds an id condition: only these drawers.
    pub fn with_ids(mut self, ids: Vec<String>) -> Self {
        self.ids = Some(ids);
        self
    }

    /// Adds a filing-time window: at or after `from`, before `before` (either may be open).
    pub fn filed_between(mut self, from: Option<String>, before: Option<String>) -> Self {
        self.filed_from = from;
        self.filed_before = before;
        self
    }

    /// True when no condition is set.
    pub fn is_empty(&self) -> bool {
        self.wing.is_none()
            && self.room.is_none()
            && self.source_file.is_none()
            && self.ids.is_none()
            && self.filed_from.is_none()
            && self.filed_before.is_none()
    }

    /// Whether a drawer satisfies the filter (used by in-process stores; real backends push
    /// the filter down into their query language instead).
    pub fn matches(&self, drawer: &Drawer) -> bool {
        let m = &drawer.metadata;
        self.wing.as_deref().is_none_or(|w| w == m.wing)
            && self.room.as_deref().is_none_or(|r| r == m.room)
            && self
                .source_file
                .as_deref()
                .is_none_or(|s| s == m.source_file)
            && self.ids.as_ref().is_none_or(|ids| ids.contains(&drawer.id))
            && self
                .filed_from
                .as_deref()
                .is_none_or(|from| m.dated_at() >= from)
            && self
                .filed_before
                .as_deref()
                .is_none_or(|before| m.dated_at() < before)
    }
}
