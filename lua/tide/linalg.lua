-- tide.linalg: PyTorch's torch.linalg for matrices and batches ([..., m, n]).
--   factorisations: lu_factor (partial pivoting), lu and lu_unpack, cholesky, qr (Householder)
--   from them: det, slogdet, inv, solve, solve_triangular, lu_solve
--   matrix_exp (scaling and squaring)
--   spectra: eigh, eigvalsh, svd, svdvals
--   products and norms: matrix_power, multi_dot, cross, vector_norm, matrix_norm, norm
--   from the SVD: pinv, matrix_rank, lstsq, cond
--   over these (lua/tide/_linalg_more.lua): vecdot, diagonal, vander, cholesky_ex, inv_ex,
--   solve_ex, tensorinv, tensorsolve, householder_product
-- The device's own solvers run first where it has them (LAPACK on the CPU: lu_factor,
-- lu_solve, cholesky, solve_triangular, qr, eigh, svd), without recording, each op then recording
-- one node with PyTorch 1.13's closed-form gradient. Elsewhere (CUDA) the same ops are written
-- in tide's tensor ops, which every device runs and autograd differentiates (the gradient of
-- the algorithm is the function's: a pivot choice is piecewise constant): an LU or QR step is
-- a few ops over the whole batch, n steps for an n x n matrix; eigh and svd rotate by Jacobi.
-- Tensor methods det, logdet, slogdet, inverse, cholesky, matrix_power, cross, qr, pinverse,
-- and tide.X functions of the same names (lua/tide/_lazy_ops.lua); the module is tide.linalg,
-- loaded on first use.
local core = require("tide.core")
local autograd = require("tide.autograd")
local raise = autograd.raise
local args = require("tide.op_args")
local same_device = require("tide._same_device")
local compat = require("tide._compat")
local pytorch_args = require("tide.pytorch_args")

local Tensor = core.Tensor
local K = core._internal -- the decompositions' kernels (lua/linalg.c)
local check, shape_str = args.check, args.shape_str
local unpack = compat.unpack

local L = {} -- tide.linalg

-- a complex operand (a table; a tensor is userdata): lua/tide/complex/linalg.lua
local function complex_linalg()
    return require("tide.complex.linalg")
end

local FLOAT = args.FLOAT

-- A as a float matrix or batch of them, square unless rect
local function matrix(op, A, pos, rect)
    check(op, A, pos)
    if A:dim() < 2 then
        raise(("tide: %s: expected a matrix or a batch of matrices [..., m, n], got %s")
            :format(op, shape_str(A:size())))
    end
    if not rect and A:size(-1) ~= A:size(-2) then
        raise(("tide: %s: expected square matrices [..., n, n], got %s"):format(op,
            shape_str(A:size())))
    end
    if not FLOAT[A.dtype] then
        raise(("tide: %s: needs a floating-point tensor, got %s; convert with :to(\"float64\")")
            :format(op, A.dtype))
    end
    if A.dtype ~= "float32" and A.dtype ~= "float64" and not rect then
        raise(("tide: %s: needs float32 or float64 (as PyTorch's), got %s; convert with " ..
            ":to(\"float32\")"):format(op, A.dtype))
    end
    return A
end

