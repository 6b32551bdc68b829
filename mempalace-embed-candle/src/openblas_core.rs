//! Which of its kernels ("core") OpenBLAS runs, and putting it on the best one this CPU has.
//!
//! A DYNAMIC_ARCH OpenBLAS (Debian's, for one) picks its core once, as it is loaded, from the
//! CPU's family and model numbers. A release older than the CPU does not know the model and
//! falls back to its slowest x86-64 core: Debian 12's 0.3.21 runs "Prescott" (SSE3) on an
//! Emerald Rapids Xeon (family 6, model 207), which embedded mined chunks five times slower
//! than its SkylakeX (AVX-512) core on the same machine (13 against 68 texts/s). The CPU's
//! feature flags tell what it can run; OpenBLAS reads `OPENBLAS_CORETYPE` when it picks.

use std::ffi::{CStr, c_char, c_void};

// The system's OpenBLAS defines it (linked by `matmul`'s declarations).
#[link(name = "openblas")]
unsafe extern "C" {
    fn openblas_get_corename() -> *const c_char;
}

/// The name of the core OpenBLAS runs, as it reports it (e.g. "Prescott", "SkylakeX").
pub fn running_core() -> String {
    // SAFETY: returns a pointer to a static NUL-terminated name (or null).
    let name = unsafe { openblas_get_corename() };
    if name.is_null() {
        return String::new();
    }
    // SAFETY: checked non-null; OpenBLAS's names are static C strings.
    unsafe { CStr::from_ptr(name) }
        .to_string_lossy()
        .into_owned()
}

/// The best OpenBLAS core for this CPU's features: SkylakeX with AVX-512 (F, CD, BW, DQ, VL),
/// Haswell with AVX2 and FMA; `None` below that (OpenBLAS's own pick is as good).
pub fn best_core_for_this_cpu() -> Option<&'static str> {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::is_x86_feature_detected as has;
        if has!("avx512f")
            && has!("avx512cd")
            && has!("avx512bw")
            && has!("avx512dq")
            && has!("avx512vl")
        {
            return Some("SkylakeX");
        }
        if has!("avx2") && has!("fma") {
            return Some("Haswell");
        }
    }
    None
}

/// Whether OpenBLAS runs a core without the vector instructions this CPU has (it did not
/// know the CPU): its products are then slower than the pure-Rust kernel's.
pub fn runs_below_this_cpu() -> bool {
    best_core_for_this_cpu().is_some() && !wide_core(&running_core())
}

/// Whether `core` is one of OpenBLAS's x86-64 cores with AVX2 and FMA or AVX-512 kernels
/// (or not an x86 core at all: nothing to correct there).
fn wide_core(core: &str) -> bool {
    const NARROW_X86_CORES: &[&str] = &[
        "Unknown",
        "Katmai",
        "Coppermine",
        "Northwood",
        "Prescott",
        "Banias",
        "Atom",
        "Core2",
        "Penryn",
        "Dunnington",
        "Nehalem",
        "Sandybridge",
        "Athlon",
        "Opteron",
        "Opteron_SSE3",
        "Barcelona",
        "Nano",
        "Bobcat",
        "Bulldozer",
        "Piledriver",
        "Steamroller",
        "Excavator",
    ];
    !NARROW_X86_CORES
        .iter()
        .any(|n| n.eq_ignore_ascii_case(core))
}

/// What [`select_best_core`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CoreSelection {
    /// OpenBLAS already runs a core with this CPU's vector instructions (or the CPU has none
    /// beyond SSE): left as it is.
    AlreadyBest(String),
    /// `OPENBLAS_CORETYPE` is set: OpenBLAS picked what it names, and that stands.
    SetByEnvironment(String),
    /// Moved from the first core to the second.
    Moved {
        /// The core OpenBLAS had picked.
        from: String,
        /// The core it runs now.
        to: String,
    },
    /// This OpenBLAS picks its core at build time (no DYNAMIC_ARCH): it cannot move.
    Fixed(String),
}

/// Puts OpenBLAS on the best core for this CPU's features when it picked a narrower one
/// (see the module's text): sets `OPENBLAS_CORETYPE` to it and has OpenBLAS pick again. An
/// `OPENBLAS_CORETYPE` already set wins. Do it before the first product.
///
/// # Safety
/// It sets an environment variable: no other thread may read or write the environment
/// meanwhile (call it first thing in `main`, before any thread starts), and no OpenBLAS
/// product may run at the same time.
pub unsafe fn select_best_core() -> CoreSelection {
    let running = running_core();
    if let Some(set) = std::env::var_os("OPENBLAS_CORETYPE") {
        return CoreSelection::SetByEnvironment(format!(
            "{running} (OPENBLAS_CORETYPE={})",
            set.to_string_lossy()
        ));
    }
    let Some(best) = best_core_for_this_cpu().filter(|_| !wide_core(&running)) else {
        return CoreSelection::AlreadyBest(running);
    };
    let (Some(quit), Some(init)) = (
        exported_function(c"gotoblas_dynamic_quit"),
        exported_function(c"gotoblas_dynamic_init"),
    ) else {
        return CoreSelection::Fixed(running);
    };
    // SAFETY: the caller's contract (no thread touches the environment meanwhile).
    unsafe { std::env::set_var("OPENBLAS_CORETYPE", best) };
    // SAFETY: DYNAMIC_ARCH's own entry points, `void (void)`: quit forgets the picked core's
    // table, init picks again (reading OPENBLAS_CORETYPE, checking the CPU supports it) and
    // sets its block sizes up; the caller's contract keeps products out meanwhile.
    unsafe {
        let quit: extern "C" fn() = std::mem::transmute(quit);
        let init: extern "C" fn() = std::mem::transmute(init);
        quit();
        init();
    }
    CoreSelection::Moved {
        from: running,
        to: running_core(),
    }
}

/// The address of a function the loaded OpenBLAS exports, if it does.
#[cfg(not(unix))]
fn exported_function(_name: &CStr) -> Option<*mut c_void> {
    None
}

/// The address of a function the loaded OpenBLAS exports, if it does.
#[cfg(unix)]
fn exported_function(name: &CStr) -> Option<*mut c_void> {
    unsafe extern "C" {
        fn dlsym(handle: *mut c_void, symbol: *const c_char) -> *mut c_void;
    }
    // RTLD_DEFAULT: search every object loaded into the process.
    const RTLD_DEFAULT: *mut c_void = std::ptr::null_mut();
    // SAFETY: dlsym only reads the NUL-terminated name.
    let address = unsafe { dlsym(RTLD_DEFAULT, name.as_ptr()) };
    (!address.is_null()).then_some(address)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn narrow_cores_are_told_from_wide_ones() {
        for narrow in [
            "Prescott",
            "PRESCOTT",
            "Core2",
            "Nehalem",
            "Sandybridge",
            "Unknown",
        ] {
            assert!(!wide_core(narrow), "{narrow}");
        }
        for wide in [
            "Haswell",
            "SkylakeX",
            "Cooperlake",
            "SapphireRapids",
            "Zen",
            "armv8",
        ] {
            assert!(wide_core(wide), "{wide}");
        }
    }

    #[test]
    fn openblas_names_the_core_it_runs() {
        assert!(!running_core().is_empty());
    }
}
