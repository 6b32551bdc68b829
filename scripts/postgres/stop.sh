#!/usr/bin/env bash
# Stops the cluster scripts/postgres/start.sh started (MEMPALACE_TEST_POSTGRES_DIR) and removes it.
set -uo pipefail
dir="${MEMPALACE_TEST_POSTGRES_DIR:-}"
[ -n "$dir" ] && [ -d "$dir/data" ] || exit 0
bin="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)"
as_owner=()
[ "$(id -u)" -eq 0 ] && as_owner=(runuser -u postgres --)
"${as_owner[@]}" "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1
rm -rf "$dir"
