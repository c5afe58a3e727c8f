-- tide._compat — what tide's Lua files need from Lua 5.3+ that 5.1 and LuaJIT lack, written so
-- that every file parses and runs on 5.4, 5.3, 5.1 and LuaJIT 2.1 (no `//`, `<<`, `&`, `<close>`,
-- math.type, math.tointeger, table.move or utf8 in lua/tide/: spec/hosts_spec.lua checks).
--
-- On 5.1 and LuaJIT numbers have no integer subtype: an integral number stands for an integer
-- (docs/API.md, "Hosts"), exactly as far as 2^53.
local M = {}

M.pack = table.pack or function(...)
    return { n = select("#", ...), ... }
end
M.unpack = table.unpack or unpack

-- table.move(a1, f, e, t [, a2]): a1[f..e] copied to a2[t..] (a2 defaults to a1), returns a2
M.move = table.move or function(a1, f, e, t, a2)
    a2 = a2 or a1
    if e >= f then
        if t > e or t <= f or a1 ~= a2 then
            for i = 0, e - f do
                a2[t + i] = a1[f + i]
            end
        else
            for i = e - f, 0, -1 do
                a2[t + i] = a1[f + i]
            end
        end
    end
    return a2
end

local floor = math.floor
local mtype = math.type

-- true when v is an integer: the integer subtype on 5.3+, an integral finite number before
if mtype then
    function M.is_integer(v)
        return mtype(v) == "integer"
    end
else
    -- integral and within int64 (1e308 is integral as a double, but no integer)
    function M.is_integer(v)
        return type(v) == "number" and v == floor(v) and v >= -2 ^ 63 and v < 2 ^ 63
    end
end

-- v as an integer when it has an exact integer value an int64 holds, else nil (math.tointeger:
-- 1e308 is integral as a double but no integer, and C's conversion of it would be undefined)
M.tointeger = math.tointeger or function(v)
    if type(v) == "number" and v == floor(v) and v >= -2 ^ 63 and v < 2 ^ 63 then
        return v
    end
    return nil
end

-- the extreme integers: math.maxinteger/mininteger, or the exact range of a double (2^53)
M.maxinteger = math.maxinteger or 2 ^ 53
M.mininteger = math.mininteger or -2 ^ 53
-- int64's limits: exact where Lua has integers, the nearest doubles (+-2^63) elsewhere
M.int64_max = math.maxinteger or 2 ^ 63
M.int64_min = math.mininteger or -2 ^ 63

-- v rounded to the nearest float32 through string.pack (5.3+); nil before, where the caller
-- rounds through a float32 tensor
M.fround32 = string.pack and function(v)
    return (string.unpack("f", string.pack("f", v)))
end

-- 5.3+ operators, compiled only where they exist (a file with them would not parse on 5.1)
local ops = mtype and load("return function(a, b) return a // b end, function(v, n) return v << n end")

-- floor(a / b) for integers a, b (b ~= 0): `a // b` (exact, an integer) on 5.3+
if ops then
    M.idiv = (ops())
else
    function M.idiv(a, b)
        return floor(a / b)
    end
end

-- v * 2^n for a non-negative integer v: `v << n` on 5.3+
if ops then
    M.lshift = select(2, ops())
else
    function M.lshift(v, n)
        return v * 2 ^ n
    end
end

return M
