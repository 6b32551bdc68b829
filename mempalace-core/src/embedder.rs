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
}
