-- tide.index_reduce: PyTorch's index_reduce(dim, index, source, reduce[, {include_self =
-- true}]) and index_reduce_ (t:X, tide.X): source's slice i along dim reduced into t's slice
-- index[i] (1-based, as index_add_'s), reduce "prod", "mean", "amax" or "amin"; without
-- include_self, t's own values in a slice that index names take no part (they are replaced).
-- Written as scatter_reduce over index expanded to source's shape, so its gradients are
-- scatter_reduce's (PyTorch's). Loaded on first use (lua/tide/_lazy_ops.lua).
local core = require("tide.core")
local args = require("tide.op_args")
local raise = require("tide.autograd.raise")
local no_grad = require("tide.autograd").no_grad
local same_device = require("tide._same_device")
local with_inplace = require("tide.pointwise").with_inplace

local Tensor = core.Tensor
local check, shape_str = args.check, args.shape_str

local M = { functions = {} }

local REDUCE = { prod = true, mean = true, amax = true, amin = true }
local OPTIONS = { "include_self" }

with_inplace("index_reduce", function(x, dim, index, src, reduce, opts, ...)
    local op = "index_reduce"
    args.no_extra(op, 6, ...)
    check(op, x)
    check(op, index, 3)
    check(op, src, 4)
    same_device(op, x, index, src)
    if index.dtype ~= "int64" and index.dtype ~= "int32" or index:dim() > 1 then
        raise(("tide: %s: index must be a 1-D int64 or int32 tensor, got %s %s"):format(op,
            index.dtype, shape_str(index:size())))
    end
    if not REDUCE[reduce] then
        raise(("tide: %s: reduce must be \"prod\", \"mean\", \"amax\" or \"amin\", got %s%s")
            :format(op, type(reduce) == "string" and ("%q"):format(reduce) or type(reduce),
                reduce == "sum" and "; use index_add for a sum" or ""))
    end
    local o = args.options(op, opts, OPTIONS, "{include_self = false}")
    if o.include_self ~= nil and type(o.include_self) ~= "boolean" then
        raise(("tide: %s: include_self must be a boolean, got %s"):format(op,
            type(o.include_self)))
    end
    if x:dim() == 0 then
        raise(("tide: %s: needs a tensor with at least one dim, got a 0-D tensor; reshape " ..
            "it with :reshape(1)"):format(op))
    end
    local d = args.dim_of(op, x, dim)
    local xs, ss = x:size(), src:size()
    local fits = #ss == #xs
    for k = 1, #xs do
        fits = fits and (k == d or ss[k] == xs[k])
    end
    if not fits then
        raise(("tide: %s: source %s must have the tensor's shape %s except in dim %d")
            :format(op, shape_str(ss), shape_str(xs), d))
    end
    if index:numel() ~= ss[d] then
        raise(("tide: %s: index has %d elements, source's dim %d has %d; give one index " ..
            "per slice of source"):format(op, index:numel(), d, ss[d]))
    end
    if x.dtype ~= src.dtype then
        raise(("tide: %s: the tensor is %s, source %s; convert source with :to(\"%s\")")
            :format(op, x.dtype, src.dtype, x.dtype))
    end
    local bad = no_grad(function()
        local i = index:reshape(-1)
        local out = i:lt(1):logical_or(i:gt(xs[d]))
        return out:any():item() and i:masked_select(out)[1]:item()
    end)
    if bad then
        raise(("tide: %s: index %d is out of range for dim %d of size %d; indices are " ..
            "1-based: use 1..%d"):format(op, bad, d, xs[d], xs[d]))
    end
    local shape = {}
    for k = 1, #xs do
        shape[k] = k == d and ss[d] or 1
    end
    local idx = index:reshape(shape):expand(ss)
    return args.as_op(op, "scatter_reduce", Tensor.scatter_reduce, x, d, idx, src, reduce,
        { include_self = o.include_self })
end)
M.functions.index_reduce = Tensor.index_reduce

M.names = { "index_reduce" }
return M
