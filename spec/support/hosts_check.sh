#!/bin/sh
# hosts_check.sh love|nvim — tide inside a real LuaJIT host, from the checkout root, against
# build-luajit/ (make LUA_VERSION=luajit):
#   love   examples/love/ headless (no window, graphics or sound) for 400 frames: the policy
#          network acts and learns every frame; exits 0 when it has learned to catch
#   nvim   nvim --headless requires tide and runs a forward pass (examples/nvim/check.lua)
set -u
cd "$(dirname "$0")/../.." || exit 1
ROOT=$(pwd)
LUA_PATH="$ROOT/lua/?.lua;$ROOT/lua/?/init.lua;;"
LUA_CPATH="$ROOT/build-luajit/lua/?.so;;"
export LUA_PATH LUA_CPATH TIDE_CPU_DEVICES=2
case $1 in
love)
    XDG_RUNTIME_DIR=$(mktemp -d "${TMPDIR:-/tmp}/tide-love.XXXXXX")
    trap 'rm -rf "$XDG_RUNTIME_DIR"' EXIT INT TERM
    export XDG_RUNTIME_DIR SDL_VIDEODRIVER=dummy SDL_AUDIODRIVER=dummy
    TIDE_LOVE_HEADLESS=1 TIDE_LOVE_FRAMES=400 love examples/love
    ;;
nvim)
    nvim --headless -u NONE -i NONE -c "luafile examples/nvim/check.lua"
    ;;
*)
    echo "usage: hosts_check.sh love|nvim" >&2
    exit 2
    ;;
esac
