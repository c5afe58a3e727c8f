-- tide.deprecated_linalg: PyTorch's linear-algebra functions outside torch.linalg, as PyTorch
-- 1.13 has them, for ported scripts. Those that work there work here, over tide.linalg (its
-- values and gradients): lu(A[, {pivot = true, get_infos = false}]) (LU, pivots and, with
-- get_infos, the int32 info), lu_unpack(LU, pivots[, {unpack_data = true, unpack_pivots =
-- true}]), lu_solve(b, LU, pivots) (b first: torch's order), symeig(A[, eigenvectors = false[,
-- upper = true]]) (ascending eigenvalues, and the eigenvectors or an empty tensor; the upper
-- triangle by default), triangular_solve(b, A[, upper = true[, transpose = false[,
-- unitriangular = false]]]) (the solution and a copy of A), frobenius_norm(A[, dim[,
-- keepdim]]) and nuclear_norm(A[, dim][, keepdim]). Those PyTorch 1.13 removed raise naming
-- the torch.linalg function to use: solve, lstsq, eig and matrix_rank. Tensor methods where
-- torch.Tensor has them. Loaded on first use (lua/tide/_lazy_ops.lua).
local core = require("tide.core")
local args = require("tide.op_args")
local raise = require("tide.autograd.raise")

local Tensor = core.Tensor
local check, shape_str = args.check, args.shape_str

local M = { functions = {} }
local F = M.functions

local function linalg()
    return require("tide").linalg
end

