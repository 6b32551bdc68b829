//! Single-precision matrix products for the encoder, on one of two kernels: the pure-Rust
//! `gemm` crate (what candle itself multiplies with) or, with the `openblas` cargo feature,
//! the system's OpenBLAS. Products of a few rows (one short text) by a stored weight matrix
//! skip both, on AVX-512 CPUs: see [`crate::few_rows`]. Those may read the weights in half
//! precision ([`WeightElement`]).

use std::borrow::Cow;

use crate::few_rows::{self, StoredWeight, f16};

/// Which library multiplies the encoder's matrices.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatmulKernel {
    /// Pure Rust: on AVX-512 CPUs the products of up to 1,024 rows by the stored weights run
    /// on this crate's own kernel, the rest (and everything elsewhere) on the `gemm` crate.
    PureRust,
    /// The system's OpenBLAS through CBLAS (needs the `openblas` cargo feature); products of
    /// up to 56 rows (one text of up to 54 tokens) by the stored weights run on this crate's
    /// own kernel on AVX-512 CPUs.
    #[cfg(feature = "openblas")]
    OpenBlas,
}

impl MatmulKernel {
    /// The fastest kernel this build has: OpenBLAS when the `openblas` feature is on, unless
    /// OpenBLAS runs a core narrower than this CPU (it did not know the CPU, see
    /// [`crate::openblas_core`]): then the pure-Rust kernel, which is faster than that.
    pub fn fastest() -> Self {
        #[cfg(feature = "openblas")]
        if !crate::openblas_core::runs_below_this_cpu() {
            return MatmulKernel::OpenBlas;
        }
        MatmulKernel::PureRust
    }

    /// Every kernel this build has (for tests and benchmarks that compare them).
    pub fn available() -> Vec<Self> {
        vec![
            MatmulKernel::PureRust,
            #[cfg(feature = "openblas")]
            MatmulKernel::OpenBlas,
        ]
    }

    /// A short name for reports.
    pub fn name(self) -> &'static str {
        match self {
            MatmulKernel::PureRust => "gemm (pure Rust)",
            #[cfg(feature = "openblas")]
            MatmulKernel::OpenBlas => "OpenBLAS",
        }
    }
}

/// A read-only strided view of a row-major buffer: element (r, c) is at
/// `r * row_stride + c * col_stride`. One of the strides must be 1.
pub(crate) struct MatRef<'a, T = f32> {
    pub data: &'a [T],
    pub rows: usize,
    pub cols: usize,
    pub row_stride: usize,
    pub col_stride: usize,
}

impl<T> Clone for MatRef<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for MatRef<'_, T> {}

impl<'a, T> MatRef<'a, T> {
    /// A dense row-major matrix starting at `data[0]`.
    pub fn dense(data: &'a [T], rows: usize, cols: usize) -> Self {
        MatRef {
            data,
            rows,
            cols,
            row_stride: cols,
            col_stride: 1,
        }
    }

    /// The same elements read as the transpose.
    pub fn t(self) -> Self {
        MatRef {
            data: self.data,
            rows: self.cols,
            cols: self.rows,
            row_stride: self.col_stride,
            col_stride: self.row_stride,
        }
    }

    /// Panics unless every element the view names lies inside `data` (keeps the FFI sound).
    fn check(&self) {
        assert!(
            self.row_stride == 1 || self.col_stride == 1,
            "one stride must be 1"
        );
        assert!(
            self.extent() <= self.data.len(),
            "matrix view out of bounds"
        );
    }

    /// How many elements of `data`, from the first, the view spans (0 when it is empty).
    fn extent(&self) -> usize {
        if self.rows == 0 || self.cols == 0 {
            return 0;
        }
        (self.rows - 1) * self.row_stride + (self.cols - 1) * self.col_stride + 1
    }
}

/// Products smaller than this (multiply-adds) are not split between threads: handing half
/// to another thread costs more than it saves.
const MIN_SPLIT_MACS: usize = 1 << 20;
/// Nor are products with fewer output columns than this (each half packs its own columns of
/// `b`; narrower pieces lose the kernel's width).
const MIN_SPLIT_COLUMNS: usize = 128;

