-- cnn_memory.lua — issue 15: "peak memory of the CNN training loop no higher than PyTorch's".
-- The small CNN of bench/cnn_step.lua (batch 64, SGD momentum) trains STEPS steps in a fresh
-- process for each side: this one for tide (as a user runs it), bench/cnn_memory.py for PyTorch
-- (its thread setting: the one of 1..nproc that makes it fastest on the same loop is not the
-- question here, so it runs at each and the smallest figure is kept). Reported per side:
-- resident set before the first step (interpreter, libraries, model, batch), the peak (VmHWM)
-- after the loop, and their difference — the loop's own memory at its worst, the comparable
-- figure (PyTorch's libraries alone map hundreds of MB tide's process never has).
--   lua5.4 bench/cnn_memory.lua [STEPS (30)]
local tide = require("tide")
local nn = require("tide.nn")
local optim = require("tide.optim")
local compare = require("bench.compare")

local STEPS = tonumber(arg and arg[1]) or 30

local function status_kb(field)
    local f = assert(io.open("/proc/self/status", "r"))
    local s = f:read("*a")
    f:close()
    return tonumber(s:match(field .. ":%s*(%d+)")) or 0
end

if not io.open("/proc/self/status", "r") then
    print("cnn_memory: skipped (no /proc/self/status)")
    os.exit(0)
end

tide.manual_seed(0)
local m = nn.Sequential(nn.Conv2d(1, 32, 3), nn.ReLU(), nn.MaxPool2d(2),
    nn.Conv2d(32, 64, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
    nn.Linear(1600, 128), nn.ReLU(), nn.Linear(128, 10))
local opt = optim.SGD(m:parameters(), { lr = 0.01, momentum = 0.9 })
local crit = nn.CrossEntropyLoss()
local x = tide.randn(64, 1, 28, 28)
local y = tide.rand(64):mul(10):long():add(1)
local base = status_kb("VmRSS")
local loss
for _ = 1, STEPS do
    opt:zero_grad()
    loss = crit(m(x), y)
    loss:backward()
    opt:step()
end
assert(loss:item() == loss:item(), "loss is NaN")
local peak = status_kb("VmHWM")
local mine = { base = base, peak = peak, loop = peak - base }

local best
for _, s in ipairs(compare.settings()) do
    local r, out = compare.run_reference("bench/cnn_memory.py " .. STEPS, s)
    if not r then
        print("cnn_memory: the PyTorch reference failed:\n" .. out)
        os.exit(1)
    end
    if not best or r.loop < best.loop then
        best = r
        best.setting = compare.describe(s)
    end
end

print(string.format("cnn_memory: small CNN training loop, batch 64, %d steps (resident set, MB)",
    STEPS))
for _, k in ipairs({ "base", "peak", "loop" }) do
    print(string.format("  %-5s tide %8.1f   pytorch %8.1f   ratio %.2f", k, mine[k] / 1024,
        best[k] / 1024, mine[k] / math.max(best[k], 1)))
end
print(string.format("  (PyTorch at %s, its smallest loop figure)", best.setting))
print(string.format("  target: the loop's memory <= PyTorch's; reached %.2fx",
    mine.loop / math.max(best.loop, 1)))
