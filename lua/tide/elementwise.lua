-- tide.elementwise: more element-wise functions by PyTorch's names (docs/API.md, "The op list"):
-- logit, sinc, copysign, heaviside, deg2rad, rad2deg, exp2, sgn, signbit,
-- isneginf, isposinf, fmax, fmin, float_power, true_divide, fix, with in-place twins where
-- PyTorch has them. Compositions of tide's ops; where the composition's gradient would differ
-- from PyTorch's at a special point (logit at 0 and 1, sinc at 0) the op
-- is one node with PyTorch's formula. Tensor methods, and tide.X functions.
local core = require("tide.core")
local autograd = require("tide.autograd")
local raise = autograd.raise
local args = require("tide.op_args")
local same_device = require("tide._same_device")
local broadcastable = require("tide._broadcast_rule").check
local with_inplace = require("tide.pointwise").with_inplace

local Tensor = core.Tensor
local check, no_grad = args.check, autograd.no_grad
local FLOAT = args.FLOAT

local M = {}

-- x itself when it holds floats, else x in the default dtype (tide.get_default_dtype), as
-- PyTorch's unary float functions promote integers
local function floating(x)
    return FLOAT[x.dtype] and x or x:to(core.get_default_dtype())
end

-- out, computed without recording, recorded as op name on the inputs (extra fields set on the
-- node) when one of them requires grad
local function node(name, out, fields, ...)
    if autograd.needs_record(...) then
        local nd = autograd.record(name, out, ...)
        for k, v in pairs(fields or {}) do
            nd[k] = v
        end
    end
    return out
end

