#!/bin/sh
# install_check.sh — the LuaRocks install check of `make test`: installs tide with
# `luarocks make` (offline) into a fresh temporary tree, then runs spec/support/smoke.lua from
# outside the checkout with only that tree on the Lua paths. Ends with "N passed, N failed".
#
# With an argument, for another Lua: 5.3, 5.1 or luajit (LuaRocks' 5.1 mode with a configuration
# naming luajit and its headers: Debian's luarocks 3.8 has no LuaJIT mode of its own).
set -u
cd "$(dirname "$0")/.." || exit 1
ROOT=$(pwd)
TREE=$(mktemp -d "${TMPDIR:-/tmp}/tide-rock.XXXXXX")
trap 'rm -rf "$TREE"' EXIT INT TERM
HOST=${1:-5.4}
NO_CUDA="" # another Lua's check leaves the CUDA plug-in out (the 5.4 check installs it)
[ "$HOST" = 5.4 ] || NO_CUDA="NVCC_FOUND="
case $HOST in
luajit)
    LUA=luajit
    LV=5.1
    LUAROCKS_CONFIG_5_1="$TREE/luajit-config.lua"
    export LUAROCKS_CONFIG_5_1
    cat >"$LUAROCKS_CONFIG_5_1" <<EOC
lua_interpreter = "luajit"
variables = { LUA_DIR = "/usr", LUA_BINDIR = "/usr/bin", LUA_INCDIR = "/usr/include/luajit-2.1" }
EOC
    ;;
*)
    LUA=${LUA:-lua$HOST}
    LV=$HOST
    ;;
esac

# luarocks runs plain `make`: the objects `make all` left in build/ are reused, so this checks
# the rockspec and the install rule, not a second compile (CI time: the CUDA backend is slow)
MAKEFLAGS="-j$(nproc 2>/dev/null || echo 2)"
export MAKEFLAGS
if ! luarocks --lua-version="$LV" --tree "$TREE" make rockspec/tide-scm-1.rockspec $NO_CUDA; then
    echo "install: luarocks make failed"
    echo "0 passed, 1 failed"
    exit 1
fi

# every Lua module of the checkout must be requirable from the installed copy
modules=$(cd lua && find tide -name '*.lua' | sed -e 's,/init\.lua$,,' -e 's,\.lua$,,' -e 's,/,.,g' \
    | sort)

cd "$TREE" || exit 1
TIDE_CPU_DEVICES=2 \
    LUA_PATH="$TREE/share/lua/$LV/?.lua;$TREE/share/lua/$LV/?/init.lua" \
    LUA_CPATH="$TREE/lib/lua/$LV/?.so" \
    $LUA "$ROOT/spec/support/smoke.lua" "$TREE" $modules
