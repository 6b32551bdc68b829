# Shared settings for the project scripts (sourced, not run).
# A persistent target dir outside the clone: the LanceDB/DataFusion/candle build takes long,
# and every clone (CI's included) reuses what was built before.
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/mempalace/target}"
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"

# System packages the build and tests need: lance needs protoc; the CLI's embedder links
# OpenBLAS (the `openblas` feature of mempalace-embed-candle); PostgreSQL's server binaries
# for the PostgreSQL graph's tests (no daemon is used: the tests start their own cluster).
ensure_system_packages() {
    local missing=()
    command -v protoc >/dev/null 2>&1 || missing+=(protobuf-compiler)
    command -v cc >/dev/null 2>&1 || missing+=(gcc)
    dpkg -s libopenblas-dev >/dev/null 2>&1 || missing+=(libopenblas-dev)
    # The PostgreSQL knowledge graph's tests start a throwaway cluster (scripts/postgres).
    ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || missing+=(postgresql)
    if [ ${#missing[@]} -gt 0 ]; then
        echo "installing: ${missing[*]}" >&2
        local sudo=""
        [ "$(id -u)" -ne 0 ] && sudo="sudo"
        $sudo apt-get update -qq
        $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
    fi
}
