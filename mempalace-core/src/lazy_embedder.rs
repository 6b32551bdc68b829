//! `LazyEmbedder`: an embedder whose model is loaded on first use (or in the background).

use std::sync::Arc;

use async_trait::async_trait;
use tokio::sync::OnceCell;

use crate::embedder::Embedder;
use crate::error::{PalaceError, Result};

/// Loads the real embedder.
type Loader = Arc<dyn Fn() -> Result<Arc<dyn Embedder>> + Send + Sync>;

/// Wraps an embedder that is slow to load (a model from disk) so that a server can answer
/// its first requests at once; the model is loaded by the first `embed`, or earlier by
/// [`LazyEmbedder::warm_up`]. A failed load is reported and retried on the next call.
pub struct LazyEmbedder {
    model_name: String,
    dimension: usize,
    loader: Loader,
    loaded: OnceCell<Arc<dyn Embedder>>,
}

impl LazyEmbedder {
    /// A lazy embedder announcing `model_name` and `dimension` before it is loaded.
    pub fn new(
        model_name: impl Into<String>,
        dimension: usize,
        loader: impl Fn() -> Result<Arc<dyn Embedder>> + Send + Sync + 'static,
    ) -> Self {
        LazyEmbedder {
            model_name: model_name.into(),
            dimension,
            loader: Arc::new(loader),
            loaded: OnceCell::new(),
        }
    }

    /// Whether the model is loaded.
    pub fn is_loaded(&self) -> bool {
        self.loaded.initialized()
    }

    /// Loads the model now (on a blocking thread) if it is not loaded yet, and returns it.
    pub async fn warm_up(&self) -> Result<Arc<dyn Embedder>> {
        let embedder = self
            .loaded
            .get_or_try_init(|| async {
                let loader = Arc::clone(&self.loader);
                let embedder = tokio::task::spawn_blocking(move || loader())
                    .await
                    .map_err(|e| PalaceError::Embedder(format!("model loader failed: {e}")))??;
                if embedder.dimension() != self.dimension {
                    return Err(PalaceError::DimensionMismatch {
                        expected: self.dimension,
                        actual: embedder.dimension(),
                        context: format!("model {} loaded lazily", embedder.model_name()),
                    });
                }
                Ok(embedder)
            })
            .await?;
        Ok(Arc::clone(embedder))
    }
}

#[async_trait]
impl Embedder for LazyEmbedder {
    fn model_name(&self) -> &str {
        &self.model_name
    }

    fn dimension(&self) -> usize {
        self.dimension
    }

    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
        self.warm_up().await?.embed(texts).await
    }

    async fn count_tokens(&self, texts: &[String]) -> Result<Option<Vec<usize>>> {
        self.warm_up().await?.count_tokens(texts).await
    }
}
