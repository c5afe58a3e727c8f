#!/bin/sh
# gpu_bundle.sh — what `make gpu-check` needs on a GPU machine that reaches no package mirror
# (a CUDA image with nvcc, gcc and PyTorch, but no Lua): Debian packages carried there.
#
#   sh tools/gpu_bundle.sh pack DIR     on a Debian machine with apt: downloads the .deb files
#                                       into DIR (about 15 MB)
#   sh tools/gpu_bundle.sh unpack DIR   on the GPU machine, as root: unpacks them into / without
#                                       replacing any file already there (the image's own
#                                       libraries win), makes the links Debian's alternatives
#                                       would, runs ldconfig
#   sh tools/gpu_bundle.sh check DIR    unpack, then `make gpu-check` (at most $GPU_CHECK_LIMIT
#                                       seconds, 420 unless set): one command for a GPU machine
#                                       lent for a few minutes
#
# Then `make gpu-check` builds and runs as on Debian. Checked on an Ubuntu 24.04 CUDA image.
# Its MiniLM step needs models/all-MiniLM-L6-v2/tokenizer.json and tokenizer_config.json there
# (bench/gpu_bert_encode.lua: the weights need not travel).
set -eu
PACKAGES="lua5.4 liblua5.4-0 liblua5.4-dev lua-busted lua-cliargs lua-dkjson lua-filesystem
lua-luassert lua-mediator lua-penlight lua-say lua-system lua-term libopenblas0-openmp
libopenblas-pthread-dev libgfortran5 libcjson1 libcjson-dev libutf8proc2 libutf8proc-dev zlib1g-dev make fortunes fortunes-min"

[ $# -eq 2 ] || {
    echo "usage: sh tools/gpu_bundle.sh pack|unpack|check DIR" >&2
    exit 2
}
DIR=$2
case $1 in
pack)
    mkdir -p "$DIR"
    # shellcheck disable=SC2086 # word splitting of the package list is wanted
    (cd "$DIR" && apt-get download $PACKAGES)
    echo "gpu_bundle: $(ls "$DIR"/*.deb | wc -l) packages in $DIR"
    ;;
unpack)
    STAGE=$(mktemp -d /tmp/gpu-bundle.XXXXXX)
    for f in "$DIR"/*.deb; do dpkg-deb -x "$f" "$STAGE"; done
    (cd "$STAGE" && find . ! -type d) | while read -r f; do
        f=${f#./}
        [ -e "/$f" ] || [ -L "/$f" ] || { mkdir -p "$(dirname "/$f")" && cp -P "$STAGE/$f" "/$f"; }
    done
    rm -rf "$STAGE"
    # the links update-alternatives makes on Debian: OpenBLAS's headers and its OpenMP build
    A=/usr/include/x86_64-linux-gnu
    for h in cblas.h openblas_config.h; do
        [ -e "$A/$h" ] || ln -s "openblas-pthread/$h" "$A/$h"
    done
    L=/usr/lib/x86_64-linux-gnu
    [ -e "$L/libopenblas.so" ] || ln -s openblas-openmp/libopenblas.so.0 "$L/libopenblas.so"
    ldconfig
    echo "gpu_bundle: unpacked $(ls "$DIR"/*.deb | wc -l) packages from $DIR"
    ;;
check)
    t0=$(date +%s)
    sh "$0" unpack "$DIR"
    cd "$(dirname "$0")/.."
    rc=0
    timeout "${GPU_CHECK_LIMIT:-420}" make --no-print-directory gpu-check || rc=$?
    echo "gpu_bundle: make gpu-check exit $rc after $(($(date +%s) - t0)) s (unpacking included)"
    exit "$rc"
    ;;
*)
    echo "gpu_bundle: pack, unpack or check, not '$1'" >&2
    exit 2
    ;;
esac
