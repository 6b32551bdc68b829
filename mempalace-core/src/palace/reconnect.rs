//! `reconnect`: MemPalace 3.11's way to drop stale state after another program changed the
//! palace. Every read here goes to the stores' latest committed state, so there is no cache
//! to drop; the call checks the palace is there and answers what it now holds.

use serde::{Deserialize, Serialize};

use super::Palace;
use crate::error::Result;
use crate::filter::DrawerFilter;

/// `reconnect` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reconnected {
    /// Always true (failures are errors).
    pub success: bool,
    /// A line to show.
    pub message: String,
    /// Drawers the palace holds now.
    pub drawers: u64,
}

impl Palace {
    /// Re-reads the palace as it is on disk now (see the module docs) and answers its size.
    pub async fn reconnect(&self) -> Result<Reconnected> {
        self.require_palace().await?;
        let drawers = self.store.count(&DrawerFilter::all()).await?;
        Ok(Reconnected {
            success: true,
            message: "Reconnected to palace".into(),
            drawers,
        })
    }
}
