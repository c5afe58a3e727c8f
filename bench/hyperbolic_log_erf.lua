-- hyperbolic_log_erf.lua — float32 sinh and cosh, log2 and log10 (a spectrogram's decibels, a
-- loss curve's scale), erf and erfc (normal CDFs, exact GELU's parts), against PyTorch's at its
-- best thread setting (bench/compare.lua): a million elements and 4096.
--   lua5.4 bench/hyperbolic_log_erf.lua [REPS [ROUNDS]]     (bench/run.sh sets the paths)
local tide = require("tide")
local compare = require("bench.compare")

local REPS = tonumber(arg[1]) or 20
local ROUNDS = tonumber(arg[2]) or 3
local clock = tide.wall_time or os.clock

local OPS = { "sinh", "cosh", "log2", "log10", "erf", "erfc" }
local CASES = { { "1m", 1000000 }, { "4k", 4096 } }

local function inputs(c)
    -- bench/hyperbolic_log_erf.py's values: sin of the element's index times 4, and its
    -- absolute value plus 0.01 for the logarithms
    local x = tide.arange(c[2], { dtype = "float32" }):sin():mul(4)
    local p = x:abs():add(0.01)
    return {
        sinh = function() return x:sinh() end,
        cosh = function() return x:cosh() end,
        log2 = function() return p:log2() end,
        log10 = function() return p:log10() end,
        erf = function() return x:erf() end,
        erfc = function() return x:erfc() end,
    }
end

local res, why = compare.run { rounds = ROUNDS,
    tide = function() return compare.time_cases(CASES, OPS, inputs, REPS, clock) end,
    reference = string.format("bench/hyperbolic_log_erf.py %d", REPS) }
print(string.format("hyperbolic, log and erf: float32, fastest of %d calls per round", REPS))
compare.print_lines(compare.case_keys(CASES, OPS), res, why, ROUNDS)
