//! glibc malloc settings for the two shapes of work the binary does: a long-running server
//! that should hold little memory between calls, and bulk embedding (`mine`, `migrate`) that
//! allocates and frees the same large buffers on every encoder pass.

/// How many arenas the process uses unless `MALLOC_ARENA_MAX` says otherwise.
pub const ARENAS: i32 = 2;

/// Allocations from this size up stay out of the heap (glibc maps each on its own) while
/// bulk embedding runs: above an encoder pass's largest buffer (2,048 tokens × 1,536 f32 is
/// 12 MiB), and glibc's largest allowed threshold on 64-bit.
pub const BULK_MMAP_THRESHOLD: i32 = 32 << 20;

/// Free memory at the top of the heap that glibc keeps for reuse while bulk embedding runs
/// instead of handing it back to the kernel.
pub const BULK_TRIM_THRESHOLD: i32 = 256 << 20;

/// Limits glibc's malloc to [`ARENAS`] arenas; call first in `main`, before any thread starts.
/// glibc gives each thread that allocates its own arena (up to 8 per core), and freed memory
/// stays in them; with LanceDB's and tokio's threads that is tens of MiB of resident memory
/// for nothing. Two arenas measured 45–60 MiB less RSS after a search and write workload, with
/// no slower calls (bench/mcp). An explicit `MALLOC_ARENA_MAX` in the environment wins; other
/// C libraries are left alone.
pub fn limit_arenas() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    if std::env::var_os("MALLOC_ARENA_MAX").is_none() {
        // SAFETY: mallopt only sets a tunable; called before other threads exist.
        unsafe {
            libc::mallopt(libc::M_ARENA_MAX, ARENAS);
        }
    }
}

/// Keeps the encoder's pass buffers in the heap between passes, for commands that embed in
/// bulk; call first in `main`, before any thread starts. By default glibc maps each buffer
/// of a pass (megabytes: activations of up to 2,048 tokens) on its own and unmaps it when
/// freed, so every pass faults its buffers in afresh, page by page: about 11% of the
/// embedder's time on mined chunks (`perf`), and 39.0–40.7 → 42.9–43.8 chunks/s with these
/// settings (1,024 stdlib chunks, four alternating runs). The cost is that up to
/// [`BULK_TRIM_THRESHOLD`] of freed heap stays resident until the command ends, which a
/// long-running server should not pay. `GLIBC_TUNABLES` for either setting wins.
pub fn keep_freed_memory_for_bulk_work() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        let tunables = std::env::var("GLIBC_TUNABLES").unwrap_or_default();
        // SAFETY: mallopt only sets a tunable; called before other threads exist.
        unsafe {
            if !tunables.contains("glibc.malloc.mmap_threshold") {
                libc::mallopt(libc::M_MMAP_THRESHOLD, BULK_MMAP_THRESHOLD);
            }
            if !tunables.contains("glibc.malloc.trim_threshold") {
                libc::mallopt(libc::M_TRIM_THRESHOLD, BULK_TRIM_THRESHOLD);
            }
        }
    }
}
