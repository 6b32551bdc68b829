#!/usr/bin/env bash
# Runs every test of the workspace (unit, conformance, parity, end-to-end), after fetching the
# model the embedder tests and the MCP end-to-end test load.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
ensure_system_packages
scripts/fetch-model.sh
if cargo nextest --version >/dev/null 2>&1; then
    cargo nextest run --workspace --no-fail-fast "$@"
else
    cargo test --workspace --no-fail-fast "$@"
fi
