-- overhead.lua — per-op overhead of `c = a + b` on float32 tensors of 1 and 100 elements,
-- tide against Debian's PyTorch (bench/overhead.py) at its best setting, in rounds
-- (bench/compare.lua). Issue 15 target: tide <= 0.25x PyTorch's time per op. Per round, each
-- side's fastest of REPS runs of ITERS ops (as Python's timeit advises for a per-op figure): this
-- shared machine's neighbours halve the speed of everything for a second at a time, a run of
-- 20,000 ops lasts 5-25 ms, and the median of 5 runs still landed in such a phase for whole
-- rounds (tide 240 or 480 ns from one second to the next in one process).
--   lua5.4 bench/overhead.lua [ITERS [REPS [ROUNDS]]]     (bench/run.sh sets the paths)
local tide = require("tide")
local compare = require("bench.compare")

local ITERS = tonumber(arg[1]) or 20000
local REPS = tonumber(arg[2]) or 5
-- 11 rounds: the slow phases of this machine last seconds, as long as a round, and a median of
-- 5 rounds' ratios moved between 0.21 and 0.33 from run to run
local ROUNDS = tonumber(arg[3]) or 11

-- a monotonic wall clock like Python's perf_counter; os.clock (CPU time of all threads) else
local clock = tide.wall_time or os.clock

-- one timed run of ITERS additions, in ns per op
local function run_add(a, b)
    local c
    local t0 = clock()
    for _ = 1, ITERS do
        c = a + b
    end
    return (clock() - t0) / ITERS * 1e9, c
end

-- the sizes take turns in each repetition, so a slow moment of the machine hits all of them
local function time_adds(sizes)
    local pairs_, times = {}, {}
    for i, size in ipairs(sizes) do
        pairs_[i] = { tide.ones({ size }, { dtype = "float32" }), tide.ones({ size }, { dtype = "float32" }) }
        times[i] = {}
    end
    for r = 0, REPS do
        for i, size in ipairs(sizes) do
            local ns, c = run_add(pairs_[i][1], pairs_[i][2])
            assert(c:sum():item() == 2 * size, "a + b gave a wrong sum")
            if r > 0 then -- the first run warms the allocator's cache
                times[i][#times[i] + 1] = ns
            end
        end
    end
    local out = {}
    for i, size in ipairs(sizes) do
        local best = math.huge
        for _, t in ipairs(times[i]) do
            best = math.min(best, t)
        end
        out[size] = best
    end
    return out
end

-- the empty loop, to show what Lua itself costs per iteration
local function time_loop()
    local times = {}
    for _ = 1, REPS do
        local t0 = clock()
        for _ = 1, ITERS do
        end
        times[#times + 1] = clock() - t0
    end
    return compare.median(times) / ITERS * 1e9
end

local res, why = compare.run { rounds = ROUNDS,
    tide = function()
        local t = time_adds({ 1, 100 })
        return { ["1"] = t[1], ["100"] = t[100] }
    end,
    reference = string.format("bench/overhead.py %d %d", ITERS, REPS) }

print(string.format("overhead: c = a + b, float32, fastest of %d runs of %d ops per round",
    REPS, ITERS))
local worst = 0
for _, size in ipairs({ 1, 100 }) do
    local r = res and res[tostring(size)]
    if r then
        worst = math.max(worst, r.ratio)
        compare.print_line(string.format("overhead %d float32", size), r, "ns", 1, ROUNDS)
    else
        print(string.format("overhead %d float32: pytorch n/a (%s)", size, why or "no figure"))
    end
end
print(string.format("  (an empty Lua loop iteration: %.1f ns)", time_loop()))
if res then
    print(string.format("  target: tide <= 0.25x PyTorch-best; reached %.2fx (worst size)", worst))
end
