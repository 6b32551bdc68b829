//! Drawer filters by wing, room and source file.

use serde::{Deserialize, Serialize};

use crate::drawer::Drawer;

/// Restricts an operation to drawers matching every field that is set (all unset: everything).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct DrawerFilter {
    /// Only drawers in this wing.
    pub wing: Option<String>,
    /// Only drawers in this room.
    pub room: Option<String>,
    /// Only drawers from this source file (exact match on the stored path).
    pub source_file: Option<String>,
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

    /// True when no condition is set.
    pub fn is_empty(&self) -> bool {
        self.wing.is_none() && self.room.is_none() && self.source_file.is_none()
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
    }
}
