-- tide.pointwise: element-wise ops PyTorch scripts use that are compositions of tide's own
-- (docs/API.md, "The wider surface"): clamp_min, clamp_max, lerp, addcmul, addcdiv,
-- nan_to_num (each with an in-place twin), isclose; and clamp's tensor bounds over the core's
-- clamp. Each computes in PyTorch 1.13's order of operations, so float64 results agree to the
-- last bit or nearly; autograd differentiates the ops they record. Tensor methods, and tide.X
-- functions.
local core = require("tide.core")
local raise = require("tide.autograd.raise")
local args = require("tide.op_args")
local autograd = require("tide.autograd")
local no_grad = autograd.no_grad

local Tensor = core.Tensor
local check = args.check
local compat = require("tide._compat")
local unpack = compat.unpack
local same_device = require("tide._same_device")
local broadcastable = require("tide._broadcast_rule").check

local M = { functions = {} }

local function number_or_tensor(op, v, what)
    if type(v) ~= "number" and not core.is_tensor(v) then
        raise(("tide: %s: %s must be a number or a tensor, got %s"):format(op, what, type(v)))
    end
end

-- true when autograd records an op on these arguments (grad mode on, a tensor requiring grad)
local function recording(...)
    if not core.is_grad_enabled() then
        return false
    end
    for i = 1, select("#", ...) do
        local v = select(i, ...)
        if core.is_tensor(v) and v.requires_grad then
            return true
        end
    end
    return false
end

-- op(x, ...) and op_(x, ...): the in-place twin writes the result into x, and autograd records
-- the copy, as for every in-place op. While recording, the result is computed from a clone of
-- x: a gradient that reads x (maximum's, x:addcmul_(x, y)'s product) must see the values x
-- had, which the copy overwrites
-- r, raised when op's result r cannot be written back into x by PyTorch's casting rule
-- (tide.can_cast: a float result into an integer or bool tensor), before anything is written
local function cast_back(op, x, r)
    if r.dtype ~= x.dtype and not require("tide.dtype_queries").functions.can_cast(r.dtype,
            x.dtype) then
        raise(("tide: %s: the result's dtype %s can't be cast to the tensor's %s (as " ..
            "PyTorch's); use the out-of-place %s, or convert the tensor with :to(\"%s\") " ..
            "first"):format(op, r.dtype, x.dtype, op:sub(1, -2), r.dtype))
    end
    return r
end

-- (checked: the result's dtype is checked against x's with cast_back, for an op whose result
-- may be a float one of an integer x)
local function with_inplace(name, fn, checked)
    Tensor[name] = fn
    local op = name .. "_"
    Tensor[op] = function(x, ...)
        check(op, x)
        if not recording(x, ...) then
            local r = fn(x, ...)
            return x:copy_(checked and cast_back(op, x, r) or r)
        end
        local src, a = x:clone(), { n = select("#", ...), ... }
        for i = 1, a.n do
            if rawequal(a[i], x) then -- x:addcmul_(x, y): x's old values there too
                a[i] = src
            end
        end
        local r = fn(src, unpack(a, 1, a.n))
        return x:copy_(checked and cast_back(op, x, r) or r)
    end
end

-- clamp_min(min), clamp_max(max): clamp with one bound; a tensor bound is maximum / minimum
with_inplace("clamp_min", function(x, v, ...)
    args.no_extra("clamp_min", 2, ...)
    check("clamp_min", x)
    number_or_tensor("clamp_min", v, "min")
    return type(v) == "number" and x:clamp(v, nil) or core.maximum(x, v)
end)
with_inplace("clamp_max", function(x, v, ...)
    args.no_extra("clamp_max", 2, ...)
    check("clamp_max", x)
    number_or_tensor("clamp_max", v, "max")
    return type(v) == "number" and x:clamp(nil, v) or core.minimum(x, v)
end)

