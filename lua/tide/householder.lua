-- tide.householder: PyTorch's torch.geqrf, orgqr and ormqr, QR in LAPACK's Householder form:
-- geqrf(A) gives a (R on and above the diagonal; below it, the reflectors' vectors v_i, whose
-- element i is an implicit 1) and tau ([..., min(m, n)]), with A = Q R, Q = H_1 ... H_k, H_i =
-- I - tau_i v_i v_i^T, each reflection as LAPACK's dlarfg (beta = -sign(alpha) |x|, tau 0
-- where the column below the diagonal is already 0), so a and tau are LAPACK's and PyTorch's;
-- orgqr(a, tau) is linalg.householder_product (Q's first n columns); ormqr(a, tau, C[, left =
-- true[, transpose = false]]) multiplies C by Q (Q C, Q^T C, C Q or C Q^T) one reflection at a
-- time, without forming Q. Written in tensor ops over the whole batch (every device), which
-- autograd differentiates (PyTorch 1.13 has no gradient for geqrf nor ormqr). tide.X
-- functions and Tensor methods; loaded on first use (lua/tide/_lazy_ops.lua).
local core = require("tide.core")
local args = require("tide.op_args")
local raise = require("tide.autograd.raise")
local same_device = require("tide._same_device")
local compat = require("tide._compat")

local Tensor = core.Tensor
local check, shape_str = args.check, args.shape_str
local unpack = compat.unpack

local M = { functions = {} }
local F = M.functions

local function float_matrix(op, A, pos)
    check(op, A, pos)
    if A:dim() < 2 then
        raise(("tide: %s: expected a matrix or a batch of matrices [..., m, n], got %s")
            :format(op, shape_str(A:size())))
    end
    if A.dtype ~= "float32" and A.dtype ~= "float64" then
        raise(("tide: %s: needs float32 or float64 (as PyTorch's), got %s; convert with " ..
            ":to(\"float64\")"):format(op, A.dtype))
    end
    return A
end

function F.geqrf(A, ...)
    local op = "geqrf"
    args.no_extra(op, 1, ...)
    float_matrix(op, A)
    local m, n = A:size(-2), A:size(-1)
    local k = math.min(m, n)
    local batch = { unpack(A:size(), 1, A:dim() - 2) }
    local function shaped(r, c)
        local s = { unpack(batch) }
        s[#s + 1], s[#s + 2] = r, c
        return s
    end
    local opts = { dtype = A.dtype, device = A.device }
    local R = A
    local vs, taus = {}, {}
    for j = 1, k do
        local len = m - j + 1
        local x = R:narrow(-1, j, 1):narrow(-2, j, len) -- [..., len, 1]
        local alpha = x:narrow(-2, 1, 1)
        local tau, v
        if len > 1 then
            local tail = x:narrow(-2, 2, len - 1)
            local tail2 = (tail * tail):sum(-2, true)
            local none = tail2:eq(0) -- nothing below the diagonal: H = I
            local norm = (alpha * alpha + tail2):sqrt()
            local beta = core.where(alpha:ge(0), -norm, norm)
            local scale = core.where(none, 1, alpha - beta)
            v = core.cat({ core.ones({ 1, 1 }, opts):expand(shaped(1, 1)), tail / scale }, -2)
            tau = core.where(none, 0, (beta - alpha) / core.where(none, 1, beta))
            local below = R:narrow(-2, j, len)
            below = below - (tau * v):matmul(v:transpose(-2, -1):matmul(below))
            R = j > 1 and core.cat({ R:narrow(-2, 1, j - 1), below }, -2) or below
        else
            tau = core.zeros(shaped(1, 1), opts)
            v = core.ones(shaped(1, 1), opts)
        end
        taus[j] = tau:squeeze(-1)
        -- v below its implicit 1, at rows j + 1 .. m of column j
        vs[j] = j > 1 and core.cat({ core.zeros(shaped(j - 1, 1), opts), v }, -2) or v
    end
    if k == 0 then
        return R:clone(), core.zeros(shaped(1, 0), opts):squeeze(-2)
    end
    local lower = core.cat(vs, -1):tril(-1) -- [..., m, k]
    if n > k then
        lower = core.cat({ lower, core.zeros(shaped(m, n - k), opts) }, -1)
    end
    return R:triu() + lower, core.cat(taus, -1)
end

function F.orgqr(a, tau, ...)
    local op = "orgqr"
    args.no_extra(op, 2, ...)
    float_matrix(op, a)
    check(op, tau, 2)
    return args.as_op(op, "linalg.householder_product",
        require("tide").linalg.householder_product, a, tau)
end

local ORMQR = { "left", "transpose" }

-- ormqr(a, tau, C[, left = true[, transpose = false]]) (or {left =, transpose =})
function F.ormqr(a, tau, C, ...)
    local op = "ormqr"
    float_matrix(op, a)
    check(op, tau, 2)
    float_matrix(op, C, 3)
    local left, transpose = ...
    if type(left) == "table" then
        args.no_extra(op, 4, select(2, ...))
        local o = args.options(op, left, ORMQR, "{transpose = true}")
        left, transpose = o.left, o.transpose
    else
        args.no_extra(op, 5, select(3, ...))
    end
    for name, v in pairs({ left = left, transpose = transpose }) do
        if v ~= nil and type(v) ~= "boolean" then
            raise(("tide: %s: %s must be a boolean, got %s"):format(op, name, type(v)))
        end
    end
    left, transpose = left ~= false, transpose == true
    same_device(op, a, tau, C)
    if a.dtype ~= tau.dtype or a.dtype ~= C.dtype then
        raise(("tide: %s: input, tau and other must have one dtype, got %s, %s and %s")
            :format(op, a.dtype, tau.dtype, C.dtype))
    end
    local mn = left and C:size(-2) or C:size(-1)
    local k = tau:dim() > 0 and tau:size(-1) or -1
    if a:size(-2) ~= mn then
        raise(("tide: %s: input %s has %d rows and other %s %d %s; with left = %s they must " ..
            "match (other's %s with left = %s)"):format(op, shape_str(a:size()), a:size(-2),
            shape_str(C:size()), mn, left and "rows" or "columns", tostring(left),
            left and "columns" or "rows", tostring(not left)))
    end
    if tau:dim() ~= a:dim() - 1 or k > a:size(-1) or k > mn then
        raise(("tide: %s: tau must be [..., k] with input's batch dims and k <= %d, got %s")
            :format(op, math.min(a:size(-1), mn), shape_str(tau:size())))
    end
    local rows = core.arange(1, mn + 1, { dtype = "int64", device = a.device }):view(mn, 1)
    local function reflect(X, i)
        local v = core.where(rows:gt(i), a:narrow(-1, i, 1), rows:eq(i):to(a.dtype))
        local ti = tau:narrow(-1, i, 1):unsqueeze(-1)
        if left then -- H X = X - tau v (v^T X)
            return X - (ti * v):matmul(v:transpose(-2, -1):matmul(X))
        end
        return X - X:matmul(v):matmul((ti * v):transpose(-2, -1)) -- X H
    end
    -- Q = H_1 ... H_k: Q C applies H_k first, Q^T C H_1 first; C Q H_1 first, C Q^T H_k first
    local forward = (left and transpose) or (not left and not transpose)
    local X = C
    for s = 1, k do
        X = reflect(X, forward and s or k - s + 1)
    end
    return k == 0 and X:clone() or X
end

Tensor.geqrf, Tensor.orgqr, Tensor.ormqr = F.geqrf, F.orgqr, F.ormqr

M.names = { "geqrf", "orgqr", "ormqr" }
return M
