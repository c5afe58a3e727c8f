-- tide.complex.linalg: tide.linalg's solve, inv (and their _ex forms), det, slogdet and svdvals of
-- complex matrices
-- (lua/tide/linalg.lua hands a complex operand here), written with real ops on the pair:
--   solve and inv: the complex system A X = B is the real one [[Ar, -Ai], [Ai, Ar]] [Xr; Xi] =
--     [Br; Bi] (2n x 2n), solved by tide.linalg.solve (batched, differentiable, every device);
--   svdvals: the singular values of that real block matrix are A's, each twice;
--   det and slogdet: a complex LU with partial pivoting (the row of largest |a|), n steps of
--     tensor ops over the whole batch; det is the pivots' product times the permutation's sign.
-- Gradients come from autograd through these ops; a complex tensor's grad holds d/dre + i d/dim,
-- PyTorch's convention for a real loss.
local core = require("tide.core")
local autograd = require("tide.autograd")
local raise = autograd.raise
local args = require("tide.op_args")
local Complex = require("tide.complex.tensor")
local unpack = require("tide._compat").unpack

local is_complex, wrap, stack2 = Complex.is, Complex.wrap, Complex.stack2

local M = {}

local function shape_str(s)
    return "[" .. table.concat(s, ", ") .. "]"
end

local function what(v)
    if is_complex(v) then
        return v.dtype .. " tensor"
    end
    return core.is_tensor(v) and (v.dtype .. " tensor") or type(v)
end

