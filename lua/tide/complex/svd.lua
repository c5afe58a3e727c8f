-- tide.complex.svd: linalg.svd of a complex A [..., m, n] (lua/tide/linalg.lua hands it here),
-- U diag(S) Vh = A with U and Vh^H of orthonormal columns (unitary when square), S real and
-- descending, each pair of singular vectors up to a common phase e^(i phi) (PyTorch's is
-- LAPACK's choice; tide's differs). A one-sided complex Jacobi (linalg.lua's) on A's columns
-- (on A^H's when m < n) gives V and A V = U S; U's columns of a tiny singular value, and the
-- extra columns of full_matrices, are completed by Gram-Schmidt over the identity's columns.
-- One node records U, S and Vh with PyTorch 1.13's svd_backward for complex input (a loss that
-- depends on the vectors' phase raises, as PyTorch's); the extra columns get no gradient.
local core = require("tide.core")
local autograd = require("tide.autograd")
local raise = autograd.raise
local Complex = require("tide.complex.tensor")
local unpack = require("tide._compat").unpack

local wrap, stack2 = Complex.wrap, Complex.stack2

local function shape_str(s)
    return "[" .. table.concat(s, ", ") .. "]"
end

-- complex products on (re, im) pairs
local function cmm(ar, ai, br, bi)
    return ar:matmul(br) - ai:matmul(bi), ar:matmul(bi) + ai:matmul(br)
end

local function ct(xr, xi) -- the conjugate transpose
    return xr:transpose(-2, -1), -xi:transpose(-2, -1)
end

local function batch_of(x)
    local s = x:size()
    return { unpack(s, 1, #s - 2) }
end

-- x's batch dims then r, c
local function with_shape(x, r, c)
    local s = batch_of(x)
    s[#s + 1], s[#s + 2] = r, c
    return s
end

-- Q [..., m, c] (pairs) with orthonormal columns, column by column: the column (0 where keep
-- [..., 1, c] is false) less its part along the earlier ones (twice: Gram-Schmidt's rounding),
-- normalised; one left with less than half its length is replaced by the identity's column
-- with the largest part outside the earlier ones (so projected and normalised)
local function orthonormalize(Qr, Qi, keep)
    local m, c = Qr:size(-2), Qr:size(-1)
    local I = core.eye(m, { dtype = Qr.dtype, device = Qr.device })
    local done_r, done_i = {}, {}
    for j = 1, c do
        local Dr, Di = j > 1 and core.cat(done_r, -1), j > 1 and core.cat(done_i, -1)
        local function project(yr, yi)
            if j == 1 then
                return yr, yi
            end
            local hr, hi = cmm(Dr:transpose(-2, -1), -Di:transpose(-2, -1), yr, yi)
            local pr, pi = cmm(Dr, Di, hr, hi)
            return yr - pr, yi - pi
        end
        local xr, xi = Qr:narrow(-1, j, 1), Qi:narrow(-1, j, 1)
        if keep then
            local k = keep:narrow(-1, j, 1)
            xr, xi = core.where(k, xr, 0), core.where(k, xi, 0)
        end
        xr, xi = project(project(xr, xi))
        local norm = (xr * xr + xi * xi):sum(-2, true):sqrt() -- [..., 1, 1]
        local bad = norm:le(0.5)
        norm = core.where(bad, 1, norm)
        xr, xi = xr / norm, xi / norm
        if bad:any():item() then
            local Rr, Ri = project(I:expand(with_shape(Qr, m, m)), I * 0)
            local lengths = (Rr * Rr + Ri * Ri):sum(-2, true) -- [..., 1, m]
            local at = lengths:argmax(-1, true):expand(with_shape(Qr, m, 1))
            local yr, yi = project(Rr:gather(-1, at), Ri:gather(-1, at))
            local yn = (yr * yr + yi * yi):sum(-2, true):sqrt()
            xr, xi = core.where(bad, yr / yn, xr), core.where(bad, yi / yn, xi)
        end
        done_r[j], done_i[j] = xr, xi
    end
    return core.cat(done_r, -1), core.cat(done_i, -1)
end

local EPS = { float64 = 2.220446049250313e-16, float32 = 1.1920929e-07 }

-- U, S, Vh of A (pairs; reduced, k = min(m, n) columns), without recording
local function decompose(Ar, Ai, jacobi, pad_even)
    local m, n = Ar:size(-2), Ar:size(-1)
    local k, tall = math.min(m, n), m >= n
    local Wr, Wi = Ar, Ai -- [..., big, k]: A, or A^H for a wide A
    if not tall then
        Wr, Wi = ct(Ar, Ai)
    end
    local odd = k % 2 == 1 -- a zero column that no rotation touches makes k even
    if odd then
        Wr, Wi = pad_even(Wr, true), pad_even(Wi, true)
    end
    local Vr, Vi
    Wr, Wi, Vr, Vi = jacobi(Wr, Wi)
    if odd then
        Wr, Wi = Wr:narrow(-1, 1, k), Wi:narrow(-1, 1, k)
        Vr, Vi = Vr:narrow(-2, 1, k):narrow(-1, 1, k), Vi:narrow(-2, 1, k):narrow(-1, 1, k)
    end
    local S, idx = (Wr * Wr + Wi * Wi):sum(-2):sqrt():sort(-1, true)
    local function order(X)
        return X:gather(-1, idx:unsqueeze(-2):expand(X:size()))
    end
    Wr, Wi, Vr, Vi = order(Wr), order(Wi), order(Vr), order(Vi)
    -- W's columns scaled to unit length; those of a singular value below rounding of the
    -- largest are noise (or 0), replaced by orthonormal ones
    local big = math.max(m, n)
    local tiny = S:le(S:narrow(-1, 1, 1) * (EPS[S.dtype] * big))
    local d = core.where(tiny, 1, S):unsqueeze(-2)
    local Ur, Ui = orthonormalize(Wr / d, Wi / d, tiny:logical_not():unsqueeze(-2))
    if tall then
        return Ur, Ui, S, ct(Vr, Vi)
    end
    local Vhr, Vhi = ct(Ur, Ui)
    return Vr, Vi, S, Vhr, Vhi
end

-- the parts' trailing dims flattened and concatenated along one last dim (one node's result)
local function pack(parts)
    local b = batch_of(parts[1])
    local flat = {}
    for i, x in ipairs(parts) do
        local len = 1
        for d = #b + 1, x:dim() do
            len = len * x:size(d)
        end
        local s = { unpack(b) }
        s[#s + 1] = len
        flat[i] = x:reshape(s)
    end
    return core.cat(flat, -1)
end

-- Ur, Ui, S, Vhr, Vhi as views of packed
local function unpack_svd(packed, m, k, n)
    local s = packed:size()
    s[#s] = nil
    local function part(at, r, c)
        local x = packed:narrow(-1, at, c and r * c or r)
        if not c then
            return x
        end
        local sh = { unpack(s) }
        sh[#sh + 1], sh[#sh + 2] = r, c
        return x:reshape(sh)
    end
    local mk, kn = m * k, k * n
    return part(1, m, k), part(mk + 1, m, k), part(2 * mk + 1, k),
        part(2 * mk + k + 1, k, n), part(2 * mk + k + kn + 1, k, n)
end

-- num / den, 0 where num is 0 (linalg.lua's quotient: a repeated singular value whose vectors
-- carry no gradient contributes nothing)
local function quotient(num, den)
    local zero = num:eq(0)
    return core.where(zero, 0, num / core.where(zero, 1, den))
end

-- PyTorch 1.13's svd_backward (full_matrices = false) for complex input: with skew(X) = X -
-- X^H and E_ij = S_j^2 - S_i^2, gA = U [(skew(U^H gU) S + S skew(Vh gVh^H)) / E off the
-- diagonal, gS + diag(skew(U^H gU)) / 2S on it] Vh, plus the parts of gU (m > n) or gVh (m <
-- n) outside U's or V's span. The phase check: Im diag(skew(U^H gU)) = -Im diag(skew(Vh
-- gVh^H)) within 1e-2 (PyTorch's allclose), else the loss depends on the phase.
autograd.def {
    name = "linalg_svd_complex",
    reads = { "out" },
    backward = function(nd, g)
        local m, k, n = nd.svd_m, nd.svd_k, nd.svd_n
        local Ur, Ui, S, Vhr, Vhi = unpack_svd(nd.out, m, k, n)
        local gUr, gUi, gS, gVhr, gVhi = unpack_svd(g, m, k, n)
        local Uhr, Uhi = ct(Ur, Ui)
        local function skew(xr, xi)
            return xr - xr:transpose(-2, -1), xi + xi:transpose(-2, -1)
        end
        local UgUr, UgUi = skew(cmm(Uhr, Uhi, gUr, gUi))
        local gVr, gVi = ct(gVhr, gVhi)
        local VgVr, VgVi = skew(cmm(Vhr, Vhi, gVr, gVi))
        local du, dv = UgUi:diagonal(0, -2, -1), VgVi:diagonal(0, -2, -1)
        if not (du + dv):abs():le(dv:abs() * 1e-2 + 1e-2):all():item() then
            raise("tide: linalg.svd: backward: the loss depends on the singular vectors' phase " ..
                "(each pair is defined up to a factor e^(i phi)), so its gradient is not " ..
                "defined; use a loss of S, of |U| and |Vh|, or of U diag(S) Vh")
        end
        local S2 = S * S
        local eye = core.eye(k, { dtype = S.dtype, device = S.device })
        local E = S2:unsqueeze(-2) - S2:unsqueeze(-1) + eye
        local Sj, Si = S:unsqueeze(-2), S:unsqueeze(-1)
        local off = 1 - eye
        local gr = quotient(UgUr * Sj + Si * VgVr, E) * off + gS:diag_embed()
        local gi = quotient(UgUi * Sj + Si * VgVi, E) * off + (du / (S * 2)):diag_embed()
        local Vr, Vi = ct(Vhr, Vhi)
        if m > n then
            gr, gi = cmm(Ur, Ui, gr, gi)
            local Sc = S:unsqueeze(-2)
            local qr, qi = gUr / Sc, gUi / Sc
            local pr, pi = cmm(Ur, Ui, cmm(Uhr, Uhi, qr, qi))
            gr, gi = gr + qr - pr, gi + qi - pi
            gr, gi = cmm(gr, gi, Vhr, Vhi)
        elseif m < n then
            gr, gi = cmm(gr, gi, Vhr, Vhi)
            local Sr = S:unsqueeze(-1)
            local qr, qi = gVhr / Sr, gVhi / Sr
            local tr, ti = cmm(qr, qi, Vr, Vi)
            local pr, pi = cmm(tr, ti, Vhr, Vhi)
            gr, gi = gr + qr - pr, gi + qi - pi
            gr, gi = cmm(Ur, Ui, gr, gi)
        else
            gr, gi = cmm(Ur, Ui, cmm(gr, gi, Vhr, Vhi))
        end
        return stack2(gr, gi)
    end,
}

-- svd(A, full, jacobi, pad_even): A complex [..., m, n]; linalg.lua's complex Jacobi and pad
return function(A, full, jacobi, pad_even)
    local op = "linalg.svd"
    if not Complex.is(A) then
        require("tide.op_args").check(op, A, 1) -- a table that is no tensor: its error
    end
    local s = A:size()
    if #s < 2 then
        raise(("tide: %s: expected a matrix or a batch of matrices [..., m, n], got %s")
            :format(op, shape_str(s)))
    end
    local ri = A._ri
    local m, n = s[#s - 1], s[#s]
    local k = math.min(m, n)
    local Ar, Ai = ri:select(-1, 1), ri:select(-1, 2)
    local packed
    if k == 0 then
        local b = batch_of(Ar)
        b[#b + 1] = 0
        packed = core.zeros(b, { dtype = Ar.dtype, device = Ar.device })
    else
        packed = autograd.no_grad(function()
            local Ur, Ui, S, Vhr, Vhi = decompose(Ar, Ai, jacobi, pad_even)
            return pack({ Ur, Ui, S, Vhr, Vhi })
        end)
        if autograd.needs_record(ri) then
            local nd = autograd.record("linalg_svd_complex", packed, ri)
            nd.svd_m, nd.svd_k, nd.svd_n = m, k, n
        end
    end
    local Ur, Ui, S, Vhr, Vhi = unpack_svd(packed, m, k, n)
    if full then -- the completion's columns, not differentiated
        -- Q [..., r, k] with r - k more orthonormal columns
        local function extend(Qr, Qi, r)
            return autograd.no_grad(function()
                local pad = core.zeros(with_shape(Qr, r, r - k), { dtype = Qr.dtype,
                    device = Qr.device })
                local keep = core.arange(1, r + 1, { device = Qr.device }):le(k)
                local Er, Ei = orthonormalize(core.cat({ Qr:detach(), pad }, -1),
                    core.cat({ Qi:detach(), pad }, -1), keep)
                return Er:narrow(-1, k + 1, r - k), Ei:narrow(-1, k + 1, r - k)
            end)
        end
        if m > k then
            local er, ei = extend(Ur, Ui, m)
            Ur, Ui = core.cat({ Ur, er }, -1), core.cat({ Ui, ei }, -1)
        end
        if n > k then
            local Vr, Vi = ct(Vhr, Vhi)
            local xr, xi = extend(Vr, Vi, n)
            xr, xi = ct(xr, xi)
            Vhr, Vhi = core.cat({ Vhr, xr }, -2), core.cat({ Vhi, xi }, -2)
        end
    end
    return wrap(stack2(Ur, Ui)), S, wrap(stack2(Vhr, Vhi))
end
