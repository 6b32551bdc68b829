//! What a miner needs from the palace besides filing: the chunks a file already has (to skip
//! unchanged files and remove stale chunks), and embedding of a batch ahead of filing it (so
//! a pipeline can embed one batch while the previous one is written).

use std::collections::HashMap;

use super::Palace;
use crate::drawer::AddedBy;
use crate::error::Result;
use crate::filter::DrawerFilter;
use crate::validation::{validate_name, validate_source_file};

impl Palace {
    /// The chunks mined from `source_file` into `wing` that the palace holds: id → text.
    /// Drawers an agent filed with the same `source_file`, and conversations mined from the
    /// same file, are not its chunks and are left out.
    pub async fn mined_chunks(
        &self,
        wing: &str,
        source_file: &str,
    ) -> Result<HashMap<String, String>> {
        validate_name("wing", wing)?;
        validate_source_file(source_file)?;
        let mut out = HashMap::new();
        if !self.is_initialised().await? {
            return Ok(out);
        }
        let filter = DrawerFilter::wing(wing).with_source_file(source_file);
        self.scan(&filter, |d| {
            if d.metadata.added_by == AddedBy::Mine && d.metadata.conversation.is_none() {
                out.insert(d.id, d.text);
            }
        })
        .await?;
        Ok(out)
    }

    /// The palace embedder's vectors for `texts` as drawers (checked: one per text, of the
    /// store's dimension), for [`Palace::file_mined`].
    pub async fn embed_documents(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
        self.embed_all(texts).await
    }
}
