//! # mempalace-embed-candle
//!
//! The [`mempalace_core::Embedder`] of the default palace: the sentence-transformers model
//! all-MiniLM-L6-v2 (384 dimensions, the model ChromaDB and so MemPalace embed with), run on
//! CPU with candle and the `tokenizers` crate. It computes what sentence-transformers
//! computes: WordPiece tokens truncated at 256, mean pooling over the attention mask, L2
//! normalisation.
//!
//! The encoder is BERT on candle tensors with its heavy steps as fused candle ops (packed
//! sequences instead of padding, one product for query/key/value, bias and GELU fused into
//! the dense layers). The matrix products run on the pure-Rust `gemm` crate, or, with the
//! `openblas` cargo feature, on the system's OpenBLAS (about three times faster here; see
//! [`MatmulKernel`]). On AVX-512 CPUs a product of a few rows (one short text: a search
//! query, a note) by a weight matrix runs on this crate's own kernel, which reads the stored
//! weights in place instead of copying them into a BLAS layout first: a 9-token query
//! embeds in 2.8 ms instead of OpenBLAS's 4.0 on two cores. By default it reads the dense
//! layers from a half-precision copy (see [`WeightPrecision`]): half the bytes to bring from
//! memory per text, vectors within cosine 0.9999998 of sentence-transformers' on the parity
//! references (f32: 1.0000000).
//!
//! The model is read from disk, never downloaded: see [`model_dir`] for where it is looked
//! for and `scripts/fetch-model.sh` for putting it there.

mod attention;
mod dense;
mod encoder;
mod error;
mod few_rows;
mod gelu;
mod half_weights;
mod mapped_weights;
mod matmul;
mod minilm;
pub mod model_dir;
#[cfg(feature = "openblas")]
pub mod openblas_core;
mod wide_vectors;

pub use error::EmbedError;
pub use half_weights::WeightPrecision;
pub use matmul::MatmulKernel;
pub use minilm::{DEFAULT_BATCH_SIZE, DIMENSION, MAX_SEQ_LENGTH, MODEL_NAME, MiniLmEmbedder};
