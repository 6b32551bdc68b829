//! Products with few rows (the tokens of one short text) against a weight matrix as stored
//! (`out × in`): dot products straight off the stored rows, with AVX-512.
//!
//! A BLAS `sgemm` first copies ("packs") the weight matrix into its own layout, which pays
//! off when many rows share it. One short text has 10–30 rows, and then copying up to
//! 2.3 MiB of weights per product costs more than multiplying them. Here each weight row is
//! read once and multiplied with every input row while it sits in L1, four weight rows by
//! four input rows at a time (sixteen accumulators, summed by one shuffle tree per four).
//! While the first input rows meet four weight rows, the next four weight rows are prefetched:
//! they come from memory (the model's 42 MB of layers do not stay in cache between calls),
//! and prefetching them took one 30-token text from 7.8 to 7.35 ms p50 on 2 cores.
//! The weights may be stored in single precision (the model file, read in place) or in half
//! precision ([`crate::half_weights`]): half the bytes to bring from memory, widened to f32
//! as they are loaded, with every sum still in f32.
//! `matmul` decides when this kernel runs.

pub(crate) use half::f16;

/// Whether this CPU runs the kernel: AVX-512 with its byte/word and 256-bit forms (every
/// AVX-512 server CPU since Skylake), checked once.
pub(crate) fn available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        static AVX512: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        *AVX512.get_or_init(|| {
            std::arch::is_x86_feature_detected!("avx512f")
                && std::arch::is_x86_feature_detected!("avx512bw")
                && std::arch::is_x86_feature_detected!("avx512vl")
        })
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// `c[i][j] = Σ_p a[i][p] · w[j][p] (+ c[i][j] when accumulating)` for `m` rows of `a`
/// (row stride `lda`), `n` rows of `w` (row stride `ldw`), `k` terms each, `c` at row stride
/// `ldc`.
///
/// # Safety
/// [`available`] must be true; `a`, `w` and `c` must hold every element those shapes and
/// strides name, and nothing else may access that block of `c` meanwhile.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn rows_times_stored_rows<W: StoredWeight>(
    a: *const f32,
    lda: usize,
    w: *const W,
    ldw: usize,
    c: *mut f32,
    ldc: usize,
    (m, n, k): (usize, usize, usize),
    accumulate: bool,
) {
    #[cfg(target_arch = "x86_64")]
    {
        let shape = Shape {
            a,
            lda,
            w,
            ldw,
            c,
            ldc,
            k,
            accumulate,
        };
        // SAFETY: the caller's contract.
        unsafe { avx512::product(&shape, m, n) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (a, lda, w, ldw, c, ldc, m, n, k, accumulate);
        unreachable!("few_rows::available() is false off x86_64");
    }
}

/// An element type the weight rows may be stored in: `f32` or half precision.
pub(crate) trait StoredWeight: Copy + Send + Sync + 'static {
    /// Lanes `p..p + 16` of a row of this type (a weight row, or for f32 an input row) as
    /// f32, or the lanes before `k` of them (`mask`, a run of ones from bit 0), the rest zero.
    ///
    /// # Safety
    /// [`available`] must be true, and `row + p` up to the mask's last lane be readable.
    #[cfg(target_arch = "x86_64")]
    unsafe fn lanes(
        row: *const Self,
        p: usize,
        mask: std::arch::x86_64::__mmask16,
    ) -> std::arch::x86_64::__m512;
}

#[cfg(target_arch = "x86_64")]
impl StoredWeight for f32 {
    #[target_feature(enable = "avx512f,avx512bw,avx512vl")]
    #[inline]
    unsafe fn lanes(
        row: *const f32,
        p: usize,
        mask: std::arch::x86_64::__mmask16,
    ) -> std::arch::x86_64::__m512 {
        // SAFETY: the caller's contract; masked-off lanes are not read.
        unsafe { std::arch::x86_64::_mm512_maskz_loadu_ps(mask, row.add(p)) }
    }
}

#[cfg(target_arch = "x86_64")]
impl StoredWeight for f16 {
    #[target_feature(enable = "avx512f,avx512bw,avx512vl")]
    #[inline]
    unsafe fn lanes(
        row: *const f16,
        p: usize,
        mask: std::arch::x86_64::__mmask16,
    ) -> std::arch::x86_64::__m512 {
        use std::arch::x86_64::*;
        // SAFETY: the caller's contract; masked-off lanes are not read.
        unsafe { _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(mask, row.add(p).cast())) }
    }
}

#[cfg(not(target_arch = "x86_64"))]
impl StoredWeight for f32 {}
#[cfg(not(target_arch = "x86_64"))]
impl StoredWeight for f16 {}

