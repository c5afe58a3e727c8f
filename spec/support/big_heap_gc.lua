-- big_heap_gc.lua STEPS — memory_spec.lua's host with a big Lua heap: 32 MB of the host's own
-- tables alive (a game's, busted's), the generational collector (lua.c's default), and an MLP
-- whose backward pass lets go of enough tensors for a minor collection during it (lua/gc.c:
-- tl_gc_dropped). Prints one line "full=<steps that ran a full collection> steps=<STEPS>
-- live=<tensor bytes alive between steps> max=<most memory_in_use() after a step>".
--
-- A full collection is seen by a sentinel: a table made old (two minor collections survived),
-- then dropped; an old object that dies waits for a full collection, which clears it from a
-- weak table.
local steps = tonumber(arg[1])
collectgarbage("generational")
local tide = require("tide")
local nn, optim = tide.nn, tide.optim

local host = {}
for i = 1, 200000 do
    host[i] = { i, tostring(i) }
end

tide.manual_seed(0)
local model = nn.Sequential(nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(),
    nn.Linear(1024, 10))
local opt = optim.SGD(model:parameters(), { lr = 0.01 })
local lossf = nn.CrossEntropyLoss()
local x = tide.randn(512, 1024)
local y = tide.randint(1, 11, { 512 })
local function step()
    opt:zero_grad()
    lossf(model(x), y):backward()
    opt:step()
end
for _ = 1, 3 do
    step()
end
collectgarbage()
local live, most = tide.memory_in_use(), 0

local full = 0
local seen = setmetatable({}, { __mode = "v" })
for _ = 1, steps do
    local sentinel = {}
    seen[1] = sentinel
    collectgarbage("step", 0) -- generational: a minor collection
    collectgarbage("step", 0) -- survived two: old
    sentinel = nil -- luacheck: ignore
    step()
    if seen[1] == nil then
        full = full + 1
    end
    most = math.max(most, tide.memory_in_use())
end
print(string.format("full=%d steps=%d live=%d max=%d heap_kb=%.0f", full, steps, live, most,
    collectgarbage("count")))
assert(#host == 200000)
