#!/bin/sh
# busted_chunks.sh BUSTED [ARGS...] -- FILE... — one busted suite run as several busted
# processes, one after the other, of TIDE_CHUNK_FILES spec files each (default 10); prints each
# process's output, then one line "N passed, N failed, N pending" summing theirs (a process
# that printed no summary line, having died, counts as 1 failed). BUSTED and ARGS are the
# command (lua5.4 /usr/bin/busted --cpath=...), FILE... the spec files in their order.
#
# Why: the 5.4 suite took 93 s of CPU in one process, 69 s in processes of 20 files and 67 s
# in processes of 10; LuaJIT's share 79 s in processes of 100 files, 72 s of 10, 60 s of 3 and
# 57 s of 1 (so host_suite.sh gives LuaJIT 3). The collector's cycles cost what the heap holds,
# and a long run's heap keeps what busted keeps of every file it ran (each test's block, trace
# and result) and what each file's tests made on top; tide paces the collector by tensor bytes,
# so that cost came back with every few megabytes of tensors. A new process starts with an
# empty heap, for about 0.15 s of start-up.
set -u
cmd=""
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
    cmd="$cmd '$(printf '%s' "$1" | sed "s/'/'\\\\''/g")'"
    shift
done
[ $# -gt 0 ] && shift # the --
PER=${TIDE_CHUNK_FILES:-10}
out=$(mktemp)
trap 'rm -f "$out"' EXIT INT TERM
passed=0 failed=0 pending=0 status=0

run_chunk() {
    # shellcheck disable=SC2086 # the list of files is meant to split
    eval "$cmd" "$chunk" >"$out" 2>&1 || status=1
    cat "$out"
    line=$(grep -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ pending' "$out" | tail -n 1)
    if [ -z "$line" ]; then
        failed=$((failed + 1)) # no summary: the process died
        status=1
        return
    fi
    # shellcheck disable=SC2086 # the summary line's words
    set -- $line
    passed=$((passed + $1)) failed=$((failed + $3)) pending=$((pending + $5))
}

chunk="" n=0
for f in "$@"; do
    chunk="$chunk $f"
    n=$((n + 1))
    if [ "$n" -ge "$PER" ]; then
        run_chunk
        chunk="" n=0
    fi
done
[ -n "$chunk" ] && run_chunk
echo "$passed passed, $failed failed, $pending pending"
exit $status