/// The operands of one product.
#[cfg(target_arch = "x86_64")]
struct Shape<W> {
    a: *const f32,
    lda: usize,
    w: *const W,
    ldw: usize,
    c: *mut f32,
    ldc: usize,
    k: usize,
    accumulate: bool,
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use super::{Shape, StoredWeight};
    use std::arch::x86_64::*;

    /// The whole product: blocks of 4 input rows × 4 weight rows, then what is left of the
    /// input rows one by one against 4 weight rows, then the last weight rows one by one.
    ///
    /// # Safety
    /// As `rows_times_stored_rows`.
    #[target_feature(enable = "avx512f,avx512bw,avx512vl")]
    pub(super) unsafe fn product<W: StoredWeight>(s: &Shape<W>, m: usize, n: usize) {
        let full_n = n - n % 4;
        let full_m = m - m % 4;
        // SAFETY (every call): the rows and columns named are inside the caller's shapes.
        for j in (0..full_n).step_by(4) {
            // The first pass over these weight rows also asks for the next four, which then
            // arrive from memory while these are multiplied.
            let next = (j + 8 <= full_n).then(|| unsafe { s.w.add((j + 4) * s.ldw) });
            for i in (0..full_m).step_by(4) {
                unsafe { four_by_four(s, i, j, if i == 0 { next } else { None }) };
            }
            for i in full_m..m {
                unsafe { one_by_four(s, i, j, if full_m == 0 && i == 0 { next } else { None }) };
            }
        }
        for j in full_n..n {
            for i in 0..m {
                unsafe { store(s, i, j, dot(s, i, j)) };
            }
        }
    }

    /// Asks for the cache line at lane `p` of four weight rows from `w` (stride `ldw`) to be
    /// brought into L1.
    ///
    /// # Safety
    /// The four rows must lie inside `w`'s allocation (a prefetch itself reads nothing).
    #[target_feature(enable = "avx512f,avx512bw,avx512vl")]
    #[inline]
    unsafe fn prefetch_four<W>(w: *const W, ldw: usize, p: usize) {
        // SAFETY: the caller's contract keeps every address inside the allocation.
        unsafe {
            for r in 0..4 {
                _mm_prefetch::<_MM_HINT_T0>(w.add(r * ldw + p).cast::<i8>());
            }
        }
    }

    /// The mask of the lanes from `p` that lie before `k`.
    #[inline]
    fn mask_from(p: usize, k: usize) -> __mmask16 {
        let left = k - p;
        if left >= 16 {
            0xFFFF
        } else {
            ((1u32 << left) - 1) as __mmask16
        }
    }

    /// Writes one output element.
    ///
    /// # Safety
    /// (i, j) must be inside the caller's block of c.
    #[target_feature(enable = "avx512f,avx512bw,avx512vl")]
    #[inline]
    unsafe fn store<W>(s: &Shape<W>, i: usize, j: usize, total: f32) {
        // SAFETY: the caller's contract.
        unsafe {
            let out = s.c.add(i * s.ldc + j);
            *out = if s.accumulate { *out + total } else { total };
        }
    }

