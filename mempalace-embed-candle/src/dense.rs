//! A BERT dense layer (`x · Wᵀ + b`, optionally followed by GELU) as one candle op.

use candle_core::{CpuStorage, CustomOp1, Layout, Result, Shape, Tensor, bail};

use crate::error::EmbedError;
use crate::gelu::gelu_in_place;
use crate::half_weights::{HalfWeights, WeightPrecision};
use crate::mapped_weights::{MappedWeights, WeightMatrix};
use crate::matmul::{MatRef, MatmulKernel, runs_on_few_rows, sgemm_parallel};

/// The weights of one dense layer: one or more weight matrices (`out_i × in`, as stored,
/// read in place) whose outputs sit side by side, and their biases.
pub(crate) struct Dense {
    parts: Vec<WeightMatrix>,
    /// The parts in half precision, made when a product first reads them so.
    half: HalfWeights,
    bias: Vec<f32>,
    in_dim: usize,
    out_dim: usize,
    gelu: bool,
}

impl Dense {
    /// The layer whose `weight` (out × in) and `bias` (out) are named `{prefix}.weight` and
    /// `{prefix}.bias`.
    pub fn load(
        weights: &MappedWeights,
        prefix: &str,
        in_dim: usize,
        out_dim: usize,
        gelu: bool,
    ) -> std::result::Result<Self, EmbedError> {
        let mut layer = Self::load_fused(weights, &[prefix], in_dim, out_dim)?;
        layer.gelu = gelu;
        Ok(layer)
    }

    /// Several layers reading the same input fused into one (their outputs side by side).
    pub fn load_fused(
        weights: &MappedWeights,
        prefixes: &[&str],
        in_dim: usize,
        out_dim: usize,
    ) -> std::result::Result<Self, EmbedError> {
        let mut parts = Vec::with_capacity(prefixes.len());
        let mut bias = Vec::with_capacity(prefixes.len() * out_dim);
        for prefix in prefixes {
            parts.push(weights.matrix(&format!("{prefix}.weight"), out_dim, in_dim)?);
            bias.extend(weights.vector(&format!("{prefix}.bias"), out_dim)?);
        }
        Ok(Dense {
            parts,
            half: HalfWeights::default(),
            bias,
            in_dim,
            out_dim: prefixes.len() * out_dim,
            gelu: false,
        })
    }

    /// Whether every weight matrix is read in place from the mapped file.
    pub fn is_mapped(&self) -> bool {
        self.parts.iter().all(WeightMatrix::is_mapped)
    }

    /// Multiply-adds the layer spends on one input row.
    pub fn multiply_adds_per_row(&self) -> u64 {
        (self.in_dim * self.out_dim) as u64
    }

    /// Whether the half-precision copy of the weights has been made.
    pub fn has_half_copy(&self) -> bool {
        self.half.is_made()
    }

    /// Applies the layer to `x` (rows × in_dim) with `kernel`, reading the weights in
    /// `precision` when the product is one of a few rows.
    pub fn forward(
        &self,
        x: &Tensor,
        kernel: MatmulKernel,
        precision: WeightPrecision,
    ) -> Result<Tensor> {
        x.apply_op1_no_bwd(&DenseOp {
            layer: self,
            kernel,
            precision,
        })
    }
}

struct DenseOp<'a> {
    layer: &'a Dense,
    kernel: MatmulKernel,
    precision: WeightPrecision,
}

impl CustomOp1 for DenseOp<'_> {
    fn name(&self) -> &'static str {
        "minilm-dense"
    }

    fn cpu_fwd(&self, storage: &CpuStorage, layout: &Layout) -> Result<(CpuStorage, Shape)> {
        let l = self.layer;
        let (rows, in_dim) = layout.shape().dims2()?;
        if in_dim != l.in_dim {
            bail!("dense layer takes {} inputs, got {in_dim}", l.in_dim)
        }
        let Some((start, end)) = layout.contiguous_offsets() else {
            bail!("dense layer input must be contiguous")
        };
        let x = &storage.as_slice::<f32>()?[start..end];
        let mut out = Vec::with_capacity(rows * l.out_dim);
        for _ in 0..rows {
            out.extend_from_slice(&l.bias);
        }
        let half = (self.precision == WeightPrecision::Half && runs_on_few_rows(self.kernel, rows))
            .then(|| l.half.of(&l.parts))
            .flatten();
        let x = MatRef::dense(x, rows, in_dim);
        let mut column = 0;
        for (index, part) in l.parts.iter().enumerate() {
            // `W` is stored out × in; the product wants its transpose, which is the same
            // elements read column-wise (no copy).
            let out = &mut out[column..];
            match half {
                Some(copies) => {
                    let weight_t = MatRef::dense(&copies[index][..], part.rows(), part.cols());
                    sgemm_parallel(self.kernel, x, weight_t.t(), out, l.out_dim, true);
                }
                None => {
                    let weight_t = MatRef::dense(part.as_slice(), part.rows(), part.cols());
                    sgemm_parallel(self.kernel, x, weight_t.t(), out, l.out_dim, true);
                }
            }
            column += part.rows();
        }
        if l.gelu {
            gelu_in_place(&mut out);
        }
        Ok((CpuStorage::F32(out), Shape::from((rows, l.out_dim))))
    }
}
