#!/bin/sh
# run_asan.sh BUILD_DIR — the C tests and the busted suite against a build made with
# -fsanitize=address,undefined (`make asan` builds build-asan/, then calls this).
# Ends with one line "N passed, N failed" summing its suites.
#
# The C tests are instrumented executables. lua5.4 is not, so the busted run preloads the
# sanitizer runtimes (STYLE.md) and turns leak detection off: Lua's own allocations are not
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

for exe in "$B"/test_*; do
    [ -f "$exe" ] && [ -x "$exe" ] || continue
    run_suite "asan c:${exe#"$B"/}" env ASAN_OPTIONS="$ASAN_C" "$exe"
done

PRELOAD="$(gcc -print-file-name=libasan.so) $(gcc -print-file-name=libubsan.so)"
checkout_lua_env "$B"
run_suite "asan busted" env TIDE_CPU_DEVICES=2 LD_PRELOAD="$PRELOAD" \
    ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=1 $LUA /usr/bin/busted --cpath="$B/lua/?.so"

finish_suites "ASan+UBSan ($B)"
