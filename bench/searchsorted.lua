-- searchsorted.lua — tide.bucketize of 10^6 float32 values into 1000 sorted boundaries, and
-- searchsorted along rows as NeRF's sample_pdf runs it (1024 rays' CDFs of 64 bins, 128
-- uniform draws each, right = true), against PyTorch's at its best thread setting
-- (bench/compare.lua).
--   lua5.4 bench/searchsorted.lua [REPS [ROUNDS]]     (bench/run.sh sets the paths)
local tide = require("tide")
local compare = require("bench.compare")

local REPS = tonumber(arg[1]) or 10
local ROUNDS = tonumber(arg[2]) or 3
local clock = tide.wall_time or os.clock

local OPS = { "bucketize", "rows" }
local CASES = { { "1m", 0 } }

local function inputs()
    -- bench/searchsorted.py's values: sines of the index (values), an even grid (boundaries),
    -- each row's running sum of |cos| normalized (the CDFs), and fractions of the index (draws)
    local v = tide.arange(1000000, { dtype = "float32" }):sin():mul(3)
    local edges = tide.linspace(-3, 3, 1000)
    local w = tide.arange(1024 * 64, { dtype = "float32" }):cos():abs():add(1e-5):view(1024, 64)
    local cdf = w:cumsum(2)
    cdf = cdf / cdf:narrow(2, 64, 1)
    local u = tide.arange(1024 * 128, { dtype = "float32" }):mul(0.618034):frac():view(1024, 128)
    return {
        bucketize = function() return tide.bucketize(v, edges) end,
        rows = function() return tide.searchsorted(cdf, u, { right = true }) end,
    }
end

local res, why = compare.run { rounds = ROUNDS,
    tide = function() return compare.time_cases(CASES, OPS, inputs, REPS, clock) end,
    reference = string.format("bench/searchsorted.py %d", REPS) }
print(string.format("searchsorted: float32, fastest of %d calls per round", REPS))
compare.print_lines(compare.case_keys(CASES, OPS), res, why, ROUNDS)
