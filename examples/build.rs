//! Turns `QDRANT_URL` at build time into `cfg(qdrant_live)`, which un-ignores the end-to-end
//! MCP test against Qdrant (`tests/mcp_end_to_end.rs`); the binary itself does not use it.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(qdrant_live)");
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-env-changed=QDRANT_URL");
    if std::env::var_os("QDRANT_URL").is_some_and(|v| !v.is_empty()) {
        println!("cargo::rustc-cfg=qdrant_live");
    }
}
