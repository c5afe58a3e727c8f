-- fast_globals.lua — busted helper (loaded by spec/support/helpers.lua): the standard library's
-- names (ipairs, math, type, ...) read straight from _G in spec code.
--
-- busted runs each spec file with an environment table whose __index looks a name up through
-- every enclosing block's env and only then in _G: several function calls per global read.
-- Spec code reads ipairs, math, type and the like in its loops, and those lookups were most of
-- the Lua the suite ran (a sampling profile: 60% of opinfo_spec's instructions). A standard name
-- that busted does not export (assert and the like are busted's own) and no block sets is the
-- same at every level, so it is read from _G at once; every other name takes busted's path.
local busted = require("busted")
local getfenv = require("busted.compatibility").getfenv

local STANDARD = {}
for _, k in ipairs({ "ipairs", "pairs", "next", "type", "tostring", "tonumber", "select",
    "pcall", "xpcall", "error", "setmetatable", "getmetatable", "rawget", "rawset", "rawequal",
    "rawlen", "require", "unpack", "load", "loadstring", "collectgarbage", "math", "string",
    "table", "os", "io", "debug", "coroutine", "utf8", "package", "bit", "bit32", "jit",
    "_VERSION", "_G" }) do
    STANDARD[k] = true
end

local patched = false
busted.subscribe({ "file", "start" }, function(file)
    if not patched then
        patched = true
        -- the file's chunk, or the __call of the table busted wraps it in (busted.wrap)
        local run = (debug.getmetatable(file.run) or {}).__call or file.run
        local env = getfenv(run)
        local mt = env ~= _G and getmetatable(env)
        if mt and type(mt.__index) == "function" then
            local slow, G = mt.__index, _G
            for k in pairs(STANDARD) do
                if busted[k] ~= nil then -- busted.api: its exported names
                    STANDARD[k] = nil
                end
            end
            mt.__index = function(self, key)
                if STANDARD[key] then
                    return G[key]
                end
                return slow(self, key)
            end
        end
    end
    return nil, true
end)
