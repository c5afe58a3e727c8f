-- polar.lua — float32 atan2 and hypot (a point's angle and length), tan, atan, asin and acos,
-- and a complex64 tensor's abs and angle (a spectrogram's magnitude and phase), against
-- PyTorch's at its best thread setting (bench/compare.lua): a million elements and 4096.
--   lua5.4 bench/polar.lua [REPS [ROUNDS]]     (bench/run.sh sets the paths)
local tide = require("tide")
local compare = require("bench.compare")

local REPS = tonumber(arg[1]) or 20
local ROUNDS = tonumber(arg[2]) or 3
local clock = tide.wall_time or os.clock

local OPS = { "atan2", "hypot", "tan", "atan", "asin", "acos", "complex_abs", "complex_angle" }
local CASES = { { "1m", 1000000 }, { "4k", 4096 } }

local function inputs(c)
    -- bench/polar.py's values: sin and cos of the element's index times 1.3
    local i = tide.arange(c[2], { dtype = "float32" })
    local y, x = i:sin(), (i * 1.3):cos()
    local z = tide.complex(x, y)
    return {
        atan2 = function() return tide.atan2(y, x) end,
        hypot = function() return tide.hypot(y, x) end,
        tan = function() return x:tan() end,
        atan = function() return y:atan() end,
        asin = function() return y:asin() end,
        acos = function() return x:acos() end,
        complex_abs = function() return z:abs() end,
        complex_angle = function() return z:angle() end,
    }
end

local res, why = compare.run { rounds = ROUNDS,
    tide = function() return compare.time_cases(CASES, OPS, inputs, REPS, clock) end,
    reference = string.format("bench/polar.py %d", REPS) }
print(string.format("polar: float32 and complex64, fastest of %d calls per round", REPS))
compare.print_lines(compare.case_keys(CASES, OPS), res, why, ROUNDS)
