-- pointwise_math.lua — float32 exp, sigmoid, tanh, silu and log (the activations and
-- exponentials a model's every step runs), sin, pow(2) and clamp, against PyTorch's at its best
-- thread setting (bench/compare.lua): a million elements (a large activation) and 4096 (a small
-- model's), each result dropped as a loop's temporary is.
--   lua5.4 bench/pointwise_math.lua [REPS [ROUNDS]]     (bench/run.sh sets the paths)
local tide = require("tide")
local compare = require("bench.compare")

local REPS = tonumber(arg[1]) or 20
local ROUNDS = tonumber(arg[2]) or 3
local clock = tide.wall_time or os.clock

local OPS = { "exp", "sigmoid", "tanh", "silu", "log", "sin", "pow2", "clamp" }
local SIZES = { { "1m", 1000000 }, { "4k", 4096 } }

-- the values bench/pointwise_math.py builds: sin of the element's index, times 8 (log: its
-- absolute value plus 0.01)
local function input(n, op)
    local x = tide.arange(n, { dtype = "float32" }):sin():mul(8)
    return op == "log" and x:abs():add(0.01) or x
end

local function call(op, x)
    if op == "silu" then
        return tide.nn.functional.silu(x)
    elseif op == "pow2" then
        return x:pow(2)
    elseif op == "clamp" then
        return x:clamp(-1, 1)
    end
    return x[op](x)
end

local function run_tide()
    local out = {}
    for _, size in ipairs(SIZES) do
        for _, op in ipairs(OPS) do
            local x = input(size[2], op)
            out[op .. "_" .. size[1]] = compare.best_ms(function() return call(op, x) end, REPS,
                clock)
        end
    end
    return out
end

local res, why = compare.run { rounds = ROUNDS, tide = run_tide,
    reference = string.format("bench/pointwise_math.py %d", REPS) }
print(string.format("pointwise math: float32, fastest of %d calls per round", REPS))
local keys = {}
for _, size in ipairs(SIZES) do
    for _, op in ipairs(OPS) do
        keys[#keys + 1] = op .. "_" .. size[1]
    end
end
compare.print_lines(keys, res, why, ROUNDS)
