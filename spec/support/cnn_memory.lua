-- cnn_memory.lua MODE STEPS [SIDE [BATCH]] — the training loop of memory_spec.lua, run in a process of its
-- own so that the Lua heap is the loop's own (busted's would set the collector's pace):
-- collectgarbage(MODE), a small CNN trained STEPS steps with SGD after a warmup on BATCH (16)
-- images of SIDE x SIDE (16), then one line
--   live=<tensor bytes after the warmup and a full collection> max=<most memory_in_use() seen
--   after a step> faults=<minor page faults per step> rss_kb=<VmRSS growth over the loop>
--   backward=<most memory_in_use() seen right after a backward pass>
local mode, steps = arg[1], tonumber(arg[2])
local side, batch = tonumber(arg[3] or 16), tonumber(arg[4] or 16)
if mode ~= "default" then -- "default": the host's only collector (5.3, 5.1, LuaJIT)
    collectgarbage(mode)
end
local tide = require("tide")
local nn, optim = tide.nn, tide.optim

-- minor page faults (field 10 of /proc/self/stat) and VmRSS in kB; nil where /proc is absent
local function faults()
    local f = io.open("/proc/self/stat")
    if not f then
        return nil
    end
    local s = f:read("*a"):gsub("^.*%) ", "") -- the name may hold spaces; fields from 3 on
    f:close()
    local n = 2
    for w in s:gmatch("%S+") do
        n = n + 1
        if n == 10 then
            return tonumber(w)
        end
    end
end
local function rss()
    local f = io.open("/proc/self/status")
    if not f then
        return nil
    end
    local kb = tonumber(f:read("*a"):match("VmRSS:%s*(%d+)"))
    f:close()
    return kb
end

tide.manual_seed(0)
local pooled = math.floor((side - 2) / 2)
local model = nn.Sequential(nn.Conv2d(1, 16, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
    nn.Linear(16 * pooled * pooled, 256), nn.ReLU(), nn.Linear(256, 10))
local opt = optim.SGD(model:parameters(), { lr = 0.01, momentum = 0.9 })
local lossf = nn.CrossEntropyLoss()
local x = tide.randn(batch, 1, side, side)
local y = tide.rand(batch):mul(10):long():add(1) -- classes 1..10
local after_backward = 0
local function step()
    opt:zero_grad()
    local loss = lossf(model(x), y)
    loss:backward()
    after_backward = math.max(after_backward, tide.memory_in_use())
    opt:step()
end

for _ = 1, 5 do
    step()
end
collectgarbage()
collectgarbage()
local live, most = tide.memory_in_use(), 0
after_backward = 0
local f0, r0 = faults(), rss()
for _ = 1, steps do
    step()
    most = math.max(most, tide.memory_in_use())
end
local f1, r1 = faults(), rss()
print(string.format("live=%d max=%d faults=%.1f rss_kb=%d backward=%d", live, most,
    f0 and (f1 - f0) / steps or -1, r0 and r1 - r0 or -1, after_backward))
