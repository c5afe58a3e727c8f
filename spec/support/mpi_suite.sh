#!/bin/sh
# mpi_suite.sh NP SPEC... — the busted specs SPEC (spec/dist/*_mpi.lua) run by every rank of
# `mpirun -np NP` on this machine (one thread per rank: the ranks share its cores). mpirun's
# --timeout ends every rank of a suite that hangs (TIDE_MPI_TIMEOUT seconds, default 120), and
# tide's own collective timeout (dist.init{timeout}) names the rank that waited.
np=$1
shift
exec mpirun --allow-run-as-root --oversubscribe --timeout "${TIDE_MPI_TIMEOUT:-120}" -np "$np" \
    env OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 \
    sh spec/support/mpi_rank.sh "${LUA:-lua5.4}" /usr/bin/busted -p _mpi "$@"
