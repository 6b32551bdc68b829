//! # mempalace-embed-candle
//!
//! The [`mempalace_core::Embedder`] of the default palace: the sentence-transformers model
//! all-MiniLM-L6-v2 (384 dimensions, the model ChromaDB and so MemPalace embed with), run on
//! CPU with candle's BERT and the `tokenizers` crate. It computes what sentence-transformers
//! computes: WordPiece tokens truncated at 256, mean pooling over the attention mask, L2
//! normalisation.
//!
//! The model is read from disk, never downloaded: see [`model_dir`] for where it is looked
//! for and `scripts/fetch-model.sh` for putting it there.

mod error;
mod minilm;
pub mod model_dir;

pub use error::EmbedError;
pub use minilm::{DEFAULT_BATCH_SIZE, DIMENSION, MAX_SEQ_LENGTH, MODEL_NAME, MiniLmEmbedder};
