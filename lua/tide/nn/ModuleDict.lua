-- nn.ModuleDict(modules): modules by name, registered as children of those names (state_dict
-- keys read "heads.cls.weight"). modules is a list of {name, module} pairs (kept in that
-- order) or a table name -> module (taken in sorted name order: Lua tables have no order).
-- md.name or md["name"] reaches a module; keys(), values(), items() follow registration order.
local raise = require("tide.autograd").raise
local Module = require("tide.nn.Module")

local ModuleDict = Module:extend("ModuleDict")

-- name -> module pairs in a fixed order, checked before anything is registered
local function entries(mods, who)
    if type(mods) ~= "table" or Module.is_module(mods) then
        raise("tide: ModuleDict:" .. who .. ": expected a table name -> module or a list of " ..
            "{name, module} pairs, got " .. (Module.is_module(mods) and "a Module" or type(mods)))
    end
    local out = {}
    if #mods > 0 then
        for i, e in ipairs(mods) do
            if type(e) ~= "table" or Module.is_module(e) then
                raise("tide: ModuleDict:" .. who .. ": entry " .. i .. " is not a {name, module} pair")
            end
            out[i] = { e[1], e[2] }
        end
    else
        for k, v in pairs(mods) do
            out[#out + 1] = { k, v }
        end
        table.sort(out, function(a, b)
            return tostring(a[1]) < tostring(b[1])
        end)
    end
    for _, e in ipairs(out) do
        local name, m = e[1], e[2]
        if type(name) ~= "string" or name == "" or name:find(".", 1, true) then
            raise("tide: ModuleDict:" .. who .. ": expected a non-empty name without '.', got " ..
                tostring(name))
        end
        if ModuleDict[name] ~= nil or name == "training" or name:sub(1, 1) == "_" then
            raise("tide: ModuleDict:" .. who .. ": the name '" .. name .. "' is a method or field " ..
                "of ModuleDict; choose another")
        end
        if not Module.is_module(m) then
            raise("tide: ModuleDict:" .. who .. ": expected a Module for '" .. name .. "', got " ..
                type(m))
        end
    end
    return out
end

function ModuleDict:init(mods)
    if mods ~= nil then
        self:update(mods)
    end
end

-- adds or replaces modules by name
function ModuleDict:update(mods)
    for _, e in ipairs(entries(mods, "update")) do
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

function ModuleDict:forward()
    raise("tide: ModuleDict: has no forward; call its modules (md.name(x))")
end

function ModuleDict.__len(self)
    return #self:children()
end

return ModuleDict
