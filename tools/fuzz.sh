#!/bin/sh
# tools/fuzz.sh [SECONDS] — runs tools/fuzz_api.lua against the sanitizer build (build-asan/:
# clang ASan + UBSan, every CPU tensor buffer its own exact-size allocation) for SECONDS in all
# (default 1800, `make fuzz`), as a series of runs with increasing seeds.
#
# A run ends by itself after FUZZ_RUN seconds (default 60). A crash (an ASan or UBSan report,
# a signal) or a run killed by the watchdog (a hang inside C) ends it early; the call being run
# then is in its --last file, kept as DIR/crash-SEED.lua (the reproducer) beside DIR/run-SEED.log
# (the report). Findings of the fuzzer itself (non-`tide:` messages, hangs, changed tensors)
# are DIR/finding-SEED-N.lua. The summary at the end lists both; exit status 1 when any.
#
#   FUZZ_BUILD=DIR     another build: build (the normal one, no sanitizer), or a copy of
#                      build-asan/ that `make asan` will not rebuild under a long run
#   FUZZ_SEED=N        the first seed (default 1)
#   FUZZ_OUT=DIR       where findings go (default build/fuzz)
#   FUZZ_RSS_MB=N      under ASan, a run using more memory than N MiB is a crash (default 8192)
set -u
cd "$(dirname "$0")/.." || exit 1
TOTAL=${1:-${FUZZ_SECONDS:-1800}}
RUN=${FUZZ_RUN:-60}
B=${FUZZ_BUILD:-build-asan}
SEED=${FUZZ_SEED:-1}
OUT=${FUZZ_OUT:-build/fuzz}
LUA=${LUA:-lua5.4}
mkdir -p "$OUT"
rm -f "$OUT"/finding-*.lua "$OUT"/crash-*.lua "$OUT"/last-*.lua* "$OUT"/run-*.log
rm -rf "$OUT"/tb "$OUT"/tb-* "$OUT"/image.png # what the pretrained targets write
if [ ! -f "$B/lua/tide/core.so" ]; then
    echo "fuzz: $B/lua/tide/core.so missing: run make asan (or set FUZZ_BUILD=build)" >&2
    exit 2
fi

export LUA_PATH="lua/?.lua;lua/?/init.lua;;" LUA_CPATH="$B/lua/?.so;;" TIDE_CPU_DEVICES=2
PRELOAD=
# a sanitizer build links clang's shared ASan runtime, which lua5.4 (not instrumented) preloads
if readelf -d "$B/lua/tide/core.so" 2>/dev/null | grep -q 'libclang_rt\.asan'; then
    PRELOAD=$(clang -print-file-name=libclang_rt.asan-x86_64.so)
    # a call that fills the machine's memory (Lua's tables are not under tide's memory limit)
    # ends with a report here instead of the kernel's OOM killer taking the whole session
    export ASAN_OPTIONS="detect_leaks=0:allocator_may_return_null=1:hard_rss_limit_mb=${FUZZ_RSS_MB:-8192}"
    export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
    LD_LIBRARY_PATH="$(dirname "$PRELOAD")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    export LD_LIBRARY_PATH
fi
# the sanitizer makes calls several times slower: a call is slow past 30 s there
SLOW=${FUZZ_SLOW:-$([ -n "$PRELOAD" ] && echo 30 || echo 10)}

start=$(date +%s)
runs=0 crashes=0 calls=0
while [ $(($(date +%s) - start)) -lt "$TOTAL" ]; do
    left=$((TOTAL - ($(date +%s) - start)))
    secs=$((left < RUN ? left : RUN))
    [ "$secs" -lt 1 ] && break
    log="$OUT/run-$SEED.log"
    last="$OUT/last-$SEED.lua"
    # the watchdog: the fuzzer stops itself after secs; a call stuck in C is killed here
    timeout -k 5 $((secs + 4 * SLOW + 30)) env ${PRELOAD:+LD_PRELOAD=$PRELOAD} \
        "$LUA" tools/fuzz_api.lua --seconds "$secs" --seed "$SEED" --out "$OUT" --last "$last" \
        --slow "$SLOW" --quiet >"$log" 2>&1 </dev/null
    rc=$?
    runs=$((runs + 1))
    n=$(sed -nE 's/^fuzz: seed [0-9]+: ([0-9]+) calls.*/\1/p' "$log" | tail -n 1)
    calls=$((calls + ${n:-0}))
    # exit status 1 is findings (written by the fuzzer); a run without its closing line died
    # (ASan and UBSan exit with status 1 too, mid-run)
    if [ "$rc" -gt 1 ] || ! grep -qE '^fuzz: seed [0-9]+: ' "$log"; then
        crashes=$((crashes + 1))
        why="exit status $rc"
        [ "$rc" -eq 124 ] && why="stopped by the watchdog (a hang in C?)"
        [ "$rc" -eq 137 ] && why="killed (the watchdog after a hang in C, or the OOM killer)"
        grep -qE 'ERROR: AddressSanitizer|runtime error:' "$log" && why="sanitizer report"
        if [ ! -f "$last" ]; then # not one call made: the fuzzer itself does not start
            echo "fuzz: the fuzzer died before its first call ($why):" >&2
            tail -n 20 "$log" >&2
            exit 2
        fi
        mv "$last" "$OUT/crash-$SEED.lua"
        rm -f "$last.tmp"
        echo "CRASH seed $SEED: $why; reproducer $OUT/crash-$SEED.lua, report $log" >&2
    else
        rm -f "$last" "$last.tmp"
        [ "$rc" -eq 0 ] && rm -f "$log"
    fi
    SEED=$((SEED + 1))
done

elapsed=$(($(date +%s) - start))
nfind=$(find "$OUT" -name 'finding-*.lua' 2>/dev/null | wc -l)
echo "fuzz: $runs runs, $calls calls in $elapsed s on $B; $crashes crashes, $nfind findings (in $OUT)"
for f in "$OUT"/crash-*.lua; do
    [ -f "$f" ] && printf '  %s: %s\n' "$f" "$(sed -n '1s/^-- //p' "$f")"
done
# findings, one line per kind (call and message shape) with its count and first reproducer
for f in "$OUT"/finding-*.lua; do
    [ -f "$f" ] || continue
    printf '%s\t%s\t%s\n' "$(sed -nE '1s/^-- fuzz finding \(([a-z]+)\) in (.*), seed.*/\1 \2/p' "$f")" \
        "$(sed -n '2s/^-- //p' "$f" | sed -E 's/^[^:]*:[0-9]+: //; s/[0-9]+/N/g' | cut -c1-140)" "$f"
done | sort | awk -F '\t' '{ k = $1 "\t" $2; if (!(k in n)) { o[++m] = k; f[k] = $3 } n[k]++ }
    END { for (i = 1; i <= m; i++) { split(o[i], a, "\t"); printf "  %dx %s: %s\n      %s\n", n[o[i]], a[1], a[2], f[o[i]] } }'
[ "$crashes" -eq 0 ] && [ "$nfind" -eq 0 ]
