#!/bin/sh
# mpi_rank.sh CMD... — one rank of an MPI suite (spec/support/mpi_suite.sh). Rank 0's output is
# the suite's (its closing "N passed, N failed" line); another rank's is kept quiet unless it
# fails, then shown with its rank, so a failure on rank 3 is seen and named.
rank=${OMPI_COMM_WORLD_RANK:-0}
if [ "$rank" = 0 ]; then
    exec "$@"
fi
log=$(mktemp)
"$@" >"$log" 2>&1
rc=$?
if [ "$rc" -ne 0 ]; then
    sed "s/^/rank $rank: /" "$log" >&2
fi
rm -f "$log"
exit "$rc"
