-- addc_lerp.lua — float32 addcmul, addcdiv and lerp (a number weight and a tensor one), and
-- the in-place forms a hand-written optimizer or a weight EMA runs each step (v:addcmul_(g, g),
-- ema:lerp_(p, 0.001)), against PyTorch's at its best thread setting (bench/compare.lua): a
-- million elements and 4096.
--   lua5.4 bench/addc_lerp.lua [REPS [ROUNDS]]     (bench/run.sh sets the paths)
local tide = require("tide")
local compare = require("bench.compare")

local REPS = tonumber(arg[1]) or 20
local ROUNDS = tonumber(arg[2]) or 3
local clock = tide.wall_time or os.clock

local OPS = { "addcmul", "addcdiv", "lerp", "lerp_tensor", "addcmul_", "lerp_" }
local CASES = { { "1m", 1000000 }, { "4k", 4096 } }

local function inputs(c)
    -- bench/addc_lerp.py's values: sin and cos of the element's index, and their squares plus
    -- 0.5 as the divisor and the weight's source
    local i = tide.arange(c[2], { dtype = "float32" })
    local x, a = i:sin(), i:cos()
    local b = a * a + 0.5
    local w = x * x
    local v, ema = x:clone(), x:clone()
    return {
        addcmul = function() return x:addcmul(a, b, { value = 0.1 }) end,
        addcdiv = function() return x:addcdiv(a, b, { value = 0.1 }) end,
        lerp = function() return x:lerp(a, 0.3) end,
        lerp_tensor = function() return x:lerp(a, w) end,
        addcmul_ = function() return v:addcmul_(a, a, { value = 0.001 }) end,
        lerp_ = function() return ema:lerp_(a, 0.001) end,
    }
end

local res, why = compare.run { rounds = ROUNDS,
    tide = function() return compare.time_cases(CASES, OPS, inputs, REPS, clock) end,
    reference = string.format("bench/addc_lerp.py %d", REPS) }
print(string.format("addcmul, addcdiv and lerp: float32, fastest of %d calls per round", REPS))
compare.print_lines(compare.case_keys(CASES, OPS), res, why, ROUNDS)
