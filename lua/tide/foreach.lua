-- tide.foreach: PyTorch's torch._foreach_* ops, one op over lists of tensors (EMA code such as
-- ema_pytorch's _foreach_lerp_, optimizers written against the foreach API):
--   binary  _foreach_X(xs, other[, {alpha =}]) for X in add sub mul div maximum minimum pow
--           clamp_min clamp_max: other a number, a list of numbers, a list of tensors or a
--           tensor (for every element); alpha (add, sub) with a list of tensors
--   lerp    _foreach_lerp(xs, ends, weight): weight a number or a list of tensors
--   addcmul / addcdiv  _foreach_addcmul(xs, t1s, t2s[, value = 1 or a list of numbers])
--   unary   _foreach_X(xs) for the elementwise functions below
--   _foreach_norm(xs[, ord = 2]): a list of 0-d tensors; _foreach_zero_(xs);
--   _foreach_copy_(xs, srcs[, non_blocking])
-- Each returns a new list of results; its in-place twin _foreach_X_ changes xs's tensors and
-- returns nothing, as PyTorch's; an empty list raises, as PyTorch's. A Lua loop of the
-- per-tensor ops: same values, same gradients, the same errors naming the element.
local core = require("tide.core")
local raise = require("tide.autograd.raise")
local op_args = require("tide.op_args")

local is_tensor = core.is_tensor
local tide_broadcast_shapes, tide_result_type, tide_can_cast -- tide's, read on first use
local function lazy_tide()
    if not tide_can_cast then
        local tide = require("tide")
        tide_broadcast_shapes, tide_result_type = tide.broadcast_shapes, tide.result_type
        tide_can_cast = tide.can_cast
    end
end

local M = { functions = {}, names = {} }
local F = M.functions

