-- tide.linalg_ldl: PyTorch 1.13's torch.linalg.ldl_factor, ldl_factor_ex and ldl_solve: the
-- Bunch-Kaufman factorisation A = P L D L^T P^T of symmetric (possibly indefinite) matrices,
-- LAPACK's sytrf with its lower triangle (uplo "L", which PyTorch uses), and the solve from it
-- (sytrs). LD holds D's 1x1 and 2x2 blocks on and below the diagonal and L's multipliers below
-- them, in LAPACK's product form (the interchanges of later steps are not applied to earlier
-- columns), zeros above; pivots (int64, 1-based, LAPACK's convention) holds k where rows and
-- columns were swapped with k for a 1x1 block, and -k on both rows of a 2x2 block. Only A's
-- lower triangle is read. The device's own solver runs them (tide_linalg_ldl_factor and
-- tide_linalg_ldl_solve: LAPACK's sytrf and sytrs on the CPU, in A's dtype); a device without
-- one (CUDA: tide loads no cuSOLVER, which has sytrf but no sytrs) has its tensors copied to the
-- host and the results back. No gradient (nor in PyTorch 1.13).
local core = require("tide.core")
local autograd = require("tide.autograd")
local args = require("tide.op_args")
local same_device = require("tide._same_device")
local compat = require("tide._compat")

local raise = autograd.raise
local check, shape_str = args.check, args.shape_str
local unpack = compat.unpack
local K = core._internal -- the kernels (lua/linalg.c)

-- the batch dims of [..., m, n]
local function batch_of(A)
    local s = A:size()
    return { unpack(s, 1, #s - 2) }
end

-- the nres results of kernel name on the tensors given, from their device's solver, or from
-- the host's on copies where the device has none (the results moved back)
local function kernel(op, name, nres, ...)
    local r = { K[name](...) }
    if r[1] ~= nil then
        return unpack(r, 1, nres)
    end
    local dev, host = (...).device, {}
    for i, t in ipairs({ ... }) do
        host[i] = t:to("cpu")
    end
    r = { K[name](unpack(host)) }
    if r[1] == nil then -- the host's LAPACK counts in int
        raise(("tide: %s: no solver for tensors this large"):format(op))
    end
    for i = 1, nres do
        r[i] = r[i]:to(dev)
    end
    return unpack(r, 1, nres)
end

local function boolean(op, name, v)
    if v ~= nil and type(v) ~= "boolean" then
        raise(("tide: %s: %s must be true or false, got %s"):format(op, name, tostring(v)))
    end
    return v == true
end

return function(L, matrix)
    local FACTOR_EX = { "hermitian", "check_errors" }

    local function singular(op, info, batched)
        for i, v in ipairs(info:to("cpu"):reshape(-1):totable()) do
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
        local LD, pivots, info = kernel(op, "ldl_factor", 3, A)
        if check_errors then
            singular(op, info, A:dim() > 2)
        end
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

    -- pivots [..., n] as ldl_factor gives them: k in 1..n for a 1x1 block, -k on both rows of a
    -- 2x2 one (the core checks them too, for its callers; this names pivots' shape)
    local function check_pivots(op, pivots, n)
        for _, piv in ipairs(pivots:to("cpu", { dtype = "int64" }):reshape(-1, n):totable()) do
            local j = 1
            while j <= n do
                local v = piv[j]
                if v == 0 or math.abs(v) > n or (v < 0 and piv[j + 1] ~= v) then
                    raise(("tide: %s: pivots %s hold %d at %d, which ldl_factor does not " ..
                        "give; pass ldl_factor's own pivots"):format(op,
                        shape_str(pivots:size()), v, j))
                end
                j = j + (v < 0 and 2 or 1)
            end
        end
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
        local function full(t, ...)
            local s = { unpack(batch) }
            for _, v in ipairs({ ... }) do
                s[#s + 1] = v
            end
            return t:expand(s)
        end
        if n == 0 or k == 0 or B:numel() == 0 or LD:numel() == 0 then
            local shape = { unpack(batch) }
            shape[#shape + 1], shape[#shape + 2] = n, k
            return core.zeros(shape, { dtype = B.dtype, device = B.device })
        end
        check_pivots(op, pivots, n)
        return kernel(op, "ldl_solve", 1, full(LD, n, n), full(pivots:to("int64"), n),
            full(B, n, k))
    end
end
