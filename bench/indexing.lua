-- indexing.lua — float32 layout and indexing ops on a million elements against PyTorch's at its
-- best thread setting (bench/compare.lua): roll and flip of a [1000, 1000] matrix, rows written
-- by index (t[{rows}] = src: 500 rows of 1000, and 10^4 rows of 64 in [10^5, 64]),
-- scatter_reduce "amax", embedding_bag "max" and clamp with tensor bounds.
--   lua5.4 bench/indexing.lua [REPS [ROUNDS]]     (bench/run.sh sets the paths)
local tide = require("tide")
local compare = require("bench.compare")

local REPS = tonumber(arg[1]) or 20
local ROUNDS = tonumber(arg[2]) or 3
local clock = tide.wall_time or os.clock
local F = tide.nn.functional

-- key, then a function of the inputs returning the call to time; the inputs are
-- bench/indexing.py's: sin of the element's index, indices spread by a prime stride
local CASES = {
    { "roll_dim2", function(v) return function() return v.x:roll(3, 2) end end },
    { "roll_2dims", function(v) return function() return v.x:roll({ 3, -5 }, { 1, 2 }) end end },
    { "flip_dim2", function(v) return function() return v.x:flip(2) end end },
    { "flip_2dims", function(v) return function() return v.x:flip({ 1, 2 }) end end },
    { "index_put_rows", function(v)
        return function() v.y[{ v.rows }] = v.src end
    end },
    { "index_put_rows64", function(v)
        return function() v.t[{ v.rows64 }] = v.src64 end
    end },
    { "scatter_amax", function(v)
        return function() return v.z:scatter_reduce(1, v.idx, v.flat, "amax") end
    end },
    { "scatter_amin", function(v)
        return function() return v.z:scatter_reduce(1, v.idx, v.flat, "amin") end
    end },
    { "embedding_bag_max", function(v)
        return function() return F.embedding_bag(v.ids, v.weight, { mode = "max" }) end
    end },
    { "clamp_tensors", function(v) return function() return v.flat:clamp(v.lo, v.hi) end end },
}

local function inputs()
    local f32 = { dtype = "float32" }
    local flat = tide.arange(1000000, f32):sin()
    local lo = tide.arange(1000000, f32):mul(0.37):sin():mul(0.5)
    return {
        x = flat:view(1000, 1000),
        y = tide.zeros({ 1000, 1000 }, f32),
        rows = tide.arange(500, { dtype = "int64" }):mul(7):remainder(1000):add(1),
        src = tide.arange(500000, f32):cos():view(500, 1000),
        t = tide.zeros({ 100000, 64 }, f32),
        rows64 = tide.arange(10000, { dtype = "int64" }):mul(7919):remainder(100000):add(1),
        src64 = tide.arange(640000, f32):cos():view(10000, 64),
        z = tide.zeros({ 1000 }, f32),
        idx = tide.arange(1000000, { dtype = "int64" }):mul(7919):remainder(1000):add(1),
        flat = flat,
        weight = tide.arange(640000, f32):sin():view(10000, 64),
        ids = tide.arange(16384, { dtype = "int64" }):mul(7919):remainder(10000):add(1)
            :view(4096, 4),
        lo = lo,
        hi = lo:add(0.5),
    }
end

local function run_tide()
    local v, out = inputs(), {}
    for _, c in ipairs(CASES) do
        out[c[1]] = compare.best_ms(c[2](v), REPS, clock)
    end
    return out
end

local res, why = compare.run { rounds = ROUNDS, tide = run_tide,
    reference = string.format("bench/indexing.py %d", REPS) }
print(string.format("indexing: float32, fastest of %d calls per round", REPS))
local keys = {}
for _, c in ipairs(CASES) do
    keys[#keys + 1] = c[1]
end
compare.print_lines(keys, res, why, ROUNDS)
