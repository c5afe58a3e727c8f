-- seq_step.lua: one training step (zero_grad, forward, MSE loss, backward, Adam step) of the
-- sequence models of issue 13, beside the same models in Debian's PyTorch (bench/seq_step.py)
-- at its best setting, in rounds (bench/compare.lua):
--   lstm         nn.LSTM(256, 256, 2 layers) on (seq 64, batch 32, 256)
--   transformer  nn.TransformerEncoder of 4 layers (d_model 128, 4 heads, dim_feedforward 512,
--                dropout 0, batch_first) on (batch 32, seq 128, 128) with a causal mask
-- Issue 13 targets: ratio <= 1.0 for both.
--   lua5.4 bench/seq_step.lua [ITERS [REPS [ROUNDS]]]     (bench/run.sh sets the paths)
-- Required as a module (bench/gpu_seq_step.lua does), it returns the models and the timing loop.
local tide = require("tide")
local nn = require("tide.nn")
local optim = require("tide.optim")
local M = {}

local clock = tide.wall_time or os.clock

-- the sizes: "full" (the issue's) or "smoke" (toy sizes for the gpu-check rehearsal)
M.SIZES = {
    full = { lstm = { input = 256, hidden = 256, layers = 2, seq = 64, batch = 32 },
        transformer = { d = 128, heads = 4, layers = 4, ff = 512, seq = 128, batch = 32 } },
    smoke = { lstm = { input = 8, hidden = 8, layers = 2, seq = 4, batch = 2 },
        transformer = { d = 8, heads = 2, layers = 1, ff = 16, seq = 4, batch = 2 } },
}

-- name, size table, device -> a step function returning the loss
function M.make_step(name, s, device)
    local model, x, target, mask
    if name == "lstm" then
        model = nn.LSTM(s.input, s.hidden, { num_layers = s.layers })
        x = tide.randn(s.seq, s.batch, s.input)
        target = tide.randn(s.seq, s.batch, s.hidden)
    else
        local layer = nn.TransformerEncoderLayer(s.d, s.heads,
            { dim_feedforward = s.ff, dropout = 0, batch_first = true })
        model = nn.TransformerEncoder(layer, s.layers)
        x = tide.randn(s.batch, s.seq, s.d)
        target = tide.randn(s.batch, s.seq, s.d)
        mask = tide.full({ s.seq, s.seq }, -math.huge):triu(1)
    end
    if device ~= "cpu" then
        model:to(device)
        x, target = x:to(device), target:to(device)
        mask = mask and mask:to(device)
    end
    local opt = optim.Adam(model:parameters(), { lr = 1e-3 })
    local lossf = nn.MSELoss()
    return function()
        opt:zero_grad()
        local y = model(x, mask)
        local loss = lossf(y, target)
        loss:backward()
        opt:step()
        return loss
    end
end

-- median ms per step of reps runs of iters steps (sync() drains the device before each clock)
function M.time_step(step, iters, reps, sync)
    sync = sync or function() end
    local times, loss = {}, nil
    for _ = 1, reps do
        collectgarbage()
        sync()
        local t0 = clock()
        for _ = 1, iters do
            loss = step()
        end
        sync()
        times[#times + 1] = clock() - t0
    end
    local l = loss:item()
    assert(l == l, "loss is NaN")
    table.sort(times)
    local n = #times
    local med = n % 2 == 1 and times[(n + 1) // 2] or (times[n // 2] + times[n // 2 + 1]) / 2
    return med / iters * 1e3
end

if ... == "bench.seq_step" then
    return M
end

local compare = require("bench.compare")
local ITERS = tonumber(arg and arg[1]) or 1
local REPS = tonumber(arg and arg[2]) or 3
local ROUNDS = tonumber(arg and arg[3]) or 3

tide.manual_seed(0)
print(string.format("seq_step: LSTM 2x256 (seq 64, batch 32) and causal transformer 4 layers, "
    .. "4 heads, width 128 (seq 128, batch 32), fwd + MSE + bwd + Adam, median of %d runs of "
    .. "%d steps per round", REPS, ITERS))
local steps = {}
for _, name in ipairs({ "lstm", "transformer" }) do
    steps[name] = M.make_step(name, M.SIZES.full[name], "cpu")
    for _ = 1, 2 do
        steps[name]()
    end
end
local res, why = compare.run { rounds = ROUNDS,
    tide = function()
        return { lstm = M.time_step(steps.lstm, ITERS, REPS),
            transformer = M.time_step(steps.transformer, ITERS, REPS) }
    end,
    reference = string.format("bench/seq_step.py %d %d full cpu", ITERS, REPS) }
for _, name in ipairs({ "lstm", "transformer" }) do
    local label = "seq_step " .. name
    if res and res[name] then
        compare.print_line(label, res[name], "ms", 1, ROUNDS)
    else
        print(string.format("%s: pytorch n/a (%s)", label, why or "no figure"))
    end
end
