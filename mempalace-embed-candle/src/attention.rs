//! Multi-head self-attention over packed sequences (no padding) as one candle op.
//!
//! The input is the fused query/key/value projection of every token of every sequence, one
//! sequence after another (`offsets[b]..offsets[b + 1]` are sequence b's rows). Each head of
//! each sequence attends only within its own rows, which is what BERT's attention mask does
//! for padded batches, without computing the padding.

use candle_core::{CpuStorage, CustomOp1, Layout, Result, Shape, bail};

use crate::matmul::{MatRef, MatmulKernel, sgemm};
use crate::wide_vectors;

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

/// `row = softmax(row · scale)`, computed stably, in the AVX2 copy when the CPU has it.
fn softmax_scaled(row: &mut [f32], scale: f32) {
    #[cfg(target_arch = "x86_64")]
    if wide_vectors::available() {
        // SAFETY: the CPU has the features this copy was compiled for.
        return unsafe { softmax_scaled_avx2(row, scale) };
    }
    softmax_scaled_portable(row, scale)
}

/// [`softmax_scaled_portable`] compiled for AVX2 and FMA.
///
/// # Safety
/// The CPU must have AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn softmax_scaled_avx2(row: &mut [f32], scale: f32) {
    softmax_scaled_portable(row, scale)
}

/// Lanes of the running maximum and sum: independent accumulators let the compiler keep
/// them in one vector register (a single one would be a chain of dependent scalar steps).
const LANES: usize = 8;

/// The softmax as loops the compiler vectorises: the maximum and the sum in [`LANES`]
/// accumulators, the exponentials by [`exp`] instead of libm's scalar `expf` (which took 8%
/// of the embedder's time on mined chunks).
#[inline(always)]
fn softmax_scaled_portable(row: &mut [f32], scale: f32) {
    let mut lanes = [f32::NEG_INFINITY; LANES];
    let mut chunks = row.chunks_exact(LANES);
    for chunk in &mut chunks {
        for (m, v) in lanes.iter_mut().zip(chunk) {
            *m = m.max(*v);
        }
    }
    let max = chunks
        .remainder()
        .iter()
        .chain(&lanes)
        .copied()
        .fold(f32::NEG_INFINITY, f32::max);
    for v in row.iter_mut() {
        *v = exp((*v - max) * scale);
    }
    let mut sums = [0.0f32; LANES];
    let mut chunks = row.chunks_exact(LANES);
    for chunk in &mut chunks {
        for (s, v) in sums.iter_mut().zip(chunk) {
            *s += v;
        }
    }
    let sum: f32 = sums.iter().chain(chunks.remainder()).sum();
    let inv = 1.0 / sum;
    for v in row.iter_mut() {
        *v *= inv;
    }
}

/// `e^x` for the softmax's `x ≤ 0`, within 2 ulp of libm's `expf` down to -87 (below it,
/// e^-87 ≈ 1.6e-38, as good as zero beside the row's largest term, which is 1): Cephes'
/// `expf`, x = n·ln 2 + r with |r| ≤ ln 2 / 2, e^r by a degree-6 polynomial, 2^n put
/// straight into the exponent bits. Plain arithmetic and bit casts, so it vectorises.
#[inline(always)]
fn exp(x: f32) -> f32 {
    // 1.5 · 2^23: adding it rounds to an integer held in the low mantissa bits.
    const ROUNDER: f32 = 12_582_912.0;
    let x = x.clamp(-87.0, 0.0);
    let shifted = x * std::f32::consts::LOG2_E + ROUNDER;
    let n = shifted - ROUNDER;
    // ln 2 in two parts, so n · ln 2 is exact enough for |n| ≤ 126.
    let r = x - n * 0.693_359_4 + n * 2.121_944_4e-4;
    let mut p = 1.987_569_1e-4;
    p = p * r + 1.398_199_9e-3;
    p = p * r + 8.333_452e-3;
    p = p * r + 4.166_579_6e-2;
    p = p * r + 0.166_666_65;
    p = p * r + 0.5;
    let e_r = p * r * r + r + 1.0;
    // n + 127 is the biased exponent of 2^n; n sits in the low bits of `shifted`.
    let n_bits = shifted.to_bits().wrapping_sub(ROUNDER.to_bits());
    let two_to_n = f32::from_bits(n_bits.wrapping_add(127) << 23);
    e_r * two_to_n
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

    #[test]
    fn exp_matches_libm_over_the_softmax_range() {
        let mut worst = 0.0f64;
        for i in 0..=870_000 {
            let x = -(i as f32) / 10_000.0;
            let want = (x as f64).exp();
            let relative = (exp(x) as f64 - want).abs() / want;
            worst = worst.max(relative);
        }
        assert!(worst < 3e-7, "worst relative error {worst}");
        assert_eq!(exp(0.0), 1.0);
        assert!(exp(-1000.0) < 1e-37 && exp(f32::NEG_INFINITY) < 1e-37);
    }

    #[test]
    fn softmax_of_a_long_row_matches_the_scalar_definition() {
        // Longer than the lanes, with a remainder, and every copy the CPU runs.
        let row: Vec<f32> = (0..203)
            .map(|i| ((i * 37) % 101) as f32 / 7.0 - 6.0)
            .collect();
        let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max) as f64;
        let exps: Vec<f64> = row
            .iter()
            .map(|&v| ((v as f64 - max) * 0.3).exp())
            .collect();
        let total: f64 = exps.iter().sum();
        let mut portable = row.clone();
        softmax_scaled_portable(&mut portable, 0.3);
        let mut dispatched = row.clone();
        softmax_scaled(&mut dispatched, 0.3);
        for ((p, d), e) in portable.iter().zip(&dispatched).zip(&exps) {
            let want = e / total;
            assert!(
                (*p as f64 - want).abs() < 1e-7 + want * 1e-5,
                "{p} vs {want}"
            );
            assert!(
                (*d as f64 - want).abs() < 1e-7 + want * 1e-5,
                "{d} vs {want}"
            );
        }
    }
}
