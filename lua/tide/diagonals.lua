-- tide.diagonals: PyTorch's diagflat: t:diagflat([offset = 0]) / tide.diagflat(t[, offset]),
-- the 2-D matrix with t's elements (flattened) on the diagonal offset above the main one
-- (below when negative). Written as reshape and diag, which autograd differentiates. Loaded
-- on first use (lua/tide/_lazy_ops.lua).
local core = require("tide.core")
local args = require("tide.op_args")

local Tensor = core.Tensor

local M = { functions = {} }

function Tensor.diagflat(x, offset, ...)
    args.no_extra("diagflat", 2, ...)
    args.check("diagflat", x)
    offset = offset == nil and 0 or args.integer("diagflat", offset, "offset")
    return args.as_op("diagflat", "diag", Tensor.diag, x:reshape(-1), offset)
end
M.functions.diagflat = Tensor.diagflat

M.names = { "diagflat" }
return M
