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

-- PyTorch 1.13's other top-level functions (spec/namespace_torch_spec.lua): methods as
-- functions (dispatched on the tensor, a complex one included), the *_copy twins of the view
-- ops (the view, cloned: a new tensor, contiguous, its gradient the view's), the in-place
-- nn.functional forms, and thin wrappers over tide's ops
local function tensor_input(name, input) -- a real or a complex tensor, else the error
    if not is_tensor(input) and not is_complex(input) then
        raise(("tide: %s: expected a tensor as input, got %s"):format(name, shown(input)))
    end
end
for _, name in ipairs({ "adjoint", "conj_physical", "conj_physical_", "resolve_conj",
    "resolve_neg", "is_conj", "is_neg", "is_inference", "get_device", "index_put" }) do
    define(name, function(input, ...)
        tensor_input(name, input)
        return input[name](input, ...)
    end)
end
define("unsafe_split_with_sizes", function(input, ...)
    args.check("unsafe_split_with_sizes", input)
    return input:unsafe_split_with_sizes(...)
end)

local function cloned(r)
    if is_tensor(r) or is_complex(r) then
        return r:clone()
    end
    local out = {}
    for i, v in ipairs(r) do
        out[i] = v:clone()
    end
    return out
end
for _, op in ipairs({ "as_strided", "diagonal", "expand", "permute", "select", "split",
    "split_with_sizes", "squeeze", "t", "transpose", "unbind", "unfold", "unsqueeze",
    "view" }) do
    local name = op .. "_copy"
    define(name, function(input, ...)
        tensor_input(name, input)
        return cloned(input[op](input, ...))
    end)
end
define("alias_copy", function(input, ...)
    tensor_input("alias_copy", input)
    args.no_extra("alias_copy", 1, ...)
    return cloned(input)
end)
define("detach_copy", function(input, ...)
    tensor_input("detach_copy", input)
    args.no_extra("detach_copy", 1, ...)
    return cloned(input:detach())
end)
for _, op in ipairs({ "view_as_real", "view_as_complex" }) do
    define(op .. "_copy", function(input, ...)
        return cloned(require("tide")[op](input, ...))
    end)
end

local function F()
    return require("tide.nn.functional")
end
-- torch.celu_(x[, alpha]), selu_(x), rrelu_(x[, lower, upper, training]),
-- threshold_(x, threshold, value): nn.functional's in-place forms
for _, name in ipairs({ "celu_", "selu_", "rrelu_", "threshold_" }) do
    define(name, function(input, ...)
        return F()[name](input, ...)
    end)
end
-- torch.dropout_(x, p, train), alpha_dropout_, feature_alpha_dropout_: F.X in place
for _, op in ipairs({ "dropout", "alpha_dropout", "feature_alpha_dropout" }) do
    define(op .. "_", function(input, p, train, ...)
        args.no_extra(op .. "_", 3, ...)
        return F()[op](input, { p = p, training = train, inplace = true })
    end)
end

-- range(start, end[, step = 1][, {dtype =, device =, requires_grad =}]): PyTorch's deprecated
-- torch.range, end included: floor((end - start) / step) + 1 values start + i step, of the
-- default float dtype unless dtype says
define("range", function(start, stop, step, opts, ...)
    if type(step) == "table" then
        step, opts = nil, step
    end
    step = step == nil and 1 or step
    for _, v in ipairs({ { "start", start }, { "end", stop }, { "step", step } }) do
        if type(v[2]) ~= "number" then
            raise(("tide: range: expected %s to be a number, got %s"):format(v[1], shown(v[2])))
        end
    end
    if step == 0 or (stop - start) * step < 0 then
        raise(("tide: range: upper bound and larger bound inconsistent with step sign " ..
            "(start %s, end %s, step %s)"):format(tostring(start), tostring(stop),
            tostring(step)))
    end
    local o = args.options("range", opts, { "dtype", "device", "requires_grad" },
        '{dtype = "float64"}')
    local n = math.floor((stop - start) / step) + 1
    local r = core.arange(0, n, { dtype = "float64", device = o.device }):mul(step):add(start)
    r = r:to(o.dtype or core.get_default_dtype())
    if o.requires_grad then
        r:requires_grad_(true)
    end
    return r
end)

-- empty_strided(size, stride[, {dtype =, device =, requires_grad =}]): an uninitialised
-- tensor with those sizes and strides (t:new_empty_strided's)
define("empty_strided", function(size, stride, opts, ...)
    args.no_extra("empty_strided", 3, ...)
    local o = args.options("empty_strided", opts, { "dtype", "device", "requires_grad" },
        '{dtype = "float64"}')
    local proto = core.empty({ 0 }, { dtype = o.dtype, device = o.device })
    return proto:new_empty_strided(size, stride, o)
end)

-- convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding,
-- groups): conv{1,2,3}d or conv_transpose{1,2,3}d by the weight's dims, as PyTorch's
define("convolution", function(input, weight, bias, stride, padding, dilation, transposed,
                               output_padding, groups, ...)
    args.no_extra("convolution", 9, ...)
    args.check("convolution", weight)
    local n = weight:dim() - 2
    if n < 1 or n > 3 then
        raise(("tide: convolution: expected a 3-D, 4-D or 5-D weight, got %d-D")
            :format(weight:dim()))
    end
    if transposed then
        return F()["conv_transpose" .. n .. "d"](input, weight, bias, stride, padding,
            output_padding, groups, dilation)
    end
    return F()["conv" .. n .. "d"](input, weight, bias, stride, padding, dilation, groups)
end)

-- grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners) (and _2d, _3d),
-- affine_grid_generator(theta, size, align_corners): F.grid_sample and F.affine_grid with
-- PyTorch's integer codes (mode 0 bilinear, 1 nearest, 2 bicubic; padding 0 zeros, 1 border,
-- 2 reflection)
local MODES = { [0] = "bilinear", [1] = "nearest", [2] = "bicubic" }
local PADDINGS = { [0] = "zeros", [1] = "border", [2] = "reflection" }
for _, name in ipairs({ "grid_sampler", "grid_sampler_2d", "grid_sampler_3d" }) do
    define(name, function(input, grid, mode, padding, align_corners, ...)
        args.no_extra(name, 5, ...)
        if MODES[mode] == nil or PADDINGS[padding] == nil then
            raise(("tide: %s: expected interpolation_mode 0, 1 or 2 and padding_mode 0, 1 or " ..
                "2, got %s and %s"):format(name, shown(mode), shown(padding)))
        end
        return F().grid_sample(input, grid, { mode = MODES[mode], padding_mode = PADDINGS[padding],
            align_corners = align_corners == true })
    end)
