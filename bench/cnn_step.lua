-- cnn_step.lua: one training step of a small CNN (conv 1->32 3x3, ReLU, maxpool 2, conv
-- 32->64 3x3, ReLU, maxpool 2, Linear 1600->128, ReLU, Linear 128->10) at batch 64 on 28x28
-- inputs, beside the same model in Debian's PyTorch (bench/cnn_step.py) at its best setting,
-- in rounds (bench/compare.lua). Issue 15 target: ratio <= 0.8.
--   lua5.4 bench/cnn_step.lua [ITERS [REPS [ROUNDS]]]     (bench/run.sh sets the paths)
local tide = require("tide")
local nn = require("tide.nn")
local optim = require("tide.optim")
local step_bench = require("bench.mlp_step")

local ITERS = tonumber(arg and arg[1]) or 10
local REPS = tonumber(arg and arg[2]) or 3
local ROUNDS = tonumber(arg and arg[3]) or 5

step_bench.run {
    name = "cnn_step", kind = "cnn", batches = { 64 }, iters = ITERS, reps = REPS, rounds = ROUNDS,
    make = function(batch)
        local m = nn.Sequential(nn.Conv2d(1, 32, 3), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(32, 64, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
            nn.Linear(1600, 128), nn.ReLU(), nn.Linear(128, 10))
        local x = tide.randn(batch, 1, 28, 28)
        local y = tide.rand(batch):mul(10):long():add(1)
        return m, optim.SGD(m:parameters(), { lr = 0.01, momentum = 0.9 }), x, y
    end,
    describe = "small CNN training step (fwd, cross-entropy, bwd, SGD momentum)",
}