    /// The lane sums of four accumulators, in order: one shuffle-and-add tree for all four
    /// instead of four separate reductions.
    #[target_feature(enable = "avx512f,avx512bw,avx512vl")]
    #[inline]
    fn sums_of_four(a: __m512, b: __m512, c: __m512, d: __m512) -> __m128 {
        // Per 128-bit lane: [a0+a2, b0+b2, a1+a3, b1+b3] and the same for c, d.
        let ab = _mm512_add_ps(_mm512_unpacklo_ps(a, b), _mm512_unpackhi_ps(a, b));
        let cd = _mm512_add_ps(_mm512_unpacklo_ps(c, d), _mm512_unpackhi_ps(c, d));
        // Per 128-bit lane: [Σa, Σb, Σc, Σd] of that lane.
        let (ab, cd) = (_mm512_castps_pd(ab), _mm512_castps_pd(cd));
        let lanes = _mm512_add_ps(
            _mm512_castpd_ps(_mm512_unpacklo_pd(ab, cd)),
            _mm512_castpd_ps(_mm512_unpackhi_pd(ab, cd)),
        );
        // The four 128-bit lanes added.
        let halves = _mm256_add_ps(
            _mm512_castps512_ps256(lanes),
            _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(lanes), 1)),
        );
        _mm_add_ps(
            _mm256_castps256_ps128(halves),
            _mm256_extractf128_ps(halves, 1),
        )
    }

    /// Writes four neighbouring output elements of row `i` from column `j`.
    ///
    /// # Safety
    /// Row i, columns j..j + 4 must be inside the caller's block of c.
    #[target_feature(enable = "avx512f,avx512bw,avx512vl")]
    #[inline]
    unsafe fn store_four<W>(s: &Shape<W>, i: usize, j: usize, sums: __m128) {
        // SAFETY: the caller's contract.
        unsafe {
            let out = s.c.add(i * s.ldc + j);
            let total = if s.accumulate {
                _mm_add_ps(_mm_loadu_ps(out), sums)
            } else {
                sums
            };
            _mm_storeu_ps(out, total);
        }
    }

    /// Input rows `i..i + 4` times weight rows `j..j + 4`: sixteen accumulators. With `next`
    /// (the first of four more weight rows), those are prefetched along the way.
    ///
    /// # Safety
    /// Those rows must be inside the caller's shapes, and `next` four rows of `w`.
    #[target_feature(enable = "avx512f,avx512bw,avx512vl")]
    unsafe fn four_by_four<W: StoredWeight>(
        s: &Shape<W>,
        i: usize,
        j: usize,
        next: Option<*const W>,
    ) {
        // SAFETY (pointer arithmetic and loads): rows inside the shapes, lanes inside k.
        let (a0, a1, a2, a3) = unsafe {
            let a = s.a.add(i * s.lda);
            (a, a.add(s.lda), a.add(2 * s.lda), a.add(3 * s.lda))
        };
        let (w0, w1, w2, w3) = unsafe {
            let w = s.w.add(j * s.ldw);
            (w, w.add(s.ldw), w.add(2 * s.ldw), w.add(3 * s.ldw))
        };
        let zero = _mm512_setzero_ps();
        let mut c = [zero; 16];
        let mut p = 0;
        while p < s.k {
            if let Some(next) = next {
                // SAFETY: the caller's contract on `next`; a prefetch reads nothing.
                unsafe { prefetch_four(next, s.ldw, p) };
            }
            let mask = mask_from(p, s.k);
            let (x0, x1, x2, x3) = unsafe {
                (
                    W::lanes(w0, p, mask),
                    W::lanes(w1, p, mask),
                    W::lanes(w2, p, mask),
                    W::lanes(w3, p, mask),
                )
            };
            let y = unsafe { f32::lanes(a0, p, mask) };
            c[0] = _mm512_fmadd_ps(y, x0, c[0]);
            c[1] = _mm512_fmadd_ps(y, x1, c[1]);
            c[2] = _mm512_fmadd_ps(y, x2, c[2]);
            c[3] = _mm512_fmadd_ps(y, x3, c[3]);
            let y = unsafe { f32::lanes(a1, p, mask) };
            c[4] = _mm512_fmadd_ps(y, x0, c[4]);
            c[5] = _mm512_fmadd_ps(y, x1, c[5]);
            c[6] = _mm512_fmadd_ps(y, x2, c[6]);
            c[7] = _mm512_fmadd_ps(y, x3, c[7]);
            let y = unsafe { f32::lanes(a2, p, mask) };
            c[8] = _mm512_fmadd_ps(y, x0, c[8]);
            c[9] = _mm512_fmadd_ps(y, x1, c[9]);
            c[10] = _mm512_fmadd_ps(y, x2, c[10]);
            c[11] = _mm512_fmadd_ps(y, x3, c[11]);
            let y = unsafe { f32::lanes(a3, p, mask) };
            c[12] = _mm512_fmadd_ps(y, x0, c[12]);
            c[13] = _mm512_fmadd_ps(y, x1, c[13]);
            c[14] = _mm512_fmadd_ps(y, x2, c[14]);
            c[15] = _mm512_fmadd_ps(y, x3, c[15]);
            p += 16;
        }
        for r in 0..4 {
            // SAFETY: row i + r, columns j..j + 4 of the block.
            unsafe {
                store_four(
                    s,
                    i + r,
                    j,
                    sums_of_four(c[4 * r], c[4 * r + 1], c[4 * r + 2], c[4 * r + 3]),
                )
            };
        }
    }

    /// Input row `i` times weight rows `j..j + 4`, prefetching four more from `next` as
    /// [`four_by_four`] does.
    ///
    /// # Safety
    /// Those rows must be inside the caller's shapes, and `next` four rows of `w`.
    #[target_feature(enable = "avx512f,avx512bw,avx512vl")]
    unsafe fn one_by_four<W: StoredWeight>(
        s: &Shape<W>,
        i: usize,
        j: usize,
        next: Option<*const W>,
    ) {
        // SAFETY (pointer arithmetic and loads): rows inside the shapes, lanes inside k.
        let a = unsafe { s.a.add(i * s.lda) };
        let (w0, w1, w2, w3) = unsafe {
            let w = s.w.add(j * s.ldw);
            (w, w.add(s.ldw), w.add(2 * s.ldw), w.add(3 * s.ldw))
        };
        let zero = _mm512_setzero_ps();
        let (mut c0, mut c1, mut c2, mut c3) = (zero, zero, zero, zero);
        let mut p = 0;
        while p < s.k {
            if let Some(next) = next {
                // SAFETY: as in four_by_four.
                unsafe { prefetch_four(next, s.ldw, p) };
            }
            let mask = mask_from(p, s.k);
            let y = unsafe { f32::lanes(a, p, mask) };
            c0 = _mm512_fmadd_ps(y, unsafe { W::lanes(w0, p, mask) }, c0);
            c1 = _mm512_fmadd_ps(y, unsafe { W::lanes(w1, p, mask) }, c1);
            c2 = _mm512_fmadd_ps(y, unsafe { W::lanes(w2, p, mask) }, c2);
            c3 = _mm512_fmadd_ps(y, unsafe { W::lanes(w3, p, mask) }, c3);
            p += 16;
        }
        // SAFETY: row i, columns j..j + 4 of the block.
        unsafe { store_four(s, i, j, sums_of_four(c0, c1, c2, c3)) };
    }

    /// Input row `i` times weight row `j`.
    ///
    /// # Safety
    /// Those rows must be inside the caller's shapes.
    #[target_feature(enable = "avx512f,avx512bw,avx512vl")]
    unsafe fn dot<W: StoredWeight>(s: &Shape<W>, i: usize, j: usize) -> f32 {
        // SAFETY (pointer arithmetic and loads): rows inside the shapes, lanes inside k.
        let (a, w) = unsafe { (s.a.add(i * s.lda), s.w.add(j * s.ldw)) };
        let mut sum = _mm512_setzero_ps();
        let mut p = 0;
        while p < s.k {
            let mask = mask_from(p, s.k);
            sum = _mm512_fmadd_ps(
                unsafe { f32::lanes(a, p, mask) },
                unsafe { W::lanes(w, p, mask) },
                sum,
            );
            p += 16;
        }
        _mm512_reduce_add_ps(sum)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(n: usize, seed: f32) -> Vec<f32> {
        (0..n).map(|i| (i as f32 * 0.37 + seed).sin()).collect()
    }

    /// Runs the kernel on every block edge and tail shape with the weights stored as `W`
    /// and checks it against the naive product of the same (widened) values.
    fn check_every_shape<W: StoredWeight>(from_f32: impl Fn(f32) -> W, to_f32: impl Fn(W) -> f32) {
        for (m, n, k) in [
            (1, 1, 1),
            (3, 5, 17),
            (4, 4, 16),
            (7, 9, 40),
            (2, 12, 100),
            (5, 13, 33),
            (16, 384, 384),
            (10, 6, 1536),
        ] {
            let (lda, ldw, ldc) = (k + 3, k + 1, n + 2);
            let a = values(m * lda, 0.1);
            let w: Vec<W> = values(n * ldw, 0.7).into_iter().map(&from_f32).collect();
            for accumulate in [false, true] {
                let mut c = values(m * ldc, 0.3);
                let before = c.clone();
                // SAFETY: AVX-512 is there; the buffers hold the shapes at these strides.
                unsafe {
                    rows_times_stored_rows(
                        a.as_ptr(),
                        lda,
                        w.as_ptr(),
                        ldw,
                        c.as_mut_ptr(),
                        ldc,
                        (m, n, k),
                        accumulate,
                    )
                };
                for i in 0..m {
                    for j in 0..ldc {
                        let got = c[i * ldc + j];
                        if j >= n {
                            assert_eq!(got, before[i * ldc + j], "column {j} past n changed");
                            continue;
                        }
                        let dot: f64 = (0..k)
                            .map(|p| f64::from(a[i * lda + p]) * f64::from(to_f32(w[j * ldw + p])))
                            .sum();
                        let want = dot
                            + if accumulate {
                                f64::from(before[i * ldc + j])
                            } else {
                                0.0
                            };
                        assert!(
                            (f64::from(got) - want).abs() < 1e-3 * (1.0 + want.abs()),
                            "({m},{n},{k}) [{i}][{j}]: {got} vs {want}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn matches_the_naive_product_for_every_block_edge_and_tail() {
        if !available() {
            eprintln!("skipped: this CPU has no AVX-512");
            return;
        }
        check_every_shape(|x| x, |x| x);
    }

    #[test]
    fn half_precision_weights_give_the_product_of_their_values() {
        if !available() {
            eprintln!("skipped: this CPU has no AVX-512");
            return;
        }
        check_every_shape(f16::from_f32, f16::to_f32);
    }
}
