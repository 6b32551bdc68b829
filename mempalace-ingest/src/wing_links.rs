//! After a mine, the wing's links are rebuilt from its drawers' names, as 3.11's miner does:
//! its hallways, then (project mines) the entity tunnels to other wings. A failure here never
//! fails the mine: the drawers are filed, and the report says why the links were not.

use mempalace_core::palace::HallwayRebuild;
use mempalace_core::{Cancellation, Palace};
use serde::Serialize;

/// The links a mine rebuilt for its wing.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct WingLinks {
    /// The wing's hallways after the mine.
    pub hallways: usize,
    /// Entity tunnels created or refreshed from the wing (project mines only).
    pub entity_tunnels: usize,
    /// Why the hallways were not rebuilt, when that failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hallway_error: Option<String>,
    /// Why the entity tunnels were not rebuilt, when that failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tunnel_error: Option<String>,
}

/// Rebuilds `wing`'s hallways and, when `with_tunnels`, its entity tunnels (each step on its
/// own, as 3.11 does); `cancel` stops the hallway rebuild between pages, changing nothing.
pub async fn rebuild_wing_links(
    palace: &Palace,
    wing: &str,
    with_tunnels: bool,
    cancel: &Cancellation,
) -> WingLinks {
    let mut links = WingLinks::default();
    let options = HallwayRebuild {
        min_count: None,
        cancel: cancel.clone(),
    };
    match palace.rebuild_wing_hallways(wing, &options).await {
        Ok(hallways) => links.hallways = hallways.len(),
        Err(e) => {
            tracing::warn!(error = %e, wing, "hallways not rebuilt");
            links.hallway_error = Some(e.to_string());
        }
    }
    if with_tunnels && !cancel.is_cancelled() {
        match palace.link_wing_entities(wing).await {
            Ok(n) => links.entity_tunnels = n,
            Err(e) => {
                tracing::warn!(error = %e, wing, "entity tunnels not rebuilt");
                links.tunnel_error = Some(e.to_string());
            }
        }
    }
    links
}
