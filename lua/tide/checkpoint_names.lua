-- tide.checkpoint_names: the names a saved module's class and its function fields go by in a
-- checkpoint (lua/tide/checkpoint_tree.lua), as Python's pickle saves a class or a function by
-- its qualified name and finds it again by that name when it loads:
--   a class of tide.nn: "tide.nn.Linear"; a class made by Module:extend("Net"): "Net" (found at
--   load among the classes this Lua state has defined, tide.nn._classes);
--   a function of tide.nn.functional or tide: "tide.nn.functional.relu", "tide.tanh".
-- Code itself is never saved: a closure or a class without a name has no name to go by.
local M = {}

-- the name cls is saved under, or nil when no name finds it again
function M.class_name(cls)
    local name = rawget(cls, "__name")
    if type(name) ~= "string" then
        return nil
    end
    local nn = require("tide.nn")
    if nn[name] == cls then
        return "tide.nn." .. name
    end
    if require("tide.nn._classes")[name] == cls then
        return name
    end
    return nil
end

-- the class a saved name stands for, or nil
function M.class_of(name)
    local own = name:match("^tide%.nn%.([%w_]+)$")
    if own then
        local cls = require("tide.nn")[own]
        return type(cls) == "table" and cls.__ismodule == true and cls or nil
    end
    return require("tide.nn._classes")[name]
end

-- the namespaces a saved function is named in, searched in this order
local SPACES = { { "tide.nn.functional", "tide.nn.functional" }, { "tide", "tide" } }

-- every name of a table's functions: its own fields and those it loads on first use (the
-- __lazy names of tide._lazy_ops)
local function each_function(space, f)
    for k, v in pairs(space) do
        if v == f and type(k) == "string" then
            return k
        end
    end
    local mt = getmetatable(space)
    local lazy = type(mt) == "table" and rawget(mt, "__lazy")
    if type(lazy) == "table" then
        for k in pairs(lazy) do
            if type(k) == "string" and space[k] == f then
                return k
            end
        end
    end
    return nil
end

-- the name f is saved under, or nil
function M.function_name(f)
    for _, s in ipairs(SPACES) do
        local k = each_function(require(s[1]), f)
        if k then
            return s[2] .. "." .. k
        end
    end
    return nil
end

-- the function a saved name stands for, or nil
function M.function_of(name)
    for _, s in ipairs(SPACES) do
        local k = name:sub(#s[2] + 2)
        if name:sub(1, #s[2] + 1) == s[2] .. "." and k:match("^[%w_]+$") then
            local f = require(s[1])[k]
            return type(f) == "function" and f or nil
        end
    end
    return nil
end

return M
