//! Half-precision copies of a dense layer's weights, for the products of a few rows.
//!
//! One short text (a search query, a note) multiplies 10–30 rows by each of the dense
//! layers' 42 MB of f32 weights, which do not stay in cache from one call to the next: the
//! product waits on memory more than it multiplies. Read as IEEE half precision (11
//! significant bits) the same weights are 21 MB; the kernel widens them to f32 as it loads
//! them and sums in f32. The copy is made on the first product that reads it, after which
//! the f32 pages it came from are handed back to the page cache (products of many rows,
//! which multiply f32 on a BLAS kernel, map them again when they run).

use std::sync::OnceLock;

use half::f16;
use half::slice::HalfFloatSliceExt;

use crate::mapped_weights::WeightMatrix;

/// The precision the dense layers' weights are read in by the products that run on this
/// crate's own kernel (AVX-512 CPUs; up to 1,024 rows with the pure-Rust kernel, 32 with
/// OpenBLAS: one text, or a batch of short ones). Other products always read f32.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WeightPrecision {
    /// The model file's f32 weights, read in place: sentence-transformers' numbers to the
    /// last bits the summation order allows.
    Single,
    /// A half-precision copy of the dense layers, 21 MB instead of 42 read per text: a
    /// 12-word text embeds in 5.5 ms instead of 7.0 when the weights have left the caches
    /// (`benches/embed.rs`, 2 cores), its vector within cosine 0.9999998 of the f32 one.
    #[default]
    Half,
}

/// The half-precision copies of a layer's weight matrices, made once on first use.
#[derive(Default)]
pub(crate) struct HalfWeights {
    copies: OnceLock<Option<Vec<Box<[f16]>>>>,
}

impl HalfWeights {
    /// The half-precision copy of each of `parts`, in order (made now if this is the first
    /// call; `parts` must be the same matrices on every call). `None` when a weight does not
    /// fit half precision (beyond ±65504): that layer then reads f32.
    pub fn of(&self, parts: &[WeightMatrix]) -> Option<&[Box<[f16]>]> {
        self.copies
            .get_or_init(|| {
                let copies: Vec<Box<[f16]>> = parts.iter().map(half_copy).collect();
                let fits = parts
                    .iter()
                    .zip(&copies)
                    .all(|(part, copy)| same_finiteness(part.as_slice(), copy));
                if !fits {
                    tracing::warn!("a dense layer's weights overflow half precision; it reads f32");
                    return None;
                }
                parts.iter().for_each(WeightMatrix::release_pages);
                Some(copies)
            })
            .as_deref()
    }

    /// Whether the copies have been made.
    pub fn is_made(&self) -> bool {
        matches!(self.copies.get(), Some(Some(_)))
    }
}

/// `part`'s values rounded to the nearest half.
fn half_copy(part: &WeightMatrix) -> Box<[f16]> {
    let mut copy = vec![f16::ZERO; part.as_slice().len()].into_boxed_slice();
    copy.convert_from_f32_slice(part.as_slice());
    copy
}

/// Whether every finite value stayed finite in the copy.
fn same_finiteness(values: &[f32], copy: &[f16]) -> bool {
    values
        .iter()
        .zip(copy)
        .all(|(v, h)| !v.is_finite() || h.is_finite())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_copy_holds_each_weight_rounded_to_the_nearest_half() {
        let values = [1.0f32, -0.333_333_34, 65504.0, 1e-6, 0.1];
        let part = WeightMatrix::owned(values.to_vec(), 1, values.len());
        let weights = HalfWeights::default();
        assert!(!weights.is_made());
        let copy = weights.of(std::slice::from_ref(&part)).expect("all fit");
        assert!(weights.is_made());
        let back: Vec<f32> = copy[0].iter().map(|h| h.to_f32()).collect();
        for (v, b) in values.iter().zip(&back) {
            // 11 significant bits: within half a unit in the last place (subnormals: 2^-25).
            assert!(
                (v - b).abs() <= v.abs() * 2f32.powi(-11) + 2f32.powi(-25),
                "{v} became {b}"
            );
        }
        assert_eq!(back[0], 1.0);
        assert_eq!(back[2], 65504.0);
    }

    #[test]
    fn weights_beyond_half_precision_leave_the_layer_on_f32() {
        let fits = WeightMatrix::owned(vec![1.0, 2.0], 1, 2);
        let too_big = WeightMatrix::owned(vec![0.5, 70000.0], 1, 2);
        let weights = HalfWeights::default();
        assert!(weights.of(&[fits, too_big]).is_none());
        assert!(!weights.is_made());
    }
}
