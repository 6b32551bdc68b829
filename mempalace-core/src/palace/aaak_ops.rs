//! `compress`: the AAAK summary of a wing's or room's drawers, with the size it saves as the
//! embedder's tokenizer counts it; see [`crate::aaak`].

use serde::{Deserialize, Serialize};

use super::Palace;
use crate::aaak::{AaakMetadata, Dialect, EntityCodes};
use crate::error::{PalaceError, Result};
use crate::vector_store::Page;

/// The palace's entity codes file (3.11's name), read when present.
pub const ENTITY_CODES_FILE: &str = crate::PalaceLayout::ENTITY_CODES;
/// Drawers read per store round trip.
const PAGE: usize = 500;
/// Largest entity codes file read.
const MAX_ENTITY_FILE_BYTES: u64 = 1 << 20;

/// One drawer's AAAK summary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompressedDrawer {
    /// The drawer.
    pub drawer_id: String,
    /// Its AAAK lines.
    pub aaak: String,
    /// Tokens of its text.
    pub original_tokens: usize,
    /// Tokens of its AAAK lines.
    pub aaak_tokens: usize,
}

/// `compress` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompressReport {
    /// Each drawer's summary, in id order.
    pub drawers: Vec<CompressedDrawer>,
    /// Tokens of all the drawers' texts.
    pub original_tokens: usize,
    /// Tokens of all the summaries.
    pub aaak_tokens: usize,
    /// original_tokens / aaak_tokens, one decimal.
    pub size_ratio: f64,
    /// How tokens were counted.
    pub token_counter: String,
    /// Where the entity codes came from (a file, or "first 3 letters of each name").
    pub entity_codes: String,
}

impl Palace {
    /// The entity codes in the palace folder's entities.json, if any.
    fn entity_codes(&self) -> Result<(EntityCodes, String)> {
        let path = self.path.join(ENTITY_CODES_FILE);
        match std::fs::metadata(&path) {
            Ok(m) if m.is_file() && m.len() <= MAX_ENTITY_FILE_BYTES => {
                let text = std::fs::read_to_string(&path).map_err(|e| PalaceError::Io {
                    path: path.clone(),
                    source: e,
                })?;
                let codes: EntityCodes = serde_json::from_str(&text).map_err(|e| {
                    PalaceError::invalid("entities.json", format!("{}: {e}", path.display()))
                })?;
                Ok((codes, path.display().to_string()))
            }
            _ => Ok((
                EntityCodes::default(),
                "first 3 letters of each name".into(),
            )),
        }
    }

    /// The AAAK summary of every drawer in `wing` / `room` (at most `limit`), with the
    /// token counts of text and summary.
    pub async fn compress(
        &self,
        wing: Option<&str>,
        room: Option<&str>,
        limit: usize,
    ) -> Result<CompressReport> {
        let filter = Self::search_filter(wing, room)?;
        self.require_palace().await?;
        let (codes, entity_codes) = self.entity_codes()?;
        let dialect = Dialect::new(&codes);
        let mut drawers = Vec::new();
        let mut offset = 0;
        while drawers.len() < limit {
            let page = self
                .store
                .list(
                    &filter,
                    Page {
                        offset,
                        limit: PAGE.min(limit - drawers.len()),
                    },
                )
                .await?;
            let done = page.is_empty();
            offset += page.len();
            drawers.extend(page);
            if done {
                break;
            }
        }
        let mut texts = Vec::with_capacity(drawers.len() * 2);
        let mut summaries = Vec::with_capacity(drawers.len());
        for d in &drawers {
            let aaak = dialect.compress(
                &d.text,
                &AaakMetadata {
                    wing: Some(d.metadata.wing.clone()),
                    room: Some(d.metadata.room.clone()),
                    date: Some(d.metadata.filed_at.chars().take(10).collect()),
                    source_file: Some(d.metadata.source_file.clone()),
                },
            );
            texts.push(d.text.clone());
            texts.push(aaak.clone());
            summaries.push(aaak);
        }
        let (counts, how) = self.tokens_of(&texts).await?;
        let mut report = CompressReport {
            drawers: Vec::with_capacity(drawers.len()),
            original_tokens: 0,
            aaak_tokens: 0,
            size_ratio: 0.0,
            token_counter: match how {
                "tokenizer" => format!("{} tokenizer", self.embedder.model_name()),
                _ => "estimate (4 characters a token)".into(),
            },
            entity_codes,
        };
        for (i, (d, aaak)) in drawers.into_iter().zip(summaries).enumerate() {
            let (o, a) = (counts[2 * i], counts[2 * i + 1]);
            report.original_tokens += o;
            report.aaak_tokens += a;
            report.drawers.push(CompressedDrawer {
                drawer_id: d.id,
                aaak,
                original_tokens: o,
                aaak_tokens: a,
            });
        }
        report.size_ratio =
            (report.original_tokens as f64 / report.aaak_tokens.max(1) as f64 * 10.0).round()
                / 10.0;
        Ok(report)
    }
}
