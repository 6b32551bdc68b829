//! The BERT encoder of all-MiniLM-L6-v2 with sentence-transformers' pooling, on candle
//! tensors with the heavy steps as fused candle ops.
//!
//! Compared with candle-transformers' general BERT, it packs the sequences of a batch back
//! to back instead of padding them, computes query, key and value in one product, fuses the
//! bias and GELU into the dense layers, multiplies with a kernel the caller picks, and reads
//! the weights in place from the mapped model file. It computes the same function: the
//! parity tests hold it to sentence-transformers' vectors.

use candle_core::{Device, Result, Tensor, bail};
use serde::Deserialize;

use crate::attention::PackedAttention;
use crate::dense::Dense;
use crate::error::EmbedError;
use crate::half_weights::WeightPrecision;
use crate::mapped_weights::{MappedWeights, WeightMatrix};
use crate::matmul::MatmulKernel;

/// The fields of a BERT `config.json` the encoder needs.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct EncoderConfig {
    pub hidden_size: usize,
    pub num_hidden_layers: usize,
    pub num_attention_heads: usize,
    pub intermediate_size: usize,
    pub max_position_embeddings: usize,
    pub vocab_size: usize,
    #[serde(default = "default_type_vocab")]
    pub type_vocab_size: usize,
    #[serde(default = "default_eps")]
    pub layer_norm_eps: f64,
    #[serde(default = "default_act")]
    pub hidden_act: String,
}

fn default_eps() -> f64 {
    1e-12
}

fn default_type_vocab() -> usize {
    2
}

fn default_act() -> String {
    "gelu".into()
}

/// A layer norm's scale and shift.
struct Norm {
    gamma: Tensor,
    beta: Tensor,
}

impl Norm {
    fn load(
        weights: &MappedWeights,
        prefix: &str,
        dim: usize,
    ) -> std::result::Result<Self, EmbedError> {
        let tensor = |name: &str| -> std::result::Result<Tensor, EmbedError> {
            let values = weights.vector(&format!("{prefix}.{name}"), dim)?;
            Ok(Tensor::from_vec(values, dim, &Device::Cpu)?)
        };
        Ok(Norm {
            gamma: tensor("weight")?,
            beta: tensor("bias")?,
        })
    }

    fn forward(&self, x: &Tensor, eps: f32) -> Result<Tensor> {
        candle_nn::ops::layer_norm(x, &self.gamma, &self.beta, eps)
    }
}

/// One transformer block.
struct Block {
    qkv: Dense,
    attention_out: Dense,
    attention_norm: Norm,
    up: Dense,
    down: Dense,
    output_norm: Norm,
}

/// The encoder and its embeddings.
pub(crate) struct Encoder {
    /// The word table, vocabulary × hidden, read in place.
    words: WeightMatrix,
    /// The position table, positions × hidden.
    positions: WeightMatrix,
    /// The type-0 row of the token type table (every token of a single text is type 0).
    token_type: Vec<f32>,
    embedding_norm: Norm,
    blocks: Vec<Block>,
    heads: usize,
    hidden: usize,
    max_positions: usize,
    eps: f32,
}

impl Encoder {
    /// Reads the weights, named as in Hugging Face's BertModel (with or without a `bert.`
    /// prefix), from the mapped model file.
    pub fn load(
        weights: &MappedWeights,
        config: &EncoderConfig,
    ) -> std::result::Result<Self, EmbedError> {
        let c = config;
        let invalid = |message: String| weights.error(message);
        if c.hidden_act != "gelu" {
            return Err(invalid(format!(
                "hidden_act {:?} is not supported (only \"gelu\")",
                c.hidden_act
            )));
        }
        if c.num_attention_heads == 0 || !c.hidden_size.is_multiple_of(c.num_attention_heads) {
            return Err(invalid(format!(
                "hidden_size {} is not a multiple of num_attention_heads {}",
                c.hidden_size, c.num_attention_heads
            )));
        }
        let h = c.hidden_size;
        let words = weights.matrix("embeddings.word_embeddings.weight", c.vocab_size, h)?;
        let positions = weights.matrix(
            "embeddings.position_embeddings.weight",
            c.max_position_embeddings,
            h,
        )?;
        let token_type = weights
            .matrix(
                "embeddings.token_type_embeddings.weight",
                c.type_vocab_size,
                h,
            )?
            .row(0)
            .to_vec();
        let embedding_norm = Norm::load(weights, "embeddings.LayerNorm", h)?;
        let mut blocks = Vec::with_capacity(c.num_hidden_layers);
        for i in 0..c.num_hidden_layers {
            let layer = format!("encoder.layer.{i}");
            let own = format!("{layer}.attention.self");
            blocks.push(Block {
                qkv: Dense::load_fused(
                    weights,
                    &[
                        &format!("{own}.query"),
                        &format!("{own}.key"),
                        &format!("{own}.value"),
                    ],
                    h,
                    h,
                )?,
                attention_out: Dense::load(
                    weights,
                    &format!("{layer}.attention.output.dense"),
                    h,
                    h,
                    false,
                )?,
                attention_norm: Norm::load(
                    weights,
                    &format!("{layer}.attention.output.LayerNorm"),
                    h,
                )?,
                up: Dense::load(
                    weights,
                    &format!("{layer}.intermediate.dense"),
                    h,
                    c.intermediate_size,
                    true,
                )?,
                down: Dense::load(
                    weights,
                    &format!("{layer}.output.dense"),
                    c.intermediate_size,
                    h,
                    false,
                )?,
                output_norm: Norm::load(weights, &format!("{layer}.output.LayerNorm"), h)?,
            });
        }
        Ok(Encoder {
            words,
            positions,
            token_type,
            embedding_norm,
            blocks,
            heads: c.num_attention_heads,
            hidden: h,
            max_positions: c.max_position_embeddings,
            eps: c.layer_norm_eps as f32,
        })
    }