/// Whether a product of `rows` rows by a stored weight matrix runs on [`few_rows`] with
/// `kernel` on this CPU (and so may read the weights in half precision).
pub(crate) fn runs_on_few_rows(kernel: MatmulKernel, rows: usize) -> bool {
    rows <= few_rows_limit(kernel) && few_rows::available()
}

/// Rows up to which [`few_rows`] beats `kernel` on a product by a stored weight matrix, one
/// text per call on an AVX-512 Xeon (`benches/embed.rs`, its length sweep): against OpenBLAS
/// it wins by 2.8 against 4.0 ms at 9 tokens and 8.3 against 9.5 at 38, ties near 54–58 rows
/// and loses beyond (13.2 against 12.9 ms at 66 rows, 15.7 against 13.2 at 74); reading the
/// half-precision copy it also leaves the f32 layers out of the resident set. Against the
/// `gemm` crate it wins up to batches of about a thousand rows: 2–3 times faster for one
/// text, 13% slower for 16 paragraphs at once. Measured on the kernel's first form (4 × 4
/// blocks) in the dev profile; the second form is faster, so the limit is likely too low now.
fn few_rows_limit(kernel: MatmulKernel) -> usize {
    match kernel {
        MatmulKernel::PureRust => 1024,
        #[cfg(feature = "openblas")]
        MatmulKernel::OpenBlas => 56,
    }
}

/// `c = a · b + (accumulate ? c : 0)` with `c` row-major, `a.rows × b.cols`, row stride
/// `ldc`. Runs on the calling thread.
pub(crate) fn sgemm(
    kernel: MatmulKernel,
    a: MatRef<'_>,
    b: MatRef<'_>,
    c: &mut [f32],
    ldc: usize,
    accumulate: bool,
) {
    product(kernel, a, b, c, ldc, accumulate, 1)
}

/// The same product, its output columns split between the threads of the rayon pool it is
/// called in when it is big enough: each thread reads and packs only its columns of `b`, so
/// one text's forward pass uses every core. When the pool's threads are all busy (several
/// forward passes at once) the halves simply run one after the other on this thread; called
/// outside a pool, it runs on the calling thread.
pub(crate) fn sgemm_parallel<W: WeightElement>(
    kernel: MatmulKernel,
    a: MatRef<'_>,
    b: MatRef<'_, W>,
    c: &mut [f32],
    ldc: usize,
    accumulate: bool,
) {
    let ways = match rayon::current_thread_index() {
        Some(_) => rayon::current_num_threads(),
        None => 1,
    };
    product(kernel, a, b, c, ldc, accumulate, ways)
}

/// The checked product in at most `ways` pieces of columns (one: on this thread).
fn product<W: WeightElement>(
    kernel: MatmulKernel,
    a: MatRef<'_>,
    b: MatRef<'_, W>,
    c: &mut [f32],
    ldc: usize,
    accumulate: bool,
    ways: usize,
) {
    if check_product(a, b, c, ldc) {
        // SAFETY: check_product kept every element of a, b and the m × n block of c at
        // stride ldc inside their slices, c is borrowed mutably, and the pieces write
        // disjoint column ranges of it.
        unsafe { split_columns(kernel, a, b, OutPtr(c.as_mut_ptr()), ldc, accumulate, ways) }
    }
}

/// The output buffer of a product, shareable between the threads that each write their own
/// columns of it.
#[derive(Clone, Copy)]
struct OutPtr(*mut f32);
// SAFETY: only ever used to write disjoint column ranges of one buffer from scoped threads
// (`rayon::join`), which all finish before the buffer's borrow ends.
unsafe impl Send for OutPtr {}
unsafe impl Sync for OutPtr {}

/// Checks shapes and bounds; false when the product is empty.
fn check_product<W>(a: MatRef<'_>, b: MatRef<'_, W>, c: &[f32], ldc: usize) -> bool {
    assert_eq!(a.cols, b.rows, "inner dimensions differ");
    a.check();
    b.check();
    let (m, n) = (a.rows, b.cols);
    if m == 0 || n == 0 {
        return false;
    }
    assert!(
        ldc >= n && (m - 1) * ldc + n <= c.len(),
        "output out of bounds"
    );
    true
}

