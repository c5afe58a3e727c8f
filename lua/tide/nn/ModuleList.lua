-- nn.ModuleList({m1, m2, ...}): a list of modules, registered as children named "1", "2", ...
-- (as Sequential's, so state_dict keys read "layers.1.weight"). ml[i], #ml and ipairs(ml)
-- reach them; it has no forward: the owner decides how to call them.
local compat = require("tide._compat")
local raise = require("tide.autograd").raise
local Module = require("tide.nn.Module")
local slots = require("tide.nn._list_slots")

local ModuleList = Module:extend("ModuleList")

local slice -- below

-- the names of slots 1..n: "1".."n"
local function list_names(self)
    local names = {}
    for i = 1, rawget(self, "n") do
        names[i] = tostring(i)
    end
    return names
end

-- ml[-1]: the last module; ml[{{a, b}}]: a ModuleList of modules a..b (PyTorch's ml[a-1:b])
function ModuleList.__index(self, k)
    if type(k) == "table" then
        return slice(self, k)
    end
    if k == "_modules" then -- ml[i] = m and ml["i"] = m both replace module i (tide.nn._list_slots)
        return slots.names_list(self, "ModuleList", list_names, function() end)
    end
    return Module.list_index(self, k)
end

local function check(m, who)
    if not Module.is_module(m) then
        raise("tide: ModuleList:" .. who .. ": expected a Module, got " .. type(m))
    end
end

function ModuleList:init(mods)
    if mods ~= nil and (type(mods) ~= "table" or Module.is_module(mods)) then
        raise("tide: ModuleList: expected a list of modules such as {nn.Linear(2, 2)}, got " ..
            (Module.is_module(mods) and "a Module" or type(mods)))
    end
    slots.hide(self)
    rawset(self, "n", 0)
    for i = 1, #(mods or {}) do
        check(mods[i], "init")
    end
    for i = 1, #(mods or {}) do
        self:append(mods[i])
    end
end

function ModuleList:append(m)
    check(m, "append")
    local n = self.n + 1
    rawset(self, "n", n)
    self:add_module(tostring(n), m)
    rawset(self, n, m)
    slots.record(self)
    return self
end

--- ml:extend(mods) appends each module of mods (PyTorch's extend) and returns ml. On a class
--- it stays Module.extend: nn.ModuleList:extend("BlockChunk") makes a subclass (PyTorch's
--- class BlockChunk(nn.ModuleList)).
function ModuleList:extend(mods, ...)
    if not Module.is_module(self) then
        return Module.extend(self, mods, ...)
    end
    if type(mods) ~= "table" or (Module.is_module(mods) and rawget(mods, "n") == nil) then
        raise("tide: ModuleList:extend: expected a list of modules, got " ..
            (Module.is_module(mods) and "a Module" or type(mods)))
    end
    if Module.is_module(mods) then -- PyTorch's extend takes any iterable of modules
        local list = {}
        for i = 1, rawget(mods, "n") do
            list[i] = rawget(mods, i)
        end
        mods = list
    end
    for i = 1, #mods do
        check(mods[i], "extend")
    end
    for i = 1, #mods do
        self:append(mods[i])
    end
    return self
end

-- insert(i, m): m becomes the i-th module (1 <= i <= #ml + 1); the later ones move up
function ModuleList:insert(i, m)
    local n = self.n
    if not compat.is_integer(i) or i < 1 or i > n + 1 then
        raise(string.format("tide: ModuleList:insert: index %s out of range 1..%d", tostring(i),
            n + 1))
    end
    check(m, "insert")
    self:append(m) -- a new slot "n+1", then shift the modules into place
    for k = n + 1, i + 1, -1 do
        local prev = rawget(self, k - 1)
        rawset(self, k, prev)
        rawset(self, tostring(k), prev)
    end
    rawset(self, i, m)
    rawset(self, tostring(i), m)
    slots.record(self)
    return self
end

--- ml:pop(i): removes the i-th module (negative from the end) and returns it; the later ones
--- move down, renumbered "1".."n-1" (PyTorch 1.13's pop, its del ml[i])
function ModuleList:pop(i)
    local n = self.n
    i = slots.position(n, "ModuleList:pop", i, n)
    local m = rawget(self, i)
    slots.busy(self, function()
        for k = i, n - 1 do
            local nxt = rawget(self, k + 1)
            rawset(self, k, nxt)
            rawset(self, tostring(k), nxt)
        end
        rawset(self, n, nil)
        self:_unregister(tostring(n))
        rawset(self, "n", n - 1)
    end)
    slots.record(self)
    return m
end

-- ml[{{a, b}}], ml[{{a, b, step}}], ml[{{a}}], ml[{{}}]: a new ModuleList of those modules,
-- renumbered "1".."k" (PyTorch's ml[a-1:b:step]; Module.list_slice); of a subclass's list without
-- its own init, that subclass (PyTorch's self.__class__)
slice = function(self, key)
    local list = {}
    for _, k in ipairs(Module.list_slice(self, key, "ModuleList", "ml",
        "PyTorch's ml[:-1] is ml[{{1, -2}}]")) do
        list[#list + 1] = rawget(self, k)
    end
    -- PyTorch's self.__class__(...): a subclass's slice is that subclass (class
    -- BlockChunk(nn.ModuleList) keeps its forward), unless it has its own init (that may take
    -- other arguments)
    local cls = getmetatable(self)
    if cls ~= ModuleList and cls.init == ModuleList.init then
        return cls(list)
    end
    return ModuleList(list)
end

function ModuleList:forward()
    raise("tide: ModuleList: has no forward; call its modules (for _, m in ipairs(list) do ...)")
end

function ModuleList.__len(self)
    return self.n
end

-- a + b: a new ModuleList of a's modules then b's, renumbered (PyTorch 1.13's __add__; either
-- side a ModuleList or a Lua list of modules)
function ModuleList.__add(a, b)
    local function items(x, side)
        if type(x) ~= "table" or (Module.is_module(x) and rawget(x, "n") == nil) then
            raise("tide: ModuleList +: the " .. side .. " operand is " ..
                (Module.is_module(x) and "a Module" or ("a " .. type(x))) ..
                ", expected a ModuleList or a list of modules")
        end
        local list = {}
        for i = 1, #x do
            check(x[i], "+")
            list[i] = x[i]
        end
        return list
    end
    local la, lb = items(a, "left"), items(b, "right")
    for _, m in ipairs(lb) do
        la[#la + 1] = m
    end
    return ModuleList(la)
end

return ModuleList