    /// Whether the word table and every dense layer are read in place from the mapped file.
    pub fn weights_in_place(&self) -> bool {
        self.words.is_mapped() && self.dense_layers().all(Dense::is_mapped)
    }

    /// Whether every dense layer holds its half-precision copy.
    pub fn has_half_copy(&self) -> bool {
        self.dense_layers().all(Dense::has_half_copy)
    }

    /// Multiply-adds of one sequence of `tokens` tokens: every dense layer once per token,
    /// and attention's two products (scores, then the weighted values), `tokens² · hidden`
    /// each per block. What a forward pass over packed sequences costs, to split work evenly.
    pub fn multiply_adds(&self, tokens: usize) -> u64 {
        let per_token: u64 = self.dense_layers().map(Dense::multiply_adds_per_row).sum();
        let attention = 2 * (self.blocks.len() * self.hidden) as u64;
        let tokens = tokens as u64;
        tokens * per_token + tokens * tokens * attention
    }

    /// Every block's dense layers.
    fn dense_layers(&self) -> impl Iterator<Item = &Dense> {
        self.blocks
            .iter()
            .flat_map(|b| [&b.qkv, &b.attention_out, &b.up, &b.down])
    }

    /// Mean-pooled, L2-normalised embeddings of the token id sequences, in order.
    pub fn embed(
        &self,
        batch: &[&[u32]],
        kernel: MatmulKernel,
        precision: WeightPrecision,
    ) -> Result<Vec<Vec<f32>>> {
        let device = Device::Cpu;
        let mut offsets = Vec::with_capacity(batch.len() + 1);
        offsets.push(0);
        // Each token's word row + position row + type row, sequences back to back.
        let mut embedded = Vec::new();
        for seq in batch {
            if seq.len() > self.max_positions {
                bail!(
                    "{} tokens is more than the model's {} positions",
                    seq.len(),
                    self.max_positions
                )
            }
            for (position, &id) in seq.iter().enumerate() {
                let id = id as usize;
                if id >= self.words.rows() {
                    bail!(
                        "token id {id} is outside the vocabulary of {}",
                        self.words.rows()
                    )
                }
                let (word, place) = (self.words.row(id), self.positions.row(position));
                embedded.extend(
                    word.iter()
                        .zip(place)
                        .zip(&self.token_type)
                        .map(|((w, p), t)| w + p + t),
                );
            }
            offsets.push(offsets.last().copied().unwrap_or(0) + seq.len());
        }
        // The rows are copied: the word table's pages leave the resident set again, or every
        // token would keep the 64 KiB of the table around its row mapped (the kernel maps the
        // cached neighbours of a page it faults in) and a server would soon hold all 47 MB.
        self.words.release_pages();
        let tokens = embedded.len() / self.hidden;
        if tokens == 0 {
            return Ok(vec![vec![0.0; self.hidden]; batch.len()]);
        }
        let embedded = Tensor::from_vec(embedded, (tokens, self.hidden), &device)?;
        let mut x = self.embedding_norm.forward(&embedded, self.eps)?;
        let head_dim = self.hidden / self.heads;
        for block in &self.blocks {
            let qkv = block.qkv.forward(&x, kernel, precision)?;
            let context = qkv.apply_op1_no_bwd(&PackedAttention {
                offsets: &offsets,
                heads: self.heads,
                head_dim,
                kernel,
            })?;
            let attended = (block.attention_out.forward(&context, kernel, precision)? + &x)?;
            x = block.attention_norm.forward(&attended, self.eps)?;
            let inner = block.up.forward(&x, kernel, precision)?;
            let out = (block.down.forward(&inner, kernel, precision)? + &x)?;
            x = block.output_norm.forward(&out, self.eps)?;
        }
        let states = x.flatten_all()?.to_vec1::<f32>()?;
        Ok(offsets
            .windows(2)
            .map(|seq| {
                let rows = &states[seq[0] * self.hidden..seq[1] * self.hidden];
                mean_pool_normalised(rows, self.hidden)
            })
            .collect())
    }
}

/// sentence-transformers' mean pooling then `Normalize`: the average of the token rows,
/// divided by its L2 norm (floored at 1e-12).
fn mean_pool_normalised(rows: &[f32], hidden: usize) -> Vec<f32> {
    let mut mean = vec![0.0f32; hidden];
    let count = rows.len() / hidden;
    for row in rows.chunks_exact(hidden) {
        for (m, v) in mean.iter_mut().zip(row) {
            *m += v;
        }
    }
    let count = count.max(1) as f32;
    mean.iter_mut().for_each(|m| *m /= count);
    let norm = mean.iter().map(|m| m * m).sum::<f32>().sqrt().max(1e-12);
    mean.iter_mut().for_each(|m| *m /= norm);
    mean
}
