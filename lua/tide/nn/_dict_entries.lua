-- tide.nn._dict_entries: what ModuleDict and ParameterDict share: their entries, a list of
-- {name, value} pairs (kept in that order) or a table name -> value (taken in sorted name
-- order: Lua tables have no order), each checked before anything is registered. A kind names
-- the container: { name = "ModuleDict", class = ModuleDict, item = "module", an_item =
-- "a Module", is_item = Module.is_module }.
local autograd = require("tide.autograd")
local Module = require("tide.nn.Module")

local raise = autograd.raise

local M = {}

-- one entry: a name usable as a field (non-empty, no '.', not one of the class's methods or
-- fields) and a value of the kind's item
function M.check_entry(kind, name, v, who)
    local prefix = "tide: " .. kind.name .. ":" .. who .. ": "
    if type(name) ~= "string" or name == "" or name:find(".", 1, true) then
        raise(prefix .. "expected a non-empty name without '.', got " .. tostring(name))
    end
    if kind.class[name] ~= nil or name == "training" or name:sub(1, 1) == "_" then
        raise(prefix .. "the name '" .. name .. "' is a method or field of " .. kind.name ..
            "; choose another")
    end
    if not kind.is_item(v) then
        raise(prefix .. "expected " .. kind.an_item .. " for '" .. name .. "', got " .. type(v))
    end
end

-- the {name, value} pairs of items in a fixed order, all checked
function M.entries(kind, items, who)
    local prefix = "tide: " .. kind.name .. ":" .. who .. ": "
    if type(items) ~= "table" or kind.is_item(items) or Module.is_module(items) then
        raise(prefix .. "expected a table name -> " .. kind.item .. " or a list of {name, " ..
            kind.item .. "} pairs, got " .. (kind.is_item(items) and kind.an_item or
            type(items)))
    end
    local out = {}
    if #items > 0 then
        for i, e in ipairs(items) do
            if type(e) ~= "table" or kind.is_item(e) then
                raise(prefix .. "entry " .. i .. " is not a {name, " .. kind.item .. "} pair")
            end
            out[i] = { e[1], e[2] }
        end
    else
        for k, v in pairs(items) do
            out[#out + 1] = { k, v }
        end
        table.sort(out, function(a, b)
            return tostring(a[1]) < tostring(b[1])
        end)
    end
    for _, e in ipairs(out) do
        M.check_entry(kind, e[1], e[2], who)
    end
    return out
end

return M
