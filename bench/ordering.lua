-- ordering.lua — sort and the order statistics against PyTorch's at its best thread setting
-- (bench/compare.lua): sort along the last dim of [1000, 1000] and of 10^6 values, topk of
-- k = 10 along the last dim of [1000, 1000] and of k = 100 over 10^6 values, kthvalue and median
-- along the last dim, median and nanmedian of the whole 10^6, and sorted unique of 10^6 int64
-- values with counts (and with inverse), and with inverse of 10^6 int64 and float32 values in
-- 0..999. float32 values.
--   lua5.4 bench/ordering.lua [REPS [ROUNDS]]     (bench/run.sh sets the paths)
local tide = require("tide")
local compare = require("bench.compare")

local REPS = tonumber(arg[1]) or 10
local ROUNDS = tonumber(arg[2]) or 3
local clock = tide.wall_time or os.clock

local KEYS = { "sort_rows", "sort_1m", "topk_rows", "topk_1m", "kthvalue_rows", "median_rows", "median_1m",
    "nanmedian_rows", "nanmedian_1m", "unique_counts", "unique_inverse", "unique_few_i64",
    "unique_few_f32" }

local function run_tide()
    -- bench/ordering.py's values: sin of the element's index; unique's: i * 7919 mod 100003
    -- (and mod 1000)
    local flat = tide.arange(1000000, { dtype = "float32" }):sin()
    local rows = flat:view(1000, 1000)
    local ints = tide.arange(1000000, { dtype = "int64" }):mul(7919):remainder(100003)
    local few = tide.arange(1000000, { dtype = "int64" }):mul(7919):remainder(1000)
    local few_f32 = few:to("float32")
    local cases = {
        sort_rows = function() return rows:sort(2) end,
        sort_1m = function() return flat:sort() end,
        topk_rows = function() return rows:topk(10, 2) end,
        topk_1m = function() return flat:topk(100) end,
        kthvalue_rows = function() return rows:kthvalue(500, 2) end,
        median_rows = function() return rows:median(2) end,
        median_1m = function() return flat:median() end,
        nanmedian_rows = function() return rows:nanmedian(2) end,
        nanmedian_1m = function() return flat:nanmedian() end,
        unique_counts = function() return ints:unique({ return_counts = true }) end,
        unique_inverse = function() return ints:unique({ return_inverse = true }) end,
        unique_few_i64 = function() return few:unique({ return_inverse = true }) end,
        unique_few_f32 = function() return few_f32:unique({ return_inverse = true }) end,
    }
    local out = {}
    for _, k in ipairs(KEYS) do
        out[k] = compare.best_ms(cases[k], REPS, clock)
    end
    return out
end

local res, why = compare.run { rounds = ROUNDS, tide = run_tide,
    reference = string.format("bench/ordering.py %d", REPS) }
print(string.format("ordering: fastest of %d calls per round", REPS))
compare.print_lines(KEYS, res, why, ROUNDS)
