//! A BERT dense layer (`x · Wᵀ + b`, optionally followed by GELU) as one candle op.

use candle_core::{CpuStorage, CustomOp1, Layout, Result, Shape, Tensor, bail};
use candle_nn::VarBuilder;

use crate::gelu::gelu_in_place;
use crate::matmul::{MatRef, MatmulKernel, sgemm};

/// The weights of one dense layer, laid out for the product (`Wᵀ` stored row-major).
pub(crate) struct Dense {
    weight_t: Vec<f32>,
    bias: Vec<f32>,
    in_dim: usize,
    out_dim: usize,
    gelu: bool,
}

impl Dense {
    /// Loads `weight` (out × in) and `bias` (out) from `vb`.
    pub fn load(vb: VarBuilder, in_dim: usize, out_dim: usize, gelu: bool) -> Result<Self> {
        let weight = vb.get((out_dim, in_dim), "weight")?;
        let bias = vb.get(out_dim, "bias")?;
        Self::from_tensors(&weight, &bias, gelu)
    }

    /// Several layers reading the same input fused into one (their outputs side by side).
    pub fn load_fused(vbs: &[VarBuilder], in_dim: usize, out_dim: usize) -> Result<Self> {
        let mut weights = Vec::new();
        let mut biases = Vec::new();
        for vb in vbs {
            weights.push(vb.get((out_dim, in_dim), "weight")?);
            biases.push(vb.get(out_dim, "bias")?);
        }
        Self::from_tensors(&Tensor::cat(&weights, 0)?, &Tensor::cat(&biases, 0)?, false)
    }

    fn from_tensors(weight: &Tensor, bias: &Tensor, gelu: bool) -> Result<Self> {
        let (out_dim, in_dim) = weight.dims2()?;
        Ok(Dense {
            weight_t: weight.t()?.contiguous()?.flatten_all()?.to_vec1()?,
            bias: bias.to_vec1()?,
            in_dim,
            out_dim,
            gelu,
        })
    }

    /// Applies the layer to `x` (rows × in_dim) with `kernel`.
    pub fn forward(&self, x: &Tensor, kernel: MatmulKernel) -> Result<Tensor> {
        x.apply_op1_no_bwd(&DenseOp {
            layer: self,
            kernel,
        })
    }
}

struct DenseOp<'a> {
    layer: &'a Dense,
    kernel: MatmulKernel,
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
        sgemm(
            self.kernel,
            MatRef::dense(x, rows, in_dim),
            MatRef::dense(&l.weight_t, in_dim, l.out_dim),
            &mut out,
            l.out_dim,
            true,
        );
        if l.gelu {
            gelu_in_place(&mut out);
        }
        Ok((CpuStorage::F32(out), Shape::from((rows, l.out_dim))))
    }
}
