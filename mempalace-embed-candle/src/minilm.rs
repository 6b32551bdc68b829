//! `MiniLmEmbedder`: all-MiniLM-L6-v2 with candle.

use std::path::Path;
use std::sync::Arc;

use async_trait::async_trait;
use candle_core::{DType, Device};
use candle_nn::VarBuilder;
use tokenizers::{PaddingParams, Tokenizer, TruncationParams};

use crate::encoder::{Encoder, EncoderConfig};
use crate::error::EmbedError;
use crate::matmul::MatmulKernel;
use crate::model_dir;

/// The model's name.
pub const MODEL_NAME: &str = "all-MiniLM-L6-v2";
/// Its embedding dimension.
pub const DIMENSION: usize = 384;
/// Tokens per text after truncation (sentence-transformers' max_seq_length for this model).
pub const MAX_SEQ_LENGTH: usize = 256;
/// Most tokens the encoder takes in one pass (several texts of a batch are split across
/// passes beyond it; the results are the same).
const TOKENS_PER_PASS: usize = 2048;
/// Texts per forward pass unless configured otherwise.
pub const DEFAULT_BATCH_SIZE: usize = 32;

struct Model {
    encoder: Encoder,
    tokenizer: Tokenizer,
    /// The same tokenizer without truncation, for counting tokens of whole texts.
    counter: Tokenizer,
    dimension: usize,
}

/// all-MiniLM-L6-v2 loaded once and shared: cloning is cheap, embedding is `Send + Sync`,
/// and the async `embed` runs the forward passes on blocking threads, one per core.
#[derive(Clone)]
pub struct MiniLmEmbedder {
    model: Arc<Model>,
    batch_size: usize,
    kernel: MatmulKernel,
}

fn load_error(path: &Path, e: impl std::fmt::Display) -> EmbedError {
    EmbedError::Load {
        path: path.to_path_buf(),
        message: e.to_string(),
    }
}

impl MiniLmEmbedder {
    /// Loads from the folder [`model_dir::resolve`] picks for `explicit`.
    pub fn load_resolved(explicit: Option<&Path>) -> Result<Self, EmbedError> {
        Self::load(&model_dir::resolve(explicit))
    }