-- A complex, a (batch of) matri(ces) [..., m, n], square unless rect: its real and imaginary
-- parts
local function parts(op, A, pos, rect)
    if not is_complex(A) then
        args.check(op, A, pos) -- (not a tensor: its error)
        raise(("tide: %s: argument #%d: expected a complex tensor with the other one, got %s; " ..
            "convert it with :to(\"complex128\")"):format(op, pos or 1, what(A)))
    end
    local s = A:size()
    if #s < 2 then
        raise(("tide: %s: expected a matrix or a batch of matrices [..., m, n], got %s")
            :format(op, shape_str(s)))
    end
    if not rect and s[#s] ~= s[#s - 1] then
        raise(("tide: %s: expected square matrices [..., n, n], got %s"):format(op,
            shape_str(s)))
    end
    return A._ri:select(-1, 1), A._ri:select(-1, 2)
end

local function square(op, A, pos)
    return parts(op, A, pos, false)
end

-- the real block matrix [[Ar, -Ai], [Ai, Ar]] of the complex A = Ar + i Ai
local function block(Ar, Ai)
    return core.cat({ core.cat({ Ar, -Ai }, -1), core.cat({ Ai, Ar }, -1) }, -2)
end

-- the pivots of A's LU with partial pivoting ({re, im} tensors of the batch shape) and the
-- permutation's sign (+1 / -1 over the batch)
local function pivots(Ar, Ai)
    local n = Ar:size(-1)
    local piv, sign = {}, nil
    for k = 1, n do
        local m = n - k + 1
        local cr, ci = Ar:narrow(-1, 1, 1), Ai:narrow(-1, 1, 1) -- the column [..., m, 1]
        local p = (cr * cr + ci * ci):argmax(-2, true) -- [..., 1, 1], 1-based
        local s = Ar:size()
        s[#s - 1] = 1
        local at = p:expand(unpack(s))
        local rr, ri = Ar:gather(-2, at), Ai:gather(-2, at) -- the pivot row [..., 1, m]
        local pr, pi = rr:narrow(-1, 1, 1), ri:narrow(-1, 1, 1)
        piv[k] = { pr:squeeze(-1):squeeze(-1), pi:squeeze(-1):squeeze(-1) }
        local flip = 1 - 2 * p:ne(1):squeeze(-1):squeeze(-1):to(Ar.dtype)
        sign = sign and sign * flip or flip
        if m == 1 then
            break
        end
        -- the other rows: row p replaced by row 1 (the swap), row 1 dropped
        local rows = core.arange(1, m + 1, { device = Ar.device }):view(m, 1)
        local at_p = rows:eq(p)
        local r1r, r1i = Ar:narrow(-2, 1, 1), Ai:narrow(-2, 1, 1)
        local Rr = core.where(at_p, r1r, Ar):narrow(-2, 2, m - 1)
        local Ri = core.where(at_p, r1i, Ai):narrow(-2, 2, m - 1)
        -- f = column / pivot (a zero pivot: a zero column, f = 0 with 1 in its place)
        local zero = pr:eq(0):logical_and(pi:eq(0))
        local qr, qi = core.where(zero, 1, pr), core.where(zero, 0, pi)
        local d = qr * qr + qi * qi
        local cr2, ci2 = Rr:narrow(-1, 1, 1), Ri:narrow(-1, 1, 1)
        local fr, fi = (cr2 * qr + ci2 * qi) / d, (ci2 * qr - cr2 * qi) / d
        local ur, ui = rr:narrow(-1, 2, m - 1), ri:narrow(-1, 2, m - 1)
        Ar = Rr:narrow(-1, 2, m - 1) - (fr * ur - fi * ui)
        Ai = Ri:narrow(-1, 2, m - 1) - (fr * ui + fi * ur)
    end
    return piv, sign
end

-- det 1 (the empty product) over the batch of 0 x 0 matrices A: its real and imaginary parts
local function empty_det(A, Ar)
    local s = A:size()
    s[#s], s[#s - 1] = nil, nil
    return core.ones(s, { dtype = Ar.dtype, device = Ar.device }),
        core.zeros(s, { dtype = Ar.dtype, device = Ar.device })
end

-- det(A): sign times the product of the pivots
function M.det(A)
    local Ar, Ai = square("linalg.det", A)
    if Ar:size(-1) == 0 then
        return wrap(stack2(empty_det(A, Ar)))
    end
    local piv, sign = pivots(Ar, Ai)
    local dr, di = piv[1][1] * sign, piv[1][2] * sign
    for k = 2, #piv do
        local pr, pi = piv[k][1], piv[k][2]
        dr, di = dr * pr - di * pi, dr * pi + di * pr
    end
    -- a zero det has PyTorch 1.13's zero gradient (its lu_solve of a zero right side), as the
    -- real det's, not the adjugate the ops would give
    local zero = dr:eq(0):logical_and(di:eq(0))
    dr, di = core.where(zero, dr:detach(), dr), core.where(zero, di:detach(), di)
    return wrap(stack2(dr, di))
end

-- slogdet(A): sign (det / |det|, a unit complex number; 0 for a singular A) and log|det| (real;
-- -inf for a singular A)
function M.slogdet(A)
    local Ar, Ai = square("linalg.slogdet", A)
    if Ar:size(-1) == 0 then -- sign 1, log|det| 0, as PyTorch's for 0 x 0 matrices
        local one, zero = empty_det(A, Ar)
        return wrap(stack2(one, zero)), zero:clone()
    end
    local piv, sign = pivots(Ar, Ai)
    local sr, si, logabs = sign, sign * 0, nil
    for k = 1, #piv do
        local pr, pi = piv[k][1], piv[k][2]
        local zero = pr:eq(0):logical_and(pi:eq(0))
        local a = core.where(zero, 1, (pr * pr + pi * pi):sqrt())
        local ur, ui = core.where(zero, 0, pr / a), core.where(zero, 0, pi / a)
        sr, si = sr * ur - si * ui, sr * ui + si * ur
        local la = core.where(zero, -math.huge, a:log())
        logabs = logabs and logabs + la or la
    end
    return wrap(stack2(sr, si)), logabs
end

-- logdet(A): log det = log|det| + i angle(det) (-inf + nan i for a singular A, as PyTorch's)
function M.logdet(A)
    local s, l = M.slogdet(A)
    local sr, si = s._ri:select(-1, 1), s._ri:select(-1, 2)
    return wrap(stack2(l, core.where(l:eq(-math.huge), 0 / 0, core.atan2(si, sr))))
end

-- a singular A's error as PyTorch 1.13's: the first zero pivot of A's own LU
local function singular(op, Ar, Ai)
    local first
    autograd.no_grad(function()
        local piv = pivots(Ar, Ai)
        for k = 1, #piv do
            if not first and piv[k][1]:eq(0):logical_and(piv[k][2]:eq(0)):any():item() then
                first = k
            end
        end
    end)
    raise(("tide: %s: the matrix is singular (U's diagonal element %d is zero after " ..
        "pivoting); check the input, or regularise it (add a small multiple of the " ..
        "identity)"):format(op, first or 1))
end

-- info of A's LU (int64, the batch shape): its first zero pivot (1-based), 0 where none
local function info_of(Ar, Ai)
    return autograd.no_grad(function()
        local piv = pivots(Ar, Ai)
        local s = Ar:size()
        s[#s], s[#s - 1] = nil, nil
        local info = core.zeros(s, { dtype = "int64", device = Ar.device })
        for k = #piv, 1, -1 do
            info = core.where(piv[k][1]:eq(0):logical_and(piv[k][2]:eq(0)), k, info)
        end
        return info
    end)
end

-- X from the real block system; a singular A raises first, as PyTorch's complex LU finds it
-- (the real block LU's pivot can be a rounding error instead of 0): one read back. ex (inv_ex
-- and solve_ex): no error; a singular matrix's X is NaN, solved as the identity, and the info
-- of A's LU (PyTorch's for a complex A: its own, not its transpose's) comes second
local function block_solve(op, Ar, Ai, Br, Bi, ex)
    local info = info_of(Ar, Ai)
    local bad
    if ex then
        bad = info:ne(0):unsqueeze(-1):unsqueeze(-1)
        local I = core.eye(Ar:size(-1), { dtype = Ar.dtype, device = Ar.device })
        Ar, Ai = core.where(bad, I, Ar), core.where(bad, 0, Ai)
    elseif info:ne(0):any():item() then
        singular(op, Ar, Ai)
    end
    local X = require("tide.linalg").solve(block(Ar, Ai), core.cat({ Br, Bi }, -2))
    local n = Ar:size(-1)
    local Xr, Xi = X:narrow(-2, 1, n), X:narrow(-2, n + 1, n)
    if ex then
        Xr, Xi = core.where(bad, 0 / 0, Xr), core.where(bad, 0 / 0, Xi)
    end
    return wrap(stack2(Xr, Xi)), info:to("int32")
end

-- solve(A, B[, {left = true}]) for a complex A and B (is_vector_rhs: linalg.lua's rule); ex:
-- solve_ex's X and info (no error for a singular A)
function M.solve(A, B, opts, is_vector_rhs, ex)
    local op = ex and "linalg.solve_ex" or "linalg.solve"
    local Ar, Ai = square(op, A)
    if not is_complex(B) then
        args.check(op, B, 2)
        raise(("tide: %s: B must be complex with a complex A, got %s; convert it with " ..
            ":to(\"%s\")"):format(op, what(B), A.dtype))
    end
    if A.dtype ~= B.dtype then
        raise(("tide: %s: A is %s, B %s; convert one with :to(\"%s\")"):format(op, A.dtype,
            B.dtype, A.dtype))
    end
    local left = args.options(op, opts, { "left" }, "{left = false}").left
    if left == false then -- X A = B is A^T X^T = B^T
        local X, info = M.solve(A:transpose(-2, -1), B:transpose(-2, -1), nil, is_vector_rhs, ex)
        return X:transpose(-2, -1), info
    end
    local vector = is_vector_rhs(A, B)
    if vector then
        B = B:unsqueeze(-1)
    end
    local n = Ar:size(-1)
    if B:size(-2) ~= n then
        raise(("tide: %s: A is %s, B %s: B's rows must match A's size %d")
            :format(op, shape_str(A:size()), shape_str(B:size()), n))
    end
    local X, info = block_solve(op, Ar, Ai, B._ri:select(-1, 1), B._ri:select(-1, 2), ex)
    X = vector and X:squeeze(-1) or X
    if ex then
        return X, info
    end
    return X
end

-- inv(A): solve(A, I); ex: inv_ex's X and info
function M.inv(A, ex)
    local op = ex and "linalg.inv_ex" or "linalg.inv"
    local Ar, Ai = square(op, A)
    local I = core.eye(Ar:size(-1), { dtype = Ar.dtype, device = Ar.device }):expand(Ar:size())
    local X, info = block_solve(op, Ar, Ai, I, I * 0, ex)
    if ex then
        return X, info
    end
    return X
end

-- svdvals(A): A's k = min(m, n) singular values (real, descending), each the mean of the block
-- matrix's equal pair: the pair's gradient is well defined where one value's of a pair is not
function M.svdvals(A)
    local Ar, Ai = parts("linalg.svdvals", A, 1, true)
    local S = require("tide.linalg").svdvals(block(Ar, Ai))
    local shape = S:size()
    shape[#shape], shape[#shape + 1] = shape[#shape] / 2, 2
    return S:reshape(shape):mean(-1)
end

return M
