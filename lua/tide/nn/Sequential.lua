-- nn.Sequential(m1, m2, ...) or Sequential({m1, m2, ...}): children named "1", "2", ...
-- Edited as PyTorch 1.13's: s:append(m), s:extend({m, ...}), s:insert(i, m), s:pop(i) (i
-- 1-based, negative from the end).
local compat = require("tide._compat")
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

Sequential.append = Sequential.add -- PyTorch's name

-- the modules of a list of modules, or of a Sequential or ModuleList, all checked first (a
-- failed extend changes nothing)
local function modules_of(mods, who)
    local list = {}
    if Module.is_module(mods) then
        local n = rawget(mods, "n")
        if n == nil then
            raise(string.format("tide: %s: expected a list of modules (or a Sequential or " ..
                "ModuleList), got a %s; append one module with append", who, mods.__name))
        end
        for i = 1, n do
            list[i] = rawget(mods, i)
        end
        return list
    end
    for i = 1, #mods do
        if not Module.is_module(mods[i]) then
            raise(string.format("tide: %s: entry %d is a %s, expected a Module", who, i,
                type(mods[i])))
        end
        list[i] = mods[i]
    end
    return list
end

--- s:extend(mods) appends each module of mods (PyTorch's extend) and returns s. On a class
--- it stays Module.extend: nn.Sequential:extend("MySeq") makes a subclass.
function Sequential:extend(mods, ...)
    if not Module.is_module(self) or type(mods) ~= "table" then
        return Module.extend(self, mods, ...)
    end
    if select("#", ...) > 0 then
        raise("tide: Sequential:extend: expected one list of modules, got " ..
            (select("#", ...) + 1) .. " arguments")
    end
    for _, m in ipairs(modules_of(mods, "Sequential:extend")) do
        self:add(m)
    end
    return self
end

-- i as a position 1..last (negative from the end: -1 is the n-th), else raises
local function position(self, who, i, last)
    local n = self.n
    if compat.is_integer(i) and i < 0 and i >= -n then
        i = n + 1 + i
    end
    if not compat.is_integer(i) or i < 1 or i > last then
        raise(string.format("tide: Sequential:%s: index %s out of range 1..%d (or -%d..-1)",
            who, tostring(i), last, n))
    end
    return i
end

-- puts m as child i (its name "i" and s[i])
local function place(self, i, m)
    rawset(self, i, m)
    rawset(self, tostring(i), m)
end

--- s:insert(i, m): m becomes the i-th module (1 <= i <= #s + 1, or -#s..-1: before that one);
--- the later ones move up. Returns s.
function Sequential:insert(i, m)
    i = position(self, "insert", i, self.n + 1)
    if not Module.is_module(m) then
        raise("tide: Sequential:insert: expected a Module, got " .. type(m))
    end
    local n = self.n
    self:add(m) -- a new child "n+1", then the modules shift into place
    for k = n + 1, i + 1, -1 do
        place(self, k, rawget(self, k - 1))
    end
    place(self, i, m)
    return self
end

--- s:pop(i): removes the i-th module (negative from the end) and returns it; the later ones
--- move down, renumbered as PyTorch's
function Sequential:pop(i)
    i = position(self, "pop", i, self.n)
    local n = self.n
    local m = rawget(self, i)
    for k = i, n - 1 do
        place(self, k, rawget(self, k + 1))
    end
    self:_unregister(tostring(n))
    rawset(self, n, nil)
    rawset(self, "n", n - 1)
    return m
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
