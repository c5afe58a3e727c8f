-- tide.float_parts: PyTorch's frexp: t:frexp() / tide.frexp(t), the mantissa (t's float dtype,
-- magnitude in [0.5, 1)) and the exponent (int32) with t = mantissa * 2^exponent; 0, inf and
-- NaN give themselves and exponent 0, as C's frexp. The exponent is found from log2 in
-- float64 and corrected by one where rounding missed; the mantissa is t times a power of two,
-- so its gradient is PyTorch's, grad / 2^exponent. And nextafter (t:nextafter(other),
-- t:nextafter_, tide.nextafter), the next representable value toward other. Loaded on first
-- use (lua/tide/_lazy_ops.lua).
local core = require("tide.core")
local args = require("tide.op_args")
local no_grad = require("tide.autograd").no_grad
local raise = require("tide.autograd.raise")

local Tensor = core.Tensor

local M = { functions = {} }

function Tensor.frexp(x, ...)
    args.no_extra("frexp", 1, ...)
    args.check("frexp", x)
    args.float_input("frexp", x)
    -- 2^-e as two factors, each within every float dtype's range for that dtype's exponents
    -- (a float64 subnormal's 2^1074 would overflow as one)
    local e, f1, f2 = no_grad(function()
        local a = x:to("float64"):abs()
        local normal = a:gt(0):logical_and(a:lt(math.huge))
        local one = core.ones({}, { dtype = "float64", device = x.device })
        local safe = core.where(normal, a, one)
        local ex = safe:log2():floor() + 1
        for _ = 1, 2 do -- m = a / 2^ex within [0.5, 1): one step either way at most
            local h = (ex / 2):floor()
            local m = safe * (2 ^ h:neg()) * (2 ^ (h - ex))
            ex = ex + m:ge(1):to("float64") - m:lt(0.5):to("float64")
        end
        ex = core.where(normal, ex, one * 0)
        local h = (ex / 2):floor()
        return ex:to("int32"), (2 ^ h:neg()):to(x.dtype), (2 ^ (h - ex)):to(x.dtype)
    end)
    return x * f1 * f2, e
end
M.functions.frexp = Tensor.frexp

-- each float dtype's significand bits (with the implicit one), smallest subnormal and largest
-- finite value
local FORMAT = {
    float64 = { bits = 53, tiny = 2 ^ -1074, max = 1.7976931348623157e308 },
    float32 = { bits = 24, tiny = 2 ^ -149, max = 3.4028234663852886e38 },
    float16 = { bits = 11, tiny = 2 ^ -24, max = 65504 },
    bfloat16 = { bits = 8, tiny = 2 ^ -133, max = 3.3895313892515355e38 },
}

-- nextafter(other): the next value of x's dtype after x toward other (other itself where they
-- are equal, NaN where either is), in their promoted float dtype, as C's nextafter: x plus or
-- minus one unit in its last place, found from frexp in float64, where every such sum is exact.
-- Not differentiable (nor in PyTorch).
local function nextafter(x, other, ...)
    local op = "nextafter"
    args.no_extra(op, 2, ...)
    args.check(op, x)
    if not core.is_tensor(other) then
        raise(("tide: nextafter: other must be a tensor, got %s; wrap a number with " ..
            "tide.tensor(v, {dtype = x.dtype})"):format(type(other)))
    end
    require("tide._same_device")(op, x, other)
    require("tide._broadcast_rule").check(op, x, other)
    local dtype = require("tide").result_type(x, other)
    if not FORMAT[dtype] then
        raise(("tide: nextafter: needs floating-point tensors, got %s and %s; convert with " ..
            ":to(\"float32\")"):format(x.dtype, other.dtype))
    end
    args.not_differentiable(op, x, other)
    local f = FORMAT[dtype]
    return no_grad(function()
        local a, b = x:to("float64"), other:to("float64")
        local m, e = Tensor.frexp(a)
        e = e:to("float64")
        local up = b:gt(a)
        -- away from 0: one unit of |a|'s binade; toward 0 from a power of two: half of one
        local away = up:logical_xor(a:lt(0))
        local halve = away:logical_not():logical_and(m:abs():eq(0.5))
        local step = (2 ^ (e - f.bits - halve:to("float64"))):clamp(f.tiny, nil)
        local r = core.where(up, a + step, a - step)
        r = core.where(r:eq(0), a * 0, r) -- (from -tiny toward 0: -0, as C's nextafter)
        -- (the constants as float64 tensors: where's numbers would take the default dtype)
        local one = core.ones({}, { dtype = "float64", device = a.device })
        r = core.where(a:eq(0), core.where(up, one, -one) * f.tiny, r)
        r = core.where(a:abs():eq(math.huge), core.where(a:gt(0), one, -one) * f.max, r)
        r = core.where(a:eq(b), b, r)
        r = core.where(a:ne(a):logical_or(b:ne(b)), one * (0 / 0), r)
        return r:to(dtype)
    end)
end
Tensor.nextafter = nextafter
function Tensor.nextafter_(x, other, ...)
    local r = nextafter(x, other, ...)
    if not args.same_shape(r:size(), x:size()) then
        raise(("tide: nextafter_: other %s broadcasts the tensor %s to %s; in place, the " ..
            "result must keep the tensor's shape"):format(args.shape_str(other:size()),
            args.shape_str(x:size()), args.shape_str(r:size())))
    end
    return x:copy_(r)
end
M.functions.nextafter = nextafter

M.names = { "frexp", "nextafter" }
return M
