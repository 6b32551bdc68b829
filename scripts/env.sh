# Shared settings for the project scripts (sourced, not run).
# A persistent target dir outside the clone: the LanceDB/DataFusion/candle build takes long,
# and every clone (CI's included) reuses what was built before.
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/mempalace/target}"
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"

# System packages the build needs: lance needs protoc; the CLI's embedder links OpenBLAS
# (the `openblas` feature of mempalace-embed-candle).
ensure_system_packages() {
    local missing=()
    command -v protoc >/dev/null 2>&1 || missing+=(protobuf-compiler)
    command -v cc >/dev/null 2>&1 || missing+=(gcc)
    dpkg -s libopenblas-dev >/dev/null 2>&1 || missing+=(libopenblas-dev)
    if [ ${#missing[@]} -gt 0 ]; then
        echo "installing: ${missing[*]}" >&2
        local sudo=""
        [ "$(id -u)" -ne 0 ] && sudo="sudo"
        $sudo apt-get update -qq
        $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
    fi
}
