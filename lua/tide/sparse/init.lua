-- tide.sparse: PyTorch's torch.sparse for the COO tensors of tide.sparse_coo_tensor and
-- t:to_sparse() (lua/tide/sparse/coo.lua): sparse.mm(a, b) (a sparse matrix times a dense one,
-- gradients to both), sparse.addmm(mat, a, b[, {beta =, alpha =}]), sparse.sum(t[, dim]), and
-- the legacy constructors sparse.FloatTensor / DoubleTensor(indices, values, size) (pygcn's).
local Sparse = require("tide.sparse.coo")
local args = require("tide.op_args")
local raise = require("tide.autograd.raise")
local core = require("tide.core")

local M = { coo = Sparse }

-- torch.sparse.mm(sparse, dense)
function M.mm(a, b, ...)
    args.no_extra("sparse.mm", 2, ...)
    return Sparse.mm(a, b, "sparse.mm")
end

-- torch.sparse.addmm(mat, sparse, dense, *, beta=1, alpha=1): beta * mat + alpha * (a @ b)
local ADDMM = { "beta", "alpha" }
function M.addmm(mat, a, b, opts, ...)
    local op = "sparse.addmm"
    args.no_extra(op, 4, ...)
    local o = args.options(op, opts, ADDMM, "{beta = 1, alpha = 1}")
    if not core.is_tensor(mat) then
        raise(("tide: %s: expected a dense tensor first (mat), got %s"):format(op,
            Sparse.is(mat) and "a sparse tensor" or type(mat)))
    end
    for _, k in ipairs(ADDMM) do
        if o[k] ~= nil and type(o[k]) ~= "number" then
            raise(("tide: %s: %s must be a number, got %s"):format(op, k, type(o[k])))
        end
    end
    local prod = Sparse.mm(a, b, op)
    local beta, alpha = o.beta or 1, o.alpha or 1
    return (beta == 1 and mat or mat * beta) + (alpha == 1 and prod or prod * alpha)
end

-- torch.sparse.sum(t[, dim])
function M.sum(t, dim, ...)
    args.no_extra("sparse.sum", 2, ...)
    if not Sparse.is(t) then
        raise(("tide: sparse.sum: expected a sparse tensor, got %s"):format(
            core.is_tensor(t) and "a dense tensor (use t:sum())" or type(t)))
    end
    return t:sum(dim)
end

-- torch.sparse.softmax(t, dim) / log_softmax(t, dim): over the stored entries of each line
function M.softmax(t, dim, ...)
    args.no_extra("sparse.softmax", 2, ...)
    return Sparse._softmax("sparse.softmax", t, dim, false)
end

function M.log_softmax(t, dim, ...)
    args.no_extra("sparse.log_softmax", 2, ...)
    return Sparse._softmax("sparse.log_softmax", t, dim, true)
end

-- torch.sparse.FloatTensor(indices, values, size), the legacy constructor: values in float32
-- (DoubleTensor: float64)
local function legacy(name, dtype)
    return function(indices, values, size, ...)
        args.no_extra("sparse." .. name, 3, ...)
        if core.is_tensor(values) then
            values = values:to(dtype)
        end
        return require("tide").sparse_coo_tensor(indices, values, size, { dtype = dtype })
    end
end
M.FloatTensor = legacy("FloatTensor", "float32")
M.DoubleTensor = legacy("DoubleTensor", "float64")

return M
