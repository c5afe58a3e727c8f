-- tide.torch_functions: PyTorch's small top-level functions that ported scripts call and tide
-- had as methods or not at all: as_tensor, asarray, scalar_tensor, fill (out of place), rsub,
-- t and is_complex (the methods as functions).
local core = require("tide.core")
local autograd = require("tide.autograd")
local args = require("tide.op_args")
local compat = require("tide._compat")
local is_complex = require("tide.complex.tensor").is
local raise = autograd.raise

local Tensor = core.Tensor
local is_tensor = core.is_tensor

local M = { functions = {}, names = {} }
local fns = M.functions

local function define(name, fn)
    fns[name] = fn
    M.names[#M.names + 1] = name
end

local function shown(v)
    if is_tensor(v) then
        return "a tensor"
    end
    return type(v) == "string" and ('"' .. v .. '"') or tostring(v)
end

-- the device dev names (a string or a device), checked as the op's argument
local function device_of(op, dev)
    return args.as_op(op, "device", core.device, dev)
end

-- data as a tensor: a tensor given stays itself when opts' dtype and device (when given) are
-- its own, else is converted as t:to does (recorded by autograd; copy = true always copies);
-- a number, a boolean or a nested table is copied into a new tensor (tide.tensor's rules).
-- copy = false refuses any copy (asarray's)
local function as_tensor(op, data, opts, known)
    local o = args.options(op, opts, known, '{dtype = "float64"}')
    if o.copy ~= nil and type(o.copy) ~= "boolean" then
        raise(("tide: %s: expected copy to be true, false or nil, got %s"):format(op,
            shown(o.copy)))
    end
    if is_complex(data) then -- (a table: its rows otherwise) converted as t:to does
        local r = data
        if o.dtype ~= nil and o.dtype ~= data.dtype then
            r = r:to(o.dtype)
        end
        if o.device ~= nil and device_of(op, o.device) ~= data.device then
            r = r:to(o.device)
        end
        if o.copy == false and not rawequal(r, data) then
            raise(("tide: %s: copy = false, but the complex tensor must be converted; leave " ..
                "copy unset to convert it"):format(op))
        end
        return (o.copy and rawequal(r, data)) and r:clone() or r
    end
    if is_tensor(data) then
        local dev = o.device ~= nil and device_of(op, o.device) or data.device
        local dtype = o.dtype or data.dtype
        local same = dev == data.device and dtype == data.dtype
        if o.copy == false and not same then
            raise(("tide: %s: copy = false, but the %s tensor on %s must be converted to %s " ..
                "on %s; leave copy unset to convert it"):format(op, data.dtype,
                tostring(data.device), tostring(dtype), tostring(dev)))
        end
        if same and not o.copy then
            return data
        end
        return args.as_op(op, "to", data.to, data, dev, { dtype = dtype, copy = o.copy })
    end
    local kind = type(data)
    if kind ~= "number" and kind ~= "boolean" and kind ~= "table" then
        raise(("tide: %s: expected a tensor, a number, a boolean or a nested table, got %s")
            :format(op, kind))
    end
    if o.copy == false then
        raise(("tide: %s: copy = false cannot alias a Lua %s: its values are copied into a " ..
            "new tensor; leave copy unset"):format(op, kind))
    end
    return args.as_op(op, "tensor", core.tensor, data, { dtype = o.dtype, device = o.device })
end

-- as_tensor(data[, {dtype =, device =}])
define("as_tensor", function(data, opts, ...)
    args.no_extra("as_tensor", 2, ...)
    return as_tensor("as_tensor", data, opts, { "dtype", "device" })
end)

-- asarray(obj[, {dtype =, device =, copy =}]): copy nil copies only to convert, true always,
-- false never (a conversion then raises)
define("asarray", function(obj, opts, ...)
    args.no_extra("asarray", 2, ...)
    return as_tensor("asarray", obj, opts, { "dtype", "device", "copy" })
end)

-- scalar_tensor(s[, {dtype =, device =, requires_grad =}]): a 0-d tensor of the default float
-- dtype (PyTorch's: also for an integer or a boolean s) unless dtype says
define("scalar_tensor", function(s, opts, ...)
    args.no_extra("scalar_tensor", 2, ...)
    if type(s) == "boolean" then
        s = s and 1 or 0
    elseif type(s) ~= "number" then
        raise("tide: scalar_tensor: expected a number or a boolean, got " .. shown(s))
    end
    local o = args.options("scalar_tensor", opts, { "dtype", "device", "requires_grad" },
        '{dtype = "float64"}')
    return args.as_op("scalar_tensor", "full", core.full, {}, s, {
        dtype = o.dtype or core.get_default_dtype(), device = o.device,
        requires_grad = o.requires_grad })
end)

-- fill(t, value): a new tensor of t's shape, dtype and device holding value (a number, a
-- boolean or a 0-d tensor, converted to t's dtype). With grad: t's gradient is zero and a
-- tensor value's the sum of the result's, as PyTorch's
define("fill", function(t, value, ...)
    args.no_extra("fill", 2, ...)
    args.check("fill", t)
    if is_tensor(value) then
        if value:dim() ~= 0 then
            raise(("tide: fill: expected a number or a 0-d tensor as value, got a tensor of " ..
                "shape %s; pass value:reshape({}) or value:item()")
                :format(args.shape_str(value.shape)))
        end
        value = args.as_op("fill", "to", value.to, value, t.device, { dtype = t.dtype })
        local out = autograd.needs_record(t) and t:clone()
            or core.empty(t.shape, { dtype = t.dtype, device = t.device })
        return out:copy_(value)
    end
    if type(value) == "boolean" then
        value = value and 1 or 0
    elseif type(value) ~= "number" then
        raise("tide: fill: expected a number or a 0-d tensor as value, got " .. shown(value))
    end
    if autograd.needs_record(t) then
        return t:clone():fill_(value)
    end
    return core.full(t.shape, value, { dtype = t.dtype, device = t.device })
end)

-- rsub(input, other[, alpha = 1]): other - alpha input, as PyTorch's (other a tensor or a
-- number)
define("rsub", function(input, other, alpha, ...)
    args.no_extra("rsub", 3, ...)
    args.check("rsub", input)
    if not is_tensor(other) and type(other) ~= "number" then
        raise("tide: rsub: expected other to be a tensor or a number, got " .. shown(other))
    end
    if alpha == nil then
        alpha = 1
    elseif type(alpha) ~= "number" then
        raise("tide: rsub: expected alpha to be a number, got " .. shown(alpha))
    end
    if input.dtype == "bool" or (is_tensor(other) and other.dtype == "bool") then
        raise("tide: rsub: subtraction with a bool tensor is not supported; to invert a mask " ..
            "use logical_not()")
    end
    local integral = not args.FLOAT[input.dtype] and (is_tensor(other) and
        not args.FLOAT[other.dtype] or not is_tensor(other) and compat.is_integer(other))
    if integral and not compat.is_integer(alpha) then
        raise(("tide: rsub: alpha must be an integer for an integer result, got %s; convert " ..
            "the input with :double() first"):format(tostring(alpha)))
    end
    if is_tensor(other) then
        return args.as_op("rsub", "sub", other.sub, other, input, alpha)
    end
    local scaled = alpha == 1 and input or input:mul(alpha)
    return args.as_op("rsub", "add", scaled.add, scaled:neg(), other)
end)

-- t(input) and is_complex(input): the methods (is_complex: true for a complex tensor,
-- lua/tide/complex/tensor.lua; false for every real one)
define("t", Tensor.t)
define("is_complex", function(input, ...)
    return is_complex(input) or Tensor.is_complex(input, ...)
end)

-- PyTorch's in-place torch.X_(input, ...) functions (torch.sin_(b), torch.clamp_(x, 0, 1)):
-- input:X_(...), the method, with its checks (a leaf that requires grad raises)
M.INPLACE = {
    "abs_", "acos_", "acosh_", "addmv_", "arccos_", "arccosh_", "arcsin_", "arcsinh_",
    "arctan_", "arctanh_", "as_strided_", "asin_", "asinh_", "atan_", "atanh_", "ceil_",
    "clamp_", "clamp_max_", "clamp_min_", "clip_", "cos_", "cosh_", "deg2rad_", "detach_",
    "erf_", "erfc_", "exp2_", "exp_", "expm1_", "fill_", "fix_", "floor_", "frac_", "gcd_",
    "i0_", "index_put_", "lcm_", "ldexp_", "log10_", "log1p_", "log2_", "log_", "logit_",
    "nan_to_num_", "neg_", "negative_", "rad2deg_", "reciprocal_", "relu_", "resize_as_",
    "round_", "rsqrt_", "sigmoid_", "sin_", "sinc_", "sinh_", "sqrt_", "square_", "tan_",
    "tanh_", "trunc_", "xlogy_", "zero_"
}
for _, name in ipairs(M.INPLACE) do
    define(name, function(input, ...)
        if not is_tensor(input) then
            raise(("tide: %s: expected a tensor as input, got %s; torch.%s changes a tensor " ..
                "in place"):format(name, shown(input), name))
        end
        return input[name](input, ...)
    end)
end

return M