/// Columns `b` and `c` from `from` on, `cols` of them.
fn columns<W>(b: MatRef<'_, W>, from: usize, cols: usize) -> MatRef<'_, W> {
    MatRef {
        data: &b.data[from * b.col_stride..],
        cols,
        ..b
    }
}

/// # Safety
/// As `sgemm_raw`.
unsafe fn split_columns<W: WeightElement>(
    kernel: MatmulKernel,
    a: MatRef<'_>,
    b: MatRef<'_, W>,
    c: OutPtr,
    ldc: usize,
    accumulate: bool,
    ways: usize,
) {
    let n = b.cols;
    if ways < 2 || n < 2 * MIN_SPLIT_COLUMNS || a.rows * n * a.cols < MIN_SPLIT_MACS {
        // SAFETY: the caller's contract.
        return unsafe { product_here(kernel, a, b, c, ldc, accumulate) };
    }
    let left = ways / 2;
    let left_cols = n * left / ways;
    let right_c = OutPtr(c.0.wrapping_add(left_cols));
    rayon::join(
        // SAFETY: columns 0..left_cols of the checked block.
        || unsafe {
            split_columns(
                kernel,
                a,
                columns(b, 0, left_cols),
                c,
                ldc,
                accumulate,
                left,
            )
        },
        // SAFETY: columns left_cols..n of the checked block.
        || unsafe {
            split_columns(
                kernel,
                a,
                columns(b, left_cols, n - left_cols),
                right_c,
                ldc,
                accumulate,
                ways - left,
            )
        },
    );
}

/// An element type the right-hand matrix of a product may hold: f32 (any kernel) or half
/// precision (read as it is by [`few_rows`], widened to f32 for the other kernels).
pub(crate) trait WeightElement: StoredWeight {
    /// The elements as f32: borrowed when they are f32 already.
    fn widened(data: &[Self]) -> Cow<'_, [f32]>;
}

impl WeightElement for f32 {
    fn widened(data: &[f32]) -> Cow<'_, [f32]> {
        Cow::Borrowed(data)
    }
}

impl WeightElement for f16 {
    fn widened(data: &[f16]) -> Cow<'_, [f32]> {
        Cow::Owned(data.iter().map(|h| h.to_f32()).collect())
    }
}

/// `c = a · b (+ c)` on this thread: on [`few_rows`] when it takes the product, else on
/// `kernel` with `b` widened to f32.
///
/// # Safety
/// As [`sgemm_raw`].
unsafe fn product_here<W: WeightElement>(
    kernel: MatmulKernel,
    a: MatRef<'_>,
    b: MatRef<'_, W>,
    c: OutPtr,
    ldc: usize,
    accumulate: bool,
) {
    // SAFETY: the caller's contract.
    if unsafe { on_few_rows(kernel, a, b, c, ldc, accumulate) } {
        return;
    }
    let wide = W::widened(&b.data[..b.extent()]);
    let b = MatRef {
        data: &wide[..],
        rows: b.rows,
        cols: b.cols,
        row_stride: b.row_stride,
        col_stride: b.col_stride,
    };
    // SAFETY: the caller's contract; `wide` has b's elements at b's strides.
    unsafe { sgemm_raw(kernel, a, b, c, ldc, accumulate) }
}

/// The product on [`few_rows`] when it is one of a few rows against a weight matrix as
/// stored (`b` is its transpose), where dot products off the stored rows beat packing the
/// weights first; false (nothing done) otherwise.
///
/// # Safety
/// As [`sgemm_raw`].
unsafe fn on_few_rows<W: StoredWeight>(
    kernel: MatmulKernel,
    a: MatRef<'_>,
    b: MatRef<'_, W>,
    c: OutPtr,
    ldc: usize,
    accumulate: bool,
) -> bool {
    if !(runs_on_few_rows(kernel, a.rows) && a.col_stride == 1 && b.row_stride == 1) {
        return false;
    }
    // SAFETY: the caller's contract keeps rows of a at stride a.row_stride, rows of the
    // stored matrix (columns of b) at stride b.col_stride and the block of c in bounds;
    // runs_on_few_rows checked the CPU.
    unsafe {
        few_rows::rows_times_stored_rows(
            a.data.as_ptr(),
            a.row_stride,
            b.data.as_ptr(),
            b.col_stride,
            c.0,
            ldc,
            (a.rows, b.cols, a.cols),
            accumulate,
        )
    };
    true
}

