#!/bin/sh
# timeout_check.sh — a collective that one rank skips ends the job with tide's message naming
# the rank, within seconds (mpirun --timeout 20 is the backstop that must not be what ends it).
# Open MPI 4.1's mpirun can itself hang in its teardown after a rank has ended with _exit (seen
# once in ~40 runs: every rank gone, mpirun waiting on a futex, deaf to its own --timeout), so
# `timeout` bounds it (30 s: the job takes 2; a hang had cost the suite 90 s); a job whose ranks
# printed tide's message and ended still passes, with a note that mpirun had to be stopped.
out=$(timeout -k 5 30 mpirun --allow-run-as-root --oversubscribe --timeout 20 -np 2 \
    env OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 "${LUA:-lua5.4}" spec/dist/timeout_check.lua 2>&1)
rc=$?
want="tide: all_reduce: rank 0 of 2 waited 1 s for the other ranks and gave up: one of them failed, ended, or did not make the same call; ending this rank so that mpirun ends the job (change the limit with dist.init{timeout = seconds})"
if [ "$rc" -ne 0 ] && printf '%s\n' "$out" | grep -qF "$want" &&
    ! printf '%s\n' "$out" | grep -q "was not stopped"; then
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
        echo "timeout: the ranks ended with the waiting rank's message; mpirun was killed (exit status $rc: its own teardown hung until timeout's 30 s, or a rank's end took it down)"
    else
        echo "timeout: the job ended with the waiting rank's message (exit status $rc)"
    fi
    exit 0
fi
printf '%s\n' "$out"
echo "timeout check failed (exit status $rc)"
exit 1
