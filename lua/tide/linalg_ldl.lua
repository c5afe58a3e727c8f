-- tide.linalg_ldl: PyTorch 1.13's torch.linalg.ldl_factor, ldl_factor_ex and ldl_solve: the
-- Bunch-Kaufman factorisation A = P L D L^T P^T of symmetric (possibly indefinite) matrices,
-- LAPACK's sytrf with its lower triangle (uplo "L", which PyTorch uses), and the solve from it
-- (sytrs). LD holds D's 1x1 and 2x2 blocks on and below the diagonal and L's multipliers below
-- them, in LAPACK's product form (the interchanges of later steps are not applied to earlier
-- columns), zeros above; pivots (int64, 1-based, LAPACK's convention) holds k where rows and
-- columns were swapped with k for a 1x1 block, and -k on both rows of a 2x2 block. Only A's
-- lower triangle is read. This is reference LAPACK's unblocked dsytf2 and dsytrs, which sytrf
-- and PyTorch run for matrices up to 64 rows, so LD and pivots are PyTorch's (the blocked code
-- takes the same pivots). It runs on the host in float64, one matrix at a time (tensors
-- elsewhere are copied there and back); no gradient (nor in PyTorch 1.13).
local core = require("tide.core")
local autograd = require("tide.autograd")
local args = require("tide.op_args")
local same_device = require("tide._same_device")
local compat = require("tide._compat")

local raise = autograd.raise
local check, shape_str = args.check, args.shape_str
local unpack = compat.unpack

local ALPHA = (1 + math.sqrt(17)) / 8 -- Bunch-Kaufman's growth bound

