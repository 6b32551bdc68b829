#!/usr/bin/env bash
# The facade's promise that agents compile only the backends they use: `mempalace` with
# features qdrant + postgres has no LanceDB or DataFusion crate among its dependencies, and
# the fleet example agent (examples/agents/fleet: qdrant, postgres, minilm) builds on its own
# with those features. Run by .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
heavy=$(cargo tree --locked -p mempalace -e normal --no-default-features --features qdrant,postgres \
    --prefix none | grep -E '^(lance|datafusion)' | sort -u || true)
if [ -n "$heavy" ]; then
    echo "mempalace with qdrant,postgres depends on LanceDB/DataFusion crates:" >&2
    echo "$heavy" >&2
    exit 1
fi
echo "mempalace --features qdrant,postgres: no lance*/datafusion* crate"
cargo build --locked -p mempalace-agent-fleet
if cargo tree --locked -p mempalace-agent-fleet -e normal --prefix none | grep -qE '^(lance|datafusion)'; then
    echo "the fleet example depends on LanceDB/DataFusion" >&2
    exit 1
fi
echo "mempalace-agent-fleet builds without LanceDB"
