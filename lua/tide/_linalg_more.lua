-- tide._linalg_more: more of PyTorch 1.13's torch.linalg, written over tide.linalg's solvers
-- and tensor ops (autograd differentiates the composites): vecdot, diagonal, vander,
-- cholesky_ex, inv_ex, solve_ex (complex A too) and lu_factor_ex (an int32 info instead of an
-- error), tensorinv, tensorsolve, householder_product and matmul (tide.matmul's other name).
-- linalg.lua calls this file with its table and its argument check at its end.
local core = require("tide.core")
local autograd = require("tide.autograd")
local args = require("tide.op_args")
local same_device = require("tide._same_device")
local compat = require("tide._compat")

local raise = autograd.raise
local check, shape_str = args.check, args.shape_str
local unpack = compat.unpack

-- the batch dims of [..., m, n]
local function batch_of(A)
    local s = A:size()
    return { unpack(s, 1, #s - 2) }
end

local function product(s, first, last)
    local p = 1
    for i = first or 1, last or #s do
        p = p * s[i]
    end
    return p
end

local function boolean(op, name, v)
    if v ~= nil and type(v) ~= "boolean" then
        raise(("tide: %s: %s must be true or false, got %s"):format(op, name, tostring(v)))
    end
    return v == true
end

-- factor(A[, op]): lu_factor's LU and pivots without its check; check_lu(op, LU): its check
return function(L, matrix, is_vector_rhs, factor, check_lu)
    -- vecdot(x, y[, {dim = -1}]): sum(x * y) over dim, x and y broadcast (real tensors: no
    -- conjugate)
    function L.vecdot(x, y, opts)
        local op = "linalg.vecdot"
        check(op, x, 1)
        check(op, y, 2)
        same_device(op, x, y)
        local dim = args.options(op, opts, { "dim" }, "{dim = -1}").dim or -1
        if not compat.is_integer(dim) then
            raise(("tide: %s: dim must be an integer, got %s"):format(op, tostring(dim)))
        end
        if x.dtype ~= y.dtype then
            raise(("tide: %s: x is %s, y %s; convert one with :to(\"%s\")"):format(op, x.dtype,
                y.dtype, x.dtype))
        end
        return args.as_op(op, "sum", function() return (x * y):sum(dim) end)
    end

    -- diagonal(A[, {offset = 0, dim1 = -2, dim2 = -1}]): tide.diagonal with the last two dims
    -- by default (a view)
    function L.diagonal(A, opts)
        local op = "linalg.diagonal"
        check(op, A, 1)
        local o = args.options(op, opts, { "offset", "dim1", "dim2" }, "{offset = 1}")
        if A:dim() < 2 then
            raise(("tide: %s: expected A with at least 2 dims, got %s"):format(op,
                shape_str(A:size())))
        end
        return args.as_op(op, "diagonal", function()
            return A:diagonal(o.offset or 0, o.dim1 or -2, o.dim2 or -1)
        end)
    end

    -- vander(x[, {N = x:size(-1)}]): [..., n, N], the powers x^0 .. x^(N-1) of each element
    -- (increasing, unlike tide.vander), as a cumulative product (its gradient exact at 0)
    function L.vander(x, opts)
        local op = "linalg.vander"
        check(op, x, 1)
        local N = args.options(op, opts, { "N" }, "{N = 3}").N
        if x:dim() < 1 then
            raise(("tide: %s: x must have at least 1 dim, got a 0-dim tensor"):format(op))
        end
        if x.dtype == "bool" then
            raise(("tide: %s: x must be a number tensor, got bool"):format(op))
        end
        N = N == nil and x:size(-1) or N
        if not compat.is_integer(N) or N <= 1 then
            raise(("tide: %s: N must be an integer greater than 1, got %s"):format(op,
                tostring(N)))
        end
        local s = x:size()
        s[#s + 1] = N - 1
        local ones = core.ones({ 1 }, { dtype = x.dtype, device = x.device })
        local first = x:size()
        first[#first + 1] = 1
        return core.cat({ ones:expand(first), x:unsqueeze(-1):expand(s) }, -1):cumprod(-1)
    end

    local EX = { "check_errors" }
    local CHOLESKY_EX = { "upper", "check_errors" }
    local SOLVE_EX = { "left", "check_errors" }

    -- info of [...] (int32 on A's device) from a [..., 1, 1] tensor, 0 where fine
    local function info_of(A, info)
        return info:reshape(batch_of(A)):to("int32")
    end

    -- PyTorch's info of a Cholesky factorisation: the order of the first leading minor that is
    -- not positive, 0 when A is positive-definite; column by column over the whole batch (as
    -- linalg.cholesky's ops), each failed pivot replaced by 1 so that the later ones stay finite
    local function cholesky_info(A)
        return autograd.no_grad(function()
            local n = A:size(-1)
            local shape = batch_of(A)
            shape[#shape + 1], shape[#shape + 2] = 1, 1
            local info = core.zeros(shape, { dtype = "int64", device = A.device })
            local cols = {}
            for j = 1, n do
                local c = A:narrow(-1, j, 1):narrow(-2, j, n - j + 1) -- A[j:, j]
                if j > 1 then
                    local done = core.cat(cols, -1)
                    local lj = done:narrow(-2, j, 1)
                    c = c - done:narrow(-2, j, n - j + 1):matmul(lj:transpose(-2, -1))
                end
                local d = c:narrow(-2, 1, 1)
                local ok = d:gt(0) -- NaN is not
                info = core.where(info:eq(0), core.where(ok, 0, j), info)
                local col = c / core.where(ok, d, 1):sqrt()
                if j > 1 then
                    local s = col:size()
                    s[#s - 1] = j - 1
                    col = core.cat({ core.zeros(s, { dtype = A.dtype, device = A.device }), col },
                        -2)
                end
                cols[j] = col
            end
            return info_of(A, info)
        end)
    end

    -- PyTorch's info of inv_ex and solve_ex: the first zero on U's diagonal (1-based), 0 where
    -- there is none, of the LU of A^T (getrf's info): PyTorch 1.13 factors a row-major A as its
    -- transpose, which LAPACK reads without a copy
    local function lu_info(A)
        return autograd.no_grad(function()
            local LU = factor(A:transpose(-2, -1))
            local zero = LU:diagonal(0, -2, -1):eq(0)
            local first = zero:to("int64"):argmax(-1, true) -- 1-based
            return info_of(A, core.where(zero:any(-1, true), first, 0))
        end)
    end

    -- the first failing matrix: its info and (for a batch) its position in the flattened batch
    local function first_failure(info)
        local flat = info:reshape(-1):to("int64")
        local at = flat:ne(0):to("int64"):argmax(1):item() -- 1-based
        return flat[at]:item(), at
    end

    -- where info is not 0 (A a failing matrix), A replaced by the identity: the solvers then
    -- run on the whole batch; their results there are set to NaN afterwards
    local function identity_where(A, bad)
        local I = core.eye(A:size(-1), { dtype = A.dtype, device = A.device })
        return core.where(bad, I, A)
    end

    local function nan_where(X, bad)
        return core.where(bad, 0 / 0, X)
    end

    -- " (batch element k)" for a batch, "" for one matrix
    local function element(A, at)
        return A:dim() > 2 and (" (batch element %d)"):format(at) or ""
    end

    local function not_positive_definite(op, A, info)
        local order, at = first_failure(info)
        raise(("tide: %s: the matrix is not positive-definite (its leading minor of order " ..
            "%d is not positive)%s"):format(op, order, element(A, at)))
    end

    local function singular(op, A, info)
        local k, at = first_failure(info)
        raise(("tide: %s: the matrix is singular (U's diagonal element %d is zero after " ..
            "pivoting)%s; check the input, or regularise it (add a small multiple of the " ..
            "identity)"):format(op, k, element(A, at)))
    end

    -- how a strict solver fails on a matrix: the words of its error, the info of A, and the
    -- error check_errors raises
    local CHOLESKY_FAILURE = { says = "not positive-definite", info = cholesky_info,
        raise = not_positive_definite }
    local LU_FAILURE = { says = "is singular", info = lu_info, raise = singular }

    -- what the _ex functions share: the strict solver `inner` run as f(...), its result and
    -- an info of zeros where it succeeds. Its other errors (shapes, dtypes) are raised as op's
    -- own; a failing matrix (failure.says) gives A's info, raised for the first failing one
    -- with check_errors, or returned after nil with bad, [..., 1, 1], true where info is not 0.
    local function strict_solve(op, A, check_errors, failure, inner, f, ...)
        local ok, X = args.attempt(f, ...)
        if ok then
            return X, core.zeros(batch_of(A), { dtype = "int32", device = A.device })
        end
        if not X:find(failure.says, 1, true) then
            args.raise_as(op, inner, X)
        end
        local info = failure.info(A)
        if check_errors then
            failure.raise(op, A, info)
        end
        return nil, info, info:ne(0):reshape(batch_of(A)):unsqueeze(-1):unsqueeze(-1)
    end

    -- the result and info of [...] (0 where fine) without raising; a failing matrix's result
    -- is NaN. check_errors = true raises for the first failing one instead.
    -- cholesky_ex(A[, {upper = false, check_errors = false}]): info the order of the first
    -- leading minor that is not positive
    function L.cholesky_ex(A, opts)
        local op = "linalg.cholesky_ex"
        matrix(op, A)
        local o = args.options(op, opts, CHOLESKY_EX, "{check_errors = true}")
        local upper = boolean(op, "upper", o.upper)
        local check_errors = boolean(op, "check_errors", o.check_errors)
        local Lm, info, bad = strict_solve(op, A, check_errors, CHOLESKY_FAILURE,
            "linalg.cholesky", L.cholesky, A, { upper = upper })
        if Lm then
            return Lm, info
        end
        return nan_where(L.cholesky(identity_where(A, bad), { upper = upper }), bad), info
    end

    -- a complex inv_ex's or solve_ex's X and info, check_errors raising for the first failing
    -- matrix (its info of A's own LU, as PyTorch's)
    local function complex_checked(op, A, check_errors, X, info)
        if check_errors and info:ne(0):any():item() then
            singular(op, A, info)
        end
        return X, info
    end

    -- inv_ex(A[, {check_errors = false}]): info the first zero pivot of A's LU (getrf's)
    function L.inv_ex(A, opts)
        local op = "linalg.inv_ex"
        if type(A) == "table" then -- complex (lua/tide/complex/linalg.lua)
            local o = args.options(op, opts, EX, "{check_errors = true}")
            local check_errors = boolean(op, "check_errors", o.check_errors)
            return complex_checked(op, A, check_errors, require("tide.complex.linalg").inv(A, true))
        end
        matrix(op, A)
        local o = args.options(op, opts, EX, "{check_errors = true}")
        local check_errors = boolean(op, "check_errors", o.check_errors)
        local X, info, bad = strict_solve(op, A, check_errors, LU_FAILURE, "linalg.inv",
            L.inv, A)
        if X then
            return X, info
        end
        return nan_where(L.inv(identity_where(A, bad)), bad), info
    end

    -- solve_ex(A, B[, {left = true, check_errors = false}]): linalg.solve's X and the info of
    -- A's LU
    function L.solve_ex(A, B, opts)
        local op = "linalg.solve_ex"
        if type(A) == "table" or type(B) == "table" then -- complex
            local o = args.options(op, opts, SOLVE_EX, "{check_errors = true}")
            local check_errors = boolean(op, "check_errors", o.check_errors)
            return complex_checked(op, A, check_errors, require("tide.complex.linalg").solve(A,
                B, { left = o.left }, is_vector_rhs, true))
        end
        matrix(op, A)
        local o = args.options(op, opts, SOLVE_EX, "{check_errors = true}")
        local check_errors = boolean(op, "check_errors", o.check_errors)
        local sopts = { left = o.left }
        local X, info, bad = strict_solve(op, A, check_errors, LU_FAILURE, "linalg.solve",
            L.solve, A, B, sopts)
        if X then
            return X, info
        end
        X = L.solve(identity_where(A, bad), B, sopts)
        -- a vector result [..., n] (linalg.solve's rule) or matrices [..., n, k]
        return nan_where(X, is_vector_rhs(A, B) and bad:squeeze(-1) or bad), info
    end

    -- tensorinv(A[, {ind = 2}]): the inverse of A read as a matrix (its first ind dims the
    -- rows, the others the columns), shaped A's last dims then its first ind
    function L.tensorinv(A, opts)
        local op = "linalg.tensorinv"
        check(op, A, 1)
        local ind = args.options(op, opts, { "ind" }, "{ind = 1}").ind or 2
        if not compat.is_integer(ind) or ind < 1 then
            raise(("tide: %s: ind must be a positive integer, got %s"):format(op, tostring(ind)))
        end
        local s = A:size()
        if ind > #s then
            raise(("tide: %s: ind = %d is more than A's %d dims"):format(op, ind, #s))
        end
        local rows, cols = product(s, 1, ind), product(s, ind + 1)
        if rows ~= cols then
            raise(("tide: %s: A %s: the product of its first %d dims (%d) must equal that of " ..
                "the others (%d)"):format(op, shape_str(s), ind, rows, cols))
        end
        local out = { unpack(s, ind + 1) }
        for i = 1, ind do
            out[#out + 1] = s[i]
        end
        return args.as_op(op, "linalg.inv", L.inv, A:reshape(rows, cols)):reshape(out)
    end

    -- tensorsolve(A, B[, {dims =}]): X with tensordot(A, X, X:dim()) = B; dims (A's, moved to
    -- its end first) as PyTorch's but 1-based
    function L.tensorsolve(A, B, opts)
        local op = "linalg.tensorsolve"
        check(op, A, 1)
        check(op, B, 2)
        same_device(op, A, B)
        local dims = args.options(op, opts, { "dims" }, "{dims = {1}}").dims
        if dims ~= nil then
            if type(dims) ~= "table" then
                raise(("tide: %s: dims must be a list of A's dims, got %s"):format(op,
                    type(dims)))
            end
            local nd, moved, order, given = A:dim(), {}, {}, dims
            dims = {}
            for i, d in ipairs(given) do
                if not compat.is_integer(d) or d < -nd or d > nd or d == 0 then
                    raise(("tide: %s: dims[%d] = %s is not a dim of A %s"):format(op, i,
                        tostring(d), shape_str(A:size())))
                end
                d = d < 0 and d + nd + 1 or d
                if moved[d] then
                    raise(("tide: %s: dim %d appears twice in dims"):format(op, d))
                end
                moved[d] = true
                dims[i] = d
            end
            for d = 1, nd do
                if not moved[d] then
                    order[#order + 1] = d
                end
            end
            for _, d in ipairs(dims) do
                order[#order + 1] = d
            end
            A = A:permute(order)
        end
        local a, b = A:size(), B:size()
        local lead = true
        for i = 1, #b do
            lead = lead and a[i] == b[i]
        end
        local rest = { unpack(a, #b + 1) }
        if not lead or #a < #b or product(b) ~= product(rest) then
            raise(("tide: %s: A %s must be B's shape %s followed by dims of the same product " ..
                "(X's shape)"):format(op, shape_str(a), shape_str(b)))
        end
        local n = product(b)
        return args.as_op(op, "linalg.solve", L.solve, A:reshape(n, n), B:reshape(n))
            :reshape(rest)
    end

    -- lu_factor_ex(A[, {pivot = true, check_errors = false}]): lu_factor's LU and pivots, and
    -- info (int32, A's batch shape): the first zero on U's diagonal (1-based, getrf's), 0 where
    -- there is none; check_errors raises for the first such matrix
    function L.lu_factor_ex(A, opts)
        local op = "linalg.lu_factor_ex"
        matrix(op, A, 1, true) -- [..., m, n], as lu_factor's
        local o = args.options(op, opts, { "pivot", "check_errors" }, "{check_errors = true}")
        if o.pivot ~= nil and boolean(op, "pivot", o.pivot) == false then
            raise(("tide: %s: pivot = false is not supported (nor on PyTorch's CPU); an LU " ..
                "without row swaps fails on a zero pivot"):format(op))
        end
        local check_errors = boolean(op, "check_errors", o.check_errors)
        local LU, pivots = factor(A, op)
        if check_errors then
            check_lu(op, LU)
        end
        local info = autograd.no_grad(function()
            local zero = LU:diagonal(0, -2, -1):eq(0)
            local first = zero:to("int64"):argmax(-1, true) -- 1-based
            return info_of(A, core.where(zero:any(-1, true), first, 0))
        end)
        return LU, pivots, info
    end

    -- matmul(a, b): tide.matmul under torch.linalg's name
    function L.matmul(a, b, ...)
        args.no_extra("linalg.matmul", 2, ...)
        check("linalg.matmul", a, 1)
        check("linalg.matmul", b, 2)
        return args.as_op("linalg.matmul", "matmul", core.matmul, a, b)
    end

    -- householder_product(A, tau): the first n columns of H_1 H_2 ... H_k for A [..., m, n]
    -- (m >= n) and tau [..., k] (k <= n), H_i = I - tau_i v_i v_i^T, v_i zero above row i, 1
    -- at row i and A's column i below (geqrf's reflectors: LAPACK's orgqr); applied from the
    -- last to the first, in matmuls
    function L.householder_product(A, tau)
        local op = "linalg.householder_product"
        matrix(op, A, 1, true)
        check(op, tau, 2)
        same_device(op, A, tau)
        if A.dtype ~= tau.dtype then
            raise(("tide: %s: A is %s, tau %s; convert one with :to(\"%s\")"):format(op,
                A.dtype, tau.dtype, A.dtype))
        end
        local m, n = A:size(-2), A:size(-1)
        if m < n then
            raise(("tide: %s: A %s must have at least as many rows as columns"):format(op,
                shape_str(A:size())))
        end
        local batch, t = batch_of(A), tau:size()
        local same = #t == #batch + 1
        for i = 1, #batch do
            same = same and t[i] == batch[i]
        end
        if not same or t[#t] > n then
            raise(("tide: %s: tau must be [..., k] with A's batch dims %s and k <= %d, got %s")
                :format(op, shape_str(batch), n, shape_str(t)))
        end
        local k = t[#t]
        local shape = { unpack(batch) }
        shape[#shape + 1], shape[#shape + 2] = m, n
        local Q = core.eye(m, n, { dtype = A.dtype, device = A.device }):expand(shape)
        local rows = core.arange(1, m + 1, { dtype = "int64", device = A.device }):view(m, 1)
        for i = k, 1, -1 do
            local v = core.where(rows:gt(i), A:narrow(-1, i, 1), rows:eq(i):to(A.dtype))
            local ti = tau:narrow(-1, i, 1):unsqueeze(-1)
            Q = Q - (ti * v):matmul(v:transpose(-2, -1):matmul(Q))
        end
        return k == 0 and Q:clone() or Q
    end
end
