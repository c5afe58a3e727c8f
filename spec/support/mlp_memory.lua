-- mlp_memory.lua MODE STEPS — a small MLP's training loop under collectgarbage(MODE) ("default"
-- keeps the host's), for spec/memory_spec.lua: prints the Lua heap (KB), the most memory tide
-- had in use over the steps of the window (bytes) and the RSS (KB) after the first fifth of the
-- steps and after the last, as
--   early: heap=H mem=M rss=R
--   late: heap=H mem=M rss=R
local tide = require("tide")
local mode, steps = arg[1], tonumber(arg[2])
if mode ~= "default" then
    collectgarbage(mode)
end
tide.manual_seed(0)
local nn = tide.nn
local model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10))
local opt = tide.optim.SGD(model:parameters(), { lr = 0.01, momentum = 0.9 })
local loss_fn = nn.CrossEntropyLoss()
local x = tide.randn({ 16, 32 })
local y = tide.randint(1, 11, { 16 })

local function rss_kb()
    local f = io.open("/proc/self/statm")
    if not f then
        return 0
    end
    local _, resident = f:read("*n", "*n")
    f:close()
    return resident * 4
end

local window, most = math.floor(steps / 5), 0
for step = 1, steps do
    opt:zero_grad()
    loss_fn(model(x), y):backward()
    opt:step()
    if step <= window or step > steps - window then
        most = math.max(most, tide.memory_in_use())
    end
    if step == window or step == steps then
        io.write(string.format("%s: heap=%d mem=%d rss=%d\n", step == steps and "late" or "early",
            math.floor(collectgarbage("count")), most, rss_kb()))
        most = 0
    end
end
