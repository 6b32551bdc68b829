//! The palace graph as Palace methods: rooms that share a name across wings (passive
//! tunnels), explicit tunnels between two places, and hallways, over the palace's
//! [`crate::palace_links::PalaceLinks`] store and the drawers' room counts.

use serde::{Deserialize, Serialize};

use super::Palace;
use crate::error::{PalaceError, Result};
use crate::filter::DrawerFilter;
use crate::palace_links::{
    GraphStats, HallwayPage, NewTunnel, PassiveTunnel, RoomPlacement, Traversal, Tunnel,
    TunnelConnection, filter_tunnels_by_wing, find_tunnels, follow_tunnels, graph_stats,
    hallway_page, traverse,
};
use crate::reports::preview;
use crate::validation::validate_name;

/// Characters of a connected drawer shown by `follow_tunnels`.
const PREVIEW_CHARS: usize = 300;

/// `delete_tunnel` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TunnelDeleted {
    /// The id asked for.
    pub deleted: String,
    /// Whether a tunnel with that id existed.
    pub existed: bool,
}

/// `delete_hallway` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HallwayDeleted {
    /// Whether a hallway with that id existed (and is now gone).
    pub deleted: bool,
}

impl Palace {
    /// Every (wing, room) with its drawer count.
    async fn placements(&self) -> Result<Vec<RoomPlacement>> {
        self.require_palace().await?;
        Ok(self
            .store
            .room_counts(&DrawerFilter::all())
            .await?
            .into_iter()
            .map(|c| RoomPlacement::new(c.wing, c.room, c.count))
            .collect())
    }

    /// Walks from a room to the rooms that share a wing with it, up to `max_hops` (1 to 10,
    /// default 2); an unknown room answers an error with close names.
    pub async fn traverse(&self, start_room: &str, max_hops: Option<i64>) -> Result<Traversal> {
        let placements = self.placements().await?;
        Ok(traverse(&placements, start_room, max_hops.unwrap_or(2)))
    }

    /// Rooms whose name appears in several wings (in both `wing_a` and `wing_b` when given).
    pub async fn find_tunnels(
        &self,
        wing_a: Option<&str>,
        wing_b: Option<&str>,
    ) -> Result<Vec<PassiveTunnel>> {
        for (field, w) in [("wing_a", wing_a), ("wing_b", wing_b)] {
            if let Some(w) = w {
                validate_name(field, w)?;
            }
        }
        let placements = self.placements().await?;
        Ok(find_tunnels(&placements, wing_a, wing_b))
    }

    /// Palace graph overview: rooms, tunnel rooms, explicit tunnels, rooms per wing.
    pub async fn graph_stats(&self) -> Result<GraphStats> {
        let placements = self.placements().await?;
        let explicit = self.links.list_tunnels().await?.len();
        Ok(graph_stats(&placements, explicit))
    }

    /// Creates (or relabels) the symmetric tunnel between two existing rooms.
    pub async fn create_tunnel(&self, tunnel: NewTunnel) -> Result<Tunnel> {
        for (field, v) in [
            ("source_wing", &tunnel.source_wing),
            ("source_room", &tunnel.source_room),
            ("target_wing", &tunnel.target_wing),
            ("target_room", &tunnel.target_room),
        ] {
            validate_name(field, v)?;
        }
        let placements = self.placements().await?;
        for (end, wing, room) in [
            ("Source", &tunnel.source_wing, &tunnel.source_room),
            ("Target", &tunnel.target_wing, &tunnel.target_room),
        ] {
            if !placements
                .iter()
                .any(|p| &p.wing == wing && &p.room == room)
            {
                return Err(PalaceError::invalid(
                    if end == "Source" {
                        "source_room"
                    } else {
                        "target_room"
                    },
                    format!("{end} room '{room}' does not exist in wing '{wing}'"),
                ));
            }
        }
        self.links.upsert_tunnel(tunnel).await
    }

    /// Explicit tunnels, all or those with `wing` at either end.
    pub async fn list_tunnels(&self, wing: Option<&str>) -> Result<Vec<Tunnel>> {
        if let Some(w) = wing {
            validate_name("wing", w)?;
        }
        Ok(filter_tunnels_by_wing(
            self.links.list_tunnels().await?,
            wing,
        ))
    }

    /// Deletes an explicit tunnel by id.
    pub async fn delete_tunnel(&self, tunnel_id: &str) -> Result<TunnelDeleted> {
        let existed = self.links.delete_tunnel(tunnel_id).await?;
        Ok(TunnelDeleted {
            deleted: tunnel_id.to_string(),
            existed,
        })
    }

    /// The places the explicit tunnels of `wing`/`room` lead to, with a preview of a linked
    /// drawer; following them is recorded as a traversal of each.
    pub async fn follow_tunnels(&self, wing: &str, room: &str) -> Result<Vec<TunnelConnection>> {
        validate_name("wing", wing)?;
        validate_name("room", room)?;
        let tunnels = self.links.list_tunnels().await?;
        let mut connections = follow_tunnels(&tunnels, wing, room);
        for c in &mut connections {
            if let Some(id) = c.drawer_id.clone()
                && let Some(d) = self.drawer_group(&id).await?.into_iter().next()
            {
                c.drawer_preview = Some(preview(&d.text, PREVIEW_CHARS));
            }
        }
        if !connections.is_empty() {
            let ids: Vec<String> = connections.iter().map(|c| c.tunnel_id.clone()).collect();
            self.links.record_traversals(&ids).await?;
        }
        Ok(connections)
    }

    /// Hallways (entity co-occurrence links within a wing), strongest first, a page at a time
    /// (limit 1 to 500, default 100).
    pub async fn list_hallways(
        &self,
        wing: Option<&str>,
        limit: Option<i64>,
        offset: Option<i64>,
    ) -> Result<HallwayPage> {
        if let Some(w) = wing {
            validate_name("wing", w)?;
        }
        let hallways = self.links.list_hallways(wing).await?;
        Ok(hallway_page(hallways, limit, offset))
    }

    /// Drops every hallway record of `wing` (its entities now live in other wings, as after a
    /// `wings split`), in one locked rewrite; how many went. Records are matched as stored, so
    /// ones that do not parse as hallways go too.
    pub async fn drop_wing_hallways(&self, wing: &str) -> Result<u64> {
        validate_name("wing", wing)?;
        let wing = wing.to_string();
        let dropped = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
        let count = std::sync::Arc::clone(&dropped);
        self.links
            .edit_hallway_records(Box::new(move |records| {
                let before = records.len();
                records.retain(|h| {
                    h.get("wing").and_then(serde_json::Value::as_str) != Some(wing.as_str())
                });
                let n = (before - records.len()) as u64;
                count.store(n, std::sync::atomic::Ordering::Relaxed);
                n > 0
            }))
            .await?;
        Ok(dropped.load(std::sync::atomic::Ordering::Relaxed))
    }

    /// Deletes a hallway by id.
    pub async fn delete_hallway(&self, hallway_id: &str) -> Result<HallwayDeleted> {
        Ok(HallwayDeleted {
            deleted: self.links.delete_hallway(hallway_id).await?,
        })
    }
}
