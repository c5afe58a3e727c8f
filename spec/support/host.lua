-- spec.support.host — what a spec needs to know about the Lua it runs on (run_all.sh runs the
-- suite under lua5.4, lua5.3, lua5.1 and luajit: spec/support/host_suite.sh).
--   host.lua        the interpreter for subprocesses (TIDE_TEST_LUA, default lua5.4)
--   host.integers   true where numbers have an integer subtype (5.3+); 5.1 and LuaJIT read 2.0
--                   as 2, so an integral table infers int64 there (docs/API.md, "Hosts")
--   host.idiv(a, b) a // b: the operator on 5.3+, tide.floor_divide / math.floor before
--   host.pack       table.pack
local H = {}

H.lua = os.getenv("TIDE_TEST_LUA") or "lua5.4"
H.integers = math.type ~= nil

local op = H.integers and load("return function(a, b) return a // b end")()
function H.idiv(a, b)
    if op then
        return op(a, b)
    end
    if type(a) == "number" and type(b) == "number" then
        return math.floor(a / b)
    end
    return require("tide").floor_divide(a, b)
end

H.pack = table.pack or function(...)
    return { n = select("#", ...), ... }
end
H.unpack = table.unpack or unpack

return H
