#!/bin/sh
# run_ubsan_clang.sh BUILD_DIR — the C tests built by clang with -fsanitize=undefined (`make
# ubsan-clang` builds build-ubsan-clang/, then calls this). clang's UBSan reports what gcc's
# misses: arithmetic on a NULL pointer (NULL + 0) and float-to-integer conversions out of range.
# The C tests only (the readers, DLPack, from_blob and the kernels), about a minute: the busted
# suite already runs under gcc's ASan+UBSan (run_asan.sh). Ends with one line "N passed, N failed".
set -u
cd "$(dirname "$0")/../.." || exit 1
B=${1:-build-ubsan-clang}
. spec/support/suite.sh

UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export UBSAN_OPTIONS

for exe in "$B"/test_*; do
    [ -f "$exe" ] && [ -x "$exe" ] || continue
    run_suite "ubsan-clang c:${exe#"$B"/}" "$exe"
done

finish_suites "clang UBSan ($B)"
