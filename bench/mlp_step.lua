-- mlp_step.lua: one training step (zero_grad, forward, cross-entropy, backward, SGD momentum
-- step) of an MLP 784-256-128-10 at batch 64 and 256 on the CPU, beside the same model in
-- Debian's PyTorch (bench/mlp_step.py) at its best setting, in rounds (bench/compare.lua);
-- prints "name: tide X ms, pytorch-best Y ms (setting), ratio Z" per batch size.
-- Issue 15 targets: ratio <= 0.6 at batch 64, <= 0.7 at 256.
--   lua5.4 bench/mlp_step.lua [ITERS [REPS [ROUNDS]]]     (bench/run.sh sets the paths)
-- Required as a module (bench/cnn_step.lua does), it returns the timing loop instead.
local tide = require("tide")
local nn = require("tide.nn")
local optim = require("tide.optim")
local M = {}

local compare = require("bench.compare")
local clock = tide.wall_time or os.clock

-- b = { name, kind, batches, iters, reps, rounds, make, describe }: per round, tide times every
-- batch (median of reps runs of iters steps), then the reference does the same in each setting
function M.run(b)
    tide.manual_seed(0)
    print(string.format("%s: %s, median of %d runs of %d steps per round", b.name, b.describe,
        b.reps, b.iters))
    local lossf = nn.CrossEntropyLoss()
    local steps = {}
    for _, batch in ipairs(b.batches) do
        local model, opt, x, y = b.make(batch)
        local loss
        steps[batch] = function()
            opt:zero_grad()
            loss = lossf(model(x), y)
            loss:backward()
            opt:step()
            return loss
        end
        for _ = 1, math.max(5, math.floor(b.iters / 5)) do
            steps[batch]()
        end
    end
    local function time_tide()
        local out = {}
        for _, batch in ipairs(b.batches) do
            local step, times, loss = steps[batch], {}, nil
            for _ = 1, b.reps do
                collectgarbage()
                local t0 = clock()
                for _ = 1, b.iters do
                    loss = step()
                end
                times[#times + 1] = clock() - t0
            end
            local l = loss:item()
            assert(l == l, "loss is NaN")
            out[tostring(batch)] = compare.median(times) / b.iters * 1e3
        end
        return out
    end
    local res, why = compare.run { rounds = b.rounds, tide = time_tide,
        reference = string.format("bench/%s_step.py %d %d %s", b.kind, b.iters, b.reps,
            table.concat(b.batches, " ")) }
    for _, batch in ipairs(b.batches) do
        local label = string.format("%s batch %d", b.name, batch)
        if res and res[tostring(batch)] then
            compare.print_line(label, res[tostring(batch)], "ms", 1, b.rounds)
        else
            print(string.format("%s: pytorch n/a (%s)", label, why or "no figure"))
        end
    end
end

if ... == "bench.mlp_step" then
    return M
end

local ITERS = tonumber(arg and arg[1]) or 50
local REPS = tonumber(arg and arg[2]) or 5
local ROUNDS = tonumber(arg and arg[3]) or 5

M.run {
    name = "mlp_step", kind = "mlp", batches = { 64, 256 }, iters = ITERS, reps = REPS, rounds = ROUNDS,
    make = function(batch)
        local m = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(),
            nn.Linear(128, 10))
        local x = tide.randn(batch, 784)
        local y = tide.rand(batch):mul(10):long():add(1)
        return m, optim.SGD(m:parameters(), { lr = 0.01, momentum = 0.9 }), x, y
    end,
    describe = "MLP 784-256-128-10 training step (fwd, cross-entropy, bwd, SGD momentum)",
}
