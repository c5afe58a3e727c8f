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

function ModuleDict:init(mods)
    if mods ~= nil then
        self:update(mods)
    end
end

-- adds or replaces modules by name
function ModuleDict:update(mods)
    for _, e in ipairs(dict_entries.entries(KIND, mods, "update")) do
        self:add_module(e[1], e[2])
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
