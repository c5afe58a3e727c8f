#!/bin/sh
# deps.sh — installs the Debian packages of the named groups that are missing (as root, or
# through sudo). A no-op when everything is present. The one place that lists tide's packages.
#
#   sh tools/deps.sh GROUP...     e.g. `build demo` (make demo), `test` (make test), `all`
#
#   build  a compiler, Lua 5.4, OpenBLAS (its OpenMP build, which shares tide's thread pool:
#          the Makefile links it by directory), cJSON, utf8proc (the BERT tokenizer), zlib,
#          oneDNN (CPU float32 conv2d and the larger sgemm; the Makefile builds without it when
#          /usr/include/dnnl.h is missing)
#   demo   the Fashion-MNIST files examples/fashion_mnist.lua trains on
#   test   what `make test` runs beyond build + demo: busted, luarocks, clang (clang-format,
#          the sanitizer build), the other Lua hosts (5.3, 5.1, LuaJIT + lua-compat53, LÖVE,
#          Neovim, a second Lua runtime for spec/c/embed_two_lua.c), Open MPI (the MPI plug-in,
#          `mpirun` for the distributed suites). Installing lua5.3 repoints /usr/bin/lua: tide
#          always names its Lua.
#   bench  PyTorch, the reference `make bench` runs against (/usr/bin/python3); fortunes, the
#          text examples/char_lm.lua trains on (/usr/share/games/fortunes); matplotlib, which
#          tools/plot_runs.py draws training runs with
#   all    every group (`make deps`, .ci/run)
# The CUDA toolkit is optional and not installed here: the Makefile builds the CUDA backend
# when nvcc is found ($CUDA_HOME, default /usr/local/cuda).
set -eu

BUILD="build-essential pkg-config lua5.4 liblua5.4-dev libopenblas-dev libopenblas0-openmp
libdnnl-dev libcjson-dev libutf8proc-dev zlib1g-dev"
DEMO="dataset-fashion-mnist"
TEST="$BUILD $DEMO lua-busted luarocks clang-format clang libomp-dev liblua5.3-0
lua5.3 liblua5.3-dev lua5.1 liblua5.1-0-dev luajit libluajit-5.1-dev lua-compat53-dev love neovim
openmpi-bin libopenmpi-dev"
BENCH="$BUILD python3-torch python3-matplotlib fortunes"

[ $# -gt 0 ] || set -- all
wanted=""
for group in "$@"; do
    case $group in
    build) wanted="$wanted $BUILD" ;;
    demo) wanted="$wanted $DEMO" ;;
    test) wanted="$wanted $TEST" ;;
    bench) wanted="$wanted $BENCH" ;;
    all) wanted="$wanted $TEST $BENCH" ;;
    *)
        echo "deps: unknown group '$group' (build, demo, test, bench or all)" >&2
        exit 2
        ;;
    esac
done

missing=""
for p in $wanted; do
    case " $missing " in *" $p "*) continue ;; esac
    status=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
    [ "$status" = installed ] || missing="$missing $p"
done

if [ -z "$missing" ]; then
    echo "deps ($*): all Debian packages present"
    exit 0
fi

echo "deps ($*): installing:$missing"
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
        SUDO=sudo
    else
        echo "deps: not root; run as root: apt-get install -y$missing" >&2
        exit 1
    fi
else
    SUDO=
fi
export DEBIAN_FRONTEND=noninteractive
# apt's index is refreshed first unless it is under a day old; an install from a fresh index
# that still fails (a package moved on) refreshes it and tries once more
install() {
    # shellcheck disable=SC2086 # word splitting of the package list is wanted
    $SUDO apt-get install -y -q --no-install-recommends $missing
}
if [ -n "$(find /var/lib/apt/lists -maxdepth 1 -name '*Packages*' -mtime -1 2>/dev/null | head -n 1)" ]; then
    install && exit 0
fi
$SUDO apt-get update -q
install
