-- tide.lowrank: PyTorch's randomized low-rank SVD and PCA (Halko, Martinsson and Tropp 2009,
-- as torch._lowrank): svd_lowrank(A[, q = 6[, niter = 2[, M]]]) gives U [..., m, q], S [..., q]
-- and V [..., n, q] with A - M ~ U diag(S) V^T; pca_lowrank(A[, q = min(6, m, n)[, center =
-- true[, niter = 2]]]) the same of A less its column means. Either takes its arguments as one
-- options table too ({q =, niter =, M =} / {q =, center =, niter =}). The random start (an
-- n x q normal matrix) is drawn from tide's generator (tide.manual_seed repeats a result; not
-- PyTorch's numbers); niter power iterations with a QR after each product follow, then the
-- SVD of the small projected matrix. Exact for a matrix of rank <= q; otherwise the leading
-- singular triplets, approximately. Written in tide.linalg's ops (their gradients; every
-- device). tide.X functions, loaded on first use (lua/tide/_lazy_ops.lua).
local core = require("tide.core")
local args = require("tide.op_args")
local raise = require("tide.autograd.raise")

local check, shape_str = args.check, args.shape_str

local M = { functions = {} }
local F = M.functions

local function LA()
    return require("tide").linalg
end

local function mT(x)
    return x:transpose(-2, -1)
end

-- Q with q orthonormal columns such that Q Q^T (A - M) ~ A - M (Halko's algorithm 4.4)
local function approximate_basis(A, q, niter, Mm)
    local n = A:size(-1)
    local R = core.randn({ n, q }, { dtype = A.dtype, device = A.device })
    local function product(X, Y, Z) -- (X - Z) Y without forming X - Z
        local r = X:matmul(Y)
        return Z and r - Z:matmul(Y) or r
    end
    local At, Mt = mT(A), Mm and mT(Mm)
    local Q = LA().qr(product(A, R, Mm))
    for _ = 1, niter do
        Q = LA().qr(product(At, Q, Mt))
        Q = LA().qr(product(A, Q, Mm))
    end
    return Q
end

local function matrix_of(op, A)
    check(op, A)
    if A:dim() < 2 then
        raise(("tide: %s: expected a matrix or a batch of matrices [..., m, n], got %s")
            :format(op, shape_str(A:size())))
    end
    if A.dtype ~= "float32" and A.dtype ~= "float64" then
        raise(("tide: %s: needs float32 or float64, got %s; convert with :to(\"float32\")")
            :format(op, A.dtype))
    end
end

local function count(op, name, v, default, lo, hi)
    if v == nil then
        return default
    end
    v = args.integer(op, v, name)
    if v < lo or (hi and v > hi) then
        raise(("tide: %s: %s = %d; expected an integer in [%d, %s]"):format(op, name, v, lo,
            hi and tostring(hi) or "inf"))
    end
    return v
end

local function svd_lowrank(op, A, q, niter, Mm)
    local m, n = A:size(-2), A:size(-1)
    if Mm ~= nil then
        check(op, Mm, 4)
        require("tide._same_device")(op, A, Mm)
    end
    if m < n or n > q then -- the SVD of A^T's approximation: keeps the projected matrix small
        local Q = approximate_basis(mT(A), q, niter, Mm and mT(Mm))
        local Bt = A:matmul(Q)
        if Mm then
            Bt = Bt - Mm:matmul(Q)
        end
        local U, S, Vh = LA().svd(Bt, { full_matrices = false })
        return U, S, Q:matmul(mT(Vh))
    end
    local Q = approximate_basis(A, q, niter, Mm)
    local B = mT(Q):matmul(A)
    if Mm then
        B = B - mT(Q):matmul(Mm)
    end
    local U, S, Vh = LA().svd(mT(B), { full_matrices = false })
    return Q:matmul(mT(Vh)), S, U
end

function F.svd_lowrank(A, q, niter, Mm, ...)
    local op = "svd_lowrank"
    matrix_of(op, A)
    if type(q) == "table" then
        args.no_extra(op, 2, niter, Mm, ...)
        local o = args.options(op, q, { "q", "niter", "M" }, "{q = 6}")
        q, niter, Mm = o.q, o.niter, o.M
    else
        args.no_extra(op, 4, ...)
    end
    local k = math.min(A:size(-2), A:size(-1))
    q = count(op, "q", q, 6, 1, k)
    niter = count(op, "niter", niter, 2, 0)
    return svd_lowrank(op, A, q, niter, Mm)
end

function F.pca_lowrank(A, q, center, niter, ...)
    local op = "pca_lowrank"
    matrix_of(op, A)
    if type(q) == "table" then
        args.no_extra(op, 2, center, niter, ...)
        local o = args.options(op, q, { "q", "center", "niter" }, "{q = 2}")
        q, center, niter = o.q, o.center, o.niter
    else
        args.no_extra(op, 4, ...)
    end
    local k = math.min(A:size(-2), A:size(-1))
    q = count(op, "q", q, math.min(6, k), 1, k)
    niter = count(op, "niter", niter, 2, 0)
    if center ~= nil and type(center) ~= "boolean" then
        raise(("tide: %s: center must be a boolean, got %s"):format(op, type(center)))
    end
    if center ~= false then
        A = A - A:mean(-2, true)
    end
    return svd_lowrank(op, A, q, niter, nil)
end

M.names = { "svd_lowrank", "pca_lowrank" }
return M
