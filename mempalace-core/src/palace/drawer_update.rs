//! `update_drawer`: new content, wing or room for a drawer, under the same id.

use serde::{Deserialize, Serialize};

use super::Palace;
use crate::drawer::Drawer;
use crate::drawer_chunks::{chunk_id, split_content};
use crate::error::{PalaceError, Result};
use crate::validation::{validate_content, validate_name};

/// What to change in a drawer; `None` keeps the stored value.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DrawerUpdate {
    /// New verbatim content.
    pub content: Option<String>,
    /// New wing.
    pub wing: Option<String>,
    /// New room.
    pub room: Option<String>,
}

/// `update_drawer` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DrawerUpdated {
    /// True when the drawer was updated (or nothing was asked).
    pub success: bool,
    /// The drawer's id (unchanged).
    pub drawer_id: String,
    /// Its wing now.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wing: Option<String>,
    /// Its room now.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub room: Option<String>,
    /// How many chunk drawers hold it now (only when filed in chunks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chunks: Option<usize>,
    /// Those chunk drawers' ids (only when filed in chunks).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub chunk_ids: Vec<String>,
    /// True when no change was asked for.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub noop: bool,
}

impl Palace {
    /// Changes a drawer's content, wing and/or room; it keeps its id, source file, author and
    /// filing time. Content over one chunk is filed as chunk drawers of the same id (and
    /// leftover chunks of longer old content are removed), as [`Palace::add_drawer`] files
    /// it. Nothing changes when an input is bad or the drawer does not exist.
    pub async fn update_drawer(
        &self,
        drawer_id: &str,
        update: DrawerUpdate,
    ) -> Result<DrawerUpdated> {
        if update.content.is_none() && update.wing.is_none() && update.room.is_none() {
            return Ok(DrawerUpdated {
                success: true,
                drawer_id: drawer_id.to_string(),
                wing: None,
                room: None,
                chunks: None,
                chunk_ids: Vec::new(),
                noop: true,
            });
        }
        if let Some(c) = &update.content {
            validate_content(c)?;
        }
        if let Some(w) = &update.wing {
            validate_name("wing", w)?;
        }
        if let Some(r) = &update.room {
            validate_name("room", r)?;
        }
        self.require_palace().await?;
        let _guard = self.write_lock.acquire().await?;
        let group = self.drawer_group(drawer_id).await?;
        let Some(first) = group.first() else {
            return Err(PalaceError::DrawerNotFound(drawer_id.to_string()));
        };
        let mut metadata = first.metadata.clone();
        let old_content: String = group.iter().map(|d| d.text.as_str()).collect();
        let content = update.content.unwrap_or(old_content);
        if let Some(w) = update.wing {
            metadata.wing = w;
        }
        if let Some(r) = update.room {
            metadata.room = r;
        }
        // A chunk id names one stored row: it is updated in place, never split again.
        let is_chunk_row = group.len() == 1 && group[0].id != drawer_id;
        let pieces = if is_chunk_row {
            vec![content]
        } else {
            split_content(&content)
        };
        let chunked = pieces.len() > 1;
        let vectors = self.embed_all(&pieces).await?;
        let drawers: Vec<Drawer> = pieces
            .into_iter()
            .enumerate()
            .map(|(i, text)| {
                let mut m = metadata.clone();
                if chunked {
                    m.chunk_index = i as u32;
                }
                Drawer {
                    id: if is_chunk_row {
                        group[0].id.clone()
                    } else if chunked {
                        chunk_id(drawer_id, i)
                    } else {
                        drawer_id.to_string()
                    },
                    text,
                    metadata: m,
                }
            })
            .collect();
        self.store.upsert(&drawers, &vectors).await?;
        let stale: Vec<String> = group
            .iter()
            .map(|d| d.id.clone())
            .filter(|id| !drawers.iter().any(|d| &d.id == id))
            .collect();
        if !stale.is_empty() {
            self.store.delete(&stale).await?;
        }
        Ok(DrawerUpdated {
            success: true,
            drawer_id: drawer_id.to_string(),
            wing: Some(metadata.wing),
            room: Some(metadata.room),
            chunks: chunked.then_some(drawers.len()),
            chunk_ids: if chunked {
                drawers.into_iter().map(|d| d.id).collect()
            } else {
                Vec::new()
            },
            noop: false,
        })
    }
}
