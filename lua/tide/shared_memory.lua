-- tide.shared_memory: PyTorch's t:share_memory_() and t:is_shared(). PyTorch moves a CPU
-- tensor's storage into shared memory for torch.multiprocessing's worker processes; tide has
-- no worker processes (its DataLoader and threads are one process, which reads every tensor's
-- memory as it is), so there is nothing to move: share_memory_() returns t unchanged and notes
-- its storage, and is_shared() answers true for a tensor over a noted storage (t or a view of
-- it, while the tensor it was called on lives), false otherwise, as PyTorch's answers before
-- and after the move. On CUDA both are the same (PyTorch's share_memory_ is a no-op there).
-- Loaded on first use (lua/tide/_lazy_ops.lua).
local core = require("tide.core")
local args = require("tide.op_args")

local Tensor = core.Tensor

local M = { functions = {} }

local noted = setmetatable({}, { __mode = "k" }) -- tensors share_memory_ was called on

function Tensor.share_memory_(t, ...)
    args.no_extra("share_memory_", 1, ...)
    args.check("share_memory_", t)
    noted[t] = true
    return t
end

function Tensor.is_shared(t, ...)
    args.no_extra("is_shared", 1, ...)
    args.check("is_shared", t)
    for u in pairs(noted) do
        if t:_shares_storage(u) then
            return true
        end
    end
    return false
end

M.names = {}
return M
