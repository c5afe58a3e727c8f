-- tide.float_parts: PyTorch's frexp: t:frexp() / tide.frexp(t), the mantissa (t's float dtype,
-- magnitude in [0.5, 1)) and the exponent (int32) with t = mantissa * 2^exponent; 0, inf and
-- NaN give themselves and exponent 0, as C's frexp. The exponent is found from log2 in
-- float64 and corrected by one where rounding missed; the mantissa is t times a power of two,
-- so its gradient is PyTorch's, grad / 2^exponent. Loaded on first use (lua/tide/_lazy_ops.lua).
local core = require("tide.core")
local args = require("tide.op_args")
local no_grad = require("tide.autograd").no_grad

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

M.names = { "frexp" }
return M
