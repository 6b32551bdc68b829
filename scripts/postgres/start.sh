#!/usr/bin/env bash
# Starts a throwaway PostgreSQL cluster for the tests: initdb + pg_ctl in a temp dir, on a free
# loopback port, trust authentication for the `postgres` role, no root daemon. Prints the
# exports the tests read (eval "$(scripts/postgres/start.sh)"); scripts/postgres/stop.sh stops
# it and removes the dir. Run as root, the cluster runs as the `postgres` system user (initdb
# refuses root).
set -euo pipefail
bin="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)"
if [ -z "$bin" ] || [ ! -x "$bin/initdb" ]; then
    echo "PostgreSQL is not installed (Debian package postgresql)" >&2
    exit 1
fi
dir="$(mktemp -d /tmp/mempalace-pg.XXXXXX)"
# A cluster that did not come up leaves nothing behind.
trap 'rm -rf "$dir"' ERR
port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
as_owner=()
if [ "$(id -u)" -eq 0 ]; then
    chown postgres: "$dir"
    as_owner=(runuser -u postgres --)
fi
if ! "${as_owner[@]}" "$bin/initdb" -D "$dir/data" -U postgres --auth=trust --encoding=UTF8 \
    --locale=C.UTF-8 >"$dir/initdb.log" 2>&1; then
    cat "$dir/initdb.log" >&2
    rm -rf "$dir"
    exit 1
fi
if ! "${as_owner[@]}" "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
    -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200" \
    start >/dev/null; then
    cat "$dir/server.log" >&2
    "${as_owner[@]}" "$bin/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null 2>&1
    rm -rf "$dir"
    exit 1
fi
echo "export MEMPALACE_TEST_POSTGRES_URL=postgres://postgres@127.0.0.1:$port/postgres"
echo "export MEMPALACE_TEST_POSTGRES_DIR=$dir"
