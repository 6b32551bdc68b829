//! Multi-head self-attention over packed sequences (no padding) as one candle op.
//!
//! The input is the fused query/key/value projection of every token of every sequence, one
//! sequence after another (`offsets[b]..offsets[b + 1]` are sequence b's rows). Each head of
//! each sequence attends only within its own rows, which is what BERT's attention mask does
//! for padded batches, without computing the padding.

use candle_core::{CpuStorage, CustomOp1, Layout, Result, Shape, bail};

use crate::matmul::{MatRef, MatmulKernel, sgemm};

/// Attention for `heads` heads of `head_dim` each over packed sequences.
pub(crate) struct PackedAttention<'a> {
    pub offsets: &'a [usize],
    pub heads: usize,
    pub head_dim: usize,
    pub kernel: MatmulKernel,
}

impl CustomOp1 for PackedAttention<'_> {
    fn name(&self) -> &'static str {
        "minilm-packed-attention"
    }

    fn cpu_fwd(&self, storage: &CpuStorage, layout: &Layout) -> Result<(CpuStorage, Shape)> {
        let hidden = self.heads * self.head_dim;
        let (rows, width) = layout.shape().dims2()?;
        if width != 3 * hidden {
            bail!(
                "attention takes {} columns (q, k, v), got {width}",
                3 * hidden
            )
        }
        if self.offsets.first() != Some(&0) || self.offsets.last() != Some(&rows) {
            bail!("sequence offsets do not cover the {rows} rows")
        }
        let Some((start, end)) = layout.contiguous_offsets() else {
            bail!("attention input must be contiguous")
        };
        let qkv = &storage.as_slice::<f32>()?[start..end];
        let scale = 1.0 / (self.head_dim as f32).sqrt();
        let mut context = vec![0.0f32; rows * hidden];
        let mut scores = Vec::new();
        for seq in self.offsets.windows(2) {
            let (first, len) = (seq[0], seq[1] - seq[0]);
            if len == 0 {
                continue;
            }
            scores.resize(len * len, 0.0);
            let view = |column: usize| MatRef {
                data: &qkv[first * width + column..],
                rows: len,
                cols: self.head_dim,
                row_stride: width,
                col_stride: 1,
            };
            for head in 0..self.heads {
                let column = head * self.head_dim;
                let (q, k, v) = (
                    view(column),
                    view(hidden + column),
                    view(2 * hidden + column),
                );
                sgemm(self.kernel, q, k.t(), &mut scores, len, false);
                for row in scores.chunks_exact_mut(len) {
                    softmax_scaled(row, scale);
                }
                sgemm(
                    self.kernel,
                    MatRef::dense(&scores, len, len),
                    v,
                    &mut context[first * hidden + column..],
                    hidden,
                    false,
                );
            }
        }
        Ok((CpuStorage::F32(context), Shape::from((rows, hidden))))
    }
}

/// `row = softmax(row · scale)`, computed stably.
fn softmax_scaled(row: &mut [f32], scale: f32) {
    let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let mut sum = 0.0;
    for v in row.iter_mut() {
        *v = ((*v - max) * scale).exp();
        sum += *v;
    }
    let inv = 1.0 / sum;
    for v in row.iter_mut() {
        *v *= inv;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn softmax_sums_to_one_and_keeps_order() {
        let mut row = [1.0, 3.0, 2.0, -50.0];
        softmax_scaled(&mut row, 0.5);
        assert!((row.iter().sum::<f32>() - 1.0).abs() < 1e-6);
        assert!(row[1] > row[2] && row[2] > row[0] && row[0] > row[3]);
    }
}
