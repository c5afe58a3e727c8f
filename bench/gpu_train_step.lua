-- gpu_train_step.lua — the training steps of bench/mlp_step.lua (MLP 784-256-128-10, batch 256)
-- and bench/cnn_step.lua (small CNN on 1x28x28, batch 64) on cuda:0: zero_grad, forward,
-- cross-entropy, backward, SGD momentum step. For bench/gpu_check.sh beside
-- bench/gpu_train_step.py on the same GPU. Prints "tide_<model>_step_ms <ms>" lines, each the
-- median of REPS runs of ITERS steps (the timing loop of bench/seq_step.lua).
--   lua5.4 bench/gpu_train_step.lua [ITERS REPS [full|smoke]]   (smoke: batch 2, for the emulator)
local tide = require("tide")
local nn = require("tide.nn")
local optim = require("tide.optim")
local S = require("bench.seq_step")

local ITERS = tonumber(arg[1]) or 20
local REPS = tonumber(arg[2]) or 5
local SIZE = arg[3] or "full"
local BATCH = { full = { mlp = 256, cnn = 64 }, smoke = { mlp = 2, cnn = 2 } }

local MODELS = {
    mlp = function()
        return nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(),
            nn.Linear(128, 10)), { 784 }
    end,
    cnn = function()
        return nn.Sequential(nn.Conv2d(1, 32, 3), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(32, 64, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
            nn.Linear(1600, 128), nn.ReLU(), nn.Linear(128, 10)), { 1, 28, 28 }
    end,
}

if not tide.cuda.is_available() then
    print("no GPU: " .. tostring(tide.cuda.unavailable_reason()))
    return
end
tide.manual_seed(0)
local lossf = nn.CrossEntropyLoss()
for _, name in ipairs({ "mlp", "cnn" }) do
    local batch = BATCH[SIZE][name]
    local model, shape = MODELS[name]()
    model:to("cuda")
    local x = tide.randn(batch, table.unpack(shape)):to("cuda")
    local y = tide.rand(batch):mul(10):long():add(1):to("cuda")
    local opt = optim.SGD(model:parameters(), { lr = 0.01, momentum = 0.9 })
    local function step()
        opt:zero_grad()
        local loss = lossf(model(x), y)
        loss:backward()
        opt:step()
        return loss
    end
    for _ = 1, 5 do -- warm-up: the allocator's cache, cuBLAS's handle, the momentum buffers
        step()
    end
    print(string.format("tide_%s_step_ms %.3f", name,
        S.time_step(step, ITERS, REPS, tide.cuda.synchronize)))
end
