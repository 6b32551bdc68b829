//! The `Embedder` trait: text to vectors.

use async_trait::async_trait;

use crate::error::Result;

/// Turns texts into fixed-dimension vectors (unit length for cosine search).
#[async_trait]
pub trait Embedder: Send + Sync {
    /// The model's name, e.g. "all-MiniLM-L6-v2".
    fn model_name(&self) -> &str;

    /// The dimension of every vector this embedder returns.
    fn dimension(&self) -> usize;

    /// Embeds a batch of texts; the result has one vector per text, in order.
    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>>;

    /// How many tokens the model's own tokenizer makes of each text (no special tokens, no
    /// truncation), in order; `None` when this embedder has no tokenizer to ask.
    async fn count_tokens(&self, texts: &[String]) -> Result<Option<Vec<usize>>> {
        let _ = texts;
        Ok(None)
    }
}
