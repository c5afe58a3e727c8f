-- nn.ModuleDict(modules): modules by name, registered as children of those names (state_dict
-- keys read "heads.cls.weight"). modules is a list of {name, module} pairs (kept in that
-- order) or a table name -> module (taken in sorted name order: Lua tables have no order).
-- md.name or md["name"] reaches a module; keys(), values(), items() follow registration order.
local raise = require("tide.autograd").raise
local Module = require("tide.nn.Module")
local dict_entries = require("tide.nn._dict_entries")

local ModuleDict = Module:extend("ModuleDict")

local KIND = { name = "ModuleDict", class = ModuleDict, item = "module", an_item = "a Module",
    is_item = Module.is_module }

-- md.name = v on an existing name is a raw Lua assignment: a Module there is the new child (the
-- walks read it), any other value (md.a = 5) is put back and raises at the next walk, as
-- PyTorch's md['a'] = 5. So the dict hides `_modules` (as ParameterDict its `_params`) and every
-- walk checks the names' values first; md.name = nil removes the child (contains is false)
local function sync(self)
    local shadow = rawget(self, "_slot_shadow")
    for _, name in ipairs(rawget(self, "_slot_modules")) do
        local v = rawget(self, name)
        if v ~= nil and not Module.is_module(v) then
            rawset(self, name, shadow[name])
            raise(("tide: ModuleDict: cannot assign '%s' as module '%s' (a Module expected; " ..
                "md:pop('%s') removes it); the module is put back"):format(type(v), name, name))
        end
        shadow[name] = v
    end
end

function ModuleDict.__index(self, k)
    if k == "_modules" and rawget(self, "_slot_modules") then
        sync(self)
        return rawget(self, "_slot_modules")
    end
    return getmetatable(self)[k]
end

-- a new name: Module's rule (a Module becomes a child), then recorded for sync
function ModuleDict.__newindex(self, k, v)
    Module.__newindex(self, k, v)
    local shadow = rawget(self, "_slot_shadow")
    if shadow and type(k) == "string" and Module.is_module(v) then
        shadow[k] = v
    end
end

function ModuleDict:init(mods)
    if rawget(self, "_slot_modules") == nil then
        rawset(self, "_slot_modules", rawget(self, "_modules"))
        rawset(self, "_modules", nil)
        rawset(self, "_slot_shadow", {})
    end
    if mods ~= nil then
        self:update(mods)
    end
end

-- adds or replaces modules by name
function ModuleDict:update(mods)
    for _, e in ipairs(dict_entries.entries(KIND, mods, "update")) do
        self:add_module(e[1], e[2])
        rawget(self, "_slot_shadow")[e[1]] = e[2]
    end
    return self
end

function ModuleDict:keys()
    local r = {}
    for _, nc in ipairs(self:named_children()) do
        r[#r + 1] = nc[1]
    end
    return r
end

function ModuleDict:values()
    return self:children()
end

-- the {name, module} pairs; also `for name, m in pairs(md:items())`
function ModuleDict:items()
    return self:named_children()
end

function ModuleDict:contains(name)
    return self._kind[name] == "module" and rawget(self, name) ~= nil
end

-- removes the module name and returns it (PyTorch's pop; a missing name raises, its KeyError)
function ModuleDict:pop(name)
    if not self:contains(name) then
        raise("tide: ModuleDict:pop: no module '" .. tostring(name) .. "'")
    end
    return self:_unregister(name)
end

-- removes every module (PyTorch's clear)
function ModuleDict:clear()
    for _, name in ipairs(self:keys()) do
        self:_unregister(name)
    end
end

function ModuleDict:forward()
    raise("tide: ModuleDict: has no forward; call its modules (md.name(x))")
end

function ModuleDict.__len(self)
    return #self:children()
end

return ModuleDict
