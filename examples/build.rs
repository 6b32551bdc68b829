//! Link settings of the release `mempalace` binary: hot code first, packed relocations (see
//! `link/README.md`). Debug and test builds, other targets and other linkers get none.

use std::env;
use std::path::PathBuf;
use std::process::Command;

/// The ordering file, relative to this crate.
const HOT_FUNCTIONS: &str = "link/hot-functions.txt";
/// Set to a path: the link also writes lld's map file there (for `scripts/hot_functions.py`).
const MAP_VARIABLE: &str = "MEMPALACE_LINK_MAP";

fn main() {
    println!("cargo:rerun-if-changed={HOT_FUNCTIONS}");
    println!("cargo:rerun-if-env-changed={MAP_VARIABLE}");
    if !links_release_with_lld() {
        return;
    }
    let link = |arg: &str| println!("cargo:rustc-link-arg-bin=mempalace={arg}");
    if let Ok(map) = env::var(MAP_VARIABLE) {
        link(&format!("-Wl,-Map={map},--no-demangle"));
    }
    let manifest_dir = env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let order = PathBuf::from(manifest_dir).join(HOT_FUNCTIONS);
    if order.exists() {
        link(&format!("-Wl,--symbol-ordering-file={}", order.display()));
        link("-Wl,--no-warn-symbol-ordering");
    }
    if glibc_has_dt_relr() {
        link("-Wl,-z,pack-relative-relocs");
    }
}

/// A release build for x86-64 Linux with rustc's own linker (lld since Rust 1.90), which
/// understands the options above.
fn links_release_with_lld() -> bool {
    let release = env::var("PROFILE").as_deref() == Ok("release");
    let target = env::var("TARGET").as_deref() == Ok("x86_64-unknown-linux-gnu");
    let flags = env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    let own_linker = env::var_os("RUSTC_LINKER").is_none()
        && !flags.contains("linker")
        && !flags.contains("fuse-ld");
    release && target && own_linker
}

/// Whether this machine's glibc (2.36 or newer) reads packed relative relocations.
fn glibc_has_dt_relr() -> bool {
    let Ok(out) = Command::new("getconf").arg("GNU_LIBC_VERSION").output() else {
        return false;
    };
    let text = String::from_utf8_lossy(&out.stdout);
    let Some(version) = text.trim().strip_prefix("glibc ") else {
        return false;
    };
    let mut parts = version.split('.').map(|p| p.parse::<u32>().unwrap_or(0));
    let (major, minor) = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    (major, minor) >= (2, 36)
}
