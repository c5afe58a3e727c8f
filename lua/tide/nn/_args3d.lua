-- tide.nn._args3d: what the 3-D layers share (_functional_3d.lua and Conv3d, MaxPool3d, ...):
-- a size given as an integer or {d, h, w}, and the printing of such a value in a module's
-- extra_repr (PyTorch's fields, Lua's literals: {3, 3, 3}, true, nil).
local compat = require("tide._compat")
local autograd = require("tide.autograd")
local raise = autograd.raise

local M = {}

-- a value as an error message or a module's print shows it
function M.show(v)
    if autograd.is_tensor(v) then
        return "a tensor"
    end
    if type(v) ~= "table" then
        return tostring(v)
    end
    local parts, n = {}, 0
    for _ in pairs(v) do
        n = n + 1
    end
    for i = 1, #v do
        parts[i] = type(v[i]) == "table" and "{...}" or tostring(v[i])
    end
    if n > #v then -- keys beyond the list: shown as such, not silently dropped
        parts[#parts + 1] = "..."
    end
    return "{" .. table.concat(parts, ", ") .. "}"
end

-- v (default when nil) as {d, h, w}: an integer for all three or a table of three integers,
-- each >= min
function M.triple(v, default, who, what, min)
    if v == nil then
        v = default
    end
    local t
    if compat.is_integer(v) then
        t = { v, v, v }
    elseif type(v) == "table" and not autograd.is_tensor(v) then
        local n = 0
        for _ in pairs(v) do
            n = n + 1
        end
        if n == 3 and compat.is_integer(v[1]) and compat.is_integer(v[2]) and
            compat.is_integer(v[3]) then
            t = { v[1], v[2], v[3] }
        end
    end
    if not t then
        raise(string.format("tide: %s: expected %s to be an integer or {d, h, w}, got %s", who,
            what, M.show(v)))
    end
    if t[1] < min or t[2] < min or t[3] < min then
        raise(string.format("tide: %s: expected %s to be an integer >= %d, got %s", who, what,
            min, M.show(v)))
    end
    return t
end

-- "2x3x4" and "1,1,1": sizes and geometry as the 2-D layers' messages write them
function M.by(t)
    return table.concat(t, "x")
end

function M.commas(t)
    return table.concat(t, ",")
end

return M
