#!/bin/sh
# run_asan.sh BUILD_DIR — the C tests and the busted suite against a build made by clang with
# -fsanitize=address,undefined (`make asan` builds build-asan/, then calls this).
# Ends with one line "N passed, N failed" summing its suites.
#
# The C tests are instrumented executables. lua5.4 is not, so the busted run preloads clang's
# ASan runtime, which holds its UBSan too (STYLE.md) and turns leak detection off: Lua's own allocations are not
# freed at exit and would drown the report. allocator_may_return_null=1 makes a failed huge
# malloc return NULL, as without ASan, so tide's out-of-memory paths are tested, not aborted.
set -u
cd "$(dirname "$0")/../.." || exit 1
B=${1:-build-asan}
. spec/support/suite.sh

LUA=${LUA:-lua5.4}
UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export UBSAN_OPTIONS
ASAN_C=${ASAN_OPTIONS:-detect_leaks=1}:allocator_may_return_null=1

# clang's shared ASan runtime: the C tests linked with tide's LIBS find it by their run path,
# the embedding tests that link only Lua and dlopen core.so find it here
PRELOAD=$(clang -print-file-name=libclang_rt.asan-x86_64.so)
LD_LIBRARY_PATH=$(dirname "$PRELOAD")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export LD_LIBRARY_PATH

for exe in "$B"/test_*; do
    [ -f "$exe" ] && [ -x "$exe" ] || continue
    run_suite "asan c:${exe#"$B"/}" env ASAN_OPTIONS="$ASAN_C" "$exe"
done

# Every spec but three whose work is whole programs in child processes, where the sanitizer
# adds nothing the other specs lack and costs a third of this run (25 of 64 s): memory_spec's
# training loops measure the collector's pacing (ASan's quarantine is not the memory measured),
# hosts_spec starts the other Lua hosts, none of them instrumented, and fashion_spec trains the
# example an epoch (its loader, layers and loss have specs of their own, run here). Nor the
# ported PyTorch scripts (ported_scripts*_spec: a few training steps each of library Lua over ops
# whose specs run here; 12 s under ASan).
# cpu_devices_bits_spec runs every op of the op table on cpu and on cpu:1 and compares the bits:
# the same C paths twice, which opinfo_spec runs here once per dtype (3 s under ASan).
ASAN_SKIP_SPECS="memory_spec hosts_spec fashion_spec cpu_devices_bits_spec"
specs=""
for f in spec/*_spec.lua; do
    case " $ASAN_SKIP_SPECS " in *" $(basename "$f" .lua) "*) continue ;; esac
    case $f in */ported_scripts*) continue ;; esac
    specs="$specs $f"
done
checkout_lua_env "$B"
# shellcheck disable=SC2086 # $specs is the list of files
# (in processes of 10 files each: spec/support/busted_chunks.sh)
run_suite "asan busted" env TIDE_CPU_DEVICES=2 LD_PRELOAD="$PRELOAD" \
    ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=1 sh spec/support/busted_chunks.sh \
    $LUA /usr/bin/busted --cpath="$B/lua/?.so" -- $specs

finish_suites "clang ASan+UBSan ($B)"
