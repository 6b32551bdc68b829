//! `repair-status` as a Palace method (the types and rules are in [`crate::store_health`]).

use super::Palace;
use crate::error::Result;
use crate::store_health::{HealthVerdict, RepairStatus, store_findings};

impl Palace {
    /// `repair-status`: rows, indexes and their lag, the graph's counts and what needs a look;
    /// reads only. A folder with no palace is [`crate::PalaceError::NoPalace`].
    pub async fn repair_status(&self) -> Result<RepairStatus> {
        self.require_palace().await?;
        let store = self.store.health().await?;
        let mut findings = store_findings(&store);
        let knowledge_graph = match self.kg.stats().await {
            Ok(stats) => Some(stats),
            Err(e) => {
                findings.push(format!("the knowledge graph could not be read: {e}"));
                None
            }
        };
        let status = if !findings.is_empty() {
            HealthVerdict::Attention
        } else if store.rows == 0 {
            HealthVerdict::Empty
        } else {
            HealthVerdict::Ok
        };
        Ok(RepairStatus {
            palace_path: self.path.clone(),
            status,
            store,
            knowledge_graph,
            findings,
        })
    }
}
