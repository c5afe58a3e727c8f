-- overhead.lua — per-op overhead of `c = a + b` on float32 tensors of 1 and 100 elements,
-- tide against Debian's PyTorch (bench/overhead.py, one thread) in the same run.
-- Issue 2 target: tide <= 0.5x PyTorch's time per op. Median of REPS runs of ITERS ops.
--   lua5.4 bench/overhead.lua [ITERS [REPS]]     (bench/run.sh sets the paths)
local tide = require "tide"

local ITERS = tonumber(arg[1]) or 100000
local REPS = tonumber(arg[2]) or 11
local PYTHON = os.getenv("TIDE_BENCH_PYTHON") or "/usr/bin/python3"

-- a monotonic wall clock like Python's perf_counter; os.clock (CPU time of all threads) else
local clock = tide.wall_time or os.clock

local function median(v)
    table.sort(v)
    local n = #v
    return n % 2 == 1 and v[(n + 1) / 2] or (v[n / 2] + v[n / 2 + 1]) / 2
end

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
        out[size] = median(times[i])
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
    return median(times) / ITERS * 1e9
end

local ref = {}
local py = io.popen(string.format("%s bench/overhead.py %d %d 2>&1", PYTHON, ITERS, REPS))
local py_out = py:read("*a")
py:close()
for size, ns in py_out:gmatch("(%d+) ([%d%.e+-]+)") do
    ref[tonumber(size)] = tonumber(ns)
end

print(string.format("overhead: c = a + b, float32, median of %d runs of %d ops", REPS, ITERS))
print(string.format("  %-8s %12s %14s %8s", "elements", "tide ns/op", "PyTorch ns/op", "ratio"))
local worst = 0
local mine = time_adds({ 1, 100 })
for _, size in ipairs({ 1, 100 }) do
    local t = mine[size]
    if ref[size] then
        local ratio = t / ref[size]
        worst = math.max(worst, ratio)
        print(string.format("  %-8d %12.0f %14.0f %7.2fx", size, t, ref[size], ratio))
    else
        print(string.format("  %-8d %12.0f %14s", size, t, "n/a"))
    end
end
print(string.format("  (an empty Lua loop iteration: %.1f ns)", time_loop()))
if next(ref) then
    print(string.format("  target: tide <= 0.50x PyTorch; reached %.2fx (worst size)", worst))
else
    print("  PyTorch reference unavailable: " .. py_out:gsub("\n", " "):sub(1, 200))
end