/// `c = a · b (+ c)` on `kernel` itself, on this thread.
///
/// # Safety
/// `a` and `b` must be checked views (`MatRef::check`) with `a.cols == b.rows`, and `c` must
/// point at an `a.rows × b.cols` block at row stride `ldc` that nothing else accesses
/// meanwhile.
unsafe fn sgemm_raw(
    kernel: MatmulKernel,
    a: MatRef<'_>,
    b: MatRef<'_>,
    c: OutPtr,
    ldc: usize,
    accumulate: bool,
) {
    let (m, n, k) = (a.rows, b.cols, a.cols);
    match kernel {
        MatmulKernel::PureRust => {
            // SAFETY: the caller's contract keeps every index of a, b and c in bounds.
            unsafe {
                gemm::gemm(
                    m,
                    n,
                    k,
                    c.0,
                    1,
                    ldc as isize,
                    accumulate,
                    a.data.as_ptr(),
                    a.col_stride as isize,
                    a.row_stride as isize,
                    b.data.as_ptr(),
                    b.col_stride as isize,
                    b.row_stride as isize,
                    1.0,
                    1.0,
                    false,
                    false,
                    false,
                    gemm::Parallelism::None,
                )
            }
        }
        #[cfg(feature = "openblas")]
        MatmulKernel::OpenBlas => {
            openblas::single_threaded();
            // SAFETY: the caller's contract.
            unsafe { openblas::sgemm(a, b, c.0, ldc, accumulate) }
        }
    }
}

#[cfg(feature = "openblas")]
mod openblas {
    use super::MatRef;
    use cblas_sys::{CBLAS_LAYOUT, CBLAS_TRANSPOSE, cblas_sgemm};

    // cblas-sys only declares the CBLAS functions; the system's OpenBLAS defines them.
    #[link(name = "openblas")]
    unsafe extern "C" {
        fn openblas_set_num_threads(threads: std::ffi::c_int);
    }

    /// Makes OpenBLAS run each product on the calling thread. The embedder already runs one
    /// forward pass per core; OpenBLAS's own threads on top of that only contend (measured:
    /// 30-50% slower). This setting is process-wide.
    pub(super) fn single_threaded() {
        static ONCE: std::sync::Once = std::sync::Once::new();
        // SAFETY: a plain setter of OpenBLAS's thread count, called once before any product.
        ONCE.call_once(|| unsafe { openblas_set_num_threads(1) });
    }

    /// CBLAS wants each operand row-major with unit column stride, or transposed.
    fn operand(m: &MatRef<'_>) -> (CBLAS_TRANSPOSE, i32) {
        if m.col_stride == 1 {
            (
                CBLAS_TRANSPOSE::CblasNoTrans,
                m.row_stride.max(m.cols).max(1) as i32,
            )
        } else {
            (
                CBLAS_TRANSPOSE::CblasTrans,
                m.col_stride.max(m.rows).max(1) as i32,
            )
        }
    }

