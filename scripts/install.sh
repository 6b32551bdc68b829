#!/usr/bin/env bash
# Installs the `mempalace` binary (release profile: no cross-crate LTO, stripped) into ~/.cargo/bin (or
# $CARGO_INSTALL_ROOT/bin) and fetches the model it loads from disk. Re-running updates both.
# Extra arguments go to `cargo install`, e.g. --no-default-features for a pure-Rust embedder
# without OpenBLAS.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
ensure_system_packages
scripts/fetch-model.sh
cargo install --path examples --locked "$@"
command -v mempalace >/dev/null 2>&1 || echo "note: add ~/.cargo/bin to PATH" >&2
mempalace --version 2>/dev/null || "${CARGO_INSTALL_ROOT:-$HOME/.cargo}/bin/mempalace" --version
