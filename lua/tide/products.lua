-- tide.products: the matrix products PyTorch scripts call by their BLAS names, written with
-- matmul and its broadcasting (docs/API.md, "The wider surface"): outer, bmm, addmm. Each
-- checks the ranks PyTorch checks (matmul alone would broadcast where they refuse), then
-- records matmul and the element-wise ops, which autograd differentiates. Tensor methods, and
-- tide.X functions.
local core = require("tide.core")
local raise = require("tide.autograd.raise")
local args = require("tide.op_args")

local Tensor = core.Tensor
local check, shape_str = args.check, args.shape_str

local M = { functions = {} }

local function rank(op, t, n, what)
    if t:dim() ~= n then
        raise(("tide: %s: %s must be %d-D, got %s"):format(op, what, n, shape_str(t:size())))
    end
end

-- outer(b): the [n, m] products a_i b_j of two 1-D tensors
function Tensor.outer(a, b)
    check("outer", a)
    check("outer", b, 2)
    rank("outer", a, 1, "the first vector")
    rank("outer", b, 1, "the second vector")
    return a:view(-1, 1) * b
end

-- bmm(b): [B, n, m] @ [B, m, p] -> [B, n, p], without broadcasting
function Tensor.bmm(a, b)
    check("bmm", a)
    check("bmm", b, 2)
    rank("bmm", a, 3, "batch1")
    rank("bmm", b, 3, "batch2")
    if a:size(1) ~= b:size(1) or a:size(3) ~= b:size(2) then
        raise(("tide: bmm: batch1 %s and batch2 %s do not match: expected [B, n, m] and " ..
            "[B, m, p]"):format(shape_str(a:size()), shape_str(b:size())))
    end
    return a:matmul(b)
end

local ADDMM_OPTIONS = { "beta", "alpha" }

-- addmm(m1, m2[, {beta = 1, alpha = 1}]): beta x + alpha (m1 @ m2), m1 and m2 2-D, x
-- broadcastable to the product's shape; beta = 0 leaves x out (its NaNs too), as PyTorch
function Tensor.addmm(x, m1, m2, opts)
    check("addmm", x)
    check("addmm", m1, 2)
    check("addmm", m2, 3)
    local o = args.options("addmm", opts, ADDMM_OPTIONS, "{beta = 0.5}")
    local beta, alpha = o.beta or 1, o.alpha or 1
    if type(beta) ~= "number" or type(alpha) ~= "number" then
        raise("tide: addmm: beta and alpha must be numbers")
    end
    rank("addmm", m1, 2, "mat1")
    rank("addmm", m2, 2, "mat2")
    if m1:size(2) ~= m2:size(1) then
        raise(("tide: addmm: mat1 %s and mat2 %s cannot be multiplied (%d columns, %d rows)")
            :format(shape_str(m1:size()), shape_str(m2:size()), m1:size(2), m2:size(1)))
    end
    local out = { m1:size(1), m2:size(2) }
    if not pcall(x.expand, x, out) then
        raise(("tide: addmm: input %s does not broadcast to the product's shape %s")
            :format(shape_str(x:size()), shape_str(out)))
    end
    local p = m1:matmul(m2)
    if alpha ~= 1 then
        p = p * alpha
    end
    if beta == 0 then
        return p
    end
    return p + (beta == 1 and x or x * beta)
end

M.names = { "outer", "bmm", "addmm" }
return M
