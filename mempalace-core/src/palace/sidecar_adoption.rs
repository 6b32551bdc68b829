//! Bringing another store's sidecars into the palace's own: when a palace's sidecars move
//! (a fleet palace's coordination log, links and closets from each host's files to the shared
//! server), what the old ones hold is copied over, keeping everything already stored.

use serde::Serialize;

use super::Palace;
use super::export_ops::merge_links;
use crate::closets::ClosetIndex;
use crate::coordination::{CoordinationLog, EventFilter};
use crate::error::Result;
use crate::palace_links::PalaceLinks;

/// Rows copied per read.
const PAGE: usize = 500;

/// What [`Palace::adopt_sidecars`] copied (records already stored are not counted).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SidecarsAdopted {
    /// Coordination events.
    pub events: u64,
    /// Coordination artifacts.
    pub artifacts: u64,
    /// Tunnel records.
    pub tunnels: u64,
    /// Hallway records.
    pub hallways: u64,
    /// Closets.
    pub closets: u64,
}

impl SidecarsAdopted {
    /// Whether anything was copied.
    pub fn is_empty(&self) -> bool {
        *self == SidecarsAdopted::default()
    }
}

impl Palace {
    /// Copies what `log`, `links` and `closets` hold into the palace's own sidecars, leaving
    /// every record already there as it is (same ids): events keep their ids, authors and clock
    /// stamps (after their artifacts), link records their fields, closets their text. Safe to
    /// run again (nothing is copied twice) and from several processes at once.
    pub async fn adopt_sidecars(
        &self,
        log: &dyn CoordinationLog,
        links: &dyn PalaceLinks,
        closets: &dyn ClosetIndex,
    ) -> Result<SidecarsAdopted> {
        let mut adopted = SidecarsAdopted::default();
        let own_log = self.coordination.log();
        let mut after: Option<String> = None;
        loop {
            let page = log.artifact_rows(after.as_deref(), PAGE).await?;
            let Some(last) = page.last() else { break };
            after = Some(last.id.clone());
            for artifact in &page {
                adopted.artifacts += u64::from(own_log.import_artifact(artifact).await?);
            }
        }
        let mut cursor: Option<String> = None;
        loop {
            let page = log.list_events(&EventFilter::after(cursor, PAGE)).await?;
            let Some(last) = page.last() else { break };
            cursor = Some(last.id.clone());
            for event in &page {
                adopted.events += u64::from(own_log.import_event(event).await?);
            }
        }
        adopted.tunnels =
            merge_links(self.links.as_ref(), links.tunnel_records().await?, true).await?;
        adopted.hallways =
            merge_links(self.links.as_ref(), links.hallway_records().await?, false).await?;
        let mut after: Option<String> = None;
        loop {
            let page = closets.closet_rows(after.as_deref(), PAGE).await?;
            let Some(last) = page.last() else { break };
            after = Some(last.id.clone());
            adopted.closets += self.closets.insert_missing(&page).await? as u64;
        }
        Ok(adopted)
    }
}
