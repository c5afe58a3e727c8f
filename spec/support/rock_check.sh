#!/bin/sh
# rock_check.sh — the release rock of `make test` (suite "rock"): `make rock` into a temporary
# folder, `luarocks lint` of both rockspecs, then `luarocks install` of the source rock into a
# fresh tree with the network shut (a dead proxy: a download attempt fails the check), and
# spec/support/smoke.lua against that tree from outside the checkout. Ends with "N passed,
# N failed".
#
# The rock builds from its own archive, so everything is compiled again: at -O0, without LTO
# and without the CUDA plug-in (MAKEFLAGS reaches the make LuaRocks runs). What this checks is
# the packaging (every file the build needs is in the archive, the rockspec builds and installs
# it), which the optimisation level does not change; `install` checks the optimised build.
set -u
cd "$(dirname "$0")/../.." || exit 1
ROOT=$(pwd)
TMP=$(mktemp -d "${TMPDIR:-/tmp}/tide-rock-check.XXXXXX")
trap 'rm -rf "$TMP"' EXIT INT TERM
passed=0
failed=0
ok() { passed=$((passed + 1)); echo "ok   $1"; }
fail() { failed=$((failed + 1)); echo "FAIL $1"; }
check() { # check NAME CMD...
    name=$1
    shift
    if "$@" >"$TMP/out" 2>&1; then ok "$name"; else fail "$name"; sed 's/^/     /' "$TMP/out"; fi
}

V=$(sed -n 's/^TIDE_VERSION *?= *//p' tools/install.mk)
check "make rock" sh tools/rock.sh "$TMP/rock"
check "luarocks lint rockspec/tide-scm-1.rockspec" \
    luarocks --lua-version=5.4 lint rockspec/tide-scm-1.rockspec
check "luarocks lint tide-$V-1.rockspec" luarocks --lua-version=5.4 lint "$TMP/rock/tide-$V-1.rockspec"

if [ -f "$TMP/rock/tide-$V-1.src.rock" ]; then
    check "luarocks install tide-$V-1.src.rock, offline" env \
        http_proxy=http://127.0.0.1:9 https_proxy=http://127.0.0.1:9 \
        MAKEFLAGS="-j$(nproc 2>/dev/null || echo 2) OPT=-O0 LTO= NVCC_FOUND=" \
        luarocks --lua-version=5.4 --tree "$TMP/tree" install "$TMP/rock/tide-$V-1.src.rock"
    modules=$(cd lua && find tide -name '*.lua' | sed -e 's,/init\.lua$,,' -e 's,\.lua$,,' \
        -e 's,/,.,g' | sort)
    T=$TMP/tree
    if (cd "$T" && TIDE_CPU_DEVICES=2 LUA_PATH="$T/share/lua/5.4/?.lua;$T/share/lua/5.4/?/init.lua" \
        LUA_CPATH="$T/lib/lua/5.4/?.so" lua5.4 "$ROOT/spec/support/smoke.lua" "$T" $modules) \
        >"$TMP/smoke" 2>&1; then
        ok "the installed rock passes spec/support/smoke.lua"
    else
        fail "the installed rock passes spec/support/smoke.lua"
        sed 's/^/     /' "$TMP/smoke"
    fi
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
