-- A collective that one rank never joins: run by spec/dist/timeout_check.sh under mpirun -np 2.
-- Rank 1 skips the all_reduce and ends; rank 0 must not hang: after dist.init's timeout (1 s)
-- it prints which rank waited in which call, and the job ends.
local tide = require("tide")
local dist = tide.distributed
dist.init { backend = "mpi", timeout = 1 }
if dist.rank() == 0 then
    dist.all_reduce(tide.ones({ 4 }))
    print("rank 0 was not stopped")
end