-- positional booleans (PyTorch's) or one options table standing for them, after the lead
-- arguments the function declares: the values in order of names
local function flags(op, lead, names, defaults, ...)
    local first = ...
    local out = {}
    if type(first) == "table" then
        args.no_extra(op, lead + 1, select(2, ...))
        local o = args.options(op, first, names)
        for i, k in ipairs(names) do
            out[i] = o[k]
        end
    else
        args.no_extra(op, lead + #names, select(#names + 1, ...))
        for i = 1, #names do
            out[i] = (select(i, ...))
        end
    end
    for i, k in ipairs(names) do
        if out[i] == nil then
            out[i] = defaults[i]
        elseif type(out[i]) ~= "boolean" then
            raise(("tide: %s: %s must be a boolean, got %s"):format(op, k, type(out[i])))
        end
    end
    return out
end

-- ---- the ones PyTorch 1.13 removed ----

local REMOVED = {
    solve = "tide.linalg.solve(A, B) (A first: X with A X = B)",
    lstsq = "tide.linalg.lstsq(A, B) (A first; its first result is the solution)",
    eig = "tide.linalg.eig(A) (complex eigenvalues and eigenvectors), or tide.linalg.eigh(A) " ..
        "for a symmetric A",
    matrix_rank = "tide.linalg.matrix_rank(A)",
}
for name, instead in pairs(REMOVED) do
    F[name] = function()
        raise(("tide: %s: torch.%s was deprecated in PyTorch 1.9 and is removed (PyTorch " ..
            "1.13 raises too); use %s"):format(name, name, instead))
    end
end
Tensor.solve, Tensor.lstsq, Tensor.eig = F.solve, F.lstsq, F.eig

-- ---- LU ----

function F.lu(A, opts, ...)
    local op = "lu"
    args.no_extra(op, 2, ...)
    check(op, A)
    local o = args.options(op, opts, { "pivot", "get_infos" }, "{get_infos = true}")
    if o.pivot == false then
        raise("tide: lu: pivot = false is not supported (nor on PyTorch's CPU); an LU " ..
            "without row swaps fails on a zero pivot")
    end
    for _, k in ipairs({ "pivot", "get_infos" }) do
        if o[k] ~= nil and type(o[k]) ~= "boolean" then
            raise(("tide: lu: %s must be a boolean, got %s"):format(k, type(o[k])))
        end
    end
    local LU, pivots, info = args.as_op(op, "linalg.lu_factor_ex", linalg().lu_factor_ex, A)
    if o.get_infos then
        return LU, pivots, info
    end
    return LU, pivots
end
Tensor.lu = F.lu

local UNPACK = { "unpack_data", "unpack_pivots" }

function F.lu_unpack(LU, pivots, opts, ...)
    local op = "lu_unpack"
    args.no_extra(op, 3, ...)
    check(op, LU)
    local o = args.options(op, opts, UNPACK, "{unpack_pivots = false}")
    local f = flags(op, 2, UNPACK, { true, true }, o)
    local P, Lm, U = args.as_op(op, "lu_unpack", linalg().lu_unpack, LU, pivots)
    local empty = core.zeros({ 0 }, { dtype = LU.dtype, device = LU.device })
    if not f[1] then
        Lm, U = empty, empty
    end
    if not f[2] then
        P = empty
    end
    return P, Lm, U
end

function F.lu_solve(b, LU, pivots, ...)
    local op = "lu_solve"
    args.no_extra(op, 3, ...)
    check(op, b)
    check(op, LU, 2)
    check(op, pivots, 3)
    return args.as_op(op, "linalg.lu_solve", linalg().lu_solve, LU, pivots, b)
end
Tensor.lu_solve = F.lu_solve

-- ---- symeig, triangular_solve ----

local SYMEIG = { "eigenvectors", "upper" }

function F.symeig(A, ...)
    local op = "symeig"
    check(op, A)
    local f = flags(op, 1, SYMEIG, { false, true }, ...)
    local uplo = f[2] and "U" or "L"
    if f[1] then
        return args.as_op(op, "linalg.eigh", linalg().eigh, A, { UPLO = uplo })
    end
    local w = args.as_op(op, "linalg.eigvalsh", linalg().eigvalsh, A, { UPLO = uplo })
    return w, core.zeros({ 0 }, { dtype = A.dtype, device = A.device })
end
Tensor.symeig = F.symeig

local TRIANGULAR = { "upper", "transpose", "unitriangular" }

function F.triangular_solve(b, A, ...)
    local op = "triangular_solve"
    check(op, b)
    check(op, A, 2)
    local f = flags(op, 2, TRIANGULAR, { true, false, false }, ...)
    local upper, transpose = f[1], f[2]
    if A:dim() < 2 or b:dim() < 2 then
        raise(("tide: %s: b and A must be matrices or batches of them, got b %s and A %s")
            :format(op, shape_str(b:size()), shape_str(A:size())))
    end
    local T = transpose and A:transpose(-2, -1) or A
    local X = args.as_op(op, "linalg.solve_triangular", linalg().solve_triangular, T, b,
        { upper = upper ~= transpose, unitriangular = f[3] })
    return X, A:clone()
end
Tensor.triangular_solve = F.triangular_solve

-- ---- norms ----

-- dim as a list of 1 or 2 dims (nil: all)
local function dims_of(op, x, dim, most)
    if dim == nil then
        return nil
    end
    if type(dim) ~= "table" then
        dim = { dim }
    end
    args.check_list(op, dim, "dim")
    if #dim > most or #dim == 0 then
        raise(("tide: %s: dim must hold 1%s dims, got %d"):format(op, most == 2 and " or 2" or "",
            #dim))
    end
    local out = {}
    for i = 1, #dim do
        out[i] = args.dim_of(op, x, dim[i])
    end
    return out
end

local function keep_flag(op, keepdim)
    if keepdim ~= nil and type(keepdim) ~= "boolean" then
        raise(("tide: %s: keepdim must be a boolean, got %s"):format(op, type(keepdim)))
    end
    return keepdim == true
end

-- frobenius_norm(A[, dim[, keepdim]]): sqrt of the sum of squares over dim (1 or 2 dims; all
-- without), linalg.vector_norm's 2-norm
function F.frobenius_norm(A, dim, keepdim, ...)
    local op = "frobenius_norm"
    args.no_extra(op, 3, ...)
    check(op, A)
    local dims = dims_of(op, A, dim, 2)
    return args.as_op(op, "linalg.vector_norm", linalg().vector_norm, A,
        { dim = dims, keepdim = keep_flag(op, keepdim) })
end

-- nuclear_norm(A[, dim][, keepdim]): the sum of the singular values of the matrices in the two
-- dims of dim, of a 2-D A without
function F.nuclear_norm(A, dim, keepdim, ...)
    local op = "nuclear_norm"
    args.no_extra(op, 3, ...)
    check(op, A)
    if type(dim) == "boolean" then
        dim, keepdim = nil, dim
    end
    if dim == nil and A:dim() ~= 2 then
        raise(("tide: %s: A must be 2-D, got %s; give the two dims of the matrices: " ..
            "tide.nuclear_norm(A, {2, 3})"):format(op, shape_str(A:size())))
    end
    local dims = dims_of(op, A, dim or { 1, 2 }, 2)
    if #dims ~= 2 then
        raise(("tide: %s: dim must hold the 2 dims of the matrices, got 1"):format(op))
    end
    return args.as_op(op, "linalg.matrix_norm", linalg().matrix_norm, A,
        { ord = "nuc", dim = dims, keepdim = keep_flag(op, keepdim) })
end

M.names = { "solve", "lstsq", "eig", "matrix_rank", "lu", "lu_unpack", "lu_solve", "symeig",
    "triangular_solve", "frobenius_norm", "nuclear_norm" }
return M
