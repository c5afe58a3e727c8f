-- masking.lua — float32 where and masked_fill with a number (attention's masked_fill(mask,
-- -inf), a loss's ignored entries), where of two tensors, nan_to_num and nansum, against
-- PyTorch's at its best thread setting (bench/compare.lua): a million elements under a mask
-- with no pattern (half of them set), and 4096.
--   lua5.4 bench/masking.lua [REPS [ROUNDS]]     (bench/run.sh sets the paths)
local tide = require("tide")
local compare = require("bench.compare")

local REPS = tonumber(arg[1]) or 20
local ROUNDS = tonumber(arg[2]) or 3
local clock = tide.wall_time or os.clock

local OPS = { "where_number", "where_tensors", "masked_fill", "nan_to_num", "nansum" }
local CASES = { { "1m", 1000000 }, { "4k", 4096 } }

local function inputs(c)
    -- bench/masking.py's values: sin of the element's index, a NaN where the mask is set
    local x = tide.arange(c[2], { dtype = "float32" }):sin()
    local mask = tide.arange(c[2], { dtype = "float32" }):mul(12.9898):sin():gt(0)
    local y = x:neg()
    local xn = x:masked_fill(mask, 0 / 0)
    return {
        where_number = function() return tide.where(mask, 0, x) end,
        where_tensors = function() return tide.where(mask, x, y) end,
        masked_fill = function() return x:masked_fill(mask, -math.huge) end,
        nan_to_num = function() return xn:nan_to_num(0) end,
        nansum = function() return xn:nansum() end,
    }
end

local res, why = compare.run { rounds = ROUNDS,
    tide = function() return compare.time_cases(CASES, OPS, inputs, REPS, clock) end,
    reference = string.format("bench/masking.py %d", REPS) }
print(string.format("masking: float32, fastest of %d calls per round", REPS))
compare.print_lines(compare.case_keys(CASES, OPS), res, why, ROUNDS)
