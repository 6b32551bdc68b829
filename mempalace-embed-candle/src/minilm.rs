//! `MiniLmEmbedder`: all-MiniLM-L6-v2 with candle.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::path::Path;
use std::sync::Arc;

use async_trait::async_trait;
use rayon::prelude::*;
use tokenizers::{PaddingParams, Tokenizer, TruncationParams};

use crate::encoder::{Encoder, EncoderConfig};
use crate::error::EmbedError;
use crate::half_weights::WeightPrecision;
use crate::mapped_weights::MappedWeights;
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
/// Texts per unit of work (a group one core embeds) unless configured otherwise.
pub const DEFAULT_BATCH_SIZE: usize = 32;

struct Model {
    encoder: Encoder,
    tokenizer: Tokenizer,
    /// The same tokenizer without truncation, for counting tokens of whole texts.
    counter: Tokenizer,
    dimension: usize,
}

/// all-MiniLM-L6-v2 loaded once and shared: cloning is cheap, embedding is `Send + Sync`,
/// and the async `embed` runs the forward passes on the embedder's threads, one per core:
/// a batch of texts one pass per core, a single text with each product split across them.
#[derive(Clone)]
pub struct MiniLmEmbedder {
    model: Arc<Model>,
    batch_size: usize,
    kernel: MatmulKernel,
    precision: WeightPrecision,
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

        let weights = MappedWeights::open(&dir.join("model.safetensors"))?;
        let encoder = Encoder::load(&weights, &config)?;
        Ok(MiniLmEmbedder {
            model: Arc::new(Model {
                encoder,
                tokenizer,
                counter,
                dimension,
            }),
            batch_size: DEFAULT_BATCH_SIZE,
            kernel: MatmulKernel::fastest(),
            precision: WeightPrecision::default(),
        })
    }

    /// Sets about how many texts one core embeds as a unit (at least 1; a call gets at least
    /// one unit per core, each in forward passes of at most 2,048 tokens).
    pub fn with_batch_size(mut self, batch_size: usize) -> Self {
        self.batch_size = batch_size.max(1);
        self
    }

    /// Sets which library multiplies the matrices (default: [`MatmulKernel::fastest`]).
    pub fn with_matmul_kernel(mut self, kernel: MatmulKernel) -> Self {
        self.kernel = kernel;
        self
    }

    /// Sets the precision the dense layers' weights are read in by passes of few rows (one
    /// text, a batch of short ones: see [`WeightPrecision`]; default `Half`). A text's vector
    /// can then differ in the last digits (cosine 0.9999998) between such a pass and a
    /// bigger one, or another CPU, which read f32.
    pub fn with_weight_precision(mut self, precision: WeightPrecision) -> Self {
        self.precision = precision;
        self
    }

    /// The precision the dense layers' weights are read in by passes of few rows.
    pub fn weight_precision(&self) -> WeightPrecision {
        self.precision
    }

    /// Whether the half-precision copy of the dense layers has been made (on the first pass
    /// of few rows with [`WeightPrecision::Half`] on a CPU whose kernel reads it).
    pub fn has_half_copy(&self) -> bool {
        self.model.encoder.has_half_copy()
    }

    /// Whether the big weight matrices (the word table, the dense layers) are read in place
    /// in f32 from the memory-mapped model file rather than copied onto the heap: true for an
    /// f32 safetensors file on a little-endian host. (The half-precision copy of the dense
    /// layers that short texts read by default is made besides: see [`Self::has_half_copy`].)
    pub fn weights_in_place(&self) -> bool {
        self.model.encoder.weights_in_place()
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
        // Groups of equal work, at least one per core; a group alone splits its products
        // across the idle cores.
        let pool = embedding_threads();
        let workers = pool.map_or(1, rayon::ThreadPool::current_num_threads);
        let work: Vec<u64> = ids
            .iter()
            .map(|seq| self.model.encoder.multiply_adds(seq.len()))
            .collect();
        let groups = even_groups(&work, workers, self.batch_size);
        let run = |batch: &Vec<usize>| -> Result<Vec<IndexedVector>, EmbedError> {
            let batch_ids: Vec<&[u32]> = batch.iter().map(|&i| ids[i].as_slice()).collect();
            Ok(batch
                .iter()
                .copied()
                .zip(self.forward(&batch_ids)?)
                .collect())
        };
        let results: Vec<Result<Vec<IndexedVector>, EmbedError>> =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| match pool {
                Some(pool) => pool.install(|| groups.par_iter().map(run).collect()),
                None => groups.iter().map(run).collect(),
            }))
            .map_err(|_| EmbedError::WorkerPanicked)?;
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
            out.extend(self.model.encoder.embed(
                &batch[start..end],
                self.kernel,
                self.precision,
            )?);
            start = end;
        }
        Ok(out)
    }
}

