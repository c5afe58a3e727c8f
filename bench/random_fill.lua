-- random_fill.lua — float32 random draws: tide.rand, tide.randn, normal_ into an existing
-- tensor (a diffusion step's noise, an initializer), randint and dropout's mask (F.dropout in
-- training), against PyTorch's at its best thread setting (bench/compare.lua): a million
-- elements and 4096. The generators differ (tide's is counter-based, the same numbers on every
-- device and thread split), so this compares the time of a draw, not the numbers.
--   lua5.4 bench/random_fill.lua [REPS [ROUNDS]]     (bench/run.sh sets the paths)
local tide = require("tide")
local compare = require("bench.compare")

local REPS = tonumber(arg[1]) or 20
local ROUNDS = tonumber(arg[2]) or 3
local clock = tide.wall_time or os.clock

local OPS = { "rand", "randn", "normal_", "randint", "dropout" }
local CASES = { { "1m", 1000000 }, { "4k", 4096 } }

local function inputs(c)
    local n = c[2]
    local x, ones = tide.empty(n), tide.ones(n)
    local F = tide.nn.functional
    return {
        rand = function() return tide.rand(n) end,
        randn = function() return tide.randn(n) end,
        normal_ = function() return x:normal_(0, 0.02) end,
        randint = function() return tide.randint(0, 1000, { n }) end,
        dropout = function() return F.dropout(ones, 0.1, true) end,
    }
end

local res, why = compare.run { rounds = ROUNDS,
    tide = function() return compare.time_cases(CASES, OPS, inputs, REPS, clock) end,
    reference = string.format("bench/random_fill.py %d", REPS) }
print(string.format("random fills: float32, fastest of %d calls per round", REPS))
compare.print_lines(compare.case_keys(CASES, OPS), res, why, ROUNDS)
