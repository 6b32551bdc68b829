//! `mempalace --version` names the version and what the binary was built with, so a user can
//! tell which backends an installed binary offers.

#[test]
fn version_lists_the_backends_built_in() {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_mempalace"))
        .arg("--version")
        .output()
        .unwrap();
    assert!(output.status.success());
    let text = String::from_utf8(output.stdout).unwrap();
    let first = text.lines().next().unwrap();
    assert_eq!(first, concat!("mempalace ", env!("CARGO_PKG_VERSION")));
    for built_in in [
        "lancedb",
        "qdrant",
        "sqlite",
        "all-MiniLM-L6-v2",
        "streamable HTTP",
    ] {
        assert!(text.contains(built_in), "{built_in} missing from: {text}");
    }
    let kernels = if cfg!(feature = "openblas") {
        "OpenBLAS"
    } else {
        "pure-Rust"
    };
    assert!(text.contains(kernels), "{text}");
}
