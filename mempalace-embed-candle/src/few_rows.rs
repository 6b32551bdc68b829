//! Products with few rows (the tokens of one short text) against a weight matrix as stored
//! (`out × in`): dot products straight off the stored rows, with AVX-512.
//!
//! A BLAS `sgemm` first copies ("packs") the weight matrix into its own layout, which pays
//! off when many rows share it. One short text has 10–60 rows, and then copying up to
//! 2.3 MiB of weights per product costs more than multiplying them. Here the weights are read
//! as stored and only the few input rows are packed: per pass over up to 512 terms, into
//! blocks of 12 rows laid out in the order the kernel reads them, so that a block's vectors
//! sit at fixed offsets from one pointer and stay in L1. Each block then meets the weight
//! rows two at a time: 24 accumulators, each widened weight vector used 12 times, the sums
//! reduced by one shuffle tree per four. The weight rows go in chunks of 64, so that a chunk
//! comes from memory once (the model's layers do not stay in cache between calls) and from
//! L2 for the other blocks. Against the earlier kernel (4 rows by 4, input rows read in
//! place at their stride) this took 35 rows times a 1536 × 384 half-precision matrix from
//! 31–33 to 48–55 G multiply-adds a second on one core of an AVX-512 Xeon (release build;
//! OpenBLAS's peak there is 78).
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

    /// Lanes `p..p + 16` of a row of this type as f32.
    ///
    /// # Safety
    /// [`available`] must be true, and `row + p .. row + p + 16` be readable.
    #[cfg(target_arch = "x86_64")]
    unsafe fn full_lanes(row: *const Self, p: usize) -> std::arch::x86_64::__m512;
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

    #[target_feature(enable = "avx512f,avx512bw,avx512vl")]
    #[inline]
    unsafe fn full_lanes(row: *const f32, p: usize) -> std::arch::x86_64::__m512 {
        // SAFETY: the caller's contract.
        unsafe { std::arch::x86_64::_mm512_loadu_ps(row.add(p)) }
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

    #[target_feature(enable = "avx512f,avx512bw,avx512vl")]
    #[inline]
    unsafe fn full_lanes(row: *const f16, p: usize) -> std::arch::x86_64::__m512 {
        use std::arch::x86_64::*;
        // SAFETY: the caller's contract.
        unsafe { _mm512_cvtph_ps(_mm256_loadu_si256(row.add(p).cast())) }
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

    /// f32 lanes of one AVX-512 vector.
    const LANES: usize = 16;
    /// Input rows per block: 12 rows by 2 weight rows keep 24 accumulators in registers, and
    /// each widened weight vector serves 12 multiply-adds.
    const BLOCK_ROWS: usize = 12;
    /// Terms per pass over the inputs: a block of 12 packed rows (24 KiB) stays in L1.
    const TERMS_PER_PASS: usize = 512;
    /// Weight rows per chunk: a chunk (at most 64 KiB in half precision) comes from memory
    /// once, for the first block of input rows, and from L2 for the others.
    const WEIGHT_ROWS_PER_CHUNK: usize = 64;
    /// How far ahead the first block of input rows asks for weight rows: they come from
    /// memory, and two pairs of rows take about as long as a trip there.
    const PREFETCH_AHEAD_ROWS: usize = 4;

    /// The whole product, pass by pass over `TERMS_PER_PASS` terms: the pass's input rows
    /// are packed into blocks (see [`pack_rows`]), then every chunk of weight rows meets every
    /// block, two weight rows at a time.
    ///
    /// # Safety
    /// As `rows_times_stored_rows`.
    #[target_feature(enable = "avx512f,avx512bw,avx512vl")]
    pub(super) unsafe fn product<W: StoredWeight>(s: &Shape<W>, m: usize, n: usize) {
        let mut packed: Vec<__m512> = Vec::new();
        let mut first = 0;
        while first < s.k {
            let terms = (s.k - first).min(TERMS_PER_PASS);
            let pass = Pass {
                first,
                terms,
                steps: terms.div_ceil(LANES),
                accumulate: s.accumulate || first > 0,
            };
            // SAFETY: rows 0..m, terms first..first + terms lie inside `a`.
            unsafe { pack_rows(s, m, &pass, &mut packed) };
            for chunk in (0..n).step_by(WEIGHT_ROWS_PER_CHUNK) {
                let end = (chunk + WEIGHT_ROWS_PER_CHUNK).min(n);
                for (index, row) in (0..m).step_by(BLOCK_ROWS).enumerate() {
                    let rows = (m - row).min(BLOCK_ROWS);
                    // SAFETY: block `index` of `packed` holds `rows` rows of `steps` vectors.
                    let block = unsafe { packed.as_ptr().add(index * BLOCK_ROWS * pass.steps) };
                    // SAFETY: rows row..row + rows and weight rows chunk..end are inside
                    // the shapes.
                    unsafe { block_times_rows(s, &pass, block, rows, row, chunk..end, index == 0) };
                }
            }
            first += terms;
        }
    }

    /// One pass over a run of terms.
    struct Pass {
        /// The first term (lane of a row) of the pass.
        first: usize,
        /// Terms in the pass.
        terms: usize,
        /// Vectors per row in the pass (`terms` rounded up to whole vectors).
        steps: usize,
        /// Whether the pass adds to `c` (every pass after the first does).
        accumulate: bool,
    }

    /// Copies the pass's terms of rows `0..m` of `a` into `packed`, block by block of
    /// `BLOCK_ROWS` rows: in a block, vector `t` of every row in turn, the last vector
    /// padded with zeros. The kernel then reads a block's vectors at fixed offsets from one
    /// pointer, in the order it multiplies them.
    ///
    /// # Safety
    /// Rows `0..m` of `a` must hold the pass's terms.
    #[target_feature(enable = "avx512f,avx512bw,avx512vl")]
    unsafe fn pack_rows<W>(s: &Shape<W>, m: usize, pass: &Pass, packed: &mut Vec<__m512>) {
        packed.clear();
        for row in (0..m).step_by(BLOCK_ROWS) {
            let rows = (m - row).min(BLOCK_ROWS);
            for t in 0..pass.steps {
                let p = t * LANES;
                let mask = mask_from(p, pass.terms);
                for r in 0..rows {
                    // SAFETY: the caller's contract; masked-off lanes are not read.
                    packed.push(unsafe {
                        <f32 as StoredWeight>::lanes(
                            s.a.add((row + r) * s.lda + pass.first),
                            p,
                            mask,
                        )
                    });
                }
            }
        }
    }

    /// A block of `rows` packed input rows (from input row `row`) times weight rows
    /// `weights`, two at a time (the last alone when they are odd).
    ///
    /// # Safety
    /// The block must hold `rows` rows of the pass; the rows and weight rows must be
    /// inside the shapes.
    #[target_feature(enable = "avx512f,avx512bw,avx512vl")]
    unsafe fn block_times_rows<W: StoredWeight>(
        s: &Shape<W>,
        pass: &Pass,
        block: *const __m512,
        rows: usize,
        row: usize,
        weights: std::ops::Range<usize>,
        prefetch: bool,
    ) {
        macro_rules! by_rows {
            ($pair:literal, $j:expr) => {
                // SAFETY: the caller's contract.
                unsafe {
                    match rows {
                        12 => block_times::<W, 12, $pair>(s, pass, block, row, $j, prefetch),
                        11 => block_times::<W, 11, $pair>(s, pass, block, row, $j, prefetch),
                        10 => block_times::<W, 10, $pair>(s, pass, block, row, $j, prefetch),
                        9 => block_times::<W, 9, $pair>(s, pass, block, row, $j, prefetch),
                        8 => block_times::<W, 8, $pair>(s, pass, block, row, $j, prefetch),
                        7 => block_times::<W, 7, $pair>(s, pass, block, row, $j, prefetch),
                        6 => block_times::<W, 6, $pair>(s, pass, block, row, $j, prefetch),
                        5 => block_times::<W, 5, $pair>(s, pass, block, row, $j, prefetch),
                        4 => block_times::<W, 4, $pair>(s, pass, block, row, $j, prefetch),
                        3 => block_times::<W, 3, $pair>(s, pass, block, row, $j, prefetch),
                        2 => block_times::<W, 2, $pair>(s, pass, block, row, $j, prefetch),
                        _ => block_times::<W, 1, $pair>(s, pass, block, row, $j, prefetch),
                    }
                }
            };
        }
        let mut j = weights.start;
        while j + 2 <= weights.end {
            by_rows!(2, j);
            j += 2;
        }
        if j < weights.end {
            by_rows!(1, j);
        }
    }

    /// `R` packed input rows times `NW` weight rows from `j` over the pass: `R × NW`
    /// accumulators, each widened weight vector used `R` times, each input vector `NW`
    /// times; then their sums are written to (or added into) `c`.
    ///
    /// # Safety
    /// As [`block_times_rows`], with `R` the block's rows and weight rows `j..j + NW`.
    #[target_feature(enable = "avx512f,avx512bw,avx512vl")]
    #[inline]
    unsafe fn block_times<W: StoredWeight, const R: usize, const NW: usize>(
        s: &Shape<W>,
        pass: &Pass,
        block: *const __m512,
        row: usize,
        j: usize,
        prefetch: bool,
    ) {
        // SAFETY (pointer arithmetic and loads, here and below): weight rows j..j + NW from
        // the pass's first term; the block's vectors; lanes inside the pass.
        let w: [*const W; NW] =
            std::array::from_fn(|q| unsafe { s.w.add((j + q) * s.ldw + pass.first) });
        let mut acc = [[_mm512_setzero_ps(); R]; NW];
        let full = pass.terms / LANES;
        let ahead: [*const W; NW] =
            std::array::from_fn(|q| w[q].wrapping_add(PREFETCH_AHEAD_ROWS * s.ldw));
        for t in 0..full {
            if prefetch {
                for row in ahead {
                    // A prefetch reads nothing (and never faults), wherever it points.
                    _mm_prefetch::<_MM_HINT_T0>(row.wrapping_add(t * LANES).cast::<i8>());
                }
            }
            let x: [__m512; NW] =
                std::array::from_fn(|q| unsafe { W::full_lanes(w[q], t * LANES) });
            // SAFETY: vector t of the block's rows.
            unsafe { multiply_step(&mut acc, &x, block.add(t * R)) };
        }
        if full < pass.steps {
            let p = full * LANES;
            let mask = mask_from(p, pass.terms);
            let x: [__m512; NW] = std::array::from_fn(|q| unsafe { W::lanes(w[q], p, mask) });
            // SAFETY: the last vector of the block's rows.
            unsafe { multiply_step(&mut acc, &x, block.add(full * R)) };
        }
        let zero = _mm512_setzero_ps();
        let at = |q: usize, r: usize| if q < NW && r < R { acc[q][r] } else { zero };
        for r in (0..R).step_by(2) {
            // [c(r, j), c(r, j + 1), c(r + 1, j), c(r + 1, j + 1)]
            let sums: [f32; 4] = unsafe {
                std::mem::transmute(sums_of_four(at(0, r), at(1, r), at(0, r + 1), at(1, r + 1)))
            };
            for (lane, &sum) in sums.iter().enumerate() {
                let (rr, q) = (r + lane / 2, lane % 2);
                if rr < R && q < NW {
                    // SAFETY: row row + rr, column j + q of the block.
                    unsafe { store(s, row + rr, j + q, sum, pass.accumulate) };
                }
            }
        }
    }

    /// One step of [`block_times`]: the `R` input vectors from `y` times the `NW` weight
    /// vectors `x`, added into the accumulators.
    ///
    /// # Safety
    /// `y` must point at `R` vectors.
    #[target_feature(enable = "avx512f,avx512bw,avx512vl")]
    #[inline]
    // Indexing by row and weight row keeps the unrolled accumulators in registers.
    #[allow(clippy::needless_range_loop)]
    unsafe fn multiply_step<const R: usize, const NW: usize>(
        acc: &mut [[__m512; R]; NW],
        x: &[__m512; NW],
        y: *const __m512,
    ) {
        for r in 0..R {
            // SAFETY: the caller's contract.
            let y = unsafe { *y.add(r) };
            for q in 0..NW {
                acc[q][r] = _mm512_fmadd_ps(y, x[q], acc[q][r]);
            }
        }
    }

    /// The mask of the lanes from `p` that lie before `k`.
    #[inline]
    fn mask_from(p: usize, k: usize) -> __mmask16 {
        let left = k - p;
        if left >= LANES {
            0xFFFF
        } else {
            ((1u32 << left) - 1) as __mmask16
        }
    }

    /// Writes (or with `accumulate` adds into) one output element.
    ///
    /// # Safety
    /// (i, j) must be inside the caller's block of c.
    #[inline]
    unsafe fn store<W>(s: &Shape<W>, i: usize, j: usize, total: f32, accumulate: bool) {
        // SAFETY: the caller's contract.
        unsafe {
            let out = s.c.add(i * s.ldc + j);
            *out = if accumulate { *out + total } else { total };
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
            // Past one block of rows, a chunk of weight rows and a pass of terms, each
            // with a ragged end.
            (25, 7, 1030),
            (13, 65, 520),
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
