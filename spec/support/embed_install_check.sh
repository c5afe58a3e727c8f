#!/bin/sh
# embed_install_check.sh — a host built against an installed tide, as the embedding README says
# (examples/embed/README.md): `make install PREFIX=<temporary>`, then examples/embed/host.c
# compiled with `pkg-config --cflags --libs tide` alone and run; the installed core.so is the
# object hosts link; a DLPack host links; the CUDA plug-in is found in the installed tree.
# Ends with "N passed, N failed". Run by run_all.sh (suite "embed install").
set -u
cd "$(dirname "$0")/../.." || exit 1
ROOT=$(pwd)
MAKE=${MAKE:-make}
LUA=${LUA:-lua5.4}
CC=${CC:-cc}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/tide-install.XXXXXX")
P=$TMP/prefix
passed=0
failed=0
ok() { passed=$((passed + 1)); echo "ok   $1"; }
fail() { failed=$((failed + 1)); echo "FAIL $1"; }
check() { # check NAME CMD...: CMD's status
    name=$1
    shift
    if "$@" >"$TMP/out" 2>&1; then ok "$name"; else fail "$name"; sed 's/^/     /' "$TMP/out"; fi
}
finish() {
    rm -rf "$TMP"
    echo "$passed passed, $failed failed"
    [ "$failed" -eq 0 ]
    exit $?
}

if ! $MAKE --no-print-directory -s install PREFIX="$P" >"$TMP/install.log" 2>&1; then
    fail "make install PREFIX=$P"
    cat "$TMP/install.log"
    finish
fi
ok "make install PREFIX=<tmp>"

for f in include/tide/tide.h include/tide/tide_lua.h include/tide/tide_io.h \
    include/tide/tide_dlpack.h include/tide/tide_ops.def include/tide/tide_kernels.def \
    lib/libtide.so.0 lib/libtide.so \
    lib/pkgconfig/tide.pc lib/lua/5.4/tide/core.so share/lua/5.4/tide/init.lua \
    share/lua/5.4/tide/nn/Linear.lua; do
    check "installed: $f" test -e "$P/$f"
done
check "core.so is libtide.so.0 (one object)" test "$P/lib/lua/5.4/tide/core.so" -ef "$P/lib/libtide.so.0"

# the README's build line, plus an rpath for a prefix outside the loader's paths
export PKG_CONFIG_PATH="$P/lib/pkgconfig"
check "pkg-config tide" pkg-config --exists tide
LUADIR=$(pkg-config --variable=luadir tide)
LIBDIR=$(pkg-config --variable=libdir tide)
# shellcheck disable=SC2046 # the flags are words
check "cc host.c \$(pkg-config --cflags --libs tide)" $CC examples/embed/host.c -o "$TMP/host" \
    $(pkg-config --cflags --libs tide) -DTIDE_LUA_DIR="\"$LUADIR\"" -Wl,-rpath,"$LIBDIR"
check "the host runs: embed demo ok" sh -c "cd '$TMP' && ./host '$LUADIR' '$ROOT/examples/embed/agent.lua' | grep -q 'embed demo: ok'"
check "the host links the installed libtide.so.0" sh -c "ldd '$TMP/host' | grep -q '$P/lib/libtide.so.0'"

# a DLPack host links (the functions of tide_dlpack.h are exported)
cat >"$TMP/dl.c" <<'C'
#include "tide_dlpack.h"
int main(void) {
    tide_device *cpu;
    tide_tensor *t;
    DLManagedTensor *m;
    int64_t n = 4;
    if (tide_device_get("cpu", &cpu) || tide_tensor_empty(NULL, cpu, TIDE_DTYPE_F32, 1, &n, &t) ||
        tide_tensor_to_dlpack(t, &m))
        return 1;
    tide_tensor_release(t);
    m->deleter(m);
    return 0;
}
C
# shellcheck disable=SC2046
check "a DLPack host links and runs" sh -c "$CC '$TMP/dl.c' -o '$TMP/dl' $(pkg-config --cflags --libs tide) -Wl,-rpath,'$LIBDIR' && '$TMP/dl'"

# plain Lua with the installed paths: require loads the installed object
check "lua: require 'tide' from the install" env LUA_PATH="$LUADIR/?.lua;$LUADIR/?/init.lua" \
    LUA_CPATH="$P/lib/lua/5.4/?.so" $LUA -e "
local tide = require 'tide'
assert(tide.ones(2, 2):sum():item() == 4)
local maps = io.open('/proc/self/maps'):read('a')
assert(maps:find('$P/lib/libtide.so.0', 1, true), 'libtide.so.0 not mapped')"

# the CUDA plug-in, from the installed tree: the real one when it was built, else a stand-in
# (of another ABI: refused, so never run) placed where make install puts it
CUDADIR=$(pkg-config --variable=cudadir tide)
if [ ! -f "$CUDADIR/libtide_cuda.so" ]; then
    mkdir -p "$CUDADIR" && cp build/fake_cuda/abi999/libtide_cuda.so "$CUDADIR/"
    want="$CUDADIR/libtide_cuda.so is a CUDA backend of another tide"
else
    want=""
fi
check "the CUDA plug-in is found in the installed lib/tide/" env -u TIDE_CUDA_LIB \
    LUA_PATH="$LUADIR/?.lua;$LUADIR/?/init.lua" LUA_CPATH="$P/lib/lua/5.4/?.so" $LUA -e "
local tide = require 'tide'
local r = tide.cuda.unavailable_reason() or ''
assert(not r:find('not built'), r)
assert(r:find('$want', 1, true), r)"
finish
