//! Whether the element-wise loops of the encoder (softmax rows, GELU) may run in their copies
//! compiled for AVX2 and FMA: eight lanes per instruction where the baseline x86-64 build has
//! SSE2's four. The loops are plain arithmetic the compiler vectorises either way.

/// Whether this CPU has AVX2 and FMA, checked once (false off x86-64).
pub(crate) fn available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        static AVX2_FMA: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        *AVX2_FMA.get_or_init(|| {
            std::arch::is_x86_feature_detected!("avx2")
                && std::arch::is_x86_feature_detected!("fma")
        })
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}