-- A of float32 or float64 (the dtypes of PyTorch's LAPACK ops)
local function float_only(op, A)
    if A.dtype ~= "float32" and A.dtype ~= "float64" then
        raise(("tide: %s: needs float32 or float64, got %s; convert with :to(\"float32\")")
            :format(op, A.dtype))
    end
end

-- the batch dims of [..., m, n]
local function batch_of(A)
    local s = A:size()
    return { unpack(s, 1, #s - 2) }
end

-- batch .. {m, n}: a full shape
local function with_batch(batch, m, n)
    local s = { unpack(batch) }
    s[#s + 1], s[#s + 2] = m, n
    return s
end

-- the results of a decomposition ([..., shape] each, one batch) packed along one last dim, so
-- that one node records them all: its gradient arrives packed the same way
local function pack(parts)
    local b = batch_of(parts[1])
    local flat = {}
    for i = 1, #parts do
        local len = 1 -- the count of a part's trailing dims (not -1: an empty batch has none)
        for d = #b + 1, parts[i]:dim() do
            len = len * parts[i]:size(d)
        end
        b[#b + 1] = len
        flat[i] = parts[i]:reshape(b)
        b[#b] = nil
    end
    return core.cat(flat, -1)
end

-- the parts again, of the trailing shapes given ({m, k}, {k}, ...), as views of packed
local function unpack_parts(packed, shapes)
    local b = {}
    local s = packed:size()
    for i = 1, #s - 1 do
        b[i] = s[i]
    end
    local parts, at = {}, 1
    for i = 1, #shapes do
        local sh = shapes[i]
        local len = sh[2] and sh[1] * sh[2] or sh[1]
        local part = packed:narrow(-1, at, len)
        parts[i] = sh[2] and part:reshape(with_batch(b, sh[1], sh[2])) or part
        at = at + len
    end
    return unpack(parts, 1, #shapes)
end

-- two batch shapes broadcast (aligned from the right; a 1 stretches), or an error
local function broadcast_batches(op, a, b)
    local n, out = math.max(#a, #b), {}
    for i = 1, n do
        local x, y = a[#a - n + i] or 1, b[#b - n + i] or 1
        if x ~= y and x ~= 1 and y ~= 1 then
            raise(("tide: %s: the batch dims %s and %s do not broadcast"):format(op,
                shape_str(a), shape_str(b)))
        end
        out[i] = x == 1 and y or x
    end
    return out
end

-- 1..n as an int64 column [1, ..., 1, n, 1] on A's device, broadcastable over A's batch
local function row_ids(A, n)
    local shape = batch_of(A)
    for i = 1, #shape do
        shape[i] = 1
    end
    shape[#shape + 1], shape[#shape + 2] = n, 1
    return core.arange(1, n + 1, { dtype = "int64", device = A.device }):view(shape)
end

-- LU with partial pivoting of [..., m, n], as LAPACK's getrf: PA = LU, L unit lower [m, k]
-- (below the diagonal of lu), U upper [k, n] (on and above it), k = min(m, n). Returns lu,
-- pivots ([..., k] int64, 1-based: row j was swapped with row pivots[j] at step j, LAPACK's and
-- PyTorch's convention), perm ([..., m, 1]: row i of PA is row perm[i] of A) and the
-- permutation's sign ([..., 1, 1]). A zero pivot (a singular matrix) eliminates nothing, as
-- getrf, so det comes out 0, not NaN.
local function lu(A)
    local m, n = A:size(-2), A:size(-1)
    local k = math.min(m, n)
    local ids = row_ids(A, m)
    local U, perm = A, ids:expand(with_batch(batch_of(A), m, 1))
    local sign = core.ones({ 1 }, { dtype = A.dtype, device = A.device })
    local pivots = {}
    for j = 1, k do
        -- the pivot: the largest |U[i, j]| for i >= j (the first on ties, as LAPACK's idamax)
        local p = U:narrow(-1, j, 1):narrow(-2, j, m - j + 1):abs():argmax(-2, true) + (j - 1)
        pivots[j] = p
        local swap = core.where(ids:eq(j), p, core.where(ids:eq(p), j, ids))
        U = U:gather(-2, swap:expand(U:size()))
        perm = perm:gather(-2, swap:expand(perm:size()))
        sign = core.where(p:eq(j), sign, -sign)
        if j < m then
            local row = U:narrow(-2, j, 1)
            local pivot = row:narrow(-1, j, 1)
            local rest = U:narrow(-2, j + 1, m - j)
            local l = rest:narrow(-1, j, 1) / core.where(pivot:eq(0), 1, pivot)
            local parts = { l }
            if j < n then
                parts[2] = rest:narrow(-1, j + 1, n - j) - l * row:narrow(-1, j + 1, n - j)
            end
            if j > 1 then
                table.insert(parts, 1, rest:narrow(-1, 1, j - 1))
            end
            U = core.cat({ U:narrow(-2, 1, j), core.cat(parts, -1) }, -2)
        end
    end
    if k == 0 then -- no steps: no pivots
        local shape = batch_of(A)
        shape[#shape + 1] = 0
        return U, core.zeros(shape, { dtype = "int64", device = A.device }), perm, sign
    end
    return U, core.cat(pivots, -1):squeeze(-2), perm, sign
end

-- the diagonal of [..., n, n] as [..., n]
local function diag_of(A)
    return A:diagonal(0, -2, -1)
end

-- ---- the device's own solvers (LAPACK on the CPU; none on CUDA: the ops above there) ----
-- Each kernel runs without recording; the ops record one node with PyTorch 1.13's closed-form
-- gradient. K.x answers nil where the device has no solver.

local recording = autograd.needs_record

-- the kernel LU of A, the sign of its permutation ([...]) and U's diagonal ([..., n]); nil
-- where the device has no LU
local function kernel_lu(A)
    local LU, piv = K.lu_factor(A)
    if not LU then
        return nil
    end
    local n = A:size(-1)
    local swaps = piv:ne(core.arange(1, n + 1, { dtype = "int64", device = A.device }))
    local sign = 1 - (swaps:to("int64"):sum(-1) % 2):to(A.dtype) * 2
    return LU, piv, sign, diag_of(LU)
end

-- inv(A)^T, for the gradients below (through the kernels: a second-order gradient records it)
local function inv_t(A)
    return L.inv(A):transpose(-2, -1)
end

-- det: g det inv(A)^T; 0 where g det is 0 (a singular A's: PyTorch 1.13's lu_solve of a zero
-- right side), inv_ex's NaN there masked
autograd.def {
    name = "linalg_det",
    reads = { 1, "out" },
    backward = function(nd, g)
        local d = (g * nd.out):unsqueeze(-1):unsqueeze(-1)
        local zero = d:eq(0)
        if not zero:any():item() then
            return d * inv_t(nd[1])
        end
        return (d * L.inv_ex(nd[1]):transpose(-2, -1)):masked_fill(zero, 0)
    end,
}

-- slogdet's log|det|: g inv(A)^T
autograd.def {
    name = "linalg_logabsdet",
    reads = { 1 },
    backward = function(nd, g)
        return g:unsqueeze(-1):unsqueeze(-1) * inv_t(nd[1])
    end,
}

-- X = solve(A, B): gB = solve(A^T, g), gA = -gB X^T
autograd.def {
    name = "linalg_solve",
    reads = { 1, "out" },
    backward = function(nd, g)
        local gB = L.solve(nd[1]:transpose(-2, -1), g)
        local gA = core.is_tensor(nd[1]) and nd[1].requires_grad and
            -gB:matmul(nd.out:transpose(-2, -1)) or nil
        return gA, gB
    end,
}

-- X = solve_triangular(A, B): gB = solve_triangular(A^T, g) (the other triangle), gA = -gB X^T
-- on A's triangle (off its diagonal when unitriangular), as PyTorch's
autograd.def {
    name = "linalg_solve_triangular",
    reads = { 1, "out" },
    backward = function(nd, g)
        local A, upper, unit = nd[1], nd.upper, nd.unit
        local gB = L.solve_triangular(A:transpose(-2, -1), g,
            { upper = not upper, unitriangular = unit })
        local gA
        if A.requires_grad then
            gA = -gB:matmul(nd.out:transpose(-2, -1))
            local k = unit and 1 or 0
            gA = upper and gA:triu(k) or gA:tril(-k)
        end
        return gA, gB
    end,
}

-- L = cholesky(A): PyTorch's cholesky_backward, L^-T Phi(L^T gL) L^-1 symmetrised, Phi the
-- lower triangle with its diagonal halved
autograd.def {
    name = "linalg_cholesky",
    reads = { "out" },
    backward = function(nd, g)
        local Lm = nd.out
        local n = Lm:size(-1)
        local eye = core.eye(n, { dtype = Lm.dtype, device = Lm.device })
        local Linv = L.solve_triangular(Lm, eye:expand(Lm:size()), { upper = false })
        local phi = Lm:transpose(-2, -1):matmul(g):tril() * (1 - eye * 0.5)
        local gA = Linv:transpose(-2, -1):matmul(phi):matmul(Linv)
        return (gA + gA:transpose(-2, -1)) * 0.5
    end,
}

-- LU and pivots of the matrices A, whatever U's diagonal holds (lu_factor_ex's and lu's); A's
-- dtype checked for op when given
local function factor(A, op)
    if op then
        float_only(op, A)
    end
    if not recording(A) then -- the kernel has no gradient: a recorded call runs the ops
        local LU, piv = K.lu_factor(A)
        if LU then
            return LU, piv
        end
    end
    local LU, pivots = lu(A)
    return LU, pivots
end

-- zero [..., k] (bool, some true): the first true of the first batch element holding one,
-- and " (batch element e)" naming that one for a batch, "" for one matrix (both 1-based)
local function first_zero(zero)
    local flat = zero:reshape(-1, zero:size(-1)):to("int64")
    local at = flat:amax(2):argmax(1):item()
    return flat[at]:argmax(1):item(), zero:dim() > 1 and (" (batch element %d)"):format(at) or ""
end

-- PyTorch's check_errors of lu_factor: a zero on U's diagonal raises, naming the first one;
-- one read back
local function check_lu(op, LU)
    local zero = autograd.no_grad(function()
        return diag_of(LU):eq(0)
    end)
    if not zero:any():item() then
        return
    end
    local j, where = first_zero(zero)
    raise(("tide: %s: U[%d,%d] is zero%s and using it on lu_solve would divide by zero; " ..
        "to factor such a matrix anyway, call linalg.lu_factor_ex(A) (its info names the " ..
        "zero) or linalg.lu(A)"):format(op, j, j, where))
end

-- lu_factor(A): LU [..., m, n], pivots [..., min(m, n)] as PyTorch's torch.linalg.lu_factor
-- (pivots 1-based, int64); a zero on U's diagonal raises, as PyTorch's (lu_factor_ex and lu
-- return such factors)
function L.lu_factor(A)
    matrix("linalg.lu_factor", A, 1, true)
    local LU, pivots = factor(A, "linalg.lu_factor")
    check_lu("linalg.lu_factor", LU)
    return LU, pivots
end

-- slogdet(A): sign and log|det|, PyTorch's (a singular matrix: sign 0, logabsdet -inf)
function L.slogdet(A)
    if type(A) == "table" then
        return complex_linalg().slogdet(A)
    end
    matrix("linalg.slogdet", A)
    local ks, kl = autograd.no_grad(function()
        local LU, _, sign, d = kernel_lu(A)
        if LU and not (recording(A) and d:eq(0):any():item()) then
            return sign * d:sign():prod(-1), d:abs():log():sum(-1)
        end
    end)
    if ks then
        if recording(A) then
            autograd.record("linalg_logabsdet", kl, A)
        end
        return ks, kl
    end
    local LU, _, _, sign = lu(A)
    local d = diag_of(LU)
    local s = autograd.no_grad(function() -- no gradient, as PyTorch's sign
        return sign:view(batch_of(A)) * d:sign():prod(-1)
    end)
    return s, d:abs():log():sum(-1)
end

-- det(A): the permutation's sign times the product of U's diagonal
function L.det(A)
    if type(A) == "table" then
        return complex_linalg().det(A)
    end
    matrix("linalg.det", A)
    local kd = autograd.no_grad(function()
        local LU, _, sign, d = kernel_lu(A)
        if LU then
            return sign * d:prod(-1) -- recorded: linalg_det's gradient is 0 where it is 0
        end
    end)
    if kd then
        if recording(A) then
            autograd.record("linalg_det", kd, A)
        end
        return kd
    end
    local LU, _, _, sign = lu(A)
    return sign:view(batch_of(A)) * diag_of(LU):prod(-1)
end

-- raises when U has a zero on its diagonal (one read back: the error needs the host)
local function check_invertible(op, LU, At)
    local zero = diag_of(LU):eq(0)
    if zero:any():item() then
        if At then -- inv's: PyTorch 1.13 factors a row-major A transposed and names its element
            local zt = autograd.no_grad(function()
                return diag_of(K.lu_factor(At) or lu(At)):eq(0)
            end)
            zero = zt:any():item() and zt or zero
        end
        local first, where = first_zero(zero)
        raise(("tide: %s: the matrix is singular (U's diagonal element %d is zero after " ..
            "pivoting)%s; check the input, or regularise it (add a small multiple of the " ..
            "identity)"):format(op, first, where))
    end
end

-- X with A X = B for a triangular A (upper, or lower; unit: its diagonal taken as 1), row by
-- row over the whole batch of B's columns; reads only that half of A
local function substitute(A, B, upper, unit)
    local n = A:size(-1)
    local x = {}
    local first, last, step = 1, n, 1
    if upper then
        first, last, step = n, 1, -1
    end
    for i = first, last, step do
        local r = B:narrow(-2, i, 1)
        local a = A:narrow(-2, i, 1)
        if #x > 0 then -- the unknowns solved so far: after i (upper) or before it (lower)
            local known = upper and a:narrow(-1, i + 1, n - i) or a:narrow(-1, 1, i - 1)
            r = r - known:matmul(core.cat(x, -2))
        end
        if not unit then
            r = r / a:narrow(-1, i, 1)
        end
        if upper then
            table.insert(x, 1, r)
        else
            x[#x + 1] = r
        end
    end
    return core.cat(x, -2)
end

-- P A X = P B through lu's factors: L y = P B (L unit lower), then U X = y
local function lu_solve(LU, perm, B)
    local n = LU:size(-1)
    B = B:gather(-2, perm:expand(with_batch(batch_of(B), n, B:size(-1))))
    return substitute(LU, substitute(LU, B, false, true), true, false)
end

-- X = solve(A, B) by the device's LU (nil where it has none), recorded as one node
local function kernel_solve(op, A, B, named)
    local X = autograd.no_grad(function()
        local LU, piv = K.lu_factor(A)
        if LU then
            check_invertible(op, LU, named and A:transpose(-2, -1))
            return K.lu_solve(LU, piv, B)
        end
    end)
    if X and recording(A, B) then
        autograd.record("linalg_solve", X, A, B)
    end
    return X
end

local LEFT = { "left" }

-- A and B of one dtype, as PyTorch's solvers require
local function same_dtype(op, A, B)
    if A.dtype ~= B.dtype then
        raise(("tide: %s: A is %s, B %s; convert one with :to(\"%s\")"):format(op, A.dtype,
            B.dtype, A.dtype))
    end
end

-- B of solve(A, B) is a (batch of) vector(s) when 1-D or shaped as A without its last dim
-- (PyTorch's rule); also solve_ex's (_linalg_more.lua)
local function is_vector_rhs(A, B)
    if B:dim() == A:dim() - 1 then
        local a = A:size()
        a[#a] = nil
        return args.same_shape(a, B:size())
    end
    return B:dim() == 1
end

-- solve(A, B[, {left = true}]): X with A X = B (left) or X A = B; B [..., n, k] or [n]
-- (a vector), A's and B's batches broadcast
function L.solve(A, B, opts)
    local op = "linalg.solve"
    if type(A) == "table" or type(B) == "table" then
        return complex_linalg().solve(A, B, opts, is_vector_rhs)
    end
    matrix(op, A)
    check(op, B, 2)
    same_device(op, A, B)
    same_dtype(op, A, B)
    local left = args.options(op, opts, LEFT, "{left = false}").left
    if left == false then -- X A = B is A^T X^T = B^T
        return L.solve(A:transpose(-2, -1), B:transpose(-2, -1)):transpose(-2, -1)
    end
    local n, vector = A:size(-1), is_vector_rhs(A, B)
    if vector then
        B = B:unsqueeze(-1)
    end
    if B:size(-2) ~= n then
        raise(("tide: %s: A is %s, B %s: B's rows must match A's size %d")
            :format(op, shape_str(A:size()), shape_str(B:size()), n))
    end
    local batch = broadcast_batches(op, batch_of(A), batch_of(B))
    A, B = A:expand(with_batch(batch, n, n)), B:expand(with_batch(batch, n, B:size(-1)))
    local X = kernel_solve(op, A, B)
    if not X then
        local LU, _, perm = lu(A)
        check_invertible(op, LU)
        X = lu_solve(LU, perm, B)
    end
    return vector and X:squeeze(-1) or X
end

-- inv(A): solve(A, I)
function L.inv(A)
    if type(A) == "table" then
        return complex_linalg().inv(A)
    end
    local op = "linalg.inv"
    matrix(op, A)
    local n = A:size(-1)
    local I = core.eye(n, { dtype = A.dtype, device = A.device }):expand(A:size())
    local X = kernel_solve(op, A, I, true)
    if X then
        return X
    end
    local LU, _, perm = lu(A)
    check_invertible(op, LU, A:transpose(-2, -1))
    return lu_solve(LU, perm, I)
end

local TRIANGULAR = { "upper", "left", "unitriangular" }

-- solve_triangular(A, B, {upper =, left = true, unitriangular = false}): X with A X = B, A
-- triangular (its other half ignored), by substitution; upper is required, as PyTorch's
function L.solve_triangular(A, B, opts)
    local op = "linalg.solve_triangular"
    matrix(op, A)
    check(op, B, 2)
    same_device(op, A, B)
    same_dtype(op, A, B)
    local o = args.options(op, opts, TRIANGULAR, "{upper = true}")
    if type(o.upper) ~= "boolean" then
        raise(("tide: %s: upper must be given, true or false, got %s"):format(op,
            tostring(o.upper)))
    end
    if o.left == false then
        return L.solve_triangular(A:transpose(-2, -1), B:transpose(-2, -1),
            { upper = not o.upper, unitriangular = o.unitriangular }):transpose(-2, -1)
    end
    local n = A:size(-1)
    if B:dim() < 2 or B:size(-2) ~= n then
        raise(("tide: %s: A is %s, B %s: B must be [..., %d, k]"):format(op,
            shape_str(A:size()), shape_str(B:size()), n))
    end
    local unit = o.unitriangular == true
    local batch = broadcast_batches(op, batch_of(A), batch_of(B))
    local Ae, Be = A:expand(with_batch(batch, n, n)), B:expand(with_batch(batch, n, B:size(-1)))
    local X = autograd.no_grad(function()
        return K.solve_triangular(Ae, Be, o.upper, unit)
    end)
    if not X then
        return substitute(A, B, o.upper, unit)
    end
    if recording(Ae, Be) then
        local nd = autograd.record("linalg_solve_triangular", X, Ae, Be)
        nd.upper, nd.unit = o.upper, unit
    end
    return X
end

local QR_MODE = { reduced = true, complete = true, r = true }
local MODE = { "mode" }

-- Q R by Householder reflections in tensor ops (where the device has no QR of its own, and for
-- the gradient of mode "r"), as LAPACK's geqrf and PyTorch's: reflection k maps column k's
-- tail to beta e1, beta = -sign(alpha) |x| (no reflection when the tail below alpha is zero),
-- so R's diagonal has LAPACK's signs. mode as L.qr's.
local function householder_qr(A, mode)
    local m, n = A:size(-2), A:size(-1)
    local k = math.min(m, n)
    local batch = batch_of(A)
    local R = A
    local Q = core.eye(m, { dtype = A.dtype, device = A.device }):expand(with_batch(batch, m, m))
    for j = 1, k do
        local len = m - j + 1
        if len > 1 then
            local x = R:narrow(-1, j, 1):narrow(-2, j, len)             -- [..., len, 1]
            local alpha, tail = x:narrow(-2, 1, 1), x:narrow(-2, 2, len - 1)
            local tail2 = (tail * tail):sum(-2, true)
            local none = tail2:eq(0)                                    -- no reflection
            local norm = (alpha * alpha + tail2):sqrt()
            local beta = core.where(alpha:ge(0), -norm, norm)
            local scale = core.where(none, 1, alpha - beta)
            local v = core.cat({ core.ones({ 1 }, { dtype = A.dtype, device = A.device })
                :expand(with_batch(batch, 1, 1)), tail / scale }, -2)    -- v[1] = 1
            local tau = core.where(none, 0, (beta - alpha) / core.where(none, 1, beta))
            -- H = I - tau v v^T on R's rows j.. and Q's columns j..
            local below = R:narrow(-2, j, len)
            below = below - (tau * v):matmul(v:transpose(-2, -1):matmul(below))
            R = j > 1 and core.cat({ R:narrow(-2, 1, j - 1), below }, -2) or below
            local right = Q:narrow(-1, j, len)
            right = right - right:matmul(v):matmul((tau * v):transpose(-2, -1))
            Q = j > 1 and core.cat({ Q:narrow(-1, 1, j - 1), right }, -1) or right
        end
    end
    R = R:triu()
    if mode == "complete" then
        return Q, R
    end
    R = R:narrow(-2, 1, k)
    if mode == "r" then
        return core.zeros({ 0 }, { dtype = A.dtype, device = A.device }), R
    end
    return Q:narrow(-1, 1, k), R
end

-- M X^-T for R upper triangular [..., k, k] (X = R's first k columns)
local function right_solve_rt(Mx, R)
    return L.solve_triangular(R, Mx:transpose(-2, -1), { upper = true }):transpose(-2, -1)
end

-- the gradient of a square (or tall) QR's Q [m, k] and R [k, k or n]: gA = (gQ + Q
-- syminvadj(triu(gR R^T - Q^T gQ))) R^-T, syminvadj(X) = X + X^T with its diagonal once
local function qr_tall_backward(Q, R, gQ, gR)
    local M = (gR:matmul(R:transpose(-2, -1)) - Q:transpose(-2, -1):matmul(gQ)):triu()
    local sym = M + M:transpose(-2, -1) - M:diagonal(0, -2, -1):diag_embed()
    return right_solve_rt(gQ + Q:matmul(sym), R)
end

-- PyTorch 1.13's linalg_qr_backward for Q [..., m, k] and R [..., k, n] (mode "reduced", or
-- "complete" with m <= n). A wide A = [U | V] = Q [X | Y] is the square QR U = Q X with
-- Y = Q^T V: V's gradient is Q gY, and gY reaches Q as V gY^T.
autograd.def {
    name = "linalg_qr",
    reads = { "out" },
    backward = function(nd, g)
        local m, k, n = nd.qr_m, nd.qr_k, nd.qr_n
        local Q, R = unpack_parts(nd.out, { { m, k }, { k, n } })
        local gQ, gR = unpack_parts(g, { { m, k }, { k, n } })
        if m >= n then
            return qr_tall_backward(Q, R, gQ, gR)
        end
        local X, gX = R:narrow(-1, 1, m), gR:narrow(-1, 1, m)
        local V = Q:matmul(R:narrow(-1, m + 1, n - m)) -- A's columns past the m-th
        local gY = gR:narrow(-1, m + 1, n - m)
        local gU = qr_tall_backward(Q, X, gQ + V:matmul(gY:transpose(-2, -1)), gX)
        return core.cat({ gU, Q:matmul(gY) }, -1)
    end,
}

-- qr(A[, {mode = "reduced"}]): A = Q R, Q with orthonormal columns, R upper triangular with
-- LAPACK's signs on its diagonal, by the device's own QR (LAPACK's geqrf and orgqr on the CPU)
-- or Householder reflections in tensor ops. A [..., m, n], k = min(m, n): "reduced" gives Q
-- [..., m, k] and R [..., k, n], "complete" Q [..., m, m] and R [..., m, n], "r" an empty Q and
-- R [..., k, n]. The kernel's result records one node with PyTorch's gradient; mode "r", and an
-- R with a zero on its diagonal (no R^-1), record the reflections' own ops instead.
function L.qr(A, opts)
    local op = "linalg.qr"
    matrix(op, A, 1, true)
    local mode = args.options(op, opts, MODE, '{mode = "complete"}').mode or "reduced"
    if not QR_MODE[mode] then
        raise(("tide: %s: mode = %s; expected \"reduced\", \"complete\" or \"r\"")
            :format(op, tostring(mode)))
    end
    local m, n = A:size(-2), A:size(-1)
    local rec = recording(A)
    if mode == "complete" and m > n and rec then
        raise(("tide: %s: not differentiable with mode = \"complete\" when A has more rows " ..
            "than columns (Q's extra columns are arbitrary; nor in PyTorch); use \"reduced\" " ..
            "or call it on a detach()ed A"):format(op))
    end
    if not (rec and mode == "r") then
        local Q, R = autograd.no_grad(function() return K.qr(A, mode == "complete") end)
        if Q and rec and R:diagonal(0, -2, -1):eq(0):any():item() then
            Q = nil -- rank-deficient: the gradient through R^-1 is not defined
        end
        if Q then
            if rec then
                local k = Q:size(-1)
                local packed = pack({ Q, R })
                local nd = autograd.record("linalg_qr", packed, A)
                nd.qr_m, nd.qr_k, nd.qr_n = m, k, n
                Q, R = unpack_parts(packed, { { m, k }, { k, n } })
            end
            if mode == "r" then
                return core.zeros({ 0 }, { dtype = A.dtype, device = A.device }), R
            end
            return Q, R
        end
    end
    return householder_qr(A, mode)
end

-- ---- eigenvalues and singular values: the device's solver, or Jacobi rotations ----
-- Where the device has no solver of its own (CUDA here), both run the cyclic Jacobi method
-- with the round-robin ordering: each round rotates n / 2 disjoint index pairs at once (a few
-- gathers and element-wise ops over the whole batch), n - 1 rounds a sweep, sweeps until the
-- off-diagonal part (eigh) or the columns' inner products (svd) are below rounding; Jacobi is
-- as accurate as LAPACK's QR-based routines (more so for small eigenvalues). The forward runs
-- without recording; the gradient is PyTorch 1.13's closed form (eigh: linalg_eig_backward for
-- Hermitian input; svd: svd_backward).

-- the rounds of n (even) players: round r's partner of each index, as an int64 tensor on dev
-- (kept: a few small tensors per size and device)
local ROUNDS = {}
local function pairings(n, dev)
    local key = tostring(dev) .. ":" .. n
    local cached = ROUNDS[key]
    if cached then
        return cached
    end
    local players, out = {}, {}
    for i = 1, n do
        players[i] = i
    end
    for r = 1, n - 1 do
        local partner = {}
        for i = 1, n / 2 do
            local a, b = players[i], players[n + 1 - i]
            partner[a], partner[b] = b, a
        end
        local first = {} -- true for the smaller index of each pair (the p of (p, q))
        for i = 1, n do
            first[i] = i < partner[i]
        end
        out[r] = { partner = core.tensor(partner, { dtype = "int64", device = dev }),
            first = core.tensor(first, { device = dev }) }
        local last = players[n] -- the circle method: all but the first move one place
        for i = n, 3, -1 do
            players[i] = players[i - 1]
        end
        players[2] = last
    end
    ROUNDS[key] = out
    return out
end

-- x [..., n] at the partner of each index
local function at_partner(x, partner)
    return x:index_select(-1, partner)
end

-- the rotation of each index with its partner: c, and -t c (a pair's p row takes c row_p -
-- s row_q, its q row s row_p + c row_q: both are c x + (-t c) x_partner, with t_q = -t_p)
local function rotation(x, y, xy, partner, first)
    -- tan of the angle that zeroes the pair's off-diagonal term (Rutishauser's form): theta =
    -- (y - x) / 2 xy, t = sign(theta) / (|theta| + sqrt(theta^2 + 1)) (+ for theta 0: a 45
    -- degree turn), 0 where xy is 0. Computed on the p side and mirrored to the q side: the q
    -- side's own theta is the p side's negated only up to rounding, and a pair whose two sides
    -- turned by different angles would not be a rotation (near equal eigenvalues, theta near 0,
    -- flip its sign)
    local zero = xy:eq(0)
    local theta = (y - x) / (core.where(zero, 1, xy) * 2)
    local t = core.where(theta:ge(0), 1, -1) / (theta:abs() + (theta * theta + 1):sqrt())
    t = core.where(zero, 0, t)
    t = core.where(first, t, -at_partner(t, partner))
    local c = (t * t + 1):rsqrt()
    return c, -t * c
end

local EPS = { float64 = 2.220446049250313e-16, float32 = 1.1920929e-07 }
local MAX_SWEEPS = 40

-- the sum of squares over the last two dims, [...]
local function sum_squares(A)
    local b = batch_of(A)
    b[#b + 1] = -1
    return (A * A):reshape(b):sum(-1)
end

-- rows (dim -2) or columns (dim -1) of X combined with their partners': c x + s x_partner
local function rotate(X, dim, partner, c, s)
    if dim == -2 then
        return X * c:unsqueeze(-1) + X:index_select(-2, partner) * s:unsqueeze(-1)
    end
    return X * c:unsqueeze(-2) + X:index_select(-1, partner) * s:unsqueeze(-2)
end

-- A symmetric [..., n, n], n even: eigenvalues (unsorted) and V with A = V diag(w) V^T, by
-- two-sided rotations until the off-diagonal part is below rounding of A's norm
local function jacobi_eigh(A)
    local n = A:size(-1)
    local V = core.eye(n, { dtype = A.dtype, device = A.device })
        :expand(with_batch(batch_of(A), n, n)):clone()
    local rounds = pairings(n, A.device)
    local eps = EPS[A.dtype] or EPS.float32
    local tol = sum_squares(A) * (eps * eps)
    local offdiag = 1 - core.eye(n, { dtype = A.dtype, device = A.device })
    for _ = 1, MAX_SWEEPS do
        -- the off-diagonal part summed directly: |A|^2 - |diag|^2 would cancel to rounding of
        -- |A|^2 and stop the sweeps early
        if sum_squares(A * offdiag):le(tol):all():item() then
            break
        end
        for _, round in ipairs(rounds) do
            local partner = round.partner
            local diag = A:diagonal(0, -2, -1)
            local xy = A:gather(-1, partner:view(n, 1):expand(with_batch(batch_of(A), n, 1)))
                :squeeze(-1)
            local c, s = rotation(diag, at_partner(diag, partner), xy, partner, round.first)
            A = rotate(rotate(A, -2, partner, c, s), -1, partner, c, s)
            V = rotate(V, -1, partner, c, s)
        end
    end
    return A:diagonal(0, -2, -1), V
end

-- A [..., m, n], m >= n, n even: one-sided Jacobi (Hestenes): rotate A's columns (and V's)
-- until every pair is orthogonal to rounding; then A V = U S, S the columns' norms
local function jacobi_svd(A)
    local n = A:size(-1)
    local V = core.eye(n, { dtype = A.dtype, device = A.device })
        :expand(with_batch(batch_of(A), n, n)):clone()
    local rounds = pairings(n, A.device)
    local eps = EPS[A.dtype] or EPS.float32
    for _ = 1, MAX_SWEEPS do
        local rotated = false
        for _, round in ipairs(rounds) do
            local partner = round.partner
            local norms = (A * A):sum(-2)                         -- [..., n]
            local dots = (A * A:index_select(-1, partner)):sum(-2) -- w_i . w_partner(i)
            local pn = at_partner(norms, partner)
            -- a pair already orthogonal to rounding is left alone
            local small = dots:abs():le((norms * pn):sqrt() * eps)
            dots = core.where(small, 0, dots)
            if not rotated and not small:all():item() then
                rotated = true
            end
            local c, s = rotation(norms, pn, dots, partner, round.first)
            A = rotate(A, -1, partner, c, s)
            V = rotate(V, -1, partner, c, s)
        end
        if not rotated then
            break
        end
    end
    return A, V
end

-- W = Wr + i Wi [..., m, n] complex, m >= n, n even: jacobi_svd on complex columns (the complex
-- svd's, lua/tide/complex/svd.lua): each pair's q column first turned by the phase that makes
-- w_p^H w_q real (conj(g) / |g|, taken from the p side), then rotated as a real pair; V (unitary)
-- likewise. Returns W V's parts and V's.
local function jacobi_svd_complex(Wr, Wi)
    local n = Wr:size(-1)
    local Vr = core.eye(n, { dtype = Wr.dtype, device = Wr.device })
        :expand(with_batch(batch_of(Wr), n, n)):clone()
    local Vi = Vr * 0
    local rounds = pairings(n, Wr.device)
    local eps = EPS[Wr.dtype] or EPS.float32
    local function turn(Xr, Xi, cr, ci) -- each column times cr + i ci
        cr, ci = cr:unsqueeze(-2), ci:unsqueeze(-2)
        return Xr * cr - Xi * ci, Xr * ci + Xi * cr
    end
    for _ = 1, MAX_SWEEPS do
        local rotated = false
        for _, round in ipairs(rounds) do
            local partner, first = round.partner, round.first
            local Pr, Pi = Wr:index_select(-1, partner), Wi:index_select(-1, partner)
            local norms = (Wr * Wr + Wi * Wi):sum(-2)
            local dr, di = (Wr * Pr + Wi * Pi):sum(-2), (Wr * Pi - Wi * Pr):sum(-2) -- w^H w_partner
            local pn = at_partner(norms, partner)
            local ad = (dr * dr + di * di):sqrt()
            local small = ad:le((norms * pn):sqrt() * eps)
            if not rotated and not small:all():item() then
                rotated = true
            end
            ad = core.where(small, 0, ad)
            local safe = core.where(small, 1, ad)
            local cr, ci = core.where(small, 1, dr / safe), core.where(small, 0, -di / safe)
            cr = core.where(first, 1, at_partner(cr, partner))
            ci = core.where(first, 0, at_partner(ci, partner))
            Wr, Wi = turn(Wr, Wi, cr, ci)
            Vr, Vi = turn(Vr, Vi, cr, ci)
            local c, sn = rotation(norms, pn, ad, partner, first)
            Wr, Wi = rotate(Wr, -1, partner, c, sn), rotate(Wi, -1, partner, c, sn)
            Vr, Vi = rotate(Vr, -1, partner, c, sn), rotate(Vi, -1, partner, c, sn)
        end
        if not rotated then
            break
        end
    end
    return Wr, Wi, Vr, Vi
end

-- a matrix padded to an even size with one more index that no rotation touches (its
-- off-diagonal terms are 0): padded [..., n + 1, n + 1] (or columns only when cols_only)
local function pad_even(A, cols_only)
    local b = batch_of(A)
    local m, n = A:size(-2), A:size(-1)
    local zc = core.zeros(with_batch(b, m, 1), { dtype = A.dtype, device = A.device })
    A = core.cat({ A, zc }, -1)
    if not cols_only then
        local zr = core.zeros(with_batch(b, 1, n + 1), { dtype = A.dtype, device = A.device })
        A = core.cat({ A, zr }, -2)
    end
    return A
end

-- the values and the eigenvectors / singular vectors of a decomposition travel as one packed
-- tensor through autograd (the engine's nodes have one result); these split it
local function unpack_eigh(packed, n)
    return packed:narrow(-1, n + 1, 1):squeeze(-1), packed:narrow(-1, 1, n)
end

-- num / den with 0 where num is 0: a repeated eigenvalue or singular value (den 0) whose vectors
-- carry no gradient (only the values were used) contributes nothing, as PyTorch's shortcut for
-- eigvalsh and svdvals gives, instead of 0 / 0
local function quotient(num, den)
    local zero = num:eq(0)
    return core.where(zero, 0, num / core.where(zero, 1, den))
end

-- PyTorch 1.13's linalg_eig_backward for Hermitian input: gA = V (skew(V^T gV) / E, its
-- diagonal gw) V^T, E_ij = w_j - w_i
autograd.def {
    name = "linalg_eigh",
    reads = { "out" },
    backward = function(nd, g)
        local n = nd.n_eig
        local w, V = unpack_eigh(nd.out, n)
        local gw, gV = unpack_eigh(g, n)
        local X = V:transpose(-2, -1):matmul(gV)
        X = (X - X:transpose(-2, -1)) * 0.5
        local E = w:unsqueeze(-2) - w:unsqueeze(-1)
        local eye = core.eye(n, { dtype = w.dtype, device = w.device })
        X = quotient(X, E + eye) * (1 - eye) + gw:diag_embed()
        return V:matmul(X):matmul(V:transpose(-2, -1))
    end,
}

local UPLO = { "UPLO" }

-- eigh(A[, {UPLO = "L"}]): the eigenvalues of the symmetric A ([..., n], ascending) and the
-- eigenvectors (the columns of [..., n, n]); only the lower (or upper, UPLO = "U") triangle is
-- read, as PyTorch's. An eigenvector's sign is arbitrary (LAPACK's may differ)
function L.eigh(A, opts)
    local op = "linalg.eigh"
    matrix(op, A)
    float_only(op, A)
    local uplo = args.options(op, opts, UPLO, '{UPLO = "U"}').UPLO or "L"
    if uplo ~= "L" and uplo ~= "U" then
        raise(("tide: %s: UPLO = %s; expected \"L\" or \"U\""):format(op, tostring(uplo)))
    end
    local n = A:size(-1)
    local packed = autograd.no_grad(function()
        local kw, kv = K.eigh(A, uplo == "U") -- the device's own solver (LAPACK on the CPU)
        if kw then
            return core.cat({ kv, kw:unsqueeze(-1) }, -1)
        end
        local S = uplo == "L" and A:tril() + A:tril(-1):transpose(-2, -1)
            or A:triu() + A:triu(1):transpose(-2, -1)
        local odd = n % 2 == 1
        local w, V = jacobi_eigh(odd and pad_even(S) or S)
        if odd then
            w, V = w:narrow(-1, 1, n), V:narrow(-2, 1, n):narrow(-1, 1, n)
        end
        local sorted, idx = w:sort(-1)
        V = V:gather(-1, idx:unsqueeze(-2):expand(V:size()))
        return core.cat({ V, sorted:unsqueeze(-1) }, -1)
    end)
    if autograd.needs_record(A) then
        autograd.record("linalg_eigh", packed, A).n_eig = n
    end
    return unpack_eigh(packed, n)
end

-- eigvalsh(A[, {UPLO =}]): eigh's eigenvalues
function L.eigvalsh(A, opts)
    local w = L.eigh(A, opts)
    return w
end

local function pack_svd(U, S, Vh)
    return pack({ U, S, Vh })
end

local function unpack_svd(packed, m, k, n)
    return unpack_parts(packed, { { m, k }, { k }, { k, n } })
end

-- PyTorch 1.13's svd_backward (full_matrices = false): with skew(X) = X - X^T and E_ij = S_j^2 -
-- S_i^2, gA = U [(skew(U^T gU) S + S skew(Vh gVh^T)) / E + diag(gS)] Vh, plus the parts of gU
-- (m > n) or gVh (m < n) outside U's or V's span
autograd.def {
    name = "linalg_svd",
    reads = { "out" },
    backward = function(nd, g)
        local m, k, n = nd.svd_m, nd.svd_k, nd.svd_n
        local U, S, Vh = unpack_svd(nd.out, m, k, n)
        local gU, gS, gVh = unpack_svd(g, m, k, n)
        local Ut, V = U:transpose(-2, -1), Vh:transpose(-2, -1)
        local function skew(X)
            return X - X:transpose(-2, -1)
        end
        local UhgU = skew(Ut:matmul(gU))
        local VhgV = skew(Vh:matmul(gVh:transpose(-2, -1)))
        local S2 = S * S
        local eye = core.eye(k, { dtype = S.dtype, device = S.device })
        local E = S2:unsqueeze(-2) - S2:unsqueeze(-1) + eye
        local gA = quotient(UhgU * S:unsqueeze(-2) + S:unsqueeze(-1) * VhgV, E) * (1 - eye) +
            gS:diag_embed()
        if m > n then
            gA = U:matmul(gA)
            local gUSinv = gU / S:unsqueeze(-2)
            gA = gA + gUSinv - U:matmul(Ut:matmul(gUSinv))
            return gA:matmul(Vh)
        elseif m < n then
            gA = gA:matmul(Vh)
            local SinvgVh = gVh / S:unsqueeze(-1)
            gA = gA + SinvgVh - SinvgVh:matmul(V):matmul(Vh)
            return U:matmul(gA)
        end
        return U:matmul(gA):matmul(Vh)
    end,
}

-- Q [..., m, k] with orthonormal columns completed to [..., m, m]: its first k columns, then an
-- orthonormal basis of the rest of the space (complete QR's trailing columns of [Q | I])
local function complete_columns(Q)
    local m, k = Q:size(-2), Q:size(-1)
    local I = core.eye(m, { dtype = Q.dtype, device = Q.device }):expand(with_batch(batch_of(Q),
        m, m))
    local full = L.qr(core.cat({ Q, I }, -1), { mode = "complete" })
    return core.cat({ Q, full:narrow(-1, k + 1, m - k) }, -1)
end

local SVD_OPTIONS = { "full_matrices" }

-- svd(A[, {full_matrices = true}]): U, S (descending) and Vh with A = U diag(S) Vh; reduced
-- (U [..., m, k], Vh [..., k, n], k = min(m, n)) with full_matrices = false. A pair of
-- singular vectors' sign is arbitrary (LAPACK's may differ). The gradient is the reduced
-- form's: with full_matrices = true (PyTorch's default) the extra columns, arbitrary, get none
-- (PyTorch 1.13 narrows gU and gVh the same way). A complex A: lua/tide/complex/svd.lua
function L.svd(A, opts)
    local op = "linalg.svd"
    if type(A) == "table" then -- complex: lua/tide/complex/svd.lua
        local full = args.options(op, opts, SVD_OPTIONS, "{full_matrices = false}")
            .full_matrices
        return require("tide.complex.svd")(A, full == nil or full, jacobi_svd_complex,
            pad_even)
    end
    matrix(op, A, 1, true)
    float_only(op, A)
    local full = args.options(op, opts, SVD_OPTIONS, "{full_matrices = false}").full_matrices
    full = full == nil or full
    local m, n = A:size(-2), A:size(-1)
    local k = math.min(m, n)
    local packed = autograd.no_grad(function()
        local ku, ks, kvh = K.svd(A) -- the device's own solver (LAPACK on the CPU)
        if ku then
            return pack_svd(ku, ks, kvh)
        end
        local tall = m >= n
        local W = tall and A or A:transpose(-2, -1) -- [.., big, k]
        local odd = k % 2 == 1
        local R, V = jacobi_svd(odd and pad_even(W, true) or W)
        if odd then
            R, V = R:narrow(-1, 1, k), V:narrow(-2, 1, k):narrow(-1, 1, k)
        end
        local S = (R * R):sum(-2):sqrt()
        local sorted, idx = S:sort(-1, true)
        R = R:gather(-1, idx:unsqueeze(-2):expand(R:size()))
        V = V:gather(-1, idx:unsqueeze(-2):expand(V:size()))
        -- U's columns, R's scaled to unit length: where a singular value is 0 (a rank-deficient
        -- A) or tiny, that column is 0 or noise, so a QR makes U orthonormal (the completion
        -- spans what A's range leaves out), keeping each column's sign (R's diagonal is +-1)
        local Uk = R / core.where(sorted:eq(0), 1, sorted):unsqueeze(-2)
        local Q, QR = L.qr(Uk)
        local d = QR:diagonal(0, -2, -1)
        Uk = Q * core.where(d:lt(0), -1, 1):unsqueeze(-2)
        if tall then
            return pack_svd(Uk, sorted, V:transpose(-2, -1))
        end
        return pack_svd(V, sorted, Uk:transpose(-2, -1))
    end)
    if autograd.needs_record(A) then
        local nd = autograd.record("linalg_svd", packed, A)
        nd.svd_m, nd.svd_k, nd.svd_n = m, k, n
    end
    local U, S, Vh = unpack_svd(packed, m, k, n)
    local function extra(Q) -- the completion's columns, not differentiated
        return autograd.no_grad(function()
            return complete_columns(Q:detach()):narrow(-1, k + 1, Q:size(-2) - k)
        end)
    end
    if full then
        U = m > k and core.cat({ U, extra(U) }, -1) or U
        Vh = n > k and core.cat({ Vh, extra(Vh:transpose(-2, -1)):transpose(-2, -1) }, -2) or Vh
    end
    return U, S, Vh
end

-- svdvals(A): the singular values, descending (of a complex A: lua/tide/complex/linalg.lua)
function L.svdvals(A)
    if type(A) == "table" then
        return complex_linalg().svdvals(A)
    end
    local _, S = L.svd(A, { full_matrices = false })
    return S
end

local UPPER = { "upper" }

-- cholesky(A[, {upper = false}]): L lower with A = L L^T (A symmetric positive-definite; its
-- lower half is read), column by column; a matrix that is not positive-definite raises
function L.cholesky(A, opts)
    local op = "linalg.cholesky"
    matrix(op, A)
    local upper = args.options(op, opts, UPPER, "{upper = true}").upper
    local n = A:size(-1)
    local kl = autograd.no_grad(function() return K.cholesky(A) end)
    if kl then
        if recording(A) then
            autograd.record("linalg_cholesky", kl, A)
        end
        return upper and kl:transpose(-2, -1) or kl
    end
    if recording(A) then
        -- the value from A's lower triangle (as LAPACK's), the gradient symmetrized (as
        -- PyTorch's cholesky_backward, the node of the kernel path above): A's symmetric part,
        -- its difference to the lower triangle's symmetric matrix added without gradient
        local sym = (A + A:transpose(-2, -1)) * 0.5
        local lower = A:tril() + A:tril(-1):transpose(-2, -1)
        A = sym + (lower - sym):detach()
    end
    local cols = {}
    for j = 1, n do
        local c = A:narrow(-1, j, 1):narrow(-2, j, n - j + 1) -- A[j:, j]
        if j > 1 then
            local done = core.cat(cols, -1)             -- [..., n, j - 1]
            local lj = done:narrow(-2, j, 1)             -- L[j, :j]
            c = c - done:narrow(-2, j, n - j + 1):matmul(lj:transpose(-2, -1))
        end
        local d = c:narrow(-2, 1, 1) -- not positive: NaN or 0 below, found once at the end
        local col = c / d:sqrt()
        if j > 1 then
            local zeros = core.zeros({ 1 }, { dtype = A.dtype, device = A.device })
            local s = col:size()
            s[#s - 1] = j - 1
            col = core.cat({ zeros:expand(s), col }, -2)
        end
        cols[j] = col
    end
    local Lm = core.cat(cols, -1)
    local bad = diag_of(Lm):gt(0):logical_not() -- one read back: the error needs the host
    if bad:any():item() then
        local j, where = first_zero(bad) -- the first failing matrix's first column
        raise(("tide: %s: the matrix is not positive-definite (its leading minor of order " ..
            "%d is not positive)%s"):format(op, j, where))
    end
    return upper and Lm:transpose(-2, -1) or Lm
end

-- matrix_power(A, k): A^k by squaring; k = 0 the identity, k < 0 inv(A)^-k
function L.matrix_power(A, k)
    local op = "linalg.matrix_power"
    matrix(op, A)
    if not compat.is_integer(k) then
        raise(("tide: %s: k must be an integer, got %s"):format(op, tostring(k)))
    end
    if k < 0 then
        local inv = L.inv(A)
        if -k < 0 then -- math.mininteger, whose negation wraps (fuzz: it recursed without end)
            return L.matrix_power(inv, -(k + 1)):matmul(inv)
        end
        return L.matrix_power(inv, -k)
    end
    local result
    local base = A
    while k > 0 do
        if k % 2 == 1 then
            result = result and result:matmul(base) or base
        end
        k = (k - k % 2) / 2
        if k > 0 then
            base = base:matmul(base)
        end
    end
    return result or core.eye(A:size(-1), { dtype = A.dtype, device = A.device })
        :expand(A:size()):clone()
end

-- matrix_exp(A): e^A by scaling and squaring: A / 2^s, its 1-norm at most 1/2 (s from the
-- largest in the batch: one read back), through its Taylor polynomial (degree 18 in float64,
-- 10 in float32: the remainder is below the dtype's rounding there), by Horner, then squared s
-- times. Written in matmuls, which autograd differentiates.
function L.matrix_exp(A)
    local op = "linalg.matrix_exp"
    matrix(op, A)
    local n = A:size(-1)
    local norm = autograd.no_grad(function()
        return A:numel() > 0 and A:abs():sum(-2):amax(-1):max():item() or 0
    end)
    local s = 0
    if norm > 0.5 and norm < math.huge then -- (a NaN or inf norm: the result is NaN or inf)
        s = math.ceil(math.log(norm / 0.5) / math.log(2))
    end
    local X = s > 0 and A:div(2 ^ s) or A
    local I = core.eye(n, { dtype = A.dtype, device = A.device }):expand(A:size())
    local P = I
    for k = A.dtype == "float64" and 18 or 10, 1, -1 do
        P = X:matmul(P):div(k):add(I)
    end
    for _ = 1, s do
        P = P:matmul(P)
    end
    return P
end

-- the row order of LAPACK's sequential swaps pivots [..., k] (1-based) of m rows: perm
-- [..., m, 1], row i of P A being row perm[i] of A
local function order_of(pivots, m)
    local ids = row_ids(pivots:unsqueeze(-1), m)
    local perm = ids:expand(with_batch(batch_of(pivots:unsqueeze(-1)), m, 1))
    for j = 1, pivots:size(-1) do
        local p = pivots:narrow(-1, j, 1):unsqueeze(-1)
        local swap = core.where(ids:eq(j), p, core.where(ids:eq(p), j, ids))
        perm = perm:gather(-2, swap:expand(perm:size()))
    end
    return perm
end

-- LU's row order from its pivots, checked: [..., min(m, n)] int64 (int32 taken); LU square
-- unless rect
local function lu_pivots(op, LU, pivots, rect)
    matrix(op, LU, 1, rect)
    float_only(op, LU)
    check(op, pivots, 2)
    same_device(op, LU, pivots)
    local m = LU:size(-2)
    local k = math.min(m, LU:size(-1))
    if pivots.dtype ~= "int64" and pivots.dtype ~= "int32" or pivots:dim() < 1 or
        pivots:size(-1) ~= k then
        raise(("tide: %s: pivots must be the int64 [..., %d] of lu_factor, got %s %s")
            :format(op, k, pivots.dtype, shape_str(pivots:size())))
    end
    return order_of(pivots:to("int64"), m)
end

-- lu_unpack(LU, pivots): P [..., m, m], L [..., m, k], U [..., k, n] with A = P L U from
-- lu_factor's LU [..., m, n] and pivots (torch's lu_unpack), k = min(m, n): P the
-- permutation matrix, L unit lower, U upper
function L.lu_unpack(LU, pivots)
    local perm = lu_pivots("lu_unpack", LU, pivots, true)
    local m, n = LU:size(-2), LU:size(-1)
    local k = math.min(m, n)
    local ids = row_ids(LU, m)
    local P = autograd.no_grad(function() -- P[r, i] = 1 where r = perm[i]: no gradient
        return ids:eq(perm:transpose(-2, -1)):to(LU.dtype)
    end)
    local eye = core.eye(m, k, { dtype = LU.dtype, device = LU.device })
    return P, LU:narrow(-1, 1, k):tril(-1):add(eye), LU:narrow(-2, 1, k):triu()
end

-- lu(A[, {pivot = true}]): P [..., m, m], L [..., m, k], U [..., k, n] with A = P L U, k =
-- min(m, n) (PyTorch's torch.linalg.lu)
function L.lu(A, opts)
    local op = "linalg.lu"
    matrix(op, A, 1, true)
    float_only(op, A)
    local o = args.options(op, opts, { "pivot" }, "{pivot = true}")
    if o.pivot == false then
        raise("tide: linalg.lu: pivot = false is not supported (nor on PyTorch's CPU); an LU " ..
            "without row swaps fails on a zero pivot")
    end
    return L.lu_unpack(factor(A))
end

-- lu_solve(LU, pivots, B[, {left = true, adjoint = false}]): X with A X = B (A^T X = B with
-- adjoint; X A = B with left = false) from lu_factor's LU and pivots, by the two triangular
-- solves (their gradients reach LU and B)
function L.lu_solve(LU, pivots, B, opts)
    local op = "linalg.lu_solve"
    local perm = lu_pivots(op, LU, pivots)
    check(op, B, 3)
    same_device(op, LU, B)
    same_dtype(op, LU, B)
    local o = args.options(op, opts, { "left", "adjoint" }, "{adjoint = true}")
    if o.left == false then -- X A = B is A^T X^T = B^T
        return L.lu_solve(LU, pivots, B:transpose(-2, -1), { adjoint = not o.adjoint })
            :transpose(-2, -1)
    end
    local n = LU:size(-1)
    if B:dim() < 2 or B:size(-2) ~= n then
        raise(("tide: %s: LU is %s, B %s: B must be [..., %d, k]"):format(op,
            shape_str(LU:size()), shape_str(B:size()), n))
    end
    local batch = broadcast_batches(op, batch_of(LU), batch_of(B))
    local k = B:size(-1)
    local LUe, Be = LU:expand(with_batch(batch, n, n)), B:expand(with_batch(batch, n, k))
    local rows = perm:expand(with_batch(batch, n, k))
    if o.adjoint then -- A^T = U^T L^T P: U^T z = B, L^T w = z, X = P^T w
        local z = L.solve_triangular(LUe:transpose(-2, -1), Be, { upper = false })
        local w = L.solve_triangular(LUe:transpose(-2, -1), z, { upper = true,
            unitriangular = true })
        return core.zeros(w:size(), { dtype = w.dtype, device = w.device }):scatter(-2, rows, w)
    end
    local y = L.solve_triangular(LUe, Be:gather(-2, rows), { upper = false,
        unitriangular = true })
    return L.solve_triangular(LUe, y, { upper = true })
end

-- multi_dot(list): the product of 2-D matrices (the first and last may be vectors), left to
-- right
function L.multi_dot(list)
    local op = "linalg.multi_dot"
    if type(list) ~= "table" or #list < 2 then
        raise(("tide: %s: expected a list of at least 2 tensors, got %s"):format(op,
            type(list) == "table" and #list .. " tensors" or type(list)))
    end
    local n = #list
    local first, last = list[1], list[n]
    check(op, first, 1)
    check(op, last, n)
    local r = first:dim() == 1 and first:unsqueeze(1) or first
    for i = 2, n do
        local t = check(op, list[i], i)
        if i == n and t:dim() == 1 then
            t = t:unsqueeze(-1)
        elseif t:dim() ~= 2 then
            raise(("tide: %s: tensor %d must be 2-D, got %s"):format(op, i, shape_str(t:size())))
        end
        r = r:matmul(t)
    end
    if first:dim() == 1 then
        r = r:squeeze(1)
    end
    if last:dim() == 1 then
        r = r:squeeze(-1)
    end
    return r
end

local DIM = { "dim" }

-- cross(a, b[, {dim = -1}]): the cross product of 3-vectors along dim (size 3), broadcasting
function L.cross(a, b, opts)
    local op = "linalg.cross"
    check(op, a)
    check(op, b, 2)
    same_device(op, a, b)
    local dim = args.options(op, opts, DIM, "{dim = 1}").dim or -1
    if a:dim() ~= b:dim() then
        raise(("tide: %s: inputs must have the same number of dimensions (PyTorch's rule), " ..
            "got %s and %s"):format(op, shape_str(a:size()), shape_str(b:size())))
    end
    local d = args.dim_of(op, a, dim)
    if a:size(d) ~= 3 or b:size(d) ~= 3 then
        raise(("tide: %s: dim %d must have size 3 in both, got %s and %s"):format(op, d,
            shape_str(a:size()), shape_str(b:size())))
    end
    local function c(t, i)
        return t:narrow(d, i, 1)
    end
    return core.cat({ c(a, 2) * c(b, 3) - c(a, 3) * c(b, 2), c(a, 3) * c(b, 1) - c(a, 1) *
        c(b, 3), c(a, 1) * c(b, 2) - c(a, 2) * c(b, 1) }, d)
end

local NORM_OPTIONS = { "ord", "dim", "keepdim" }
-- and the keyword-only dtype (PyTorch's: x is converted to it first)
local NORM_KEYWORDS = { "ord", "dim", "keepdim", "dtype" }

-- (sum |x|^p)^(1/p) over dims (descending, kept when keep) as one node with PyTorch 1.13's
-- norm_backward: 0 where the norm is 0 (the zero vector's subgradient; the chain rule through
-- pow(1/p) gives NaN there), and for p < 1 also 0 at x's zeros
local pnorm = autograd.def {
    name = "linalg_vector_pnorm",
    reads = { 1, "out" },
    forward = function(_, x, p, dims, keep)
        local r = p == 2 and x * x or x:abs():pow(p)
        for _, d in ipairs(dims) do
            r = r:sum(d, true)
        end
        if not keep then
            for _, d in ipairs(dims) do
                r = r:squeeze(d)
            end
        end
        return p == 2 and r:sqrt() or r:pow(1 / p)
    end,
    backward = function(nd, g)
        local x, p, dims, out = nd[1], nd[2], nd[3], nd.out
        if not nd[4] then
            for i = #dims, 1, -1 do -- ascending: each unsqueeze at its final place
                g, out = g:unsqueeze(dims[i]), out:unsqueeze(dims[i])
            end
        end
        if p < 1 then
            local s = core.where(x:eq(0), 0, x:sign() * x:abs():pow(p - 1))
            return s * g * out:pow(1 - p)
        end
        local s = p == 2 and x or (p < 2 and x:sign() * x:abs():pow(p - 1) or
            x * x:abs():pow(p - 2))
        return s * core.where(out:eq(0), 0, g / (p == 2 and out or out:pow(p - 1)))
    end,
}

-- vector_norm(x[, {ord = 2, dim =, keepdim = false}]) (or PyTorch's positional (x, ord, dim,
-- keepdim); matrix_norm and norm too): over dim (one or a list; all when nil):
-- (sum |x|^ord)^(1/ord), max |x| (inf), min |x| (-inf), the count of non-zeros (0)
-- a complex z's vector norms are those of |z|, as PyTorch's (its gradient through abs)
local function modulus(x)
    if type(x) == "table" and not core.is_tensor(x) and require("tide.complex.tensor").is(x) then
        return x:abs()
    end
    return x
end

function L.vector_norm(x, ...)
    local op = "linalg.vector_norm"
    local opts = pytorch_args.merge(op, NORM_OPTIONS, ...) -- PyTorch's positional form too
    x = modulus(x)
    check(op, x)
    local o = args.options(op, opts, NORM_KEYWORDS, "{ord = 1}")
    if o.dtype ~= nil then
        x = x:to(o.dtype)
    end
    args.float_input(op, x)
    local ord, keep = o.ord == nil and 2 or o.ord, o.keepdim == true
    if type(ord) ~= "number" then
        raise(("tide: %s: ord must be a number (inf for the max), got %s"):format(op,
            tostring(ord)))
    end
    local dims = o.dim
    if dims == nil then
        dims = {}
        for i = 1, x:dim() do
            dims[i] = i
        end
    elseif type(dims) ~= "table" then
        dims = { dims }
    end
    for i = 1, #dims do
        dims[i] = args.dim_of(op, x, dims[i])
    end
    table.sort(dims, function(p, q) return p > q end) -- the last first: the others stay put
    local a = x:abs()
    local function over(f)
        local r = a
        for _, d in ipairs(dims) do
            r = r[f](r, d, true)
        end
        if not keep then
            for _, d in ipairs(dims) do
                r = r:squeeze(d)
            end
        end
        return r
    end
    if ord == math.huge or ord == -math.huge then
        -- all dims in one reduction: ties anywhere share the gradient evenly, as PyTorch's
        local f = ord > 0 and "amax" or "amin"
        return #dims == 0 and a or a[f](a, dims, keep)
    elseif ord == 0 then
        a = a:ne(0):to(x.dtype) -- (over reads a)
        local r = over("sum")
        if autograd.needs_record(x) then -- a count: its gradient is 0, as PyTorch's (no error)
            a = x:masked_fill(core.ones(x:size(), { dtype = "bool", device = x.device }), 0)
            r = r + over("sum")
        end
        return r
    elseif ord == 1 then
        return over("sum")
    end
    return pnorm(x, ord, dims, keep)
end

-- matrix_norm(A[, {ord = "fro", dim = {-2, -1}, keepdim = false}]): "fro", 1 / -1 (max / min
-- column sum), inf / -inf (max / min row sum)
function L.matrix_norm(A, ...)
    local op = "linalg.matrix_norm"
    local opts = pytorch_args.merge(op, NORM_OPTIONS, ...) -- PyTorch's positional form too
    matrix(op, A, 1, true)
    local o = args.options(op, opts, NORM_KEYWORDS, '{ord = "fro"}')
    if o.dtype ~= nil then
        A = A:to(o.dtype)
    end
    local ord, keep = o.ord == nil and "fro" or o.ord, o.keepdim == true
    local dims = o.dim or { -2, -1 }
    if type(dims) ~= "table" or #dims ~= 2 then
        raise(("tide: %s: dim must be a list of 2 dims, got %s"):format(op, tostring(dims)))
    end
    local r, c = args.dim_of(op, A, dims[1]), args.dim_of(op, A, dims[2])
    if ord == "fro" then
        return L.vector_norm(A, { dim = { r, c }, keepdim = keep })
    elseif ord == "nuc" or ord == 2 or ord == -2 then -- from the singular values
        local moved = A:movedim({ r, c }, { A:dim() - 1, A:dim() })
        local sv = L.svdvals(moved)
        local v = ord == "nuc" and sv:sum(-1) or ord == 2 and sv:amax(-1) or sv:amin(-1)
        if keep then
            v = v:unsqueeze(math.min(r, c)):unsqueeze(math.max(r, c))
        end
        return v
    end
    local sum_dim, pick_dim
    if ord == 1 or ord == -1 then
        sum_dim, pick_dim = r, c
    elseif ord == math.huge or ord == -math.huge then
        sum_dim, pick_dim = c, r
    else
        raise(("tide: %s: ord = %s; expected \"fro\", \"nuc\", 1, -1, 2, -2, inf or -inf")
            :format(op, tostring(ord)))
    end
    local s = A:abs():sum(sum_dim, true)
    local m = ord > 0 and s:amax(pick_dim, true) or s:amin(pick_dim, true)
    if not keep then
        m = m:squeeze(math.max(r, c)):squeeze(math.min(r, c))
    end
    return m
end

-- norm(x[, {ord =, dim =, keepdim =}]): matrix_norm when ord is a string or dim has two dims,
-- else vector_norm (of the flattened x when neither is given), as PyTorch's linalg.norm
function L.norm(x, ...)
    local op = "linalg.norm"
    local opts = pytorch_args.merge(op, NORM_OPTIONS, ...) -- PyTorch's positional form too
    local o = args.options(op, opts, NORM_KEYWORDS, "{ord = 2}")
    if o.ord == nil or o.ord == "fro" then -- a vector norm of |z| for a complex z
        x = modulus(x)
    end
    check(op, x)
    if type(o.ord) == "string" or (type(o.dim) == "table" and #o.dim == 2) then
        return L.matrix_norm(x, o)
    end
    if o.ord ~= nil and o.dim == nil and x:dim() > 2 then
        raise(("tide: %s: If dim is not specified but ord is, the input must be 1D or 2D. " ..
            "Got %dD. (PyTorch's rule; pass dim)"):format(op, x:dim()))
    end
    if o.ord ~= nil and o.dim == nil and x:dim() == 2 then -- ord without dim: a 2-D matrix norm
        return L.matrix_norm(x, o)
    end
    return L.vector_norm(x, o)
end

local RANK_OPTIONS = { "atol", "rtol", "hermitian", "tol", "rcond" }

-- the tolerance below which a singular value counts as 0: max(atol, rtol * the largest), rtol
-- eps * max(m, n) when neither is given (PyTorch's rule); S [..., k]
local function cutoff(op, A, S, opts)
    local o = args.options(op, opts, RANK_OPTIONS, "{rtol = 1e-10}")
    local atol, rtol = o.atol or 0, o.rtol
    if o.tol ~= nil then -- matrix_rank's older tol (PyTorch 1.13's): atol = tol, rtol = 0
        atol, rtol = o.tol, o.rtol or 0
    elseif o.rcond ~= nil then -- pinv's older rcond: rtol
        rtol = o.rcond
    end
    if rtol == nil then
        rtol = o.atol ~= nil and 0 or (EPS[A.dtype] or EPS.float32) *
            math.max(A:size(-2), A:size(-1))
    end
    if type(atol) ~= "number" or type(rtol) ~= "number" then
        raise(("tide: %s: atol and rtol must be numbers, got %s and %s"):format(op,
            type(atol), type(rtol)))
    end
    local largest = S:narrow(-1, 1, 1) -- descending
    return (largest * rtol):clamp(atol, nil), o.hermitian
end

-- pinv(A[, {atol =, rtol =, hermitian =}]): the pseudo-inverse V diag(1 / S) U^T over the
-- singular values above the cutoff (hermitian is accepted and the SVD used either way)
-- pinv_svd: the pseudo-inverse, the singular values and the mask of those kept
local function pinv_svd(op, A, opts)
    local U, S, Vh = L.svd(A, { full_matrices = false })
    local keep = S:gt((cutoff(op, A, S, opts)))
    local inv = core.where(keep, 1 / core.where(keep, S, 1), 0)
    return (Vh:transpose(-2, -1) * inv:unsqueeze(-2)):matmul(U:transpose(-2, -1)), S, keep
end

function L.pinv(A, opts)
    local op = "linalg.pinv"
    if type(opts) == "number" then -- PyTorch's positional rcond
        opts = { rcond = opts }
    end
    matrix(op, A, 1, true)
    float_only(op, A)
    return (pinv_svd(op, A, opts))
end

-- matrix_rank(A[, {atol =, rtol =, hermitian =}]): the singular values above the cutoff, int64
function L.matrix_rank(A, opts)
    local op = "linalg.matrix_rank"
    if type(opts) == "number" then -- PyTorch's positional tol
        opts = { tol = opts }
    end
    matrix(op, A, 1, true)
    float_only(op, A)
    return autograd.no_grad(function()
        local S = L.svdvals(A)
        return S:gt((cutoff(op, A, S, opts))):to("int64"):sum(-1)
    end)
end

local LSTSQ_OPTIONS = { "rcond", "driver" }

local DRIVERS = { gels = true, gelsy = true, gelsd = true, gelss = true }

-- lstsq(A, B[, {rcond =, driver =}]): the X minimising |A X - B| (B [..., m, k] or [..., m]),
-- through the pseudo-inverse (singular values below rcond times the largest dropped; PyTorch's
-- gelsd driver's answer, for any rank). Returns PyTorch's solution, residuals, rank and
-- singular_values, each as the driver (default "gelsy" on the CPU, "gels" elsewhere) gives:
-- residuals [..., k] when m > n, every A has rank n and the driver is not gelsy; rank (int64)
-- but for gels; singular_values for gelsd and gelss; otherwise an empty tensor
function L.lstsq(A, B, opts)
    local op = "linalg.lstsq"
    matrix(op, A, 1, true)
    float_only(op, A)
    check(op, B, 2)
    same_device(op, A, B)
    local o = args.options(op, opts, LSTSQ_OPTIONS, "{rcond = 1e-10}")
    local vector = B:dim() == A:dim() - 1
    if vector then
        B = B:unsqueeze(-1)
    end
    if B:size(-2) ~= A:size(-2) then
        raise(("tide: %s: A is %s, B %s: B's rows must match A's %d rows"):format(op,
            shape_str(A:size()), shape_str(B:size()), A:size(-2)))
    end
    local driver = o.driver or (A.is_cpu and "gelsy" or "gels")
    if not DRIVERS[driver] then
        raise(("tide: %s: driver = %s; expected \"gels\", \"gelsy\", \"gelsd\" or \"gelss\"")
            :format(op, tostring(driver)))
    end
    local P, S, keep = pinv_svd(op, A, o.rcond and { rtol = o.rcond } or nil)
    local X = P:matmul(B)
    local empty = core.zeros({ 0 }, { dtype = A.dtype, device = A.device })
    local rank = autograd.no_grad(function() return keep:to("int64"):sum(-1) end)
    local m, n = A:size(-2), A:size(-1)
    local residuals = empty
    if m > n and driver ~= "gelsy" and rank:eq(n):all():item() then
        residuals = (A:matmul(X) - B):square():sum(-2)
    end
    local sv = (driver == "gelsd" or driver == "gelss") and S:detach() or empty
    if driver == "gels" then
        rank = core.zeros({ 0 }, { dtype = "int64", device = A.device })
    end
    return vector and X:squeeze(-1) or X, residuals, rank, sv
end

-- cond(A[, p]): the condition number; p nil or 2: the largest singular value over the
-- smallest; else matrix_norm(A, p) matrix_norm(inv(A), p)
function L.cond(A, p)
    local op = "linalg.cond"
    matrix(op, A, 1, true)
    if p == nil or p == 2 or p == -2 then
        local S = L.svdvals(A)
        local r = S:narrow(-1, 1, 1):squeeze(-1) / S:narrow(-1, S:size(-1), 1):squeeze(-1)
        return p == -2 and 1 / r or r
    end
    matrix(op, A)
    if p ~= "fro" and p ~= "nuc" and p ~= 1 and p ~= -1 and p ~= math.huge and
        p ~= -math.huge then
        L.matrix_norm(A, { ord = p }) -- raises for an unknown p
    end
    -- a singular matrix's is inf, as PyTorch's (inv_ex: no error)
    local Ainv, info = L.inv_ex(A)
    local c = L.matrix_norm(A, { ord = p }) * L.matrix_norm(Ainv, { ord = p })
    return c:masked_fill(info:ne(0), math.huge)
end

-- PyTorch's Tensor methods and torch.X functions over these (an argument they do not take
-- raises, as every method's: args.no_extra)
local no_extra = args.no_extra

function Tensor.det(A, ...)
    no_extra("det", 1, ...)
    return L.det(A)
end
function Tensor.logdet(A, ...) -- log det: NaN for a negative determinant, -inf for 0, as PyTorch's
    no_extra("logdet", 1, ...)
    if type(A) == "table" then -- a complex A: log det, complex (lua/tide/complex/linalg.lua)
        return complex_linalg().logdet(A)
    end
    local s, l = L.slogdet(A)
    return core.where(s:lt(0), 0 / 0, l)
end
function Tensor.slogdet(A, ...)
    no_extra("slogdet", 1, ...)
    return L.slogdet(A)
end
function Tensor.inverse(A, ...)
    no_extra("inverse", 1, ...)
    return L.inv(A)
end
function Tensor.cholesky(A, upper, ...) -- PyTorch's torch.cholesky(A, upper = false)
    no_extra("cholesky", 2, ...)
    if upper ~= nil and type(upper) ~= "boolean" then
        raise(("tide: cholesky: upper must be a boolean, got %s"):format(type(upper)))
    end
    return L.cholesky(A, upper ~= nil and { upper = upper } or nil)
end
function Tensor.matrix_power(A, k, ...)
    no_extra("matrix_power", 2, ...)
    return L.matrix_power(A, k)
end
function Tensor.cross(a, b, dim, ...) -- torch.cross(a, b, dim): the first dim of size 3 when nil
    no_extra("cross", 3, ...)
    if dim ~= nil and not compat.is_integer(dim) then
        raise(("tide: cross: dim must be an integer, got %s"):format(tostring(dim)))
    end
    if dim == nil and core.is_tensor(a) then
        for d = 1, a:dim() do
            if a:size(d) == 3 then
                dim = d
                break
            end
        end
    end
    return L.cross(a, b, dim ~= nil and { dim = dim } or nil)
end
function Tensor.qr(A, some, ...) -- PyTorch's torch.qr(A, some = true): reduced unless some is false
    no_extra("qr", 2, ...)
    if some ~= nil and type(some) ~= "boolean" then
        raise(("tide: qr: some must be a boolean, got %s"):format(type(some)))
    end
    return L.qr(A, some == false and { mode = "complete" } or nil)
end
local function boolean(op, name, v)
    if v ~= nil and type(v) ~= "boolean" then
        raise(("tide: %s: %s must be a boolean, got %s"):format(op, name, type(v)))
    end
    return v
end

-- PyTorch's torch.svd(A, some = true): U, S and V (not Vh), reduced unless some is false
function Tensor.svd(A, some, ...)
    no_extra("svd", 2, ...)
    local U, S, Vh = L.svd(A, { full_matrices = boolean("svd", "some", some) == false })
    return U, S, Vh:transpose(-2, -1)
end

-- PyTorch's b:cholesky_solve(L[, upper = false]): x with A x = b for A = L L^T (U^T U)
function Tensor.cholesky_solve(B, F, upper, ...)
    no_extra("cholesky_solve", 3, ...)
    matrix("cholesky_solve", B, 1, true)
    matrix("cholesky_solve", F, 2)
    same_device("cholesky_solve", B, F) -- named so, not by the solve_triangular inside
    upper = boolean("cholesky_solve", "upper", upper) == true
    local Ft = F:transpose(-2, -1)
    -- A = F F^T (lower F) or U^T U (upper U): a lower solve, then an upper one
    local lower_part, upper_part = F, Ft
    if upper then
        lower_part, upper_part = Ft, F
    end
    local y = L.solve_triangular(lower_part, B, { upper = false })
    return L.solve_triangular(upper_part, y, { upper = true })
end

-- PyTorch's L:cholesky_inverse([upper = false]): A^-1 for A = L L^T (U^T U)
function Tensor.cholesky_inverse(F, upper, ...)
    no_extra("cholesky_inverse", 2, ...)
    matrix("cholesky_inverse", F)
    boolean("cholesky_inverse", "upper", upper)
    -- a zero on the factor's diagonal raises, as PyTorch's (potri's info); one read back
    local zero = autograd.no_grad(function()
        return diag_of(F):eq(0)
    end)
    if zero:any():item() then
        local j, where = first_zero(zero)
        raise(("tide: cholesky_inverse: the factor's diagonal element %d is zero%s, so the " ..
            "matrix it factors is singular and has no inverse; check the factor " ..
            "(linalg.cholesky_ex's info names where a factorisation failed)"):format(j, where))
    end
    local n = F:size(-1)
    local I = core.eye(n, { dtype = F.dtype, device = F.device }):expand(F:size())
    return Tensor.cholesky_solve(I, F, upper)
end

function Tensor.pinverse(A, rcond, ...) -- PyTorch's torch.pinverse(A, rcond = 1e-15)
    no_extra("pinverse", 2, ...)
    if rcond ~= nil and type(rcond) ~= "number" then
        raise(("tide: pinverse: rcond must be a number, got %s"):format(type(rcond)))
    end
    return L.pinv(A, { rtol = rcond or 1e-15 })
end

-- torch.matrix_exp, t:matrix_exp() and torch.lu_unpack
function Tensor.matrix_exp(A, ...)
    args.no_extra("matrix_exp", 1, ...)
    return L.matrix_exp(A)
end

-- vecdot, diagonal, vander, cholesky_ex, inv_ex, solve_ex, tensorinv, tensorsolve and
-- householder_product (lua/tide/_linalg_more.lua)
require("tide._linalg_more")(L, matrix, is_vector_rhs, factor, check_lu)
-- ldl_factor, ldl_factor_ex and ldl_solve (lua/tide/linalg_ldl.lua)
require("tide.linalg_ldl")(L, matrix)
-- eig and eigvals, complex results (lua/tide/linalg_eig.lua)
require("tide.linalg_eig")(L, matrix)

return L
