//! `checkpoint`: save a session in one call (several drawers with the duplicate check, then
//! one diary entry), as MemPalace 3.11 offers it.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::{NewDrawer, Palace};
use crate::drawer::AddedBy;
use crate::error::Result;
use crate::reports::AddDrawerOutcome;
use crate::validation::validate_threshold;

/// Most items one checkpoint files.
pub const CHECKPOINT_MAX_ITEMS: usize = 500;

/// One memory to file in a checkpoint.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckpointItem {
    /// Wing to file under.
    pub wing: String,
    /// Room to file under.
    pub room: String,
    /// Verbatim content.
    pub content: String,
}

/// The diary entry a checkpoint ends with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckpointDiary {
    /// The agent writing it.
    pub agent_name: String,
    /// The entry.
    pub entry: String,
    /// Its topic (default "session-checkpoint").
    pub topic: Option<String>,
    /// A shared diary wing instead of the agent's own.
    pub wing: Option<String>,
}

/// A session to save.
#[derive(Debug, Clone, PartialEq)]
pub struct Checkpoint {
    /// The memories to file, each checked for duplicates first.
    pub items: Vec<CheckpointItem>,
    /// The diary entry to write after filing.
    pub diary: Option<CheckpointDiary>,
    /// Similarity at or above which an item counts as already filed (default 0.9).
    pub dedup_threshold: f64,
}

/// `checkpoint` result: what was filed, what was already there, what failed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckpointReport {
    /// One `add_drawer` result per filed item.
    pub added: Vec<Value>,
    /// `{room, matches}` per item that was already filed.
    pub duplicates: Vec<Value>,
    /// `{item, error}` per item (or diary) that could not be filed; the rest still were.
    pub errors: Vec<Value>,
    /// The diary entry's `diary_write` result, when one was asked for and written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diary: Option<Value>,
}

impl Palace {
    /// Files each item unless a drawer at least `dedup_threshold` similar exists, then writes
    /// the diary entry. A bad item is reported in `errors` and the others are still filed.
    pub async fn checkpoint(&self, checkpoint: Checkpoint) -> Result<CheckpointReport> {
        validate_threshold(checkpoint.dedup_threshold)?;
        if checkpoint.items.len() > CHECKPOINT_MAX_ITEMS {
            return Err(crate::PalaceError::invalid(
                "items",
                format!(
                    "{} items; a checkpoint files at most {CHECKPOINT_MAX_ITEMS}",
                    checkpoint.items.len()
                ),
            ));
        }
        let mut report = CheckpointReport {
            added: Vec::new(),
            duplicates: Vec::new(),
            errors: Vec::new(),
            diary: None,
        };
        for item in checkpoint.items {
            let filed = self
                .file_checkpoint_item(&item, checkpoint.dedup_threshold)
                .await;
            match filed {
                Ok(Filed::Added(v)) => report.added.push(v),
                Ok(Filed::Duplicate(v)) => report.duplicates.push(v),
                Err(e) => report
                    .errors
                    .push(json!({"item": item, "error": e.to_string()})),
            }
        }
        if let Some(d) = checkpoint.diary {
            let topic = d.topic.as_deref().unwrap_or("session-checkpoint");
            match self
                .diary_write(&d.agent_name, &d.entry, Some(topic), d.wing.as_deref())
                .await
            {
                Ok(written) => report.diary = Some(json!(written)),
                Err(e) => report
                    .errors
                    .push(json!({"diary": d, "error": e.to_string()})),
            }
        }
        Ok(report)
    }

    async fn file_checkpoint_item(&self, item: &CheckpointItem, threshold: f64) -> Result<Filed> {
        let check = self.check_duplicate(&item.content, threshold).await;
        // A palace not created yet has nothing to be a duplicate of.
        let check = match check {
            Err(crate::PalaceError::NoPalace { .. }) => None,
            other => Some(other?),
        };
        if let Some(c) = check
            && c.is_duplicate
        {
            return Ok(Filed::Duplicate(
                json!({"room": item.room, "matches": c.matches}),
            ));
        }
        let mut new = NewDrawer::new(&item.wing, &item.room, &item.content);
        new.added_by = AddedBy::Mcp;
        Ok(match self.add_drawer(new).await? {
            AddDrawerOutcome::Added(a) => Filed::Added(json!(a)),
            AddDrawerOutcome::Duplicate(d) => {
                Filed::Duplicate(json!({"room": item.room, "matches": d.matches}))
            }
        })
    }
}

enum Filed {
    Added(Value),
    Duplicate(Value),
}
