-- tide.nn.grad: PyTorch 1.13's torch.nn.grad, the gradients of F.conv1d/2d/3d with respect to
-- their input (convNd_input) and weight (convNd_weight) given the other operand and
-- grad_output. Each is the forward convolution's gradient by tide's autograd: a zero tensor of
-- the requested size that requires grad, F.convNd, autograd.grad with grad_output, under
-- enable_grad (so it runs inside a custom Function's backward, where recording is off); the
-- result is detached. A convolution is linear in each operand, so the zeros change nothing.
local compat = require("tide._compat")
local core = require("tide.core")
local autograd = require("tide.autograd")
local op_args = require("tide.op_args")
local A = require("tide.nn._args")
local raise = autograd.raise
local is_tensor = autograd.is_tensor

local M = {}

-- PyTorch's optional parameters after the three required ones, in its order
local NAMES = { "stride", "padding", "dilation", "groups" }

local shape_str = op_args.shape_str

-- the sizes a list (or a tide.Size) gives: nd + 2 integers >= 0, as a fresh table
local function size_arg(who, what, v, nd)
    if type(v) ~= "table" or is_tensor(v) then
        raise(string.format("tide: %s: expected %s to be a list of %d sizes, got %s", who, what,
            nd + 2, is_tensor(v) and "a tensor" or type(v)))
    end
    local n, out = #v, {}
    for i = 1, n do
        local s = v[i]
        if type(s) == "number" and s == math.floor(s) then
            s = compat.tointeger(s) or s -- 4.0 as 4
        end
        if type(s) ~= "number" or s < 0 or s ~= math.floor(s) or s == math.huge then
            raise(string.format("tide: %s: expected %s to hold integers >= 0, got %s at %d",
                who, what, tostring(v[i]), i))
        end
        out[i] = s
    end
    if n ~= nd + 2 then
        local dims = ({ "L", "H, W", "D, H, W" })[nd]
        if what == "weight_size" then
            dims = "C_out, C_in / groups, " .. ({ "kW", "kH, kW", "kD, kH, kW" })[nd]
        else
            dims = "N, C_in, " .. dims
        end
        raise(string.format("tide: %s: expected %s of %d sizes {%s}, got %s", who, what,
            nd + 2, dims, shape_str(out)))
    end
    return out
end

local function tensor_of_rank(who, what, t, nd)
    A.tensor_arg(t, who, what)
    if t:dim() ~= nd + 2 then
        raise(string.format("tide: %s: expected %s with %d dims, got %s", who, what, nd + 2,
            shape_str(t.shape)))
    end
    return t
end

-- the gradient of F.conv<nd>d with respect to its input (wrt_input) or its weight: `given` is
-- the other operand, `size` the requested operand's sizes
local function conv_grad(who, nd, wrt_input, size, given, grad_output, ...)
    local o = A.positional(who, 3, NAMES, ...)
    A.options(o, who, NAMES)
    local size_name = wrt_input and "input_size" or "weight_size"
    size = size_arg(who, size_name, size, nd)
    tensor_of_rank(who, wrt_input and "weight" or "input", given, nd)
    tensor_of_rank(who, "grad_output", grad_output, nd)
    local conv = "conv" .. nd .. "d"
    local F = require("tide.nn.functional")
    return autograd.enable_grad(function()
        local leaf = core.zeros(size, { dtype = given.dtype, device = given.device,
            requires_grad = true })
        local other = given:detach()
        local x, w = leaf, other
        if not wrt_input then
            x, w = other, leaf
        end
        local y = op_args.as_op(who, conv, F[conv], x, w, nil, { stride = o.stride,
            padding = o.padding, dilation = o.dilation, groups = o.groups })
        if not op_args.same_shape(y.shape, grad_output.shape) then
            raise(string.format("tide: %s: grad_output has shape %s, but the convolution of " ..
                "input %s with weight %s gives %s", who, shape_str(grad_output.shape),
                shape_str(x.shape), shape_str(w.shape), shape_str(y.shape)))
        end
        local g = op_args.as_op(who, "autograd.grad", autograd.grad, y, leaf,
            grad_output:detach())
        return g[1]:detach()
    end)
end

for nd = 1, 3 do
    local name = "conv" .. nd .. "d"
    -- grad.convNd_input(input_size, weight, grad_output[, stride, padding, dilation, groups]
    -- [, opts])
    M[name .. "_input"] = function(input_size, weight, grad_output, ...)
        return conv_grad(name .. "_input", nd, true, input_size, weight, grad_output, ...)
    end
    -- grad.convNd_weight(input, weight_size, grad_output[, stride, padding, dilation, groups]
    -- [, opts])
    M[name .. "_weight"] = function(input, weight_size, grad_output, ...)
        return conv_grad(name .. "_weight", nd, false, weight_size, input, grad_output, ...)
    end
end

return M