-- the batch dims of [..., m, n]
local function batch_of(A)
    local s = A:size()
    return { unpack(s, 1, #s - 2) }
end

-- t on the host in float64, as a list of its matrices (nested rows)
local function host_matrices(t)
    local n1, n2 = t:size(-2), t:size(-1)
    return t:detach():to("cpu", { dtype = "float64" }):reshape(-1, n1, n2):totable()
end

-- the 1-based index of the largest |f(i)| for i = first .. last (the first on ties, as idamax)
local function idamax(first, last, f)
    local best, at = -1, first
    for i = first, last do
        local v = math.abs(f(i))
        if v > best then
            best, at = v, i
        end
    end
    return at
end

-- dsytf2 with uplo "L" on a (rows, 1-based; the lower triangle read and written): a holds LD
-- after; returns ipiv and info
local function sytf2(a, n)
    local ipiv, info = {}, 0
    local k = 1
    while k <= n do
        local kstep, kp = 1, k
        local absakk = math.abs(a[k][k])
        local imax, colmax = k, 0
        if k < n then
            imax = idamax(k + 1, n, function(i) return a[i][k] end)
            colmax = math.abs(a[imax][k])
        end
        if math.max(absakk, colmax) == 0 or absakk ~= absakk then
            if info == 0 then
                info = k -- a zero column: D(k, k) is 0, nothing to eliminate
            end
        else
            if absakk < ALPHA * colmax then
                -- the largest off-diagonal element in row and column imax
                local jmax = idamax(k, imax - 1, function(j) return a[imax][j] end)
                local rowmax = math.abs(a[imax][jmax])
                if imax < n then
                    jmax = idamax(imax + 1, n, function(i) return a[i][imax] end)
                    rowmax = math.max(rowmax, math.abs(a[jmax][imax]))
                end
                if absakk >= ALPHA * colmax * (colmax / rowmax) then
                    kp = k
                elseif math.abs(a[imax][imax]) >= ALPHA * rowmax then
                    kp = imax
                else
                    kp, kstep = imax, 2
                end
            end
            local kk = k + kstep - 1
            if kp ~= kk then -- rows and columns kk and kp swapped in the trailing part
                for i = kp + 1, n do
                    a[i][kk], a[i][kp] = a[i][kp], a[i][kk]
                end
                for j = kk + 1, kp - 1 do
                    a[j][kk], a[kp][j] = a[kp][j], a[j][kk]
                end
                a[kk][kk], a[kp][kp] = a[kp][kp], a[kk][kk]
                if kstep == 2 then
                    a[k + 1][k], a[kp][k] = a[kp][k], a[k + 1][k]
                end
            end
            if kstep == 1 then
                if k < n then -- A22 -= x x^T / d11 (lower part), x /= d11
                    local d11 = 1 / a[k][k]
                    for j = k + 1, n do
                        local temp = -d11 * a[j][k]
                        for i = j, n do
                            a[i][j] = a[i][j] + a[i][k] * temp
                        end
                    end
                    for i = k + 1, n do
                        a[i][k] = d11 * a[i][k]
                    end
                end
            elseif k < n - 1 then -- a 2x2 pivot block: two columns of L at once
                local d21 = a[k + 1][k]
                local d11 = a[k + 1][k + 1] / d21
                local d22 = a[k][k] / d21
                local t = 1 / (d11 * d22 - 1)
                d21 = t / d21
                for j = k + 2, n do
                    local wk = d21 * (d11 * a[j][k] - a[j][k + 1])
                    local wkp1 = d21 * (d22 * a[j][k + 1] - a[j][k])
                    for i = j, n do
                        a[i][j] = a[i][j] - a[i][k] * wk - a[i][k + 1] * wkp1
                    end
                    a[j][k], a[j][k + 1] = wk, wkp1
                end
            end
        end
        if kstep == 1 then
            ipiv[k] = kp
        else
            ipiv[k], ipiv[k + 1] = -kp, -kp
        end
        k = k + kstep
    end
    return ipiv, info
end

local function swap_rows(b, i, j)
    b[i], b[j] = b[j], b[i]
end

-- dsytrs with uplo "L": b (rows of nrhs) overwritten with A^-1 b
local function sytrs(a, ipiv, n, b, nrhs)
    local k = 1 -- L D y = b
    while k <= n do
        if ipiv[k] > 0 then
            if ipiv[k] ~= k then
                swap_rows(b, k, ipiv[k])
            end
            for i = k + 1, n do
                for c = 1, nrhs do
                    b[i][c] = b[i][c] - a[i][k] * b[k][c]
                end
            end
            for c = 1, nrhs do
                b[k][c] = b[k][c] / a[k][k]
            end
            k = k + 1
        else
            local kp = -ipiv[k]
            if kp ~= k + 1 then
                swap_rows(b, k + 1, kp)
            end
            for i = k + 2, n do
                for c = 1, nrhs do
                    b[i][c] = b[i][c] - a[i][k] * b[k][c] - a[i][k + 1] * b[k + 1][c]
                end
            end
            local akm1k = a[k + 1][k]
            local akm1 = a[k][k] / akm1k
            local ak = a[k + 1][k + 1] / akm1k
            local denom = akm1 * ak - 1
            for c = 1, nrhs do
                local bkm1 = b[k][c] / akm1k
                local bk = b[k + 1][c] / akm1k
                b[k][c] = (ak * bkm1 - bk) / denom
                b[k + 1][c] = (akm1 * bk - bkm1) / denom
            end
            k = k + 2
        end
    end
    k = n -- L^T x = y
    while k >= 1 do
        if ipiv[k] > 0 then
            for c = 1, nrhs do
                local s = b[k][c]
                for i = k + 1, n do
                    s = s - b[i][c] * a[i][k]
                end
                b[k][c] = s
            end
            if ipiv[k] ~= k then
                swap_rows(b, k, ipiv[k])
            end
            k = k - 1
        else
            for c = 1, nrhs do
                local s, s1 = b[k][c], b[k - 1][c]
                for i = k + 1, n do
                    s = s - b[i][c] * a[i][k]
                    s1 = s1 - b[i][c] * a[i][k - 1]
                end
                b[k][c], b[k - 1][c] = s, s1
            end
            local kp = -ipiv[k]
            if kp ~= k then
                swap_rows(b, k, kp)
            end
            k = k - 2
        end
    end
end

local function boolean(op, name, v)
    if v ~= nil and type(v) ~= "boolean" then
        raise(("tide: %s: %s must be true or false, got %s"):format(op, name, tostring(v)))
    end
    return v == true
end

return function(L, matrix)
    local FACTOR_EX = { "hermitian", "check_errors" }

    local function singular(op, info_list, batched)
        for i, v in ipairs(info_list) do
            if v ~= 0 then
                raise(("tide: %s: the matrix is singular (D's diagonal element %d is zero)%s; " ..
                    "use linalg.ldl_factor_ex for the factor and its info, or regularise the " ..
                    "matrix"):format(op, v, batched and (" (batch element %d)"):format(i)
                    or ""))
            end
        end
    end

    local function factor(op, A, check_errors)
        matrix(op, A)
        args.not_differentiable(op, A)
        local n, batch = A:size(-1), batch_of(A)
        local shape = { unpack(batch) }
        shape[#shape + 1] = n
        if A:numel() == 0 then -- no matrix, or 0 x 0 ones
            return core.zeros(A:size(), { dtype = A.dtype, device = A.device }),
                core.zeros(shape, { dtype = "int64", device = A.device }),
                core.zeros(batch, { dtype = "int32", device = A.device })
        end
        local mats = host_matrices(A)
        local lds, pivs, infos = {}, {}, {}
        for b = 1, #mats do
            local a = mats[b]
            local ipiv, info = sytf2(a, n)
            for i = 1, n do
                for j = i + 1, n do
                    a[i][j] = 0
                end
            end
            lds[b], pivs[b], infos[b] = a, ipiv, info
        end
        if check_errors then
            singular(op, infos, #batch > 0)
        end
        local LD = core.tensor(lds, { dtype = "float64" }):to(A.device, { dtype = A.dtype })
            :reshape(A:size())
        local pivots = core.tensor(pivs, { dtype = "int64", device = A.device }):reshape(shape)
        local info = core.tensor(infos, { dtype = "int32", device = A.device }):reshape(batch)
        return LD, pivots, info
    end

    -- ldl_factor_ex(A[, {hermitian = false, check_errors = false}]): LD, pivots and info
    -- (int32, A's batch shape: the first zero on D's diagonal, 1-based, else 0)
    function L.ldl_factor_ex(A, opts)
        local op = "linalg.ldl_factor_ex"
        local o = args.options(op, opts, FACTOR_EX, "{check_errors = true}")
        boolean(op, "hermitian", o.hermitian) -- real matrices: hermitian is symmetric
        return factor(op, A, boolean(op, "check_errors", o.check_errors))
    end

    -- ldl_factor(A[, {hermitian = false}]): LD and pivots; a singular D raises
    function L.ldl_factor(A, opts)
        local op = "linalg.ldl_factor"
        local o = args.options(op, opts, { "hermitian" }, "{hermitian = true}")
        boolean(op, "hermitian", o.hermitian)
        local LD, pivots = factor(op, A, true)
        return LD, pivots
    end

    -- ldl_solve(LD, pivots, B[, {hermitian = false}]): X with A X = B from ldl_factor's
    -- results; B [..., n, k], the batches broadcast
    function L.ldl_solve(LD, pivots, B, opts)
        local op = "linalg.ldl_solve"
        matrix(op, LD)
        check(op, pivots, 2)
        check(op, B, 3)
        same_device(op, LD, pivots, B)
        boolean(op, "hermitian", args.options(op, opts, { "hermitian" },
            "{hermitian = true}").hermitian)
        args.not_differentiable(op, LD, B)
        local n = LD:size(-1)
        if pivots.dtype ~= "int64" and pivots.dtype ~= "int32" or pivots:dim() < 1 or
            pivots:size(-1) ~= n then
            raise(("tide: %s: pivots must be the int64 [..., %d] of ldl_factor, got %s %s")
                :format(op, n, pivots.dtype, shape_str(pivots:size())))
        end
        if B:dim() < 2 or B:size(-2) ~= n then
            raise(("tide: %s: LD is %s, B %s: B must be [..., %d, k]"):format(op,
                shape_str(LD:size()), shape_str(B:size()), n))
        end
        if B.dtype ~= LD.dtype then
            raise(("tide: %s: LD is %s, B %s; convert B with :to(\"%s\")"):format(op, LD.dtype,
                B.dtype, LD.dtype))
        end
        local pb = { unpack(pivots:size(), 1, pivots:dim() - 1) }
        local lb, bb = batch_of(LD), batch_of(B)
        local ok, batch = pcall(function()
            return require("tide").broadcast_shapes(lb, pb, bb)
        end)
        if not ok then
            raise(("tide: %s: the batch dims of LD %s, pivots %s and B %s do not broadcast")
                :format(op, shape_str(LD:size()), shape_str(pivots:size()),
                    shape_str(B:size())))
        end
        local k = B:size(-1)
        if n == 0 or k == 0 or B:numel() == 0 or LD:numel() == 0 then
            local shape = { unpack(batch) }
            shape[#shape + 1], shape[#shape + 2] = n, k
            return core.zeros(shape, { dtype = B.dtype, device = B.device })
        end
        local function full(t, ...)
            local s = { unpack(batch) }
            for _, v in ipairs({ ... }) do
                s[#s + 1] = v
            end
            return t:expand(s)
        end
        local a = host_matrices(full(LD, n, n))
        local x = host_matrices(full(B, n, k))
        local p = full(pivots, n):to("cpu", { dtype = "int64" }):reshape(-1, n):totable()
        for i = 1, #a do
            local j, piv = 1, p[i]
            while j <= n do -- k > 0 for a 1x1 block, -k on both rows of a 2x2 one
                local v = piv[j]
                local step = v < 0 and 2 or 1
                if v == 0 or math.abs(v) > n or (v < 0 and piv[j + 1] ~= v) then
                    raise(("tide: %s: pivots %s hold %d at %d, which ldl_factor does not " ..
                        "give; pass ldl_factor's own pivots"):format(op,
                        shape_str(pivots:size()), v, j))
                end
                j = j + step
            end
            sytrs(a[i], piv, n, x[i], k)
        end
        local shape = { unpack(batch) }
        shape[#shape + 1], shape[#shape + 2] = n, k
        return core.tensor(x, { dtype = "float64" }):to(B.device, { dtype = B.dtype })
            :reshape(shape)
    end
end
