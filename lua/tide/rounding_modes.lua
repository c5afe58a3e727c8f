-- tide.rounding_modes: PyTorch's keyword parameters of round and div that tide's core ops lack,
-- written with them: x:round({decimals = d}) (half to even at the d-th decimal, d < 0 left of
-- the point) and x:div(other, {rounding_mode = "trunc" | "floor"}), with their in-place twins
-- and tide.X functions (the keyword signatures in tide.tensor_keywords.creation call these).
local core = require("tide.core")
local autograd = require("tide.autograd")
local args = require("tide.op_args")
local compat = require("tide._compat")

local raise = autograd.raise
local FLOAT = args.FLOAT

local M = {}

-- x rounded to `decimals` decimals as PyTorch 1.13's kernel: nearbyint(x * 10^d) / 10^d, or
-- nearbyint(x / 10^-d) * 10^-d for d < 0, each step in x's dtype; floats only (PyTorch's has
-- no integer kernel with decimals); a zero gradient, as round's
function M.round(op, x, decimals)
    args.check(op, x)
    if decimals == nil or decimals == 0 then
        return x:round()
    end
    if not compat.is_integer(decimals) then
        raise(("tide: %s: decimals must be an integer, got %s"):format(op, tostring(decimals)))
    end
    if not FLOAT[x.dtype] then
        raise(("tide: %s: decimals needs a floating-point tensor, got %s; convert with " ..
            ":to(\"float32\")"):format(op, x.dtype))
    end
    if decimals > 0 then
        local p = 10 ^ decimals
        return (x * p):round() / p
    end
    local p = 10 ^ -decimals
    return (x / p):round() * p
end

-- x:round_({decimals = d}): the rounded values written into x
function M.round_(op, x, decimals)
    args.check(op, x)
    if decimals == nil or decimals == 0 then
        return x:round_()
    end
    return x:copy_(M.round(op, x, decimals))
end

local MODES = { trunc = true, floor = true }

-- x / other rounded by rounding_mode as PyTorch's div: nil the true quotient, "trunc" toward
-- zero, "floor" toward -inf (floor_divide's); integer inputs give integers (trunc computed as
-- (x - fmod(x, other)) // other, exact), two bools raise (PyTorch has no bool kernel), and an
-- error of the ops it is made of (a division of integers by zero) is raised as op's own
local function rounded(op, x, other, mode)
    local rt = require("tide").result_type(x, other)
    if rt == "bool" then
        raise(("tide: %s: rounding_mode \"%s\" is not implemented for bool tensors (as " ..
            "PyTorch's); convert them with :to(\"int64\")"):format(op, mode))
    end
    if mode == "floor" then
        return core.floor_divide(x, other)
    end
    if FLOAT[rt] then
        return core.div(x, other):trunc()
    end
    if x.dtype == "bool" then -- (a bool cannot be subtracted from)
        x = x:to(rt)
    end
    -- integers: x - fmod(x, other) is a multiple of other, so floor_divide is exact there
    return core.floor_divide(x - core.fmod(x, other), other)
end

function M.div(op, x, other, mode)
    if mode == nil then
        return core.div(x, other)
    end
    if not MODES[mode] then
        raise(("tide: %s: rounding_mode must be nil, \"trunc\" or \"floor\", got %s"):format(op,
            type(mode) == "string" and ("\"" .. mode .. "\"") or tostring(mode)))
    end
    if type(x) == "number" and core.is_tensor(other) then
        -- a number dividend (torch.div(7, t, rounding_mode=...)): a 0-d tensor of the dtype the
        -- two promote to, on other's device, as PyTorch's wrapped number
        x = core.full({}, x, { dtype = require("tide").result_type(x, other),
            device = other.device })
    end
    args.check(op, x)
    local ok, r = args.attempt(rounded, op, x, other, mode)
    if not ok then
        raise((tostring(r):gsub("^tide: [%w_]+:", "tide: " .. op .. ":", 1)))
    end
    return r
end

-- x:div_(other, {rounding_mode =}): the rounded quotient written into x; a float quotient into
-- an integer x raises before writing, as PyTorch's
function M.div_(op, x, other, mode)
    args.check(op, x)
    if mode == nil then
        return x:div_(other)
    end
    local r = M.div(op, x, other, mode)
    if FLOAT[r.dtype] and not FLOAT[x.dtype] then
        raise(("tide: %s: the result type %s can't be written into the %s tensor; call " ..
            "div (not in place) or convert it with :to(\"%s\")"):format(op, r.dtype, x.dtype,
            r.dtype))
    end
    return x:copy_(r)
end

return M
