#!/bin/sh
# deps.sh — installs the Debian packages tide needs that are missing (run as root; `make deps`,
# `make demo` and .ci/run call it). A no-op when everything is present.
#
#   build:     build-essential pkg-config liblua5.4-dev libopenblas-dev libcjson-dev zlib1g-dev
#              libopenblas0-openmp (OpenBLAS on OpenMP's pool, which tide's kernels share; the
#              Makefile links it by directory, whatever update-alternatives picks)
#              libdnnl-dev (oneDNN: CPU float32 conv2d and larger sgemm; optional, the Makefile builds without it
#              when /usr/include/dnnl.h is missing)
#   run/test:  lua5.4 lua-busted luarocks clang-format; clang libomp-dev (`make ubsan-clang`)
#              liblua5.3-0 (a second Lua runtime for the two-runtimes host, spec/c/embed_two_lua.c)
#   hosts:     lua5.3 liblua5.3-dev lua5.1 liblua5.1-0-dev luajit libluajit-5.1-dev
#              lua-compat53-dev (make LUA_VERSION=5.3|5.1|luajit); love neovim (tide in LÖVE
#              and Neovim). Installing lua5.3 repoints /usr/bin/lua: tide always names its Lua.
#   dist:      openmpi-bin libopenmpi-dev (MPI plug-in, `mpirun` for the distributed suites)
#   bench:     python3-torch (the PyTorch the benchmarks compare against, /usr/bin/python3)
#   demo:      dataset-fashion-mnist (/usr/share/datasets/fashion-mnist); fortunes (the text
#              examples/char_lm.lua trains on, /usr/share/games/fortunes)
# The CUDA toolkit is optional and not installed here: the Makefile builds the CUDA backend
# when nvcc is found ($CUDA_HOME, default /usr/local/cuda).
set -eu

PACKAGES="build-essential pkg-config lua5.4 liblua5.4-dev lua-busted luarocks libopenblas-dev
libopenblas0-openmp libdnnl-dev libcjson-dev zlib1g-dev clang-format clang libomp-dev python3-torch
dataset-fashion-mnist fortunes liblua5.3-0 openmpi-bin libopenmpi-dev
lua5.3 liblua5.3-dev lua5.1 liblua5.1-0-dev luajit libluajit-5.1-dev lua-compat53-dev love neovim"

missing=""
for p in $PACKAGES; do
    status=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
    [ "$status" = installed ] || missing="$missing $p"
done

if [ -z "$missing" ]; then
    echo "deps: all Debian packages present"
    exit 0
fi

echo "deps: installing:$missing"
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
$SUDO apt-get update -q
# shellcheck disable=SC2086 # word splitting of the package list is wanted
$SUDO apt-get install -y -q --no-install-recommends $missing
