-- nccl_allreduce.lua — all_reduce (float32 sum, in place) of 1 MB and 64 MB CUDA tensors through
-- tide.distributed's NCCL backend, one rank per GPU (cuda:<local_rank>), for `make gpu-check`.
-- Figures as nccl-tests defines them: algbw = bytes / time, busbw = algbw * 2(n-1)/n (what each
-- link carries in a ring all-reduce, comparable across rank counts). The time of one all-reduce is
-- a round of ITERS back-to-back all-reduces, drained, over ITERS; the median of ROUNDS rounds after
-- warmup; the slowest rank decides.
--
--   lua5.4 bench/nccl_allreduce.lua NP [smoke]   starts itself under mpirun -np NP
-- "smoke" (the emulated rehearsal) runs toy sizes. Rank 0 prints "key value" lines for
-- bench/gpu_check.sh (nccl_allreduce_<size>_busbw_gbs ...) and one readable line per size.
if not os.getenv("OMPI_COMM_WORLD_SIZE") then
    local np = tonumber(arg[1])
    if not np or np < 2 then
        io.stderr:write("usage: lua5.4 bench/nccl_allreduce.lua NP [smoke]  (NP >= 2: the GPUs)\n")
        os.exit(2)
    end
    local cmd = ("mpirun --allow-run-as-root --oversubscribe --timeout 150 -np %d "
        .. "-x OMP_NUM_THREADS=1 %s %s worker %s")
        :format(np, arg[-1] or "lua5.4", arg[0], arg[2] or "")
    local ok = os.execute(cmd)
    os.exit(ok and 0 or 1)
end

local tide = require("tide")
local dist = tide.distributed
local SMOKE = arg[2] == "smoke"

dist.init { backend = "nccl", timeout = 120 }
local R, W = dist.rank(), dist.world_size()
local dev = "cuda:" .. dist.local_rank()
local clock = tide.core.wall_time

local function median(v)
    table.sort(v)
    local n = #v
    return n % 2 == 1 and v[(n + 1) // 2] or (v[n // 2] + v[n // 2 + 1]) / 2
end

-- the largest of x over the ranks (CPU tensors go over MPI in an NCCL job)
local function max_over_ranks(x)
    local t = tide.tensor({ x }, { dtype = "float64" })
    dist.all_reduce(t, { op = "max" })
    return t:item()
end

local sizes = SMOKE and { { "4kb", 4096 }, { "64kb", 65536 } }
    or { { "1mb", 1 << 20 }, { "64mb", 64 << 20 } }
if R == 0 then
    print(("nccl all-reduce, float32 sum in place, %d ranks, one per GPU%s"):format(W,
        SMOKE and " (toy sizes)" or ""))
end
for _, s in ipairs(sizes) do
    local name, bytes = s[1], s[2]
    local n = bytes // 4
    local iters = SMOKE and 5 or (bytes <= (1 << 20) and 50 or 10)
    local rounds = SMOKE and 3 or 9

    -- the sum is right before it is timed: rank r gives r + 1 everywhere
    local t = tide.full({ n }, R + 1, { device = dev })
    dist.all_reduce(t)
    local want = W * (W + 1) / 2
    local lo, hi = t:min():item(), t:max():item()
    if lo ~= want or hi ~= want then
        error(("nccl_allreduce: %s all-reduce gave [%g, %g] on rank %d, want %g"):format(name, lo,
            hi, R, want))
    end
    t:zero_() -- timed on zeros: sums of sums would overflow to inf

    for _ = 1, (SMOKE and 1 or 5) do -- warmup: NCCL sets up its channels on the first calls
        dist.all_reduce(t)
    end
    tide.cuda.synchronize(dev)
    local times = {}
    for r = 1, rounds do
        dist.barrier()
        local t0 = clock()
        for _ = 1, iters do
            dist.all_reduce(t)
        end
        tide.cuda.synchronize(dev)
        times[r] = (clock() - t0) / iters
    end
    local sec = max_over_ranks(median(times))
    local algbw = bytes / sec / 1e9
    local busbw = algbw * 2 * (W - 1) / W
    if R == 0 then
        print(("nccl_allreduce_%s_us %.2f"):format(name, sec * 1e6))
        print(("nccl_allreduce_%s_algbw_gbs %.3f"):format(name, algbw))
        print(("nccl_allreduce_%s_busbw_gbs %.3f"):format(name, busbw))
        print(("  %5s: %10.2f us  algbw %8.2f GB/s  busbw %8.2f GB/s"):format(name, sec * 1e6,
            algbw, busbw))
    end
    t:free()
end
dist.finalize()
