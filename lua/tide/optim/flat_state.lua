-- The flat state dicts of optimizers and LR schedulers: a table name -> tensor, so that
-- tide.save writes it as it is and tide.load(path[, {device =}]) gives it back. Lua values
-- become tensors on the CPU: an integer a 0-d int64, a float a 0-d float64, a boolean a 0-d
-- bool, a list of numbers a 1-d float64 (int64 when all are integers); and back (a 0-d tensor is a number or a boolean, a
-- 1-d one a list).
local compat = require "tide._compat"
local core = require "tide.core"
local autograd = require "tide.autograd"
local raise = autograd.raise
local is_tensor = autograd.is_tensor

local M = {}

local INTEGER = { int32 = true, int64 = true, uint8 = true }

-- a Lua value as a CPU tensor (nil for what has no tensor form: functions, strings)
function M.encode(v)
    if compat.is_integer(v) then
        return core.tensor(v, { dtype = "int64", device = "cpu" })
    elseif type(v) == "number" then
        return core.tensor(v, { dtype = "float64", device = "cpu" })
    elseif type(v) == "boolean" then
        return core.tensor(v, { dtype = "bool", device = "cpu" })
    elseif type(v) == "table" and not is_tensor(v) then
        local dtype = "int64" -- a list of integers (milestones) stays integers
        for i = 1, #v do
            if type(v[i]) ~= "number" then
                return nil
            elseif not compat.is_integer(v[i]) then
                dtype = "float64"
            end
        end
        if #v == 0 then
            return core.zeros({ 0 }, { dtype = "float64", device = "cpu" })
        end
        return core.tensor(v, { dtype = dtype, device = "cpu" })
    end
    return nil
end

-- the Lua value of an encoded tensor; `who` and `name` name it in errors
function M.decode(t, who, name)
    if not is_tensor(t) then
        raise("tide: " .. who .. ": expected a tensor for '" .. name .. "', got " .. type(t))
    end
    if t:dim() == 0 then
        local v = t:item()
        if INTEGER[t.dtype] then
            v = compat.tointeger(v) or v
        end
        return v
    elseif t:dim() == 1 then
        local list = t:to("cpu"):to("float64"):totable()
        if INTEGER[t.dtype] then
            for i = 1, #list do
                list[i] = compat.tointeger(list[i]) or list[i]
            end
        end
        return list
    end
    raise("tide: " .. who .. ": '" .. name .. "' has " .. t:dim() .. " dimensions; expected a " ..
        "number (0-d) or a list (1-d)")
end

return M
