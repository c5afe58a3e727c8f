--- tide.distributed.nn: PyTorch's torch.distributed.nn.functional, the collectives autograd
-- differentiates through (open_clip's gather_with_grad, a contrastive loss over every rank's
-- batch). The gradient is that of the sum of every rank's loss, as PyTorch's:
--
--     local parts = dist.nn.all_gather(t)  -- {rank 0's t, rank 1's t, ...}, with gradients
--     local s = dist.nn.all_reduce(t)      -- the sum over the ranks (a new tensor)
--
-- all_gather's backward sums, over the ranks, the gradients each gave to this rank's part;
-- all_reduce's sums the ranks' gradients. Collectives: every rank calls them, and backward.
local autograd = require("tide.autograd")
local args = require("tide.op_args")
local compat = require("tide._compat")

local M = {}

local function dist()
    return require("tide.distributed")
end

local AllGather = autograd.Function:extend("AllGather")

function AllGather.forward(ctx, t)
    local parts = dist().all_gather(t)
    ctx.rank = dist().rank()
    return compat.unpack(parts, 1, #parts)
end

function AllGather.backward(ctx, ...)
    local grads = require("tide").stack({ ... })
    dist().all_reduce(grads)
    return grads[ctx.rank + 1]
end

local AllReduce = autograd.Function:extend("AllReduce")

function AllReduce.forward(_, t)
    return dist().all_reduce(t:clone())
end

function AllReduce.backward(_, g)
    return dist().all_reduce(g:clone())
end

--- dist.nn.all_gather(t): every rank's t, a list ([r + 1] is rank r's), differentiable
function M.all_gather(t, ...)
    args.no_extra("dist.nn.all_gather", 1, ...)
    args.check("dist.nn.all_gather", t)
    return { AllGather.apply(t) }
end

--- dist.nn.all_reduce(t[, {op = "sum"}]): the sum of every rank's t (a new tensor),
--- differentiable (PyTorch's op=ReduceOp.SUM; the other ops have no gradient here)
function M.all_reduce(t, opts, ...)
    args.no_extra("dist.nn.all_reduce", 2, ...)
    args.check("dist.nn.all_reduce", t)
    local o = args.options("dist.nn.all_reduce", opts, { "op" }, "{op = \"sum\"}")
    if o.op ~= nil and o.op ~= "sum" then
        autograd.raise(("tide: dist.nn.all_reduce: op %s has no gradient here; use \"sum\" " ..
            "(dist.all_reduce takes the others, without gradients)"):format(tostring(o.op)))
    end
    return AllReduce.apply(t)
end

return M
