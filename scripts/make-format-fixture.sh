#!/usr/bin/env bash
# Makes the palace-format fixture of this release (mempalace/tests/fixtures/palace_format_N,
# N = PALACE_FORMAT_VERSION): a small palace with drawers, facts with intervals, a tunnel,
# hallways, a diary entry and coordination events, written by the `mempalace` binary. Run it
# when the format changes and commit the folder: every later release must open it
# (mempalace/tests/palace_format_fixtures.rs).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
format="$(sed -n 's/^pub const PALACE_FORMAT_VERSION: u32 = \([0-9]*\);/\1/p' mempalace/src/config.rs)"
out="mempalace/tests/fixtures/palace_format_${format}"
cargo build -p mempalace-cli
bin="$CARGO_TARGET_DIR/debug/mempalace"
home="$(mktemp -d)"
trap 'rm -rf "$home"' EXIT
rm -rf "$out"
model="${MEMPALACE_MODEL_DIR:-$HOME/.cache/mempalace/models/all-MiniLM-L6-v2}"
mp() { HOME="$home" MEMPALACE_MODEL_DIR="$model" "$bin" --palace "$out" "$@"; }
for wing in alpha beta gamma; do
    mp mine "examples/tests/fixtures/links_corpus_3_11/$wing" --wing "$wing" --quiet
done
mp kg add Alice works_at Acme --valid-from 2024-01-01
mp kg supersede Alice works_at Acme Initech --at 2026-06-01
mp kg add Bob likes tea --valid-from 2025-03-01 --valid-to 2026-03-01
mp tunnels create alpha general beta general --label "fixture tunnel" >/dev/null
mp logstream append --type note.posted --stream project/fixture --room general --from-agent planner --body "format fixture event" >/dev/null
# What an export of it counts: the test checks every later release reads the same.
mp export "$home/fixture.jsonl" --json > "$out.expected.json"
# Locks are made on demand; they are not part of the format.
find "$out" \( -name '*.lock' -o -name '*.waiting' \) -delete
echo "Wrote $out (format $format): $(du -sh "$out" | cut -f1)"
