#!/bin/sh
# timeout_check.sh — a collective that one rank skips ends the job with tide's message naming
# the rank, within seconds (mpirun --timeout 60 is the backstop that must not be what ends it).
out=$(mpirun --allow-run-as-root --oversubscribe --timeout 60 -np 2 \
    env OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 "${LUA:-lua5.4}" spec/dist/timeout_check.lua 2>&1)
rc=$?
want="tide: all_reduce: rank 0 of 2 waited 1 s for the other ranks and gave up: one of them failed, ended, or did not make the same call; ending this rank so that mpirun ends the job (change the limit with dist.init{timeout = seconds})"
if [ "$rc" -ne 0 ] && printf '%s\n' "$out" | grep -qF "$want" &&
    ! printf '%s\n' "$out" | grep -q "was not stopped"; then
    echo "timeout: the job ended with the waiting rank's message (exit status $rc)"
    exit 0
fi
printf '%s\n' "$out"
echo "timeout check failed (exit status $rc)"
exit 1