local function define(name, fn)
    F[name] = fn
    M.names[#M.names + 1] = name
end

-- xs as a list of tensors (PyTorch's TensorList), else a tide: error naming the argument
local function tensors(op, xs, what)
    if type(xs) ~= "table" or is_tensor(xs) then
        raise(("tide: %s: %s must be a list of tensors, got %s"):format(op, what,
            is_tensor(xs) and "a tensor" or type(xs)))
    end
    if #xs == 0 and what == "self" then -- PyTorch's foreach ops need a tensor to dispatch on
        raise(("tide: %s: the tensor list is empty; PyTorch's foreach ops need at least one " ..
            "tensor (skip the call when there are none)"):format(op))
    end
    for i = 1, #xs do
        if not is_tensor(xs[i]) then
            raise(("tide: %s: %s[%d] is %s, not a tensor"):format(op, what, i, type(xs[i])))
        end
    end
    return xs
end

local function same_length(op, xs, ys, what)
    if type(ys) == "table" and not is_tensor(ys) and #ys ~= #xs then
        raise(("tide: %s: %s has %d elements where the tensors are %d; give one a tensor")
            :format(op, what, #ys, #xs))
    end
end

-- the i-th operand of other: a number or a tensor for every element, else other[i]
local function at(other, i)
    if type(other) == "table" and not is_tensor(other) then
        return other[i]
    end
    return other
end

local function shape_text(t)
    return "{" .. table.concat(t.shape, ", ") .. "}"
end

-- an in-place op on x with operand y (a number, a tensor, or nil) that would fail for x: y on
-- another device or of a shape that does not broadcast to x's, or a result x's dtype cannot
-- hold (shape_only: copy_'s, which crosses devices and dtypes). Checked for every element
-- before the first is changed, so a refused call changes none.
local function check_inplace(op, i, x, y, shape_only)
    if is_tensor(y) then
        if y.device ~= x.device and not shape_only then
            raise(("tide: %s: element %d: the operand is on %s, the tensor on %s; move it with " ..
                ":to(\"%s\")"):format(op, i, tostring(y.device), tostring(x.device),
                tostring(x.device)))
        end
        local ok, shape = pcall(tide_broadcast_shapes, x.shape, y.shape)
        local same = ok and #shape == x:dim()
        for d = 1, same and #shape or 0 do
            same = same and shape[d] == x:size(d)
        end
        if not same then
            raise(("tide: %s: element %d: an operand of shape %s does not broadcast to the " ..
                "tensor's %s, which an in-place op keeps"):format(op, i, shape_text(y),
                shape_text(x)))
        end
    end
    if y ~= nil and not shape_only then
        local rt = tide_result_type(x, y)
        if not tide_can_cast(rt, x.dtype) then
            raise(("tide: %s: element %d: the result type %s cannot be written to the %s " ..
                "tensor in place; convert it first with :to(\"%s\")"):format(op, i, rt, x.dtype,
                rt))
        end
    end
end

local function check_other(op, other, xs)
    local kind = type(other)
    if kind == "number" or is_tensor(other) then
        return
    elseif kind ~= "table" then
        raise(("tide: %s: other must be a number, a list of numbers or tensors, or a tensor, " ..
            "got %s"):format(op, kind))
    end
    same_length(op, xs, other, "other")
end

for _, name in ipairs({ "add", "sub", "mul", "div", "maximum", "minimum", "pow", "clamp_min",
    "clamp_max" }) do
    local with_alpha = name == "add" or name == "sub"
    local function run(op, inplace, xs, other, opts)
        tensors(op, xs, "self")
        check_other(op, other, xs)
        local alpha
        if with_alpha then
            alpha = op_args.options(op, opts, { "alpha" }, "{alpha = 2}").alpha
        else
            op_args.options(op, opts, {}, nil)
        end
        local method = inplace and name .. "_" or name
        if inplace then
            lazy_tide()
            for i = 1, #xs do
                check_inplace(op, i, xs[i], at(other, i))
            end
        end
        local out = {}
        for i = 1, #xs do
            local y = at(other, i)
            if alpha ~= nil then
                out[i] = xs[i][method](xs[i], y, alpha)
            else
                out[i] = xs[i][method](xs[i], y)
            end
        end
        return out
    end
    local op = "_foreach_" .. name
    define(op, function(xs, other, opts) return run(op, false, xs, other, opts) end)
    define(op .. "_", function(xs, other, opts) run(op .. "_", true, xs, other, opts) end)
end

local function lerp(op, inplace, xs, ends, weight)
    tensors(op, xs, "self")
    tensors(op, ends, "tensors1")
    same_length(op, xs, ends, "tensors1")
    if type(weight) ~= "number" then
        tensors(op, weight, "weights")
        same_length(op, xs, weight, "weights")
    end
    if inplace then
        lazy_tide()
        for i = 1, #xs do
            check_inplace(op, i, xs[i], ends[i])
            check_inplace(op, i, xs[i], at(weight, i))
        end
    end
    local out = {}
    for i = 1, #xs do
        local x = xs[i]
        out[i] = inplace and x:lerp_(ends[i], at(weight, i)) or x:lerp(ends[i], at(weight, i))
    end
    return out
end
define("_foreach_lerp", function(xs, ends, weight) return lerp("_foreach_lerp", false, xs, ends,
    weight) end)
define("_foreach_lerp_", function(xs, ends, weight) lerp("_foreach_lerp_", true, xs, ends,
    weight) end)

for _, name in ipairs({ "addcmul", "addcdiv" }) do
    local function run(op, inplace, xs, t1s, t2s, value)
        tensors(op, xs, "self")
        tensors(op, t1s, "tensor1")
        tensors(op, t2s, "tensor2")
        same_length(op, xs, t1s, "tensor1")
        same_length(op, xs, t2s, "tensor2")
        if value == nil then
            value = 1
        elseif type(value) == "table" and not is_tensor(value) then
            same_length(op, xs, value, "scalars")
        elseif type(value) ~= "number" then
            raise(("tide: %s: value must be a number or a list of numbers, got %s"):format(op,
                is_tensor(value) and "a tensor" or type(value)))
        end
        local method = inplace and name .. "_" or name
        if inplace then
            lazy_tide()
            for i = 1, #xs do
                check_inplace(op, i, xs[i], t1s[i])
                check_inplace(op, i, xs[i], t2s[i])
                check_inplace(op, i, xs[i], at(value, i))
            end
        end
        local out = {}
        for i = 1, #xs do
            out[i] = xs[i][method](xs[i], t1s[i], t2s[i], { value = at(value, i) })
        end
        return out
    end
    local op = "_foreach_" .. name
    define(op, function(xs, t1s, t2s, value) return run(op, false, xs, t1s, t2s, value) end)
    define(op .. "_", function(xs, t1s, t2s, value) run(op .. "_", true, xs, t1s, t2s, value) end)
end

-- the unary functions whose result keeps an integer tensor's dtype (the others need floats)
local ANY_DTYPE = { abs = true, neg = true, sign = true, ceil = true, floor = true,
    round = true, trunc = true, frac = true }

for _, name in ipairs({ "abs", "acos", "asin", "atan", "ceil", "cos", "cosh", "erf", "erfc",
    "exp", "expm1", "floor", "frac", "lgamma", "log", "log10", "log1p", "log2", "neg",
    "reciprocal", "round", "sigmoid", "sign", "sin", "sinh", "sqrt", "tan", "tanh", "trunc" }) do
    local op = "_foreach_" .. name
    define(op, function(xs)
        tensors(op, xs, "self")
        local out = {}
        for i = 1, #xs do
            out[i] = xs[i][name](xs[i])
        end
        return out
    end)
    define(op .. "_", function(xs)
        tensors(op .. "_", xs, "self")
        if not ANY_DTYPE[name] then
            for i = 1, #xs do
                if not xs[i]:is_floating_point() then
                    raise(("tide: %s_: element %d is %s; %s in place needs floating-point " ..
                        "tensors (convert with :to(\"float32\"))"):format(op, i, xs[i].dtype,
                        name))
                end
            end
        end
        for i = 1, #xs do
            xs[i][name .. "_"](xs[i])
        end
    end)
end

define("_foreach_zero_", function(xs)
    tensors("_foreach_zero_", xs, "self")
    for i = 1, #xs do
        xs[i]:zero_()
    end
end)

define("_foreach_copy_", function(xs, srcs, non_blocking)
    local op = "_foreach_copy_"
    tensors(op, xs, "self")
    tensors(op, srcs, "src")
    same_length(op, xs, srcs, "src")
    lazy_tide()
    for i = 1, #xs do -- copy_ crosses devices and dtypes: only the shape must fit
        check_inplace(op, i, xs[i], srcs[i], true)
    end
    for i = 1, #xs do
        xs[i]:copy_(srcs[i], non_blocking)
    end
end)

define("_foreach_norm", function(xs, ord)
    tensors("_foreach_norm", xs, "self")
    local out = {}
    for i = 1, #xs do
        out[i] = xs[i]:norm(ord or 2)
    end
    return out
end)

return M