    /// # Safety
    /// `c` must point at the `a.rows × b.cols` block at stride `ldc` (see `sgemm_raw`).
    pub(super) unsafe fn sgemm(a: MatRef<'_>, b: MatRef<'_>, c: *mut f32, ldc: usize, acc: bool) {
        let (ta, lda) = operand(&a);
        let (tb, ldb) = operand(&b);
        // SAFETY: the caller checked every view against its slice; CBLAS reads a and b and
        // writes only the m × n block of c at stride ldc.
        unsafe {
            cblas_sgemm(
                CBLAS_LAYOUT::CblasRowMajor,
                ta,
                tb,
                a.rows as i32,
                b.cols as i32,
                a.cols as i32,
                1.0,
                a.data.as_ptr(),
                lda,
                b.data.as_ptr(),
                ldb,
                if acc { 1.0 } else { 0.0 },
                c,
                ldc as i32,
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn naive(a: MatRef<'_>, b: MatRef<'_>) -> Vec<f32> {
        let mut c = vec![0.0; a.rows * b.cols];
        for i in 0..a.rows {
            for j in 0..b.cols {
                for p in 0..a.cols {
                    c[i * b.cols + j] += a.data[i * a.row_stride + p * a.col_stride]
                        * b.data[p * b.row_stride + j * b.col_stride];
                }
            }
        }
        c
    }

    fn values(n: usize, seed: f32) -> Vec<f32> {
        (0..n).map(|i| (i as f32 * 0.37 + seed).sin()).collect()
    }

    #[test]
    fn every_kernel_matches_the_naive_product_for_plain_and_transposed_operands() {
        let a_data = values(7 * 5, 0.1);
        let b_data = values(5 * 9, 0.7);
        let a = MatRef::dense(&a_data, 7, 5);
        for kernel in MatmulKernel::available() {
            for b in [
                MatRef::dense(&b_data, 5, 9),
                MatRef::dense(&b_data, 9, 5).t(),
            ] {
                let want = naive(a, b);
                let mut got = vec![1.0; 7 * 9];
                sgemm(kernel, a, b, &mut got, 9, false);
                for (g, w) in got.iter().zip(&want) {
                    assert!((g - w).abs() < 1e-4, "{}: {g} vs {w}", kernel.name());
                }
                // Accumulating adds onto what is there.
                sgemm(kernel, a, b, &mut got, 9, true);
                for (g, w) in got.iter().zip(&want) {
                    assert!((g - 2.0 * w).abs() < 1e-4, "{}", kernel.name());
                }
            }
        }
    }

    #[test]
    fn a_strided_output_leaves_the_other_columns_alone() {
        let a_data = values(3 * 4, 0.3);
        let b_data = values(4 * 2, 0.9);
        let (a, b) = (MatRef::dense(&a_data, 3, 4), MatRef::dense(&b_data, 4, 2));
        for kernel in MatmulKernel::available() {
            let mut c = [-7.0; 3 * 5];
            sgemm(kernel, a, b, &mut c[1..], 5, false);
            let want = naive(a, b);
            for r in 0..3 {
                assert_eq!(c[r * 5], -7.0);
                for j in 0..2 {
                    assert!((c[1 + r * 5 + j] - want[r * 2 + j]).abs() < 1e-4);
                }
                assert_eq!(&c[r * 5 + 3..r * 5 + 5], &[-7.0, -7.0]);
            }
        }
    }

    #[test]
    fn half_precision_weights_multiply_on_every_path() {
        // Stored weights (n × k, read transposed) in half precision: a few rows take the
        // half-precision kernel on AVX-512 CPUs; a right-hand matrix read another way (or a
        // CPU without it) is widened to f32 first. Both give the product of the halves.
        let (m, k, n) = (6, 40, 300);
        let a_data = values(m * k, 0.2);
        let w_data: Vec<f16> = values(n * k, 0.5).into_iter().map(f16::from_f32).collect();
        let wide: Vec<f32> = w_data.iter().map(|h| h.to_f32()).collect();
        let a = MatRef::dense(&a_data, m, k);
        for kernel in MatmulKernel::available() {
            let stored = MatRef::dense(&w_data[..], n, k).t();
            let want = naive(a, MatRef::dense(&wide, n, k).t());
            let check = |got: &[f32]| {
                for (g, w) in got.iter().zip(&want) {
                    assert!(
                        (g - w).abs() < 1e-3 * (1.0 + w.abs()),
                        "{}: {g} vs {w}",
                        kernel.name()
                    );
                }
            };
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(2)
                .build()
                .unwrap();
            let mut got = vec![0.0; m * n];
            pool.install(|| sgemm_parallel(kernel, a, stored, &mut got, n, false));
            check(&got);
            // The same values stored k × n (not as weights are): the widening path.
            let k_by_n: Vec<f16> = (0..k * n).map(|i| w_data[(i % n) * k + i / n]).collect();
            let mut got = vec![0.0; m * n];
            sgemm_parallel(
                kernel,
                a,
                MatRef::dense(&k_by_n[..], k, n),
                &mut got,
                n,
                false,
            );
            check(&got);
        }
    }

    #[test]
    #[should_panic(expected = "out of bounds")]
    fn a_view_past_its_buffer_is_refused() {
        let short = [0.0f32; 5];
        let a = MatRef::dense(&short, 2, 3);
        let b_data = [0.0f32; 3];
        sgemm(
            MatmulKernel::PureRust,
            a,
            MatRef::dense(&b_data, 3, 1),
            &mut [0.0; 2],
            1,
            false,
        );
    }
}
