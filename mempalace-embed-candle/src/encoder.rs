//! The BERT encoder of all-MiniLM-L6-v2 with sentence-transformers' pooling, on candle
//! tensors with the heavy steps as fused candle ops.
//!
//! Compared with candle-transformers' general BERT, it packs the sequences of a batch back
//! to back instead of padding them, computes query, key and value in one product, fuses the
//! bias and GELU into the dense layers, and multiplies with a kernel the caller picks. It
//! computes the same function: the parity tests hold it to sentence-transformers' vectors.

use candle_core::{Device, Result, Tensor, bail};
use candle_nn::VarBuilder;
use serde::Deserialize;

use crate::attention::PackedAttention;
use crate::dense::Dense;
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
    fn load(vb: VarBuilder, dim: usize) -> Result<Self> {
        Ok(Norm {
            gamma: vb.get(dim, "weight")?,
            beta: vb.get(dim, "bias")?,
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
    words: Tensor,
    positions: Tensor,
    token_type: Tensor,
    embedding_norm: Norm,
    blocks: Vec<Block>,
    heads: usize,
    hidden: usize,
    max_positions: usize,
    eps: f32,
}

impl Encoder {
    /// Loads the weights named as in Hugging Face's BertModel (with or without a `bert.`
    /// prefix).
    pub fn load(vb: VarBuilder, config: &EncoderConfig) -> Result<Self> {
        let c = config;
        if c.hidden_act != "gelu" {
            bail!(
                "hidden_act {:?} is not supported (only \"gelu\")",
                c.hidden_act
            )
        }
        if c.num_attention_heads == 0 || !c.hidden_size.is_multiple_of(c.num_attention_heads) {
            bail!(
                "hidden_size {} is not a multiple of num_attention_heads {}",
                c.hidden_size,
                c.num_attention_heads
            )
        }
        let vb = if vb.contains_tensor("embeddings.word_embeddings.weight") {
            vb
        } else {
            vb.pp("bert")
        };
        let h = c.hidden_size;
        let emb = vb.pp("embeddings");
        let words = emb.get((c.vocab_size, h), "word_embeddings.weight")?;
        let positions = emb.get((c.max_position_embeddings, h), "position_embeddings.weight")?;
        // Every token is of type 0 for a single-text embedding.
        let token_type = emb
            .get((c.type_vocab_size, h), "token_type_embeddings.weight")?
            .get(0)?;
        let embedding_norm = Norm::load(emb.pp("LayerNorm"), h)?;
        let mut blocks = Vec::with_capacity(c.num_hidden_layers);
        for i in 0..c.num_hidden_layers {
            let layer = vb.pp(format!("encoder.layer.{i}"));
            let own = layer.pp("attention.self");
            blocks.push(Block {
                qkv: Dense::load_fused(&[own.pp("query"), own.pp("key"), own.pp("value")], h, h)?,
                attention_out: Dense::load(layer.pp("attention.output.dense"), h, h, false)?,
                attention_norm: Norm::load(layer.pp("attention.output.LayerNorm"), h)?,
                up: Dense::load(layer.pp("intermediate.dense"), h, c.intermediate_size, true)?,
                down: Dense::load(layer.pp("output.dense"), c.intermediate_size, h, false)?,
                output_norm: Norm::load(layer.pp("output.LayerNorm"), h)?,
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

    /// Mean-pooled, L2-normalised embeddings of the token id sequences, in order.
    pub fn embed(&self, batch: &[&[u32]], kernel: MatmulKernel) -> Result<Vec<Vec<f32>>> {
        let device = Device::Cpu;
        let mut offsets = Vec::with_capacity(batch.len() + 1);
        offsets.push(0);
        let mut ids = Vec::new();
        let mut positions = Vec::new();
        for seq in batch {
            if seq.len() > self.max_positions {
                bail!(
                    "{} tokens is more than the model's {} positions",
                    seq.len(),
                    self.max_positions
                )
            }
            ids.extend_from_slice(seq);
            positions.extend(0..seq.len() as u32);
            offsets.push(ids.len());
        }
        if ids.is_empty() {
            return Ok(vec![vec![0.0; self.hidden]; batch.len()]);
        }
        let tokens = ids.len();
        let ids = Tensor::from_vec(ids, tokens, &device)?;
        let positions = Tensor::from_vec(positions, tokens, &device)?;
        let embedded = (self.words.index_select(&ids, 0)?
            + self.positions.index_select(&positions, 0)?)?
        .broadcast_add(&self.token_type)?;
        let mut x = self.embedding_norm.forward(&embedded, self.eps)?;
        let head_dim = self.hidden / self.heads;
        for block in &self.blocks {
            let qkv = block.qkv.forward(&x, kernel)?;
            let context = qkv.apply_op1_no_bwd(&PackedAttention {
                offsets: &offsets,
                heads: self.heads,
                head_dim,
                kernel,
            })?;
            let attended = (block.attention_out.forward(&context, kernel)? + &x)?;
            x = block.attention_norm.forward(&attended, self.eps)?;
            let inner = block.up.forward(&x, kernel)?;
            let out = (block.down.forward(&inner, kernel)? + &x)?;
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
