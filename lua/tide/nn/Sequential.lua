-- nn.Sequential(m1, m2, ...) or Sequential({m1, m2, ...}): children named "1", "2", ...;
-- nn.Sequential({{"conv1", m1}, {"relu1", m2}}) names them (PyTorch's OrderedDict form).
-- Edited as PyTorch 1.13's: s:append(m), s:extend({m, ...}), s:insert(i, m), s:pop(i) (i
-- 1-based, negative from the end).
local compat = require("tide._compat")
local raise = require("tide.autograd").raise
local Module = require("tide.nn.Module")
local slots = require("tide.nn._list_slots")

local Sequential = Module:extend("Sequential")

local slice, seq_names, renumber -- below

-- seq[-1]: the last layer; seq[{{a, b}}]: a Sequential of layers a..b (PyTorch's seq[a-1:b])
function Sequential.__index(self, k)
    if type(k) == "table" then
        return slice(self, k)
    end
    if k == "_modules" then -- every walk of the children sees s[i] and s[name] agree
        return slots.names_list(self, "Sequential", seq_names, renumber)
    end
    return Module.list_index(self, k)
end

-- The layers are the children in registration order, as PyTorch's (whose Sequential runs
-- self._modules.values()): s[i] is the i-th child whatever its name, so a child added by
-- s:add_module("conv_1", m) or s.conv_1 = m is run by forward and counted by #s.
local function raw_names(self)
    return rawget(self, "_slot_names") or rawget(self, "_modules")
end

