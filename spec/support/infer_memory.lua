-- infer_memory.lua MODE STEPS — an inference loop for memory_spec.lua, in a process of its own
-- (the Lua heap is the loop's): collectgarbage(MODE), an MLP of 1024-wide layers run under
-- no_grad on batches of 256 (1 MB activations, 8 a step), then one line
--   live=<tensor bytes after a warmup and a full collection> max=<most memory_in_use() seen>
local mode, steps = arg[1], tonumber(arg[2])
if mode ~= "default" then
    collectgarbage(mode)
end
local tide = require("tide")
local nn = tide.nn

tide.manual_seed(0)
local model = nn.Sequential(nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(),
    nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU())
local x = tide.randn(256, 1024)
local out
local function step()
    tide.no_grad(function()
        out = model(x)
    end)
end
step()
collectgarbage()
collectgarbage()
local live, most = tide.memory_in_use(), 0
for _ = 1, steps do
    step()
    most = math.max(most, tide.memory_in_use())
end
print(string.format("live=%d max=%d", live, most))
