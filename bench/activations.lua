-- activations.lua — nn.functional's activations (the kernel rows activation and
-- activation_backward) against PyTorch's at its best thread setting (bench/compare.lua): a
-- million float32 elements, the forward alone and the forward with its gradient
-- (autograd.grad of the result against a given gradient, so nothing accumulates).
--   lua5.4 bench/activations.lua [REPS [ROUNDS]]     (bench/run.sh sets the paths)
local tide = require("tide")
local compare = require("bench.compare")
local F = tide.nn.functional

local REPS = tonumber(arg[1]) or 10
local ROUNDS = tonumber(arg[2]) or 3
local clock = tide.wall_time or os.clock
local N = 1000000

-- name and call, in bench/activations.py's order and spelling
local ACTS = {
    { "hardswish", F.hardswish }, { "hardsigmoid", F.hardsigmoid }, { "elu", F.elu },
    { "selu", F.selu }, { "celu", F.celu }, { "leaky_relu", F.leaky_relu },
    { "relu6", F.relu6 }, { "hardtanh", F.hardtanh }, { "softplus", F.softplus },
    { "silu", F.silu }, { "mish", F.mish }, { "logsigmoid", F.logsigmoid },
    { "softsign", F.softsign }, { "tanhshrink", F.tanhshrink }, { "softshrink", F.softshrink },
    { "hardshrink", F.hardshrink },
    { "threshold", function(x) return F.threshold(x, 0.5, -1) end },
}

-- the values bench/activations.py builds: sin of the element's index, times 8
local function input()
    return tide.arange(N, { dtype = "float32" }):sin():mul(8)
end

local function run_tide()
    local out = {}
    local x, g = input(), input():cos()
    local xg = input():requires_grad_(true)
    for _, a in ipairs(ACTS) do
        local f = a[2]
        out[a[1] .. "_fwd"] = compare.best_ms(function() return f(x) end, REPS, clock)
        out[a[1] .. "_fwdbwd"] = compare.best_ms(function()
            return tide.autograd.grad({ f(xg) }, { xg }, { g })[1]
        end, REPS, clock)
    end
    return out
end

local res, why = compare.run { rounds = ROUNDS, tide = run_tide,
    reference = string.format("bench/activations.py %d", REPS) }
print(string.format("activations: 10^6 float32, fastest of %d calls per round", REPS))
local keys = {}
for _, a in ipairs(ACTS) do
    keys[#keys + 1] = a[1] .. "_fwd"
    keys[#keys + 1] = a[1] .. "_fwdbwd"
end
compare.print_lines(keys, res, why, ROUNDS)