local function names_of(self)
    local names = {}
    for _, name in ipairs(raw_names(self)) do
        if rawget(self, name) ~= nil then
            names[#names + 1] = name
        end
    end
    return names
end

-- the names of slots 1..n, nil when a child was added or removed under a name (s.conv = nil)
seq_names = function(self)
    local names = names_of(self)
    return #names == rawget(self, "n") and names or nil
end

renumber = function(self)
    local n = 0
    for _, name in ipairs(raw_names(self)) do
        local m = rawget(self, name)
        if m ~= nil then
            n = n + 1
            rawset(self, n, m)
        end
    end
    for k = n + 1, rawget(self, "n") or 0 do
        rawset(self, k, nil)
    end
    rawset(self, "n", n)
    slots.record(self)
end

--- s:add_module(name, m) (and register_module): as Module's, and m becomes the next layer
--- (or keeps its place when it replaces the child of that name), as in PyTorch
function Sequential:add_module(name, m)
    Module.add_module(self, name, m)
    renumber(self)
    return m
end

Sequential.register_module = Sequential.add_module

-- s.name = module registers a layer (Module's rule) and places it; s[i] = v past the layers
-- raises (an existing s[i] is the layer itself: replacing it is s:add_module(name, m) under
-- that layer's name)
function Sequential.__newindex(self, k, v)
    if compat.is_integer(k) and rawget(self, "n") then
        raise(string.format("tide: Sequential: s[%d] = v: index out of range 1..%d; add a " ..
            "layer with s:append(m)", k, self.n))
    end
    Module.__newindex(self, k, v)
    if Module.is_module(v) and rawget(self, "n") then
        renumber(self)
    end
end

-- PyTorch's nn.Sequential(OrderedDict([("conv1", m1), ("relu1", m2)])) is a list of {name,
-- module} pairs: nn.Sequential({{"conv1", m1}, {"relu1", m2}}); all checked before any is added
local function named_pairs(list)
    for i = 1, #list do
        local e = list[i]
        if type(e) ~= "table" or Module.is_module(e) or type(e[1]) ~= "string" or
            not Module.is_module(e[2]) or e[3] ~= nil then
            raise(string.format("tide: Sequential: entry %d is not a {name, module} pair; " ..
                "give all modules, or all {name, module} pairs (PyTorch's OrderedDict)", i))
        end
    end
    return list
end

function Sequential:init(...)
    local mods = { ... }
    slots.hide(self)
    rawset(self, "n", 0)
    if select("#", ...) == 1 and type(mods[1]) == "table" and not Module.is_module(mods[1]) then
        mods = mods[1]
        local n = #mods
        for k in pairs(mods) do
            if not (compat.is_integer(k) and k >= 1 and k <= n) then
                -- {conv1 = m1, relu1 = m2}: a Lua table keeps no order
                raise("tide: Sequential: got a table with the key " .. tostring(k) .. "; a " ..
                    "Lua table keeps no order, so named layers are a list of {name, module} " ..
                    "pairs (PyTorch's OrderedDict): nn.Sequential({{\"conv1\", m1}, " ..
                    "{\"relu1\", m2}})")
            end
        end
        if type(mods[1]) == "table" and not Module.is_module(mods[1]) then
            for _, e in ipairs(named_pairs(mods)) do
                self:add_module(e[1], e[2])
            end
            return
        end
    end
    for i = 1, #mods do
        self:add(mods[i])
    end
end

function Sequential:add(m)
    if not Module.is_module(m) then
        raise("tide: Sequential: expected a Module, got " .. type(m))
    end
    -- the name PyTorch's append gives (str(len(self))), 1-based
    self:add_module(tostring(self.n + 1), m) -- seq[i] reaches the i-th layer
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
    return slots.position(self.n, "Sequential:" .. who, i, last)
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
    local names = names_of(self)
    for k = 1, self.n do
        if names[k] ~= tostring(k) then
            -- PyTorch's insert moves the children named str(k) and raises KeyError here
            local name = names[k]
            raise(string.format("tide: Sequential:insert: layer %d is named \"%s\", not \"%d\"; " ..
                "insert renumbers layers named by their positions; build a new nn.Sequential " ..
                "(or append)", k, tostring(name), k))
        end
    end
    local n = self.n
    self:add(m) -- a new child "n+1", then the modules shift into place
    for k = n + 1, i + 1, -1 do
        place(self, k, rawget(self, k - 1))
    end
    place(self, i, m)
    slots.record(self)
    return self
end

--- s:pop(i): removes the i-th module (negative from the end) and returns it; the later ones
--- move down, renumbered as PyTorch's
function Sequential:pop(i)
    i = position(self, "pop", i, self.n)
    local n = self.n
    local m = rawget(self, i)
    local rest = {}
    for k = 1, n do
        if k ~= i then
            rest[#rest + 1] = rawget(self, k)
        end
    end
    -- PyTorch's del s[i]: the others renamed "1".."n-1" in their order (whatever their names)
    local names = {}
    for k, name in ipairs(self._modules) do
        names[k] = name
    end
    slots.busy(self, function()
        for _, name in ipairs(names) do
            self:_unregister(name)
        end
        for k = 1, n do
            rawset(self, k, nil)
        end
        rawset(self, "n", 0)
        for k = 1, #rest do
            Module.add_module(self, tostring(k), rest[k])
        end
    end)
    renumber(self)
    return m
end

-- s[{{a, b}}], s[{{a, b, step}}], s[{{a}}], s[{{}}]: a new Sequential of those layers under
-- their names (PyTorch's s[a-1:b:step]; Module.list_slice)
slice = function(self, key)
    -- PyTorch's self.__class__(...): a subclass's slice is that subclass (its forward kept), unless
    -- it has its own init (that may take other arguments)
    local cls = getmetatable(self)
    local out = (cls ~= Sequential and cls.init == Sequential.init) and cls() or Sequential()
    local names = names_of(self)
    for _, k in ipairs(Module.list_slice(self, key, "Sequential", "s",
        "PyTorch's s[:i] is s[{{1, i}}]")) do
        Module.add_module(out, names[k], rawget(self, k))
    end
    renumber(out)
    return out
end

-- the last layer's results all come back (PyTorch's returns an MDN head's (pi, sigma, mu) tuple)
function Sequential:forward(x, ...)
    slots.sync(self, "Sequential", seq_names, renumber)
    local n = self.n
    for i = 1, n - 1 do
        x = self[i](x, ...)
    end
    if n == 0 then
        return x
    end
    return self[n](x, ...)
end

function Sequential.__len(self)
    return self.n
end

local function seq_layers(s)
    slots.sync(s, "Sequential", seq_names, renumber)
    local list = {}
    for i = 1, s.n do
        list[i] = s[i]
    end
    return list
end

-- a + b: a new Sequential of a's layers then b's (PyTorch 1.13's __add__; b must be a Sequential)
function Sequential.__add(a, b)
    local function is_seq(x)
        return Module.is_module(x) and rawget(x, "n") ~= nil and x.append == Sequential.append
    end
    if not is_seq(a) or not is_seq(b) then
        local other = is_seq(a) and b or a
        raise("tide: Sequential +: add operator supports only objects of Sequential class, but " ..
            (Module.is_module(other) and ("a " .. tostring(other.__name or "Module")) or
            type(other)) .. " is given")
    end
    local ret = Sequential()
    for _, s in ipairs({ a, b }) do
        for _, layer in ipairs(seq_layers(s)) do
            ret:append(layer)
        end
    end
    return ret
end

-- s * n and n * s: a new Sequential of s's layers n times over, the same modules (PyTorch 1.13's
-- __mul__/__rmul__; n a positive integer)
function Sequential.__mul(a, b)
    local s, n = a, b
    if not Module.is_module(a) then s, n = b, a end
    if not compat.is_integer(n) then
        raise("tide: Sequential *: unsupported operand type(s) for *: 'Sequential' and '" ..
            (Module.is_module(n) and "Module" or type(n)) .. "'; expected an integer count")
    end
    if n <= 0 then
        raise(string.format("tide: Sequential *: Non-positive multiplication factor %d for " ..
            "Sequential", n))
    end
    local layers = seq_layers(s)
    local combined = Sequential()
    local offset = 0
    for _ = 1, n do
        for _, module in ipairs(layers) do
            offset = offset + 1
            combined:add_module(tostring(offset), module)
        end
    end
    return combined
end

return Sequential
