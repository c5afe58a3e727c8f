-- tide.detach_inplace: PyTorch's t:detach_(), t:detach() in place: t leaves the graph (no
-- grad_fn, requires_grad false) and is returned; a leaf keeps the .grad it has. Ops recorded
-- with t before keep their edge to its history, but their gradient formulas read t's
-- requires_grad when backward runs, so they see t detached and pass no gradient through it
-- (PyTorch's still do; docs/API.md says so). A view (made while recording,
-- or of a tensor linked to its root) is refused, as PyTorch refuses views: its base would go
-- on sharing the storage inside the graph. Loaded on first use (lua/tide/_lazy_ops.lua).
local core = require("tide.core")
local autograd = require("tide.autograd")
local args = require("tide.op_args")

local Tensor = core.Tensor

local M = { functions = {} }

function Tensor.detach_(t, ...)
    args.no_extra("detach_", 1, ...)
    args.check("detach_", t)
    if autograd.is_view(t) or core._internal.view_root(t) ~= nil then
        autograd.raise("tide: detach_: the tensor is a view of another, which cannot leave " ..
            "the graph in place (nor in PyTorch); use t:detach(), a new tensor without history")
    end
    t:_ag().grad_fn = nil
    t:_set_requires_grad_internal(false)
    return t
end

M.names = {}
return M