    /// Loads config.json, tokenizer.json and model.safetensors from `dir`.
    pub fn load(dir: &Path) -> Result<Self, EmbedError> {
        model_dir::check(dir)?;
        let config_path = dir.join("config.json");
        let config_text =
            std::fs::read_to_string(&config_path).map_err(|e| load_error(&config_path, e))?;
        let config: EncoderConfig =
            serde_json::from_str(&config_text).map_err(|e| load_error(&config_path, e))?;
        let dimension = config.hidden_size;

        let tokenizer_path = dir.join("tokenizer.json");
        let mut tokenizer =
            Tokenizer::from_file(&tokenizer_path).map_err(|e| load_error(&tokenizer_path, e))?;
        let mut counter = tokenizer.clone();
        counter
            .with_truncation(None)
            .map_err(|e| load_error(&tokenizer_path, e))?;
        counter.with_padding(None::<PaddingParams>);
        // tokenizer.json ships with truncation and padding at 128; sentence-transformers
        // truncates at 256 and pads per batch, which is what we do.
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: MAX_SEQ_LENGTH,
                ..TruncationParams::default()
            }))
            .map_err(|e| load_error(&tokenizer_path, e))?;
        tokenizer.with_padding(None::<PaddingParams>);

        let device = Device::Cpu;
        let weights = dir.join("model.safetensors");
        // SAFETY: the file is memory-mapped read-only; it must not be modified while loaded,
        // which holds for a model cache that is only ever replaced by rename.
        let vb = unsafe { VarBuilder::from_mmaped_safetensors(&[&weights], DType::F32, &device) }
            .map_err(|e| load_error(&weights, e))?;
        let encoder = Encoder::load(vb, &config).map_err(|e| load_error(&weights, e))?;
        Ok(MiniLmEmbedder {
            model: Arc::new(Model {
                encoder,
                tokenizer,
                counter,
                dimension,
            }),
            batch_size: DEFAULT_BATCH_SIZE,
            kernel: MatmulKernel::fastest(),
        })
    }

    /// Sets how many texts go through the model in one forward pass (at least 1).
    pub fn with_batch_size(mut self, batch_size: usize) -> Self {
        self.batch_size = batch_size.max(1);
        self
    }

    /// Sets which library multiplies the matrices (default: [`MatmulKernel::fastest`]).
    pub fn with_matmul_kernel(mut self, kernel: MatmulKernel) -> Self {
        self.kernel = kernel;
        self
    }

    /// The library that multiplies the matrices.
    pub fn matmul_kernel(&self) -> MatmulKernel {
        self.kernel
    }

    /// The token ids (with `[CLS]` and `[SEP]`, truncated at 256) of each text.
    pub fn token_ids(&self, texts: &[String]) -> Result<Vec<Vec<u32>>, EmbedError> {
        let encodings = self
            .model
            .tokenizer
            .encode_batch(texts.iter().map(String::as_str).collect::<Vec<_>>(), true)
            .map_err(|e| EmbedError::Tokenize(e.to_string()))?;
        Ok(encodings
            .into_iter()
            .map(|e| e.get_ids().to_vec())
            .collect())
    }

    /// Embeds texts on the calling thread: unit vectors, one per text, in order.
    #[tracing::instrument(level = "debug", skip_all, fields(texts = texts.len()))]
    pub fn embed_blocking(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let ids = self.token_ids(texts)?;
        // Sort by length so each batch pads little; restore the order at the end.
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| ids[i].len());
        // Each forward pass runs on one core; the batches (cut smaller when there are fewer
        // batches than cores) run on one thread per core.
        let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
        let per_batch = self.batch_size.min(texts.len().div_ceil(workers)).max(1);
        let batches: Vec<&[usize]> = order.chunks(per_batch).collect();
        let next = std::sync::atomic::AtomicUsize::new(0);
        let results: Vec<Result<Vec<IndexedVector>, EmbedError>> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..workers.min(batches.len()))
                .map(|_| {
                    scope.spawn(|| {
                        let mut done = Vec::new();
                        loop {
                            let b = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                            let Some(batch) = batches.get(b) else {
                                return Ok(done);
                            };
                            let batch_ids: Vec<&[u32]> =
                                batch.iter().map(|&i| ids[i].as_slice()).collect();
                            done.extend(batch.iter().copied().zip(self.forward(&batch_ids)?));
                        }
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|_| Err(EmbedError::WorkerPanicked)))
                .collect()
        });
        let mut out = vec![Vec::new(); texts.len()];
        for worker in results {
            for (i, v) in worker? {
                out[i] = v;
            }
        }
        Ok(out)
    }

    /// Embeds a batch of token id sequences, in passes of at most [`TOKENS_PER_PASS`]
    /// tokens (a longer batch only grows the intermediate buffers past the caches).
    fn forward(&self, batch: &[&[u32]]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut out = Vec::with_capacity(batch.len());
        let mut start = 0;
        while start < batch.len() {
            let mut end = start + 1;
            let mut tokens = batch[start].len();
            while end < batch.len() && tokens + batch[end].len() <= TOKENS_PER_PASS {
                tokens += batch[end].len();
                end += 1;
            }
            out.extend(self.model.encoder.embed(&batch[start..end], self.kernel)?);
            start = end;
        }
        Ok(out)
    }
}

/// A text's position in the input and its embedding.
type IndexedVector = (usize, Vec<f32>);

#[async_trait]
impl mempalace_core::Embedder for MiniLmEmbedder {
    fn model_name(&self) -> &str {
        MODEL_NAME
    }

    fn dimension(&self) -> usize {
        self.model.dimension
    }

    async fn embed(&self, texts: &[String]) -> mempalace_core::Result<Vec<Vec<f32>>> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let this = self.clone();
        let texts = texts.to_vec();
        tokio::task::spawn_blocking(move || this.embed_blocking(&texts))
            .await
            .map_err(|e| {
                mempalace_core::PalaceError::Embedder(format!("embedding thread failed: {e}"))
            })?
            .map_err(Into::into)
    }

    async fn count_tokens(&self, texts: &[String]) -> mempalace_core::Result<Option<Vec<usize>>> {
        let mut counts = Vec::with_capacity(texts.len());
        for text in texts {
            let encoding = self
                .model
                .counter
                .encode(text.as_str(), false)
                .map_err(|e| mempalace_core::PalaceError::Embedder(format!("tokenizer: {e}")))?;
            counts.push(encoding.len());
        }
        Ok(Some(counts))
    }
}
