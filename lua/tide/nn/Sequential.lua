-- nn.Sequential(m1, m2, ...) or Sequential({m1, m2, ...}): children named "1", "2", ...
local raise = require("tide.autograd").raise
local Module = require("tide.nn.Module")

local Sequential = Module:extend("Sequential")
Sequential.__index = Module.list_index -- seq[-1]: the last layer

function Sequential:init(...)
    local mods = { ... }
    if select("#", ...) == 1 and type(mods[1]) == "table" and not Module.is_module(mods[1]) then
        mods = mods[1]
    end
    rawset(self, "n", 0)
    for i = 1, #mods do
        self:add(mods[i])
    end
end

function Sequential:add(m)
    if not Module.is_module(m) then
        raise("tide: Sequential: expected a Module, got " .. type(m))
    end
    local n = self.n + 1
    rawset(self, "n", n)
    self:add_module(tostring(n), m)
    rawset(self, n, m) -- seq[i] reaches the i-th layer
    return self
end

function Sequential:forward(x, ...)
    for i = 1, self.n do
        x = self[i](x, ...)
    end
    return x
end

function Sequential.__len(self)
    return self.n
end

return Sequential
