-- gpu_seq_step.lua — bench/seq_step.lua's training steps (LSTM 2x256, causal transformer 4x128)
-- on cuda:0, for bench/gpu_check.sh beside bench/seq_step.py on the same GPU. Prints
-- "tide_<model>_step_ms <ms>" lines.   lua5.4 bench/gpu_seq_step.lua [ITERS REPS [smoke]]
local tide = require("tide")
local S = require("bench.seq_step")

local ITERS = tonumber(arg[1]) or 10
local REPS = tonumber(arg[2]) or 5
local SIZE = arg[3] or "full"

if not tide.cuda.is_available() then
    print("no GPU: " .. tostring(tide.cuda.unavailable_reason()))
    return
end
tide.manual_seed(0)
for _, name in ipairs({ "lstm", "transformer" }) do
    local step = S.make_step(name, S.SIZES[SIZE][name], "cuda")
    for _ = 1, 2 do
        step()
    end
    print(string.format("tide_%s_step_ms %.3f", name,
        S.time_step(step, ITERS, REPS, tide.cuda.synchronize)))
end
