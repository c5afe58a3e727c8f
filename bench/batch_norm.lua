-- batch_norm.lua — nn.BatchNorm2d (the kernel rows channel_stats, channel_affine and
-- channel_grad_sums) against PyTorch's at its best thread setting (bench/compare.lua), float32
-- [32, 64, 28, 28]: the training forward, the eval forward, and a training forward and backward
-- (the input's gradient, the weight's and the bias's). Also BatchNorm1d on [256, 512].
--   lua5.4 bench/batch_norm.lua [REPS [ROUNDS]]     (bench/run.sh sets the paths)
local tide = require("tide")
local compare = require("bench.compare")

local REPS = tonumber(arg[1]) or 10
local ROUNDS = tonumber(arg[2]) or 3
local clock = tide.wall_time or os.clock

local KEYS = { "bn2d_train", "bn2d_eval", "bn2d_train_backward", "bn1d_train_backward" }

local function run_tide()
    -- bench/batch_norm.py's values: sin of the element's index
    local x = tide.arange(32 * 64 * 28 * 28, { dtype = "float32" }):sin():view(32, 64, 28, 28)
    local x1 = tide.arange(256 * 512, { dtype = "float32" }):sin():view(256, 512)
    local bn, bn1 = tide.nn.BatchNorm2d(64), tide.nn.BatchNorm1d(512)
    local xg, x1g = x:clone():requires_grad_(true), x1:clone():requires_grad_(true)
    local cases = {
        bn2d_train = function() bn:train(); return bn(x) end,
        -- inference as users write it on both sides: under no_grad (the weights require grad)
        bn2d_eval = function()
            bn:eval()
            return tide.no_grad(function() return bn(x) end)
        end,
        bn2d_train_backward = function()
            bn:train()
            bn(xg):sum():backward()
        end,
        bn1d_train_backward = function() bn1(x1g):sum():backward() end,
    }
    local out = {}
    for _, k in ipairs(KEYS) do
        out[k] = compare.best_ms(cases[k], REPS, clock)
    end
    return out
end

local res, why = compare.run { rounds = ROUNDS, tide = run_tide,
    reference = string.format("bench/batch_norm.py %d", REPS) }
print(string.format("batch norm: float32, fastest of %d calls per round", REPS))
compare.print_lines(KEYS, res, why, ROUNDS)
