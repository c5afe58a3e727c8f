-- loop_temporaries_gc.lua STEPS — memory_spec.lua's loop of large temporaries, `y = x:neg()` of
-- 4 MB, outside any backward pass, under the generational collector (lua.c's default). Prints
-- one line "full=<iterations that ran a full collection> steps=<STEPS> live=<tensor bytes alive
-- before the loop: x> max=<most memory_in_use() after an iteration>".
--
-- A full collection is seen by a sentinel, as in big_heap_gc.lua: a table made old (two minor
-- collections survived) and dropped; an old object that dies waits for a full collection, which
-- clears it from a weak table.
local steps = tonumber(arg[1])
collectgarbage("generational")
local tide = require("tide")

local x = tide.arange(1000000, { dtype = "float32" })
local live, most = tide.memory_in_use(), 0
-- the sentinel, made old once; each time a full collection clears it, another (the two minor
-- collections that age it free nothing of the loop's: it is outside tide's pacing)
local seen = setmetatable({}, { __mode = "v" })
local function plant()
    local sentinel = {}
    seen[1] = sentinel
    collectgarbage("step", 0) -- generational: a minor collection
    collectgarbage("step", 0) -- survived two: old
end
plant()
local full = 0
for _ = 1, steps do
    local y = x:neg() -- luacheck: ignore
    if seen[1] == nil then
        full = full + 1
        plant()
    end
    most = math.max(most, tide.memory_in_use())
end
print(string.format("full=%d steps=%d live=%d max=%d", full, steps, live, most))
