#!/bin/sh
# install_check.sh — the LuaRocks install check of `make test`: installs tide with
# `luarocks make` (offline) into a fresh temporary tree, then runs spec/support/smoke.lua from
# outside the checkout with only that tree on the Lua paths. Ends with "N passed, N failed".
set -u
cd "$(dirname "$0")/.." || exit 1
ROOT=$(pwd)
LUA=${LUA:-lua5.4}
TREE=$(mktemp -d "${TMPDIR:-/tmp}/tide-rock.XXXXXX")
trap 'rm -rf "$TREE"' EXIT INT TERM

# luarocks runs plain `make`: the objects `make all` left in build/ are reused, so this checks
# the rockspec and the install rule, not a second compile (CI time: the CUDA backend is slow)
MAKEFLAGS="-j$(nproc 2>/dev/null || echo 2)"
export MAKEFLAGS
if ! luarocks --lua-version=5.4 --tree "$TREE" make rockspec/tide-scm-1.rockspec; then
    echo "install: luarocks make failed"
    echo "0 passed, 1 failed"
    exit 1
fi

# every Lua module of the checkout must be requirable from the installed copy
modules=$(cd lua && find tide -name '*.lua' | sed -e 's,/init\.lua$,,' -e 's,\.lua$,,' -e 's,/,.,g' \
    | sort)

cd "$TREE" || exit 1
TIDE_CPU_DEVICES=2 \
    LUA_PATH="$TREE/share/lua/5.4/?.lua;$TREE/share/lua/5.4/?/init.lua" \
    LUA_CPATH="$TREE/lib/lua/5.4/?.so" \
    $LUA "$ROOT/spec/support/smoke.lua" "$TREE" $modules
