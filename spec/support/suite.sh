# shellcheck shell=sh
# suite.sh — helpers shared by run_all.sh and run_asan.sh (sourced, POSIX sh).
#
# A suite is one command whose output ends with a line "N passed, N failed[, N pending]".
# run_suite NAME CMD... runs it with its output in $LOGDIR/NAME.log, shows the output when the
# suite failed (always with TIDE_TEST_VERBOSE=1), and adds its counts to the totals. A suite
# that prints no such line, or exits non-zero while reporting no failure, counts as 1 failed;
# so does one still running after TIDE_SUITE_TIMEOUT seconds (default 1200): a hung spec must
# not hang CI.
#
# Logs go to a directory of their own per run (several people may test one checkout at once);
# finish_suites removes it when everything passed.

if [ -z "${LOGDIR:-}" ]; then
    mkdir -p build/test-logs
    LOGDIR=$(mktemp -d build/test-logs/run.XXXXXX)
fi
mkdir -p "$LOGDIR"
SUITE_TIMEOUT=${TIDE_SUITE_TIMEOUT:-1200}
SUITES_START=$(date +%s)
# each suite's row goes to a file of its lane (SUITE_LANE: suites run side by side in lanes,
# run_all.sh), so finish_suites sees the rows of background lanes too
SUITE_LANE=${SUITE_LANE:-0}

run_suite() {
    s_name=$1
    shift
    s_log="$LOGDIR/$(echo "$s_name" | tr ' /:' '___').log"
    s_start=$(date +%s)
    timeout -k 10 "$SUITE_TIMEOUT" "$@" >"$s_log" 2>&1 </dev/null
    s_rc=$?
    s_secs=$(($(date +%s) - s_start))
    s_line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$s_log" | tail -n 1)
    if [ -n "$s_line" ]; then
        s_p=$(echo "$s_line" | sed -E 's/^([0-9]+) passed.*/\1/')
        s_f=$(echo "$s_line" | sed -E 's/^[0-9]+ passed, ([0-9]+) failed.*/\1/')
        s_pend=$(echo "$s_line" | sed -nE 's/.*, ([0-9]+) pending.*/\1/p')
        s_pend=${s_pend:-0}
        if [ "$s_rc" -ne 0 ] && [ "$s_f" -eq 0 ]; then
            s_f=1
            s_note=" (exit status $s_rc)"
        else
            s_note=""
        fi
    else
        s_p=0
        s_f=1
        s_pend=0
        s_note=" (no summary line; exit status $s_rc)"
    fi
    [ "$s_rc" -eq 124 ] && s_note=" (killed after ${SUITE_TIMEOUT}s)"
    if [ "$s_f" -ne 0 ] || [ "${TIDE_TEST_VERBOSE:-0}" = 1 ]; then
        echo "---- $s_name: output ($s_log) ----"
        cat "$s_log"
        echo "---- end of $s_name ----"
    fi
    s_sum=$(printf '%-28s %5d passed, %3d failed, %3d pending  %4ss%s' "$s_name" "$s_p" "$s_f" \
        "$s_pend" "$s_secs" "$s_note")
    echo "$s_sum"
    echo "$s_p $s_f $s_pend $s_sum" >>"$LOGDIR/rows.$SUITE_LANE"
    [ "$s_f" -eq 0 ]
}

# run_check NAME CMD...: a suite of one check, passed when CMD exits 0
run_check() {
    c_name=$1
    shift
    run_suite "$c_name" sh -c '"$@" && echo "1 passed, 0 failed" || { echo "0 passed, 1 failed"; exit 1; }' \
        sh "$@"
}

# prints the table of suites (lane by lane), the times, then the one closing line; returns
# non-zero on any failure
finish_suites() {
    echo
    echo "==== $1 ===="
    rows=$(cat "$LOGDIR"/rows.* 2>/dev/null)
    printf '%s\n' "$rows" | sed -E 's/^[0-9]+ [0-9]+ [0-9]+ //'
    # shellcheck disable=SC2046 # three numbers
    set -- $(printf '%s\n' "$rows" | awk '{ p += $1; f += $2; q += $3 } END { print p + 0, f + 0, q + 0 }')
    t_passed=$1 t_failed=$2 t_pending=$3
    [ "$t_pending" -gt 0 ] && echo "($t_pending pending: skipped at run time, e.g. no CUDA device)"
    echo "(suites: $(($(date +%s) - SUITES_START)) s${TIDE_BUILD_SECONDS:+, after a build of $TIDE_BUILD_SECONDS s})"
    if [ "$t_failed" -eq 0 ] && [ "${TIDE_KEEP_LOGS:-0}" != 1 ]; then
        rm -rf "$LOGDIR"
    else
        echo "(logs: $LOGDIR)"
    fi
    echo "$t_passed passed, $t_failed failed"
    [ "$t_failed" -eq 0 ]
}

# paths for running tide from a build dir of the checkout ($1: build, build-asan)
checkout_lua_env() {
    LUA_PATH="lua/?.lua;lua/?/init.lua;./?.lua;;"
    LUA_CPATH="$1/lua/?.so;;"
    export LUA_PATH LUA_CPATH
}
