#!/bin/sh
# host_suite.sh LUA BUILD [DEVICE] — the busted suite under another Lua (lua5.3, lua5.1, luajit)
# against the tide.core built for it in BUILD (make LUA_VERSION=...), from the checkout root.
# Ends with busted's "N passed, N failed" line (spec/support/summary.lua). With DEVICE
# (cpu:1) only the device-rule specs run, with TIDE_TEST_DEVICE=DEVICE.
#
# Every spec file runs, but those that test what only some Lua has:
#   *_lua54_spec.lua   5.4 syntax (<close>): 5.4 only
#   #lua53             tests of 5.3+ semantics: the integer subtype (a float 2.0 kept apart from
#                      2, math.maxinteger), __len and __pairs on tables (#dataset, pairs(named)),
#                      string.pack, a popen's exit status: 5.3 and 5.4 only
#   INTEGER_SYNTAX     files written with integer literals and operators (1 << 62, //) through
#                      and through, about int64 exactness: 5.3 and 5.4 only
# (README "Lua hosts" lists every difference.)
#   SAME_C             specs of the C alone, whose Lua is a harness the other specs cover on
#                      each host: cpu_devices_bits_spec (every op on cpu and cpu:1, bit for bit):
#                      5.4 only, as the device-rule specs on cpu:1 (run_all.sh)
#   ported_scripts*    PyTorch scripts ported line for line: the library's Lua, the same on every
#                      host, trained for a few steps (the slowest specs under PUC 5.1): 5.4 all of
#                      them, LuaJIT, the 5.1 dialect that LÖVE and Neovim embed, every other one
#                      (the first, third, ...: 45 s of CPU for all 189; the library code they run
#                      is the same in either half), not 5.3 and PUC 5.1
# With TIDE_HOST_SHARE=k/n (or k1,k2/n), only the k-th (k1-th and k2-th) of every n spec files
# (in the sorted list of all of them) runs, besides EVERY_SHARE's, which run in each share, and
# the ported scripts. PUC 5.1 and LuaJIT are one dialect, the same language without integers,
# and one C API (LUA_VERSION_NUM 501): run_all.sh gives PUC 5.1 two thirds of the other files
# (1,2/3) and LuaJIT a third (3/3) beside the ported scripts, which are LuaJIT's alone (halves
# left LuaJIT 100 s against PUC 5.1's 13 s); what differs between the two runs in each share:
# the collector and its pacing (memory_spec, grad_release, tensor lifetimes), the host checks,
# and iterable datasets' coroutines.
EVERY_SHARE="hosts_spec memory_spec grad_release_spec tensor_spec iterable_dataset_spec"
INTEGER_SYNTAX="scalar_spec numerics_spec sanitizer_inputs_spec cuda_spec cuda_memory_spec"
SAME_C="cpu_devices_bits_spec"
set -u
LUA=$1
BUILD=$2
DEVICE=${3:-}
cd "$(dirname "$0")/../.." || exit 1

if [ ! -f "$BUILD/lua/tide/core.so" ]; then
    echo "$BUILD/lua/tide/core.so missing: make LUA_VERSION=... first"
    echo "0 passed, 1 failed"
    exit 1
fi
tags=cuda
integers=1
if ! $LUA -e 'os.exit(math.type and 0 or 1)'; then
    tags="$tags,lua53"
    integers=0
fi
SHARE=${TIDE_HOST_SHARE:-1/1}
share_k=${SHARE%/*}
share_n=${SHARE#*/}
specs=""
index=0
ported=0
for f in spec/*_spec.lua; do
    index=$((index + 1))
    name=$(basename "$f" .lua)
    # the ported scripts run on LuaJIT alone (above), every other one whatever its share
    case $name in ported_scripts*)
        ported=$((ported + 1))
        [ $((ported % 2)) = 1 ] || continue ;;
    esac
    case " $EVERY_SHARE " in *" $name "*) ;; *)
        case $name in ported_scripts*) ;; *)
            case ",$share_k," in *",$(((index - 1) % share_n + 1)),"*) ;; *) continue ;; esac ;;
        esac ;;
    esac
    case $f in *_lua54_spec.lua) continue ;; esac
    case " $INTEGER_SYNTAX " in *" $name "*) [ $integers = 1 ] || continue ;; esac
    case " $SAME_C " in *" $name "*) continue ;; esac
    case $name in ported_scripts*) [ "$LUA" = luajit ] || continue ;; esac
    if [ -n "$DEVICE" ] && ! grep -q -E 'spec\.support\.device|TIDE_TEST_DEVICE' "$f"; then
        continue
    fi
    specs="$specs $f"
done
export TIDE_TEST_LUA="$LUA" TIDE_CPU_DEVICES=2
[ -n "$DEVICE" ] && export TIDE_TEST_DEVICE="$DEVICE"

# in busted processes of 10 files each, one after the other (spec/support/busted_chunks.sh);
# LuaJIT's of 3 (its share took 72 s of CPU in processes of 10 files, 60 s in processes of 3)
[ "$LUA" = luajit ] && export TIDE_CHUNK_FILES="${TIDE_CHUNK_FILES:-3}"
# shellcheck disable=SC2086 # the list of files is meant to split
exec sh spec/support/busted_chunks.sh $LUA /usr/bin/busted --cpath="$BUILD/lua/?.so" \
    --exclude-tags="$tags" -- $specs
