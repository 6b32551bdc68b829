#!/usr/bin/env bash
# The main job end to end on the embedded default stack (LanceDB + SQLite + local MiniLM):
# fetch the model if missing, init + mine the sample project, search it, show status.
# The palace goes to $MEMPALACE_PALACE_PATH, default ~/.mempalace/demo-palace.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
ensure_system_packages
scripts/fetch-model.sh
# The same build selection as scripts/test.sh (dev-dependencies included), so Cargo's feature
# unification yields the same dependency builds and neither script recompiles LanceDB for the other.
cargo build --workspace --all-targets
mp="$CARGO_TARGET_DIR/debug/mempalace"
export MEMPALACE_PALACE_PATH="${MEMPALACE_PALACE_PATH:-$HOME/.mempalace/demo-palace}"
sample=examples/sample-project
set -x
"$mp" init "$sample"
"$mp" mine "$sample"
"$mp" search "why did we switch authentication provider" --limit 3
"$mp" search "what happens when a webhook fails" --wing sample_project --limit 2
"$mp" kg add "Clerk" "replaces" "Auth0" --valid-from 2026-01-15
"$mp" kg query Clerk
"$mp" status