/// The texts (by index) in groups of about equal total `work`: at least `workers` groups and
/// about `batch_size` texts per group when there are many, a multiple of `workers` groups
/// (each core takes as many), none empty. Largest first, each text goes to the lightest group
/// so far (the longest-processing-time rule: no group exceeds the mean by more than one text's
/// work). Cutting texts sorted by length into runs instead gave one core the short half of a
/// mining batch and the other the long half, about twice the work: the first core then only
/// helped with the other's products, not its attention or element-wise steps.
fn even_groups(work: &[u64], workers: usize, batch_size: usize) -> Vec<Vec<usize>> {
    let texts = work.len();
    if texts == 0 {
        return Vec::new();
    }
    let workers = workers.max(1);
    let count = texts
        .div_ceil(batch_size.max(1))
        .max(workers)
        .div_ceil(workers)
        .saturating_mul(workers)
        .min(texts);
    let mut largest_first: Vec<usize> = (0..texts).collect();
    largest_first.sort_by_key(|&i| (Reverse(work[i]), i));
    let mut lightest: BinaryHeap<Reverse<(u64, usize)>> =
        (0..count).map(|g| Reverse((0, g))).collect();
    let mut groups = vec![Vec::new(); count];
    for i in largest_first {
        let Some(Reverse((load, g))) = lightest.pop() else {
            break;
        };
        groups[g].push(i);
        lightest.push(Reverse((load + work[i], g)));
    }
    groups.retain(|g| !g.is_empty());
    groups
}

/// A text's position in the input and its embedding.
type IndexedVector = (usize, Vec<f32>);

/// The threads every embedder of the process runs its forward passes on, one per core
/// (named `mempalace-embed-N`), started on first use. A pool of their own keeps them clear
/// of other rayon users (LanceDB's index builds).
/// `None` when the threads cannot be started: then each call embeds on its own thread.
fn embedding_threads() -> Option<&'static rayon::ThreadPool> {
    static POOL: std::sync::OnceLock<Option<rayon::ThreadPool>> = std::sync::OnceLock::new();
    POOL.get_or_init(|| {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("mempalace-embed-{i}"))
            .build()
            .inspect_err(|e| {
                tracing::warn!(error = %e, "cannot start the embedding threads; embedding on the caller's");
            })
            .ok()
    })
    .as_ref()
}

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

#[cfg(test)]
mod tests {
    use super::*;

    fn loads(groups: &[Vec<usize>], work: &[u64]) -> Vec<u64> {
        groups
            .iter()
            .map(|g| g.iter().map(|&i| work[i]).sum())
            .collect()
    }

    #[test]
    fn even_groups_hold_every_text_once_in_a_multiple_of_the_workers() {
        let work: Vec<u64> = (0..203).map(|i| 1 + (i * 7919 % 256)).collect();
        for (workers, batch_size, want) in [(2, 32, 8), (2, 64, 4), (3, 32, 9), (1, 32, 7)] {
            let groups = even_groups(&work, workers, batch_size);
            assert_eq!(
                groups.len(),
                want,
                "{workers} workers, batches of {batch_size}"
            );
            let mut seen: Vec<usize> = groups.iter().flatten().copied().collect();
            seen.sort_unstable();
            assert_eq!(seen, (0..203).collect::<Vec<_>>());
        }
        assert!(even_groups(&[], 2, 32).is_empty());
        assert_eq!(even_groups(&[5], 2, 32), vec![vec![0]]);
        assert_eq!(even_groups(&[5, 9], 4, 32).len(), 2);
    }

    #[test]
    fn a_mining_batch_splits_into_halves_of_equal_work() {
        // 64 chunks of 20 to 256 tokens, as `mine` hands them over: the two groups' work
        // differs by less than the largest text's, where halves of the length order differed
        // by more than a third of the total.
        let encoder_cost = |n: u64| n * (10_616_832 + 4_608 * n);
        let work: Vec<u64> = (0..64u64)
            .map(|i| encoder_cost(20 + (i * 97) % 237))
            .collect();
        let groups = even_groups(&work, 2, 32);
        assert_eq!(groups.len(), 2);
        let l = loads(&groups, &work);
        let largest = *work.iter().max().unwrap();
        assert!(l[0].abs_diff(l[1]) <= largest, "{l:?}");
        let mut by_length: Vec<u64> = work.clone();
        by_length.sort_unstable();
        let (short, long) = by_length.split_at(32);
        let (short, long): (u64, u64) = (short.iter().sum(), long.iter().sum());
        assert!((long - short) * 3 > long + short, "{short} {long}");
    }
}
