-- tide.inplace_views: PyTorch's in-place view ops t_, transpose_, swapdims_, swapaxes_, squeeze_,
-- unsqueeze_ and as_strided_. The tensor takes the geometry of its view (the same object over
-- the same storage, as set_ gives it) and is returned. With grad mode on and the tensor
-- requiring grad, its history goes on through the view op, recorded on the tensor as it was
-- (autograd's alias), so gradients and later writes through views of it flow as through the
-- out-of-place op; a leaf that requires grad is refused, as PyTorch refuses it (under
-- tide.no_grad it may change).
local core = require("tide.core")
local autograd = require("tide.autograd")
local raise = autograd.raise
local as_op = require("tide.op_args").as_op

local Tensor = core.Tensor
local select = select

local M = { functions = {} }

-- torch_name(...): the node's name in PyTorch 1.13 for these arguments
local function inplace_view(name, view, torch_name)
    Tensor[name] = function(t, ...)
        if t.requires_grad and core.is_grad_enabled() then
            local why = autograd._inplace_refusal(t)
            if why then
                raise("tide: " .. name .. ": in-place operation " .. why[1] .. "; " .. why[2])
            end
            local v = as_op(name, view, Tensor[view], autograd._alias(t), ...)
            return autograd._take_view(t, v, torch_name(...))
        end
        t:set_(as_op(name, view, Tensor[view], t, ...))
        return t
    end
end

local function named(n)
    return function()
        return n
    end
end
inplace_view("t_", "t", named("TBackward1"))
inplace_view("transpose_", "transpose", named("TransposeBackward1"))
inplace_view("swapdims_", "transpose", named("TransposeBackward1"))
inplace_view("swapaxes_", "transpose", named("TransposeBackward1"))
inplace_view("unsqueeze_", "unsqueeze", named("UnsqueezeBackward1"))
inplace_view("as_strided_", "as_strided", named("AsStridedBackward1"))
inplace_view("squeeze_", "squeeze", function(...)
    return select("#", ...) > 0 and "SqueezeBackward3" or "SqueezeBackward2"
end)

M.names = {}
return M