-- raises when a function of x alone was given more arguments (as the core's unary ops)
local function no_more(op, ...)
    for i = 1, select("#", ...) do
        local v = select(i, ...)
        if v ~= nil then -- trailing nils are omitted arguments
            raise(("tide: %s: takes no argument, got argument #%d (%s)"):format(op, i + 1,
                core.is_tensor(v) and "a tensor" or type(v)))
        end
    end
end

local not_differentiable = args.not_differentiable

-- logit([eps]): log(x / (1 - x)), x first clamped to [eps, 1 - eps] when eps is given.
-- PyTorch's gradient: g / (x (1 - x)), 0 outside [eps, 1 - eps] (NaN outside [0, 1] without eps)
autograd.def {
    name = "logit",
    reads = { 1 },
    backward = function(nd, g)
        local x, eps = nd[1], nd.eps
        local r = g / (x * (1 - x))
        if eps then
            return core.where(x:lt(eps):logical_or(x:gt(1 - eps)), 0, r)
        end
        return core.where(x:lt(0):logical_or(x:gt(1)), 0 / 0, r)
    end,
}
with_inplace("logit", args.in_float(function(x, eps, ...)
    args.no_extra("logit", 2, ...)
    check("logit", x)
    if eps ~= nil and type(eps) ~= "number" then
        raise(("tide: logit: eps must be a number or nil, got %s"):format(type(eps)))
    end
    x = floating(x)
    local out = no_grad(function()
        local z = x
        if eps and eps >= 0 then
            z = x:clamp(eps, 1 - eps)
        end
        return (z / (1 - z)):log()
    end)
    return node("logit", out, { eps = eps and eps >= 0 and eps or false }, x)
end))

local PI = math.pi

-- sinc(): sin(pi x) / (pi x), 1 at 0; PyTorch's gradient (0 at 0):
-- g (pi x cos(pi x) - sin(pi x)) / (x x pi)
autograd.def {
    name = "sinc",
    reads = { 1 },
    backward = function(nd, g)
        local x = nd[1]
        local xpi, sq = x * PI, x * x * PI
        return core.where(sq:eq(0), 0, g * (xpi * xpi:cos() - xpi:sin()) / sq)
    end,
}
with_inplace("sinc", args.in_float(function(x, ...)
    check("sinc", x)
    no_more("sinc", ...)
    x = floating(x)
    local out = no_grad(function()
        local p = x * PI
        return core.where(x:eq(0), 1, p:sin() / p)
    end)
    return node("sinc", out, nil, x)
end))

-- the float dtype PyTorch computes a and b in: the wider one; float16 with bfloat16 float32
local WIDTH = { float16 = 1, bfloat16 = 1, float32 = 2, float64 = 3 }
local function common_float(a, b)
    local da, db = a.dtype, b.dtype
    if da == db then
        return da
    end
    local wa, wb = WIDTH[da] or 2, WIDTH[db] or 2
    if wa == wb then
        return "float32"
    end
    return wa > wb and da or db
end

-- the shape a and b broadcast to, or an error naming both
local function broadcast_shape(op, a, b)
    local sa, sb, out = a:size(), b:size(), {}
    local n = math.max(#sa, #sb)
    for i = 1, n do
        local x, y = sa[#sa - n + i] or 1, sb[#sb - n + i] or 1
        if x ~= y and x ~= 1 and y ~= 1 then
            raise(("tide: %s: shapes %s and %s do not broadcast (dim %d: %d and %d)")
                :format(op, args.shape_str(sa), args.shape_str(sb), i, x, y))
        end
        out[i] = x == 1 and y or x
    end
    return out
end

-- true where v's sign bit is set: negative numbers and -0 (NaN's sign is not read)
local function sign_bit(v)
    if not FLOAT[v.dtype] then
        return v:lt(0)
    end
    return v:lt(0):logical_or(v:eq(0):logical_and(v:reciprocal():lt(0)))
end

-- copysign(other): |x| with other's sign (a number or a tensor; -0 counts as negative);
-- a float result. One node with PyTorch's gradient: g out / x (0 where x is 0) for x, zeros
-- for other
autograd.def {
    name = "copysign",
    reads = { 1, "out" },
    backward = function(nd, g)
        local x = nd[1]
        local gx = g * core.where(x:eq(0), 0, nd.out / x)
        return gx, core.is_tensor(nd[2]) and g:new_zeros(nd[2]:size()) or nil
    end,
}
with_inplace("copysign", function(x, y, ...)
    args.no_extra("copysign", 2, ...)
    check("copysign", x)
    if type(y) ~= "number" and not core.is_tensor(y) then
        raise(("tide: copysign: other must be a number or a tensor, got %s"):format(type(y)))
    end
    same_device("copysign", x, y)
    x = floating(x)
    if type(y) == "number" then
        local negative = y < 0 or (y == 0 and 1 / y < 0)
        local out = no_grad(function()
            return negative and x:abs():neg() or x:abs()
        end)
        return node("copysign", out, nil, x, y)
    end
    if FLOAT[y.dtype] then
        x = x:to(common_float(x, y))
    end
    local shape = broadcast_shape("copysign", x, y)
    x, y = x:expand(shape), y:expand(shape)
    local out = no_grad(function()
        local ax = x:abs()
        return core.where(sign_bit(y), ax:neg(), ax)
    end)
    return node("copysign", out, nil, x, y)
end, true)

-- heaviside(values): 0 where x < 0, 1 where x > 0, values where x == 0 (NaN gives 0); one
-- dtype for both, as PyTorch; no gradient
with_inplace("heaviside", function(x, v, ...)
    args.no_extra("heaviside", 2, ...)
    check("heaviside", x)
    check("heaviside", v, 2)
    same_device("heaviside", x, v)
    broadcastable("heaviside", x, v)
    if x.dtype ~= v.dtype then
        raise(("tide: heaviside: input and values must have the same dtype, got %s and %s; " ..
            "convert values with :to(\"%s\")"):format(x.dtype, v.dtype, x.dtype))
    end
    not_differentiable("heaviside", x, v)
    return no_grad(function()
        return core.where(x:eq(0), v, x:gt(0):to(x.dtype))
    end)
end)

-- deg2rad(), rad2deg(): times pi / 180 or 180 / pi (PyTorch's constants)
with_inplace("deg2rad", function(x, ...)
    check("deg2rad", x)
    no_more("deg2rad", ...)
    return floating(x) * 0.017453292519943295
end)
with_inplace("rad2deg", function(x, ...)
    check("rad2deg", x)
    no_more("rad2deg", ...)
    return floating(x) * 57.295779513082323
end)

-- exp2(): 2^x
with_inplace("exp2", function(x, ...)
    check("exp2", x)
    no_more("exp2", ...)
    return core.pow(2, floating(x))
end)

-- sgn is sign (tide has no complex dtypes); fix is trunc; true_divide is div
Tensor.sgn, Tensor.sgn_ = Tensor.sign, Tensor.sign_
Tensor.fix, Tensor.fix_ = Tensor.trunc, Tensor.trunc_
Tensor.true_divide, Tensor.true_divide_ = Tensor.div, Tensor.div_

-- signbit(), isposinf(), isneginf(): bool tensors
function Tensor.signbit(x, ...)
    check("signbit", x)
    no_more("signbit", ...)
    return no_grad(sign_bit, x)
end
function Tensor.isposinf(x, ...)
    check("isposinf", x)
    no_more("isposinf", ...)
    return no_grad(function() return x:eq(math.huge) end)
end
function Tensor.isneginf(x, ...)
    check("isneginf", x)
    no_more("isneginf", ...)
    return no_grad(function() return x:eq(-math.huge) end)
end

-- fmax(other), fmin(other): maximum / minimum where a NaN loses to a number (NaN only where
-- both are). PyTorch's gradient: all to x where x >= other (x <= other for fmin) or other is
-- NaN, else all to other
local function nan_ignoring(op, keep_x)
    Tensor[op] = function(x, y, ...)
        args.no_extra(op, 2, ...)
        check(op, x)
        check(op, y, 2)
        same_device(op, x, y)
        broadcastable(op, x, y) -- named so, not by the ge or where inside
        if x.dtype == "bool" or y.dtype == "bool" then
            raise(("tide: %s: not defined for bool tensors; convert with :to(\"int64\")")
                :format(op))
        end
        local take_x = no_grad(function()
            return keep_x(x, y):logical_or(y:isnan())
        end)
        return core.where(take_x, x, y)
    end
end
nan_ignoring("fmax", function(x, y) return x:ge(y) end)
nan_ignoring("fmin", function(x, y) return x:le(y) end)

-- float_power(exponent): x^exponent in float64 whatever the dtypes (exponent a number or a
-- tensor); the in-place twin needs a float64 x, as PyTorch's
local function float_power(x, e, ...)
    args.no_extra("float_power", 2, ...)
    check("float_power", x)
    if type(e) ~= "number" and not core.is_tensor(e) then
        raise(("tide: float_power: exponent must be a number or a tensor, got %s"):format(type(e)))
    end
    same_device("float_power", x, e)
    broadcastable("float_power", x, e)
    return x:double():pow(type(e) == "number" and e or e:double())
end
Tensor.float_power = float_power
function Tensor.float_power_(x, e, ...)
    args.no_extra("float_power_", 2, ...)
    check("float_power_", x)
    if x.dtype ~= "float64" then
        raise(("tide: float_power_: the base has dtype %s, but the result is float64; use " ..
            "x:float_power(e) or convert x with :double()"):format(x.dtype))
    end
    return x:pow_(type(e) == "number" and e or (core.is_tensor(e) and e:double() or e))
end

M.functions = { sgn = function(x, ...) -- tide.sgn(z) of a complex z: its own (z / |z|)
    return (type(x) == "table" and x.sgn or Tensor.sgn)(x, ...)
end }
M.names = { "logit", "sinc", "copysign", "heaviside", "deg2rad", "rad2deg",
    "exp2", "sgn", "fix", "true_divide", "signbit", "isposinf", "isneginf", "fmax", "fmin",
    "float_power" }
return M
