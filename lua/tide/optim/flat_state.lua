-- The flat state dicts of optimizers and LR schedulers: a table name -> tensor, so that
-- tide.save writes it as it is and tide.load(path[, {device =}]) gives it back (an optimizer's
-- state_dict is one; a scheduler's holds Lua values, which to_tensors turns into one). Lua values
-- become tensors on the CPU: an integer a 0-d int64, a float a 0-d float64, a boolean a 0-d
-- bool, a list of numbers a 1-d float64 (int64 when all are integers); and back (a 0-d tensor is a number or a boolean, a
-- 1-d one a list).
local compat = require("tide._compat")
local core = require("tide.core")
local autograd = require("tide.autograd")
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
        for k in pairs(v) do
            if not (compat.is_integer(k) and k >= 1 and k <= #v) then
                return nil -- not a list
            end
        end
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

-- a state dict of Lua values (a scheduler's: PyTorch's numbers, lists, strings, and the nested
-- state dicts of SequentialLR / ChainedScheduler) as a flat table name -> CPU tensor that
-- tide.save writes: numbers, booleans and lists of numbers as encode makes them, a string as
-- a 1-d uint8 tensor of its bytes, a table of tables under dotted names ("_schedulers.1.gamma");
-- tensors as they are. The schedulers' load_state_dict takes the result (and tide.load's) back.
function M.to_tensors(sd, who, prefix, out)
    who = who or "to_tensors"
    out = out or {}
    if type(sd) ~= "table" or is_tensor(sd) then
        raise("tide: " .. who .. ": expected a state dict (a table), got " ..
            (is_tensor(sd) and "a tensor" or type(sd)))
    end
    for k, v in pairs(sd) do
        local name = (prefix or "") .. tostring(k)
        if is_tensor(v) then
            out[name] = v
        elseif type(v) == "string" then
            if #v == 0 then
                out[name] = core.zeros({ 0 }, { dtype = "uint8", device = "cpu" })
            else
                out[name] = core.tensor({ v:byte(1, -1) }, { dtype = "uint8", device = "cpu" })
            end
        elseif type(v) == "table" and M.encode(v) == nil then -- not a list of numbers
            M.to_tensors(v, who, name .. ".", out)
        else
            local t = M.encode(v)
            if t == nil then
                raise(string.format("tide: %s: '%s' is a %s, which has no tensor form (numbers, " ..
                    "booleans, strings, lists of numbers and tables of them have)", who, name,
                    type(v)))
            end
            out[name] = t
        end
    end
    return out
end

-- the string of a 1-d uint8 tensor to_tensors made (nil for any other value)
function M.decode_string(t)
    if is_tensor(t) and t.dtype == "uint8" and t:dim() == 1 then
        local bytes = t:to("cpu"):totable()
        for i = 1, #bytes do
            bytes[i] = string.char(bytes[i])
        end
        return table.concat(bytes)
    end
    return nil
end

-- the nested tables of the dotted names under `key` in a flat sd ("_schedulers.2.gamma" ->
-- {[2] = {gamma = ...}}), nil when sd has none
function M.nested(sd, key)
    local out
    local pattern = "^" .. key:gsub("%p", "%%%0") .. "%.(%d+)%.(.+)$"
    for k, v in pairs(sd) do
        local i, rest = tostring(k):match(pattern)
        if i then
            out = out or {}
            i = compat.tointeger(tonumber(i))
            out[i] = out[i] or {}
            out[i][rest] = v
        end
    end
    return out
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
