//! Many drawers in one call: `get_drawers` and `delete_drawers`, as MemPalace 3.11 offers them.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{Palace, whole_drawer};
use crate::drawer_chunks::parent_of;
use crate::error::{PalaceError, Result};

/// Most ids one `get_drawers` / `delete_drawers` call accepts.
pub const BULK_MAX_IDS: usize = 500;

/// `get_drawers` result: one entry per id asked for, in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DrawerBatch {
    /// Each id's drawer (the `get_drawer` payload), or `{drawer_id, error}` when it is not there.
    pub results: Vec<Value>,
    /// How many entries `results` holds.
    pub count: usize,
    /// How many of them are errors.
    pub errors: usize,
}

/// `delete_drawers` result: one entry per id asked for, in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DrawersDeleted {
    /// Each id's outcome: `{drawer_id, deleted_ids, chunks_deleted}` or `{drawer_id, error}`.
    pub results: Vec<Value>,
    /// How many entries `results` holds.
    pub count: usize,
    /// How many drawers were deleted.
    pub deleted: usize,
    /// How many ids failed.
    pub errors: usize,
}

fn check_ids(drawer_ids: &[String], action: &str) -> Result<()> {
    if drawer_ids.is_empty() {
        return Err(PalaceError::invalid(
            "drawer_ids",
            "drawer_ids must not be empty",
        ));
    }
    if drawer_ids.len() > BULK_MAX_IDS {
        return Err(PalaceError::invalid(
            "drawer_ids",
            format!(
                "drawer_ids holds {} ids, but the bulk {action} accepts at most {BULK_MAX_IDS} per call",
                drawer_ids.len()
            ),
        ));
    }
    Ok(())
}

fn not_found(drawer_id: &str) -> Value {
    serde_json::json!({
        "drawer_id": drawer_id,
        "error": PalaceError::DrawerNotFound(drawer_id.to_string()).to_string(),
    })
}

impl Palace {
    /// Up to 500 drawers by id in one call, each as [`Palace::get_drawer`] returns it; an id
    /// that is not there is an error entry and the rest still come back. An empty list or
    /// more than 500 ids is refused before anything is read.
    pub async fn get_drawers(&self, drawer_ids: &[String]) -> Result<DrawerBatch> {
        check_ids(drawer_ids, "fetch")?;
        self.require_palace().await?;
        let mut results = Vec::with_capacity(drawer_ids.len());
        let mut errors = 0;
        for id in drawer_ids {
            let group = self.drawer_group(id).await?;
            match whole_drawer(id, group) {
                Some(view) => results.push(serde_json::to_value(view).map_err(|e| {
                    PalaceError::invalid("drawer", format!("cannot encode {id}: {e}"))
                })?),
                None => {
                    errors += 1;
                    results.push(not_found(id));
                }
            }
        }
        Ok(DrawerBatch {
            count: results.len(),
            results,
            errors,
        })
    }

    /// Deletes up to 500 drawers by id in one call, each as [`Palace::delete_drawer`] does (a
    /// drawer filed in chunks goes whole; a chunk id removes that chunk); an id that is not
    /// there is an error entry and the rest are still deleted. An empty list or more than 500
    /// ids is refused before anything is deleted.
    pub async fn delete_drawers(&self, drawer_ids: &[String]) -> Result<DrawersDeleted> {
        check_ids(drawer_ids, "delete")?;
        self.require_palace().await?;
        let _guard = self.write_lock.acquire().await?;
        let mut results = Vec::with_capacity(drawer_ids.len());
        let (mut deleted, mut errors) = (0, 0);
        for id in drawer_ids {
            let ids: Vec<String> = self
                .drawer_group(id)
                .await?
                .into_iter()
                .map(|d| d.id)
                .collect();
            if ids.is_empty() || self.store.delete(&ids).await? == 0 {
                errors += 1;
                results.push(not_found(id));
                continue;
            }
            deleted += 1;
            results.push(serde_json::json!({
                "drawer_id": id,
                "chunks_deleted": ids.iter().filter(|i| parent_of(i).is_some()).count(),
                "deleted_ids": ids,
            }));
        }
        Ok(DrawersDeleted {
            count: results.len(),
            results,
            deleted,
            errors,
        })
    }
}