end
define("affine_grid_generator", function(theta, size, align_corners, ...)
    args.no_extra("affine_grid_generator", 3, ...)
    if type(align_corners) ~= "boolean" then -- required, as PyTorch's third argument
        raise(("tide: affine_grid_generator: align_corners must be a boolean, got %s")
            :format(args.typename(align_corners)))
    end
    return F().affine_grid(theta, size, { align_corners = align_corners })
end)

-- the recurrent cells as functions: rnn_tanh_cell / rnn_relu_cell / gru_cell(input, hx,
-- w_ih, w_hh[, b_ih, b_hh]) return h'; lstm_cell(input, {h, c}, w_ih, w_hh[, b_ih, b_hh])
-- returns h', c' (PyTorch's tuple as two values); gates in PyTorch's order
local function gates(input, hx, w_ih, w_hh, b_ih, b_hh)
    local lin = F().linear
    return lin(input, w_ih, b_ih), lin(hx, w_hh, b_hh)
end
define("rnn_tanh_cell", function(input, hx, w_ih, w_hh, b_ih, b_hh, ...)
    args.no_extra("rnn_tanh_cell", 6, ...)
    local gi, gh = gates(input, hx, w_ih, w_hh, b_ih, b_hh)
    return gi:add(gh):tanh()
end)
define("rnn_relu_cell", function(input, hx, w_ih, w_hh, b_ih, b_hh, ...)
    args.no_extra("rnn_relu_cell", 6, ...)
    local gi, gh = gates(input, hx, w_ih, w_hh, b_ih, b_hh)
    return gi:add(gh):relu()
end)
define("lstm_cell", function(input, hx, w_ih, w_hh, b_ih, b_hh, ...)
    args.no_extra("lstm_cell", 6, ...)
    if type(hx) ~= "table" or is_tensor(hx) or not is_tensor(hx[1]) or not is_tensor(hx[2]) then
        raise("tide: lstm_cell: expected hx to be a list {h, c} of two tensors, got " ..
            shown(hx))
    end
    local gi, gh = gates(input, hx[1], w_ih, w_hh, b_ih, b_hh)
    local g = gi:add(gh):chunk(4, -1)
    local c = g[2]:sigmoid():mul(hx[2]):add(g[1]:sigmoid():mul(g[3]:tanh()))
    return g[4]:sigmoid():mul(c:tanh()), c
end)
define("gru_cell", function(input, hx, w_ih, w_hh, b_ih, b_hh, ...)
    args.no_extra("gru_cell", 6, ...)
    local gi, gh = gates(input, hx, w_ih, w_hh, b_ih, b_hh)
    local i, h = gi:chunk(3, -1), gh:chunk(3, -1)
    local r = i[1]:add(h[1]):sigmoid()
    local z = i[2]:add(h[2]):sigmoid()
    local n = i[3]:add(r:mul(h[3])):tanh()
    return n:add(z:mul(hx:sub(n)))
end)

return M