-- the real dtypes (a complex tensor's ops are its own)
local REAL = { bool = true, uint8 = true, int32 = true, int64 = true, float16 = true,
    bfloat16 = true, float32 = true, float64 = true }

-- raises unless tensor v (a number passes) has x's dtype, as PyTorch's lerp
local function same_dtype(op, x, v, what)
    if core.is_tensor(v) and v.dtype ~= x.dtype and REAL[v.dtype] and REAL[x.dtype] then
        raise(("tide: %s: expected dtype %s for `%s` but got dtype %s (as PyTorch's); " ..
            "convert it with :to(\"%s\")"):format(op, x.dtype, what, v.dtype, x.dtype))
    end
end

-- f(a, b, c, d)'s result, an error of an op it is made of (add, mul, sub, div: shapes that do
-- not broadcast) raised under op's own name; nothing checked beforehand, so the call costs a
-- pcall (a shape check in Lua took 5 of addcmul_'s 13 us on small tensors)
local function named(op, f, a, b, c, d)
    local ok, r = pcall(f, a, b, c, d)
    if ok then
        return r
    end
    local msg = tostring(r)
    msg = msg:match("^.-:%d+: (tide: .*)$") or msg
    raise((msg:gsub("^tide: [%w_]+:", "tide: " .. op .. ":", 1)))
end

local function lerp_values(x, e, w)
    local diff = e - x
    if type(w) == "number" then
        return math.abs(w) < 0.5 and x + diff * w or e - diff * (1 - w)
    end
    return core.where(w:abs():lt(0.5), x + w * diff, e - diff * (1 - w))
end

-- The kernel rows addcmul, addcdiv and lerp (include/tide_kernels.def): one pass writing y,
-- where nothing records and every tensor has x's shape, dtype (a float one) and device; the
-- compositions otherwise (broadcasting, integers, complex, gradients). y is a new tensor, or x
-- itself for the in-place forms when x is contiguous and no other operand is a view of x's
-- memory (the kernel may read an element after writing another). Returns y, or nil.
local FUSED = { float32 = true, float64 = true, float16 = true, bfloat16 = true }
local function fused(op, into, x, b, c, number)
    if number ~= number or not FUSED[x.dtype] or recording(x, b, c) then
        return nil
    end
    -- (the row's dispatch checks the shapes; counts first, so that a broadcast is not an error)
    local n, d, operands = x:numel(), x:dim(), { b, c } -- (c is nil for lerp's number weight)
    for _, t in ipairs(operands) do
        if t.dtype ~= x.dtype or t.device ~= x.device or t:numel() ~= n or t:dim() ~= d then
            return nil
        end
    end
    if into then
        if not x:is_contiguous() then
            return nil
        end
        for _, t in ipairs(operands) do
            if not rawequal(t, x) and x:_shares_storage(t) then
                return nil
            end
        end
    end
    local y = into or core.empty(x:size(), { dtype = x.dtype, device = x.device })
    return pcall(core._internal[op], y, x, b, c, number) and y or nil
end

-- lerp(end, weight): x + weight (end - x), as PyTorch's kernel: from x when |weight| < 0.5,
-- from end (end - (end - x)(1 - weight)) otherwise, so weight 1 gives end exactly
local function lerp_checked(x, e, w, ...)
    args.no_extra("lerp", 3, ...)
    check("lerp", x)
    check("lerp", e, 2)
    args.float_input("lerp", x)
    number_or_tensor("lerp", w, "weight")
    same_dtype("lerp", x, e, "end")
    same_dtype("lerp", x, w, "weight")
    return x, e, w
end
-- (the number weight goes as the row's parameter, the tensor one as its operand)
local function lerp_fused(into, x, e, w)
    if type(w) == "number" then
        return fused("lerp", into, x, e, nil, w)
    end
    return fused("lerp", into, x, e, w, 0)
end
with_inplace("lerp", function(...)
    local x, e, w = lerp_checked(...)
    return lerp_fused(nil, x, e, w) or named("lerp", lerp_values, x, e, w)
end)

local VALUE = { "value" }
local function value_of(op, opts)
    local v = args.scalar(args.options(op, opts, VALUE, "{value = 0.5}").value)
    if v == nil then
        return 1
    end
    if type(v) ~= "number" then
        raise(("tide: %s: value must be a number, got %s"):format(op, type(v)))
    end
    return v
end

-- t1 and t2 in the dtype x, t1 and t2 promote to (PyTorch computes the product there, so
-- uint8 factors do not wrap before a wider x); bool raises, as PyTorch's kernels
local function in_common(op, x, t1, t2)
    local own = x.dtype -- (all of one dtype: nothing to promote)
    if t1.dtype == own and t2.dtype == own and own ~= "bool" then
        return t1, t2
    end
    if not (REAL[x.dtype] and REAL[t1.dtype] and REAL[t2.dtype]) then
        return t1, t2
    end
    local promote = require("tide.dtype_queries").functions.promote_types
    local dt = promote(promote(x.dtype, t1.dtype), t2.dtype)
    if dt == "bool" then
        raise(("tide: %s: not defined for bool tensors (as PyTorch's); convert them with " ..
            ":to(\"int64\")"):format(op))
    end
    return t1:to(dt), t2:to(dt)
end

-- PyTorch 1.13's deprecated overloads addcmul(Number value, Tensor tensor1, Tensor tensor2)
-- and addcdiv's, which old optimizers write (exp_avg_sq.addcmul_(1 - beta2, grad, grad)):
-- (t1, t2, value) with PyTorch's warning once; any other call as it is
local function legacy_value(op, t1, t2, opts)
    if type(t1) == "number" and core.is_tensor(t2) and core.is_tensor(opts) then
        require("tide._warn").once("legacy_value." .. op, ("This overload of %s is " ..
            "deprecated: %s(Number value, Tensor tensor1, Tensor tensor2). Consider using one " ..
            "of the following signatures instead: %s(Tensor tensor1, Tensor tensor2, *, " ..
            "Number value) (tide: x:%s(t1, t2, {value = v}))"):format(op, op, op, op))
        return t2, opts, { value = t1 }
    end
    return t1, t2, opts
end

-- addcmul(t1, t2[, {value = 1}]): x + value t1 t2; addcdiv: x + value t1 / t2 (floats only, as
-- PyTorch 1.13)
local function addcmul_values(x, t1, t2, v)
    return x + (v == 1 and t1 or t1 * v) * t2
end
local function addcdiv_values(x, t1, t2, v)
    local q = t1 / t2
    return x + (v == 1 and q or q * v)
end
local function addcmul_checked(x, t1, t2, opts, ...)
    args.no_extra("addcmul", 4, ...)
    t1, t2, opts = legacy_value("addcmul", t1, t2, opts)
    check("addcmul", x)
    check("addcmul", t1, 2)
    check("addcmul", t2, 3)
    local v = value_of("addcmul", opts)
    t1, t2 = in_common("addcmul", x, t1, t2)
    return x, t1, t2, v
end
local function addcdiv_checked(x, t1, t2, opts, ...)
    args.no_extra("addcdiv", 4, ...)
    t1, t2, opts = legacy_value("addcdiv", t1, t2, opts)
    check("addcdiv", x)
    check("addcdiv", t1, 2)
    check("addcdiv", t2, 3)
    if not (args.FLOAT[t1.dtype] and args.FLOAT[t2.dtype]) then
        raise(("tide: addcdiv: integer division (%s / %s) is not supported; convert tensor1 " ..
            "and tensor2 with :to(\"float32\"), or use addcmul with their quotient")
            :format(t1.dtype, t2.dtype))
    end
    local v = value_of("addcdiv", opts)
    t1, t2 = in_common("addcdiv", x, t1, t2)
    return x, t1, t2, v
end
with_inplace("addcmul", function(...)
    local x, t1, t2, v = addcmul_checked(...)
    return fused("addcmul", nil, x, t1, t2, v) or named("addcmul", addcmul_values, x, t1, t2, v)
end)
with_inplace("addcdiv", function(...)
    local x, t1, t2, v = addcdiv_checked(...)
    return fused("addcdiv", nil, x, t1, t2, v) or named("addcdiv", addcdiv_values, x, t1, t2, v)
end)

-- the in-place forms write into x itself where the row can (fused), else as with_inplace's
local function fused_inplace(op, checked, run)
    local generic = Tensor[op .. "_"]
    Tensor[op .. "_"] = function(x, ...)
        if core.is_tensor(x) and not recording(x, ...) then
            local y = run(x, checked(x, ...))
            if y then
                return y
            end
        end
        return generic(x, ...)
    end
end
fused_inplace("addcmul", addcmul_checked, function(into, x, t1, t2, v)
    return fused("addcmul", into, x, t1, t2, v)
end)
fused_inplace("addcdiv", addcdiv_checked, function(into, x, t1, t2, v)
    return fused("addcdiv", into, x, t1, t2, v)
end)
fused_inplace("lerp", lerp_checked, lerp_fused)

-- each float dtype's limits: its largest finite value is nan_to_num's default for +inf (and
-- -that: -inf)
local LIMITS = require("tide._dtype_limits")
local NAN_OPTIONS = { "nan", "posinf", "neginf" }

-- nan_to_num([{nan = 0, posinf =, neginf =}]) or nan_to_num([nan[, posinf[, neginf]]]) as
-- PyTorch's positional form (nil for a default; a 0-d tensor gives its value): NaN, +inf and
-- -inf replaced (the dtype's largest finite values unless given); integer tensors come back as
-- copies
with_inplace("nan_to_num", function(x, nan, posinf, neginf, ...)
    args.no_extra("nan_to_num", 4, ...)
    check("nan_to_num", x)
    local o
    if type(nan) == "table" and not core.is_tensor(nan) then
        args.no_extra("nan_to_num", 2, posinf, neginf) -- the options table ends the arguments
        o = args.options("nan_to_num", nan, NAN_OPTIONS, "{nan = 0}")
    else
        o = { nan = nan, posinf = posinf, neginf = neginf }
    end
    o = { nan = o.nan, posinf = o.posinf, neginf = o.neginf }
    for _, k in ipairs(NAN_OPTIONS) do
        o[k] = args.scalar(o[k])
        if o[k] ~= nil and type(o[k]) ~= "number" then
            raise(("tide: nan_to_num: %s must be a number, got %s"):format(k, type(o[k])))
        end
    end
    if not args.FLOAT[x.dtype] then
        return x:clone()
    end
    local top = LIMITS[x.dtype].max
    local r = core.where(x:isnan(), o.nan or 0, x)
    r = core.where(x:eq(math.huge), o.posinf or top, r)
    return core.where(x:eq(-math.huge), o.neginf or -top, r)
end)

local CLOSE_OPTIONS = { "rtol", "atol", "equal_nan" }

-- the bool tensor of isclose (and allclose, tide.reductions): |x - other| <= atol + |rtol
-- other| where that error is finite, or x == other (infinities of one sign), or both NaN with
-- equal_nan. rtol is a number or the options table {rtol =, atol =, equal_nan =}
function M.close(op, x, other, rtol, atol, equal_nan)
    check(op, x)
    check(op, other, 2)
    if type(rtol) == "table" then
        args.no_extra(op, 3, atol, equal_nan) -- the options table ends the arguments
        core._check_options(rtol, op, CLOSE_OPTIONS)
        rtol, atol, equal_nan = rtol.rtol, rtol.atol, rtol.equal_nan
    end
    if equal_nan ~= nil and type(equal_nan) ~= "boolean" then
        raise(("tide: %s: equal_nan must be a boolean, got %s"):format(op, type(equal_nan)))
    end
    rtol, atol = rtol or 1e-5, atol or 1e-8
    if type(rtol) ~= "number" or type(atol) ~= "number" or rtol < 0 or atol < 0 then
        raise(("tide: %s: rtol and atol must be numbers >= 0, got %s and %s")
            :format(op, tostring(rtol), tostring(atol)))
    end
    if x.dtype ~= other.dtype then
        raise(("tide: %s: the dtypes differ (%s and %s); convert one with :to(\"%s\")")
            :format(op, x.dtype, other.dtype, x.dtype))
    end
    same_device(op, x, other) -- named so, not by the eq inside
    broadcastable(op, x, other)
    return no_grad(function()
        local close = x:eq(other)
        if equal_nan then
            close = close:logical_or(x:isnan():logical_and(other:isnan()))
        end
        if (rtol == 0 and atol == 0) or x.dtype == "bool" then -- bools: equal or not
            return close
        end
        local err = (x - other):abs()
        local allowed = (other * rtol):abs() + atol
        return close:logical_or(err:isfinite():logical_and(err:le(allowed)))
    end)
end

-- isclose(other[, rtol[, atol[, equal_nan]]]) or isclose(other, {rtol = 1e-5, atol = 1e-8,
-- equal_nan = false}): a bool tensor (no gradient), as M.close
function Tensor.isclose(x, other, rtol, atol, equal_nan, ...)
    args.no_extra("isclose", 5, ...)
    return M.close("isclose", x, other, rtol, atol, equal_nan)
end

-- logaddexp(other): log(exp(x) + exp(other)) without overflow, PyTorch's kernel: the larger
-- plus log1p(exp(-|x - other|)), and x itself where both are the same infinity
function Tensor.logaddexp(x, other, ...)
    args.no_extra("logaddexp", 2, ...)
    check("logaddexp", x)
    check("logaddexp", other, 2)
    same_device("logaddexp", x, other) -- named so, not by the maximum inside
    broadcastable("logaddexp", x, other)
    args.float_input("logaddexp", x)
    local m = core.maximum(x, other)
    local r = m + (x - other):abs():neg():exp():log1p()
    return core.where(x:isinf():logical_and(x:eq(other)), x, r)
end

-- xlogy(other): x log(other), 0 where x is 0 (even where other is 0 or inf), NaN where other is
-- NaN. Gradients, PyTorch 1.13's: xlogy(g, other) for x (log(other), at x = 0 too), but 0 where
-- x is 0 and other <= 0; g x / other for other (a signed 0 where x is 0, NaN where both
-- are 0)
local xlogy = autograd.def {
    name = "xlogy",
    reads = { 1, 2 },
    forward = function(_, x, other)
        local zero = x:eq(0)
        local r = core.where(zero, 0, x * core.where(zero, 1, other):log())
        return core.where(other:isnan(), 0 / 0, r)
    end,
    backward = function(nd, g)
        local x, other = nd[1], nd[2]
        local gx = core.where(g:eq(0):logical_and(other:isnan():logical_not()), 0, g * other:log())
        gx = core.where(x:eq(0):logical_and(other:le(0)), 0, gx)
        local gother = g * x / other
        return gx:sum_to(x.shape), gother:sum_to(other.shape)
    end,
}

function Tensor.xlogy(x, other, ...)
    args.no_extra("xlogy", 2, ...)
    same_device("xlogy", x, other) -- named so, not by the where inside
    broadcastable("xlogy", x, other)
    local tx, to = core.is_tensor(x), core.is_tensor(other)
    if tx or to then
        -- PyTorch's: the dtype the two promote to (a number beside a tensor a 0-d tensor of it),
        -- the default float dtype for integers and bools
        local rt = require("tide").result_type(x, other)
        rt = args.FLOAT[rt] and rt or core.get_default_dtype()
        local place = { dtype = rt, device = tx and x.device or other.device }
        x = tx and (x.dtype == rt and x or x:to(rt)) or core.full({}, x, place)
        other = to and (other.dtype == rt and other or other:to(rt)) or core.full({}, other, place)
    end
    check("xlogy", x)
    check("xlogy", other, 2)
    return xlogy(x, other)
end

-- logaddexp2(other): log2(2^x + 2^other), logaddexp's kernel in base 2
local LN2 = math.log(2)
function Tensor.logaddexp2(x, other, ...)
    args.no_extra("logaddexp2", 2, ...)
    check("logaddexp2", x)
    check("logaddexp2", other, 2)
    same_device("logaddexp2", x, other)
    broadcastable("logaddexp2", x, other)
    args.float_input("logaddexp2", x)
    -- both in the dtype they promote to first (PyTorch's: a float32 side beside a float64 one
    -- is scaled by ln 2 in float64)
    if core.is_tensor(other) and other.dtype ~= x.dtype then
        local rt = require("tide").result_type(x, other)
        x, other = x:to(rt), other:to(rt)
    end
    return (x * LN2):logaddexp(other * LN2) / LN2
end

-- ldexp(other): x * 2^other, in a float dtype (an integer x gives float32, as PyTorch's)
with_inplace("ldexp", function(x, other, ...)
    args.no_extra("ldexp", 2, ...)
    check("ldexp", x)
    check("ldexp", other, 2)
    same_device("ldexp", x, other)
    broadcastable("ldexp", x, other)
    local dt = args.FLOAT[x.dtype] and x.dtype or core.get_default_dtype()
    return x:to(dt):mul(core.pow(2, other:to(args.FLOAT[other.dtype] and other.dtype or dt)))
end, true)

-- the in-place twins PyTorch has of the core's xlogy, tril, triu, cumsum and cumprod: the
-- result written back
for _, name in ipairs({ "xlogy", "tril", "triu", "cumsum", "cumprod" }) do
    with_inplace(name, Tensor[name])
end
-- cumsum_ and cumprod_ keep the tensor's dtype: a dtype option other than it, or a bool tensor,
-- raises before writing (PyTorch's "Bad in-place call" and "not implemented for 'Bool'")
for _, name in ipairs({ "cumsum", "cumprod" }) do
    local op, scan_ = name .. "_", Tensor[name .. "_"]
    Tensor[op] = function(x, dim, opts, ...)
        if core.is_tensor(x) then
            local dt = type(opts) == "table" and opts.dtype
            if x.dtype == "bool" then
                raise(("tide: %s: not defined for bool tensors (as PyTorch's); use the " ..
                    "out-of-place %s (int64), or convert the tensor with :to(\"int64\") first")
                    :format(op, name))
            elseif type(dt) == "string" and dt ~= x.dtype then
                raise(("tide: %s: dtype %s differs from the tensor's %s, and an in-place %s " ..
                    "keeps the tensor's (as PyTorch's); leave dtype out, or use the " ..
                    "out-of-place %s(dim, {dtype = \"%s\"})"):format(op, dt, x.dtype, name, name,
                    dt))
            end
        end
        return scan_(x, dim, opts, ...)
    end
end
-- xlogy_ of an integer or bool tensor: its float result cannot be written back (PyTorch's
-- "result type Float can't be cast to the desired output type Long"), raised before writing
local xlogy_ = Tensor.xlogy_
function Tensor.xlogy_(x, ...)
    if core.is_tensor(x) and not args.FLOAT[x.dtype] and REAL[x.dtype] then
        raise(("tide: xlogy_: the result has a floating-point dtype, which cannot be written " ..
            "into a %s tensor in place; use the out-of-place op or cast with :to()")
            :format(x.dtype))
    end
    return xlogy_(x, ...)
end

-- clamp(min, max) and clamp_: the core's for number bounds (nil for none); PyTorch 1.13's
-- tensor bounds, broadcast (a 0-d one too): min then max applied with where, NaN in x or a
-- bound propagating, the result in the dtype x's promotes to with the bounds' (tide's rule for
-- binary ops: the dims do not count); the gradient goes to x where it lies within its bounds
-- (ties included) and to a bound where it is taken, as PyTorch's. A number beside a tensor is
-- PyTorch's number overload: a 0-d tensor converts
local kernel_clamp, kernel_clamp_ = Tensor.clamp, Tensor.clamp_

-- lo, hi and whether they take the tensor path; a tensor beside a number is PyTorch's number
-- overload: a 0-d one converts, a larger one is refused
local function clamp_bounds(op, lo, hi)
    local tlo, thi = core.is_tensor(lo), core.is_tensor(hi)
    if (tlo and type(hi) == "number") or (thi and type(lo) == "number") then
        lo, hi = args.scalar(lo), args.scalar(hi)
        for _, b in ipairs({ { lo, "min" }, { hi, "max" } }) do
            if core.is_tensor(b[1]) then
                raise(("tide: %s: %s must be a number, got a tensor of shape %s (beside a " ..
                    "number bound; a 0-d tensor converts)"):format(op, b[2],
                    args.shape_str(b[1]:size())))
            end
        end
        return lo, hi, false
    end
    return lo, hi, tlo or thi
end

-- whether tensor b (nil: none) broadcasts against a
local function broadcasts(a, b)
    if b == nil then
        return true
    end
    local sa, sb = a:size(), b:size()
    for i = 1, math.min(#sa, #sb) do
        local m, n = sa[#sa + 1 - i], sb[#sb + 1 - i]
        if m ~= n and m ~= 1 and n ~= 1 then
            return false
        end
    end
    return true
end

-- the dtypes of the clamp_tensors kernel row (include/tide_kernels.def)
local ONE_PASS = { float32 = true, float64 = true, int32 = true, int64 = true, uint8 = true }

local function tensor_clamp(op, x, lo, hi)
    local dtypes = require("tide.dtype_queries").functions -- (loaded on first use)
    local dt = x.dtype
    for _, b in ipairs({ lo, hi }) do
        if b ~= nil then
            number_or_tensor(op, b, b == lo and "min" or "max")
            same_device(op, x, b)
            dt = dtypes.promote_types(dt, b.dtype)
        end
    end
    if dt == "bool" then
        raise(("tide: %s: not defined for bool tensors (as PyTorch's); convert them with " ..
            ":to(\"int64\")"):format(op))
    end
    local r = x:to(dt)
    local float = args.FLOAT[dt]
    -- maximum(lo, r) is lo when lo is NaN or above r, else r (ties and a NaN r kept): the
    -- selects below in one kernel each, where nothing records and the shapes broadcast (the
    -- selects name x's shape first when they do not); the eight passes of the selects cost 18x
    -- PyTorch's time, and maximum's gradient would split ties
    if not recording(x, lo, hi) and broadcasts(r, lo) and broadcasts(r, hi)
        and broadcasts(lo or r, hi) then
        -- both bounds of r's shape: the selects in one pass, where the device has the row
        local y = lo ~= nil and hi ~= nil and ONE_PASS[dt] and args.same_shape(lo:size(), r:size())
            and args.same_shape(hi:size(), r:size())
            and core._internal.clamp_tensors(r, lo:to(dt), hi:to(dt))
        if y then
            return y
        end
        if lo ~= nil then
            r = core.maximum(lo:to(dt), r)
        end
        return hi ~= nil and core.minimum(hi:to(dt), r) or r
    end
    if lo ~= nil then
        lo = lo:to(dt)
        local below = r:lt(lo)
        r = core.where(float and below:logical_or(lo:isnan()) or below, lo, r)
    end
    if hi ~= nil then
        hi = hi:to(dt)
        local above = r:gt(hi)
        r = core.where(float and above:logical_or(hi:isnan()) or above, hi, r)
    end
    return r
end

-- f(...), an error of the ops it runs (lt, gt, where, copy_: shapes that do not broadcast, an
-- in-place write autograd refuses) raised as op's own
local function as_clamp(op, f, ...)
    local r = compat.pack(args.attempt(f, ...))
    if not r[1] then
        raise((tostring(r[2]):gsub("^tide: [%w_]+:", "tide: " .. op .. ":", 1)))
    end
    return compat.unpack(r, 2, r.n)
end

-- (lua/op_families.c calls these for clamp and clamp_ given a tensor bound; the kernels are the
-- core's methods, which take numbers)
function M.clamp_tensor_bounds(x, lo, hi, ...)
    local tensors
    lo, hi, tensors = clamp_bounds("clamp", lo, hi)
    if not tensors then
        return kernel_clamp(x, lo, hi, ...)
    end
    args.no_extra("clamp", 3, ...)
    check("clamp", x)
    return as_clamp("clamp", tensor_clamp, "clamp", x, lo, hi)
end

function M.clamp_tensor_bounds_(x, lo, hi, ...)
    local tensors
    lo, hi, tensors = clamp_bounds("clamp_", lo, hi)
    if not tensors then
        return kernel_clamp_(x, lo, hi, ...)
    end
    args.no_extra("clamp_", 3, ...)
    check("clamp_", x)
    -- while recording, from a clone: the copy overwrites x
    local r = as_clamp("clamp_", tensor_clamp, "clamp_", recording(x, lo, hi) and x:clone() or x,
        lo, hi)
    if not args.same_shape(r:size(), x:size()) then
        raise(("tide: clamp_: the bounds broadcast the result to %s, the tensor is %s; an " ..
            "in-place clamp keeps the tensor's shape"):format(args.shape_str(r:size()),
            args.shape_str(x:size())))
    end
    if r.dtype ~= x.dtype and args.FLOAT[r.dtype] and not args.FLOAT[x.dtype] then
        raise(("tide: clamp_: the result is %s, which an in-place write into the %s tensor " ..
            "would truncate; use clamp, or convert the bounds"):format(r.dtype, x.dtype))
    end
    return as_clamp("clamp_", x.copy_, x, r)
end

-- PyTorch's other names for tide's: clip (clamp), swapaxes and swapdims (transpose),
-- broadcast_to (expand)
Tensor.clip, Tensor.clip_ = Tensor.clamp, Tensor.clamp_
Tensor.swapaxes, Tensor.swapdims = Tensor.transpose, Tensor.transpose
Tensor.broadcast_to = Tensor.expand

M.with_inplace = with_inplace -- for the other files of PyTorch's spellings

-- the tide.X functions (the in-place twins are methods only)
M.names = { "clamp_min", "clamp_max", "lerp", "addcmul", "addcdiv", "nan_to_num", "isclose",
    "logaddexp", "xlogy", "clip", "swapaxes", "swapdims", "broadcast_to", "logaddexp2", "ldexp" }
return M
