#!/usr/bin/env bash
# Runs every test of the workspace (unit, conformance, parity, end-to-end), after fetching the
# model the embedder tests and the MCP end-to-end test load.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
ensure_system_packages
scripts/fetch-model.sh
# Tests that need a server read its address when they run (QDRANT_URL for Qdrant); without
# it they pass as SKIPPED with the reason, unless MEMPALACE_REQUIRE_LIVE_SERVICES=1 (CI).
if [ -n "${QDRANT_URL:-}" ]; then
    echo "Qdrant tests: against $QDRANT_URL"
else
    echo "Qdrant tests: SKIPPED (QDRANT_URL not set; ../shared/qdrant/start.sh starts a server)"
fi
# The PostgreSQL graph's tests read MEMPALACE_TEST_POSTGRES_URL; without one, a throwaway
# cluster is started for this run (initdb + pg_ctl in a temp dir) and stopped on exit.
if [ -z "${MEMPALACE_TEST_POSTGRES_URL:-}" ]; then
    if pg_env="$(bash scripts/postgres/start.sh)"; then
        eval "$pg_env"
        trap 'bash scripts/postgres/stop.sh' EXIT
        echo "PostgreSQL tests: against a throwaway cluster, $MEMPALACE_TEST_POSTGRES_URL"
    else
        echo "PostgreSQL tests: SKIPPED (no throwaway cluster could be started; see the message above)"
    fi
else
    echo "PostgreSQL tests: against $MEMPALACE_TEST_POSTGRES_URL"
fi
if cargo nextest --version >/dev/null 2>&1; then
    cargo nextest run --workspace --no-fail-fast "$@"
    # nextest runs no doc tests: the manual's examples (the facade's front page) run here.
    cargo test --workspace --doc --no-fail-fast
else
    cargo test --workspace --no-fail-fast "$@"
fi
