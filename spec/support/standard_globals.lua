-- standard_globals.lua — busted helper (spec/support/busted_helper.lua): a spec's reads of Lua's
-- standard globals (math, type, tostring, ...) go straight to _G.
--
-- busted runs each spec file in an environment whose every global read walks the chain of
-- blocks (it, describe, ..., file, root) for an `env` that holds the name, a function call and
-- two lookups a level, before it reaches _G: the suite's spec code read `math` alone 1.8 million
-- times in a tenth of the files, and that walk was half the Lua instructions busted ran there.
-- The standard names are read from _G here; a spec that assigns one of them as a global (which
-- would leave it unseen) is an error instead. print stays busted's: specs that read printed lines
-- set their own.
local busted = require("busted")

local STANDARD = {
    "_G", "assert", "collectgarbage", "coroutine", "debug", "dofile", "error", "getmetatable",
    "io", "ipairs", "load", "loadfile", "math", "next", "os", "package", "pairs", "pcall",
    "rawequal", "rawget", "rawlen", "rawset", "require", "select", "setmetatable", "string",
    "table", "tonumber", "tostring", "type", "unpack", "utf8", "xpcall",
}

local function upvalue(f, name)
    for i = 1, math.huge do
        local n, v = debug.getupvalue(f, i)
        if n == nil then return nil end
        if n == name then return v end
    end
end

-- busted's environment is one table with a metatable, shared by every spec file: the first
-- file's chunk holds it (its _ENV, or its fenv on 5.1 and LuaJIT)
local function shortcut(env)
    local mt = env and getmetatable(env)
    local index, newindex = mt and mt.__index, mt and mt.__newindex
    if type(index) ~= "function" or type(newindex) ~= "function" then return end
    local G, standard = _G, {}
    for _, name in ipairs(STANDARD) do
        -- busted exports its own assert (luassert) into the root block: that one stays
        if name ~= "assert" then standard[name] = true end
    end
    mt.__index = function(self, key)
        if standard[key] then return G[key] end
        return index(self, key)
    end
    mt.__newindex = function(self, key, value)
        if standard[key] then
            error(("spec assigns the global %s: make it a local (spec/support/standard_globals.lua)")
                :format(key), 2)
        end
        return newindex(self, key, value)
    end
end

local done = false
busted.subscribe({ "file", "start" }, function(file)
    if not done then
        done = true
        local run = (debug.getmetatable(file.run) or {}).__call or file.run
        shortcut(getfenv and getfenv(run) or upvalue(run, "_ENV"))
    end
    return nil, true
end)
