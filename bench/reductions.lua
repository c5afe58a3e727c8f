-- reductions.lua — float32 sum, mean, max, min and amax of a whole tensor, along the last dim
-- and along the first, against PyTorch's at its best thread setting (bench/compare.lua): a
-- million elements (a loss over a large batch, a norm) and 4096.
--   lua5.4 bench/reductions.lua [REPS [ROUNDS]]     (bench/run.sh sets the paths)
local tide = require("tide")
local compare = require("bench.compare")

local REPS = tonumber(arg[1]) or 20
local ROUNDS = tonumber(arg[2]) or 3
local clock = tide.wall_time or os.clock

local OPS = { "sum", "mean", "max", "min", "amax" }
-- name, elements, the dim (nil: the whole tensor; 2: the last of [rows, 1000]; 1: the first)
local CASES = { { "1m", 1000000 }, { "1m_rows", 1000000, 2 }, { "1m_cols", 1000000, 1 },
    { "4k", 4096 } }

local function inputs(c)
    -- bench/reductions.py's values: sin of the element's index
    local x = tide.arange(c[2], { dtype = "float32" }):sin()
    if c[3] then
        x = x:view(-1, 1000)
    end
    local f = {}
    for _, op in ipairs(OPS) do
        f[op] = function() return x[op](x, c[3]) end -- (c[3] nil: the whole tensor)
    end
    return f
end

local res, why = compare.run { rounds = ROUNDS,
    tide = function() return compare.time_cases(CASES, OPS, inputs, REPS, clock) end,
    reference = string.format("bench/reductions.py %d", REPS) }
print(string.format("reductions: float32, fastest of %d calls per round", REPS))
compare.print_lines(compare.case_keys(CASES, OPS), res, why, ROUNDS)
