-- tide.fft: PyTorch's torch.fft (1.13): fft, ifft, rfft, irfft, hfft, ihfft, fft2, ifft2, rfft2,
-- irfft2, hfft2, ihfft2, fftn, ifftn, rfftn, irfftn, hfftn, ihfftn, fftfreq, rfftfreq, fftshift,
-- ifftshift, and torch.stft / istft as fft.stft / fft.istft, also tide.stft / tide.istft (the
-- end of this file; lua/tide/_lazy_ops.lua). Complex values are
-- tide.complex.tensor's (a table over one real tensor [..., 2], view_as_real's layout); a real
-- input to fft / fft2 / fftn is taken as complex with a zero imaginary part.
--
-- Each transformed dim of n <= 128 points is a DFT as one matmul: the dim is moved last and
-- multiplied by a cached real matrix of cos / sin twiddles (the real and imaginary parts
-- interleaved, so one matmul does the complex product). The twiddles are computed in float64 with
-- the index product reduced mod n (k * j % n, so they are exact), the norm's scale folded in,
-- then cast to the input's dtype and device. A longer dim takes the fast path (`fast`, below):
-- the four-step Cooley-Tukey FFT over matmuls (n = n1 n2, recursively, down to DFT matmuls of
-- <= 128 points) and Bluestein's chirp-z for prime lengths: O(n (sum of the factors)) time, O(n)
-- memory (a real input's half spectrum of <= DIRECT_MAX points over many rows stays one matmul,
-- below). rfft / ihfft of a long dim take the complex transform of the real input, irfft / hfft
-- that of the rebuilt Hermitian spectrum. Everything is tide's real ops on [..., 2] pairs (no
-- C), so gradients are those of tide's matmul / mul / cat, on every device.
local core = require("tide.core")
local compat = require("tide._compat")
local raise = require("tide.autograd.raise")
local args = require("tide.op_args")
local C = require("tide.complex.tensor")
local P = require("tide.pytorch_args")

local M = {}

local is_tensor = core.is_tensor
local floor = math.floor

-- the twiddle matrices, per (kind, rows, n, columns, sign, scale, dtype, device), and the fast
-- path's (base DFTs, four-step twiddles, Bluestein chirps): cleared when full (a script uses a
-- handful of sizes; one transform of a long dim uses fewer than 10)
local CACHE, CACHED, CACHE_MAX = {}, 0, 32

local function cache_put(key, w)
    if CACHED >= CACHE_MAX then
        CACHE, CACHED = {}, 0
    end
    CACHE[key], CACHED = w, CACHED + 1
    return w
end

-- cos and sin of 2 pi (j * k % n) / n, float64 on the cpu, [m, n_out]: exact at the quarter
-- turns (0 where PyTorch's transform has an exact zero: the imaginary parts irfft ignores)
local function twiddles(m, n_out, n)
    local j = core.arange(0, m, { dtype = "int64" }):view(m, 1)
    local k = core.arange(0, n_out, { dtype = "int64" }):view(1, n_out)
    local r = (j * k):remainder(n)
    local ang = r:to("float64") * (2 * math.pi / n)
    local c, s = ang:cos(), ang:sin()
    local r4 = r * 4
    c:masked_fill_(r4:eq(n):logical_or(r4:eq(3 * n)), 0)
    s:masked_fill_(r4:eq(2 * n), 0)
    return c, s
end

-- the real matrix of one transform along the last dim, cast for x (a float32/float64 tensor):
--   "r2c": [m, 2 n_out]: a real row j to the interleaved (re, im) of bins 0..n_out-1
--   "c2c": [2m, 2 n_out]: interleaved (re, im) in and out
--   "c2r": [2m, n]: the bins 0..m-1 of a Hermitian signal in, n real points out (bins other
--          than 0 and n/2 count twice, their conjugates' share)
-- sign: -1 for e^{-2 pi i jk/n} (forward), +1 (inverse); scale: the norm's factor
local function matrix(kind, m, n, n_out, sign, scale, x)
    local key = table.concat({ kind, m, n, n_out, sign, scale, x.dtype, tostring(x.device) }, " ")
    local w = CACHE[key]
    if w then
        return w
    end
    local c, s
    if kind == "c2r" then
        c, s = twiddles(m, n, n)               -- [bins, points]
        local wl = {}
        for k = 1, m do -- bins 0 and n/2 once, the others twice
            wl[k] = (k == 1 or 2 * (k - 1) == n) and 1 or 2
        end
        local wt = core.tensor(wl, { dtype = "float64" }):view(m, 1)
        c, s = c * wt, s * wt
        -- point j = sum_k w_k (re_k cos - sign im_k sin)
        w = core.stack({ c, s * (-sign) }, 2):reshape({ 2 * m, n })
    else
        c, s = twiddles(m, n_out, n)
        local ss = s * sign
        if kind == "r2c" then
            w = core.stack({ c, ss }, 3):reshape({ m, 2 * n_out })
        else -- re_out = re cos - sign im sin, im_out = im cos + sign re sin
            local re_row = core.stack({ c, ss }, 3)
            local im_row = core.stack({ -ss, c }, 3)
            w = core.stack({ re_row, im_row }, 2):reshape({ 2 * m, 2 * n_out })
        end
    end
    if scale ~= 1 then
        w = w * scale
    end
    return cache_put(key, w:to(x.dtype):to(x.device))
end

-- a real x as the [..., 2] of a complex tensor with zero imaginary parts
local function with_zero_imag(x)
    return core.stack({ x, core.zeros(x:size(), { dtype = x.dtype, device = x.device }) }, -1)
end

local NORMS = { backward = true, ortho = true, forward = true }

-- the scale of a transform of n points: `forward` true for fft / rfft / hfft (unscaled under
-- "backward"), false for the inverses
local function scale_of(norm, n, forward)
    if norm == "ortho" then
        return 1 / math.sqrt(n)
    elseif (norm == "forward") == forward then
        return 1 / n
    end
    return 1
end

-- the data tensor of v (a real tensor or the [..., 2] of a complex one) and whether it is complex
local function data_of(op, v)
    if C.is(v) then
        return C.ri(v), true
    elseif is_tensor(v) then
        return v, false
    end
    raise(("tide: %s: expected a tensor or a complex tensor at argument #1, got %s")
        :format(op, args.typename(v)))
end

-- data_of with the transforms' checks: a real input where real_only, the dtype float32 or
-- float64 (integers and bools are taken in the default dtype, as PyTorch's), a dim at least
local function input(op, v, real_only)
    local x, complex = data_of(op, v)
    if complex and real_only then
        raise(("tide: %s: %s expects a real input tensor, but got a complex tensor (%s)")
            :format(op, op:match("[^.]+$"), C.COMPLEX_OF[x.dtype] or "complex"))
    end
    local dt = x.dtype
    if dt == "float16" or dt == "bfloat16" then
        raise(("tide: %s: Unsupported dtype %s (PyTorch 1.13's fft takes float32 and float64); "
            .. "convert with :float()"):format(op, dt))
    elseif dt ~= "float32" and dt ~= "float64" then
        x = x:to(core.get_default_dtype())
    end
    local nd = x:dim() - (complex and 1 or 0)
    if nd < 1 then
        raise(("tide: %s: expected a tensor with at least 1 dim, got a 0-dim tensor"):format(op))
    end
    return x, complex, nd
end

-- a table with only the keys 1..#t (an empty one included)
local is_list = args.is_list

-- the arguments after the input: positional (names[i] at position i + 1), then optionally one
-- table of the remaining ones by name; a table where lists[i] is true and that is a plain list
-- is that positional argument (fft2's s, dim)
local function parse(op, names, lists, ...)
    local vals = {}
    for i = 1, #names do
        local v = select(i, ...)
        if type(v) == "table" and not (lists[i] and is_list(v)) then
            args.no_extra(op, i + 1, select(i + 1, ...))
            args.options(op, v, names)
            for j, key in ipairs(names) do
                if v[key] ~= nil then
                    if j < i and vals[j] ~= nil then
                        raise(("tide: %s: %s given twice (by position and by name)")
                            :format(op, key))
                    end
                    vals[j] = v[key]
                end
            end
            return vals
        end
        vals[i] = v
    end
    args.no_extra(op, #names + 1, select(#names + 1, ...))
    return vals
end

local function check_norm(op, norm)
    if norm == nil then
        return "backward"
    end
    if not NORMS[norm] then
        raise(("tide: %s: Invalid normalization mode: \"%s\"; use \"backward\", \"ortho\" or " ..
            "\"forward\""):format(op, tostring(norm)))
    end
    return norm
end

local function check_n(op, n)
    n = args.integer(op, n, "n")
    if n < 1 then
        raise(("tide: %s: Invalid number of data points (%d) specified"):format(op, n))
    end
    return n
end

-- The fast path, for a transformed length n above BASE: an O(n log n)-like FFT over matmuls on
-- planar tensors [2, P, n, Q] (the real plane, then the imaginary one; P batches, the
-- transformed dim, Q trailing points, contiguous). n <= BASE: one matmul by the DFT matrix;
-- n = n1 n2 (n1 the largest factor <= sqrt(n)): the four-step Cooley-Tukey (DFT along n1,
-- twiddles, DFT along n2, the result read transposed), recursively; n prime: Bluestein's
-- chirp-z, a convolution of power-of-two length by the four-step FFT.
local BASE = 128
-- a real input's half spectrum (rfft, ihfft; stft's frames) of n <= DIRECT_MAX points over at
-- least n rows: one matmul by the [n, 2 (n/2 + 1)] matrix (the rows amortise it; measured
-- faster than the four-step there: stft of 8 x 126 frames of 512 points)
local DIRECT_MAX = 512

-- the float64 cpu tensors make() returns, cast for x, cached under key
local function cached(key, x, make)
    key = table.concat({ key, x.dtype, tostring(x.device) }, " ")
    local ts = CACHE[key]
    if not ts then
        ts = { make() }
        for i, t in ipairs(ts) do
            ts[i] = t:to(x.dtype):to(x.device)
        end
        cache_put(key, ts)
    end
    return compat.unpack(ts)
end

-- y [2, ...] times the complex c + i s (real tensors that broadcast against y[1])
local function cmul(y, c, s)
    local re, im = y:select(1, 1), y:select(1, 2)
    return core.stack({ re * c - im * s, re * s + im * c }, 1)
end

-- the base DFT matrices: "R" [n, 2n] = [cos | sign sin] (X W, the rows the points), "L" its
-- transpose [2n, n] (W X, the points along the rows' dim)
local function base_matrix(side, n, sign, x)
    return cached(("dft%s %d %d"):format(side, n, sign), x, function()
        local c, s = twiddles(n, n, n)
        local w = core.cat({ c, s * sign }, 2)
        return side == "R" and w or w:t():contiguous()
    end)
end

-- the twiddles of a four-step n = n1 n2: cos and sign sin of 2 pi k1 j2 / n, [n1, n2, 1]
local function four_step_twiddles(n1, n2, sign, x)
    return cached(("tw %d %d %d"):format(n1, n2, sign), x, function()
        local c, s = twiddles(n1, n2, n1 * n2)
        return c:view(n1, n2, 1), (s * sign):view(n1, n2, 1)
    end)
end

local function largest_factor(n)
    for d = floor(math.sqrt(n)), 2, -1 do
        if n % d == 0 then
            return d
        end
    end
    return 1
end

local bluestein

-- the unscaled DFT (sign -1 forward, +1 inverse) along dim 3 of x [2, P, n, Q], contiguous
local function dft(x, P, n, Q, sign)
    if P == 0 or Q == 0 then -- nothing to transform (and no factoring of a huge n for it)
        return core.zeros({ 2, P, n, Q }, { dtype = x.dtype, device = x.device })
    end
    local r
    if n <= BASE then
        if Q == 1 then -- [2P, n] [n, 2n]
            r = x:view(2 * P, n):matmul(base_matrix("R", n, sign, x))
        else -- [2n, n] [2P, n, Q]
            r = base_matrix("L", n, sign, x):matmul(x:view(2 * P, n, Q))
        end
        r = r:view(2, P, 2, n, Q) -- [part of x, p, part of w, k, q]
        local rr, ri = r:select(1, 1), r:select(1, 2)
        return core.stack({ rr:select(2, 1) - ri:select(2, 2), rr:select(2, 2) + ri:select(2, 1) },
            1)
    end
    local n1 = largest_factor(n)
    if n1 == 1 then
        return bluestein(x, P, n, Q, sign)
    end
    local n2 = floor(n / n1)
    -- j = j1 n2 + j2, k = k1 + n1 k2: the DFT along j1, the twiddles, the DFT along j2
    local y = dft(x:view(2, P, n1, n2 * Q), P, n1, n2 * Q, sign):view(2, P, n1, n2, Q)
    y = cmul(y, four_step_twiddles(n1, n2, sign, x))
    y = dft(y:view(2, P * n1, n2, Q), P * n1, n2, Q, sign):view(2, P, n1, n2, Q)
    return y:transpose(3, 4):contiguous():view(2, P, n, Q)
end

-- the chirp exp(sign pi i j^2 / n) (j^2 reduced mod 2n: exact), cos and sin [n, 1], float64
local function chirp(n, sign)
    local j = core.arange(0, n, { dtype = "int64" })
    local ang = (j * j):remainder(2 * n):to("float64") * (math.pi / n)
    return ang:cos():view(n, 1), (ang:sin() * sign):view(n, 1)
end

-- Bluestein: X_k = w_k sum_j (x_j w_j) conj(w_(k-j)), the sum a circular convolution of length
-- m (a power of two >= 2n - 1) by the four-step FFT; the kernel's transform (/ m) is cached
function bluestein(x, P, n, Q, sign)
    local m = 1
    while m < 2 * n - 1 do
        m = m * 2
    end
    local wc, ws, kc, ks = cached(("chirp %d %d"):format(n, sign), x, function()
        local c, s = chirp(n, sign)
        local bc, bs = chirp(n, -sign) -- conj(w) at 0..n-1 and at m-1..m-n+1
        local gap = core.zeros({ m - 2 * n + 1, 1 }, { dtype = "float64" })
        local b = core.stack({ core.cat({ bc, gap, bc:narrow(1, 2, n - 1):flip(1) }),
            core.cat({ bs, gap, bs:narrow(1, 2, n - 1):flip(1) }) }):view(2, 1, m, 1)
        local f = dft(b, 1, m, 1, -1):view(2, m, 1) / m
        return c, s, f:select(1, 1), f:select(1, 2)
    end)
    local a = cmul(x, wc, ws)
    a = core.cat({ a, core.zeros({ 2, P, m - n, Q }, { dtype = x.dtype, device = x.device }) }, 3)
    a = cmul(dft(a, P, m, Q, -1), kc, ks)
    return cmul(dft(a, P, m, Q, 1):narrow(3, 1, n), wc, ws)
end

-- along's fast path (below): x with the transformed dim last (complex: [..., L, 2]; real:
-- [..., L]), as planar [2, P, L', 1] (L' what the transform reads: cropped or zero-padded),
-- transformed, back: kind "c2c" / "r2c" / "r2c_full" -> [..., n_out, 2]; "c2r" -> [..., n]
local function fast(kind, x, complex, n, sign, scale)
    local pdim = complex and x:dim() - 1 or x:dim()
    local len = x:size(pdim)
    local h = floor(n / 2) + 1
    local used = kind == "c2r" and h or n
    if len > used then
        x = x:narrow(pdim, 1, used)
    elseif len < used then
        local zs = x:size()
        zs[pdim] = used - len
        x = core.cat({ x, core.zeros(zs, { dtype = x.dtype, device = x.device }) }, pdim)
    end
    local lead = x:size()
    local P = 1
    for i = 1, pdim - 1 do
        P = P * lead[i]
    end
    local p
    if complex then
        p = x:reshape({ P, used, 2 }):movedim(3, 1):contiguous():view(2, P, used, 1)
    else
        local re = x:reshape({ P, used })
        p = core.stack({ re, core.zeros({ P, used }, { dtype = x.dtype, device = x.device }) })
            :view(2, P, used, 1)
    end
    if kind == "c2r" then -- the Hermitian spectrum: bins h..n-1 are conj(bins n-h..1)
        local conj = core.tensor({ 1, -1 }, { dtype = x.dtype, device = x.device }):view(2, 1, 1, 1)
        p = core.cat({ p, p:narrow(3, 2, n - h):flip(3) * conj }, 3)
    end
    local y = dft(p, P, n, 1, sign)
    if scale ~= 1 then
        y = y * scale
    end
    lead[pdim] = n
    if kind == "c2r" then -- a complex input (setup makes it so)
        lead[pdim + 1] = nil
        return y:select(1, 1):reshape(lead)
    end
    local n_out = kind == "r2c" and h or n
    lead[pdim], lead[pdim + 1] = n_out, 2
    return y:view(2, P, n):narrow(3, 1, n_out):movedim(1, 3):reshape(lead)
end

-- one transform along data dim d (1..nd, positive) of x ([..., 2] when complex): x's dim moved
-- last, cropped to what the transform reads, flattened with the parts, times the matrix, back.
-- kind "c2c" / "r2c" / "c2r" / "r2c_full" (a real input's every bin); n the transform's length;
-- returns the new x (complex but for c2r)
local function along(kind, x, complex, nd, d, n, sign, scale)
    local len = x:size(d)
    if complex then
        x = x:movedim(d, nd)
    else
        x = x:movedim(d, -1)
    end
    local rows = len > 0 and floor(x:numel() / (len * (complex and 2 or 1))) or 0
    if n > BASE and not (kind == "r2c" and n <= DIRECT_MAX and rows >= n) then
        local y = fast(kind, x, complex, n, sign, scale)
        return y:movedim(kind == "c2r" and -1 or nd, d)
    end
    local used = kind == "c2r" and floor(n / 2) + 1 or n
    local m = math.min(len, used)
    if m < len then
        x = x:narrow(complex and -2 or -1, 1, m)
    end
    local lead = x:size()
    local n_out = kind == "r2c" and floor(n / 2) + 1 or n -- "r2c_full": every bin (fft of reals)
    local shape = {}
    for i = 1, nd - 1 do
        shape[i] = lead[i]
    end
    shape[nd] = complex and 2 * m or m
    local w = matrix(kind == "r2c_full" and "r2c" or kind, m, n, n_out, sign, scale, x)
    local y = x:reshape(shape):matmul(w)
    if kind == "c2r" then
        return y:movedim(-1, d)
    end
    shape[nd], shape[nd + 1] = n_out, 2
    return y:reshape(shape):movedim(nd, d)
end

-- the dims (positive, in order) and lengths of an N-D transform, PyTorch's rules: s alone takes
-- the last #s dims, dim alone the input's sizes (-1 in s: the input's), neither: every dim
local function plan(op, x, complex, nd, s, dim, default_dims, last_default)
    if s ~= nil and type(s) ~= "table" then
        raise(("tide: %s: s must be a list of sizes such as {8, 8}, got %s"):format(op, type(s)))
    end
    if dim ~= nil and type(dim) ~= "table" then
        dim = { dim }
    end
    if dim == nil and default_dims then -- fft2's (-2, -1)
        if #default_dims > nd then
            raise(("tide: %s: expected a tensor with at least %d dims, got %d"):format(op,
                #default_dims, nd))
        end
        dim = default_dims
    end
    if s ~= nil then
        args.check_list(op, s, "s")
    end
    local dims = {}
    if dim ~= nil then
        args.check_list(op, dim, "dim")
        for i, d in ipairs(dim) do
            dims[i] = args.dim_of(op, x, d, complex and -1 or 0)
        end
        if s ~= nil and #s ~= #dim then
            raise(("tide: %s: When given, dim and shape arguments must have the same length")
                :format(op))
        end
    elseif s ~= nil then
        if #s > nd then
            raise(("tide: %s: Got shape with %d values but input tensor only has %d dimensions.")
                :format(op, #s, nd))
        end
        for i = 1, #s do
            dims[i] = nd - #s + i
        end
    else
        for i = 1, nd do
            dims[i] = i
        end
    end
    local seen = {}
    for _, d in ipairs(dims) do
        if seen[d] then
            raise(("tide: %s: FFT dims must be unique"):format(op))
        end
        seen[d] = true
    end
    local ns = {}
    for i, d in ipairs(dims) do
        local v = s and s[i]
        if v == nil or v == -1 then
            if last_default and i == #dims then
                ns[i] = check_n(op, 2 * (x:size(d) - 1))
            else
                ns[i] = check_n(op, x:size(d))
            end
        else
            ns[i] = check_n(op, v)
        end
    end
    return dims, ns
end

local ONE = { "n", "dim", "norm" }
local ONE_LISTS = {}
local N = { "s", "dim", "norm" }
local N_LISTS = { true, true }

-- the transforms: c2c fft / ifft (a real input's first step r2c), r2c rfft / ihfft, c2r irfft /
-- hfft. forward: whether "backward" leaves it unscaled; sign: the exponent's.
local function transform(op, v, dims_in, ns_in, norm, how)
    local x, complex, nd = how.x, how.complex, how.nd
    local dims, ns = dims_in, ns_in
    if how.kind == "c2r" then
        -- every dim but the last c2c, then the last c2r
        for i = 1, #dims - 1 do
            x = along("c2c", x, true, nd, dims[i], ns[i], how.sign,
                scale_of(norm, ns[i], how.forward))
        end
        local last = #dims
        return along("c2r", x, true, nd, dims[last], ns[last], how.sign,
            scale_of(norm, ns[last], how.forward))
    end
    local order = {}
    if how.kind == "r2c" then -- the last dim first (the halved one), then the others
        order[1] = #dims
        for i = 1, #dims - 1 do
            order[#order + 1] = i
        end
    else
        for i = 1, #dims do
            order[i] = i
        end
    end
    for _, i in ipairs(order) do
        local kind = complex and "c2c" or "r2c"
        local n = ns[i]
        if kind == "r2c" and how.kind == "c2c" then
            -- a real input to a complex transform: every bin, not the half
            x = along("r2c_full", x, false, nd, dims[i], n, how.sign,
                scale_of(norm, n, how.forward))
        else
            x = along(kind, x, complex, nd, dims[i], n, how.sign, scale_of(norm, n, how.forward))
        end
        complex = true
    end
    if not complex then -- no dims: the input as a complex tensor
        x = with_zero_imag(x)
    end
    return C.wrap(x)
end

local KINDS = {
    fft = { kind = "c2c", sign = -1, forward = true },
    ifft = { kind = "c2c", sign = 1, forward = false },
    rfft = { kind = "r2c", sign = -1, forward = true, real = true },
    ihfft = { kind = "r2c", sign = 1, forward = false, real = true },
    irfft = { kind = "c2r", sign = 1, forward = false },
    hfft = { kind = "c2r", sign = -1, forward = true },
}

local function setup(op, name, v)
    local k = KINDS[name]
    local x, complex, nd = input(op, v, k.real)
    if k.kind == "c2r" and not complex then -- a real input: zero imaginary parts
        x = with_zero_imag(x)
        complex = true
    end
    return { kind = k.kind, sign = k.sign, forward = k.forward, x = x, complex = complex, nd = nd }
end

-- 1-D: name(input, n, dim, norm) or name(input, {n =, dim =, norm =})
for name in pairs(KINDS) do
    local op = "fft." .. name
    M[name] = function(v, ...)
        local a = parse(op, ONE, ONE_LISTS, ...)
        local how = setup(op, name, v)
        local norm = check_norm(op, a[3])
        local d = args.dim_of(op, how.x, a[2] == nil and -1 or a[2], how.complex and -1 or 0)
        local n
        if a[1] ~= nil then
            n = check_n(op, a[1])
        elseif how.kind == "c2r" then
            n = check_n(op, 2 * (how.x:size(d) - 1))
        else
            n = check_n(op, how.x:size(d))
        end
        return transform(op, v, { d }, { n }, norm, how)
    end
end

-- 2-D and N-D: name(input, s, dim, norm) or with {s =, dim =, norm =}
local function n_dim(base, suffix, default_dims)
    local op = "fft." .. base .. suffix
    return function(v, ...)
        local a = parse(op, N, N_LISTS, ...)
        local how = setup(op, base, v)
        local norm = check_norm(op, a[3])
        local dims, ns = plan(op, how.x, how.complex, how.nd, a[1], a[2], default_dims,
            how.kind == "c2r")
        if #dims == 0 then
            if how.kind ~= "c2c" then
                raise(("tide: %s: must transform at least one axis"):format(op))
            end
            local x = how.complex and how.x or with_zero_imag(how.x)
            return C.wrap(x)
        end
        return transform(op, v, dims, ns, norm, how)
    end
end

for _, base in ipairs({ "fft", "ifft", "rfft", "irfft", "hfft", "ihfft" }) do
    M[base .. "2"] = n_dim(base, "2", { -2, -1 })
    M[base .. "n"] = n_dim(base, "n", nil)
end

-- fftfreq(n, d = 1.0, {dtype =, device =, requires_grad =}): the sample frequencies
-- [0, 1, ..., ceil(n/2) - 1, -floor(n/2), ..., -1] / (d n); rfftfreq: [0 .. floor(n/2)] / (d n)
local FREQ = { "dtype", "device", "requires_grad" }
local function freq(name)
    local op = "fft." .. name
    return function(n, d, opts, ...)
        if type(d) == "table" and opts == nil then
            d, opts = nil, d
        end
        args.no_extra(op, 3, ...)
        local o = args.options(op, opts, FREQ, "{dtype = \"float64\"}")
        n = args.integer(op, n, "n")
        if n < 0 then
            raise(("tide: %s: n must be >= 0, got %d"):format(op, n))
        end
        if d == nil then
            d = 1.0
        elseif type(d) ~= "number" then
            raise(("tide: %s: d must be a number, got %s"):format(op, type(d)))
        end
        local make = { dtype = o.dtype or core.get_default_dtype(), device = o.device }
        local r
        if name == "fftfreq" then
            local half = floor((n + 1) / 2)
            r = core.cat({ core.arange(0, half, make), core.arange(-floor(n / 2), 0, make) })
        else
            r = core.arange(0, floor(n / 2) + 1, make)
        end
        r = r:mul(1.0 / (n * d)) -- as PyTorch's mul_(1 / (n d)): rfftfreq(0) is {nan}
        return o.requires_grad and r:requires_grad_(true) or r
    end
end
M.fftfreq = freq("fftfreq")
M.rfftfreq = freq("rfftfreq")

-- fftshift(x, dim): x rolled by floor(size / 2) along dim (a dim or a list; every dim when nil),
-- the zero frequency to the middle; ifftshift undoes it. A complex x rolls its [..., 2] tensor.
local function shift(name, inverse)
    local op = "fft." .. name
    return function(v, dim, ...)
        if type(dim) == "table" and not is_list(dim) then
            args.no_extra(op, 2, ...)
            dim = args.options(op, dim, { "dim" }).dim
        else
            args.no_extra(op, 2, ...)
        end
        local x, complex = data_of(op, v) -- (any dtype: a roll)
        local nd = x:dim() - (complex and 1 or 0)
        local dims = {}
        if dim == nil then
            for i = 1, nd do
                dims[i] = i
            end
        else
            if type(dim) ~= "table" then
                dim = { dim }
            end
            for i, d in ipairs(dim) do
                dims[i] = args.dim_of(op, x, d, complex and -1 or 0)
            end
        end
        local shifts = {}
        for i, d in ipairs(dims) do
            local size = x:size(d)
            shifts[i] = inverse and floor((size + 1) / 2) or floor(size / 2)
        end
        local y = #dims == 0 and x or x:roll(shifts, dims)
        return complex and C.wrap(y) or y
    end
end
M.fftshift = shift("fftshift", false)
M.ifftshift = shift("ifftshift", true)

-- the window of an STFT (ones when nil) padded to n_fft on both sides, on x's dtype and device
local function stft_window(op, window, win_length, n_fft, x)
    if window == nil then
        window = core.ones({ win_length }, { dtype = x.dtype, device = x.device })
    elseif not is_tensor(window) or window:dim() ~= 1 or window:size(1) ~= win_length then
        raise(("tide: %s: expected a 1-D window tensor of size equal to win_length=%d, got %s")
            :format(op, win_length, is_tensor(window) and
                ("a tensor of shape " .. args.shape_str(window:size())) or type(window)))
    end
    window = window:to(x.dtype)
    if win_length < n_fft then
        local left = floor((n_fft - win_length) / 2)
        window = core.cat({ core.zeros({ left }, { dtype = x.dtype, device = x.device }), window,
            core.zeros({ n_fft - win_length - left }, { dtype = x.dtype, device = x.device }) })
    end
    return window
end

-- n_fft, hop_length and win_length of stft / istft, checked
local function stft_sizes(op, n_fft, o)
    n_fft = args.integer(op, n_fft, "n_fft")
    -- any integer here: the checks below raise PyTorch's messages for the bounds
    local function size(key, default)
        local v = o[key]
        local i = v == nil and default or type(v) == "number" and compat.tointeger(v) or nil
        if i == nil then
            raise(("tide: %s: %s = %s; expected an integer"):format(op, key, tostring(v)))
        end
        return i
    end
    local hop, win = size("hop_length", floor(n_fft / 4)), size("win_length", n_fft)
    if n_fft < 1 or win < 1 or win > n_fft then
        raise(("tide: %s: expected 0 < win_length <= n_fft, but got win_length=%d, n_fft=%d")
            :format(op, win, n_fft))
    end
    if hop < 1 then
        raise(("tide: %s: expected hop_length > 0, but got hop_length=%d"):format(op, hop))
    end
    return n_fft, hop, win
end

local STFT = { "hop_length", "win_length", "window", "center", "pad_mode", "normalized",
    "onesided", "return_complex" }

-- stft(input, n_fft, {hop_length = floor(n_fft / 4), win_length = n_fft, window = ones,
-- center = true, pad_mode = "reflect", normalized = false, onesided = true for a real input,
-- return_complex}): PyTorch 1.13's torch.stft. input [L] or [B, L], real or complex; the result
-- [B?, freq, frames] complex (return_complex = true), or its view_as_real [..., 2] tensor
-- (false; nil for a real input warns as PyTorch 1.13 does and returns that)
-- PyTorch's stft / istft arguments after the input: n_fft and the rest by position in torch
-- 1.13's order (torch.stft(x, 512, 128, 512, w)), by name in a last table, or mixed; n_fft by
-- name too (tide.stft(x, {n_fft = 512, hop_length = 128}), hifi-gan's keyword call)
local function stft_args(op, names, v, ...)
    local all = { "n_fft" }
    for i, k in ipairs(names) do
        all[i + 1] = k
    end
    local o = {}
    for k, w in pairs(P.merge(op, all, ...) or {}) do -- a copy: the caller's table stays
        o[k] = w
    end
    local n_fft = o.n_fft
    o.n_fft = nil
    return v, n_fft, o
end

function M.stft(v, ...)
    local op = "stft"
    local n_fft, opts
    v, n_fft, opts = stft_args(op, STFT, v, ...)
    local o = args.options(op, opts, STFT, "{hop_length = 128, window = tide.hann_window(512)}")
    local x, complex = input(op, v, false)
    local nd = x:dim() - (complex and 1 or 0)
    if nd ~= 1 and nd ~= 2 then
        raise(("tide: %s: expected a 1D or 2D tensor, got %d dims"):format(op, nd))
    end
    local hop, win
    n_fft, hop, win = stft_sizes(op, n_fft, o)
    local onesided = o.onesided
    if onesided == nil then
        onesided = not complex
    elseif onesided and complex then
        raise(("tide: %s: Cannot have onesided output if window or input is complex"):format(op))
    end
    local rc = o.return_complex
    if rc == nil then
        if complex then
            rc = true
        else
            require("tide._warn").once("stft.return_complex", "stft will soon require the " ..
                "return_complex parameter be given for real inputs (PyTorch 1.13's warning); " ..
                "returning the real [..., 2] tensor (return_complex = false)")
            rc = false
        end
    end
    -- [B, C, L]: C = 1, or 2 for a complex input's parts
    local sig = complex and x:movedim(-1, -2) or x:unsqueeze(-2)
    if nd == 1 then
        sig = sig:unsqueeze(1)
    end
    if o.center == nil or o.center then
        local p = floor(n_fft / 2)
        sig = require("tide.nn").functional.pad(sig, { p, p }, o.pad_mode or "reflect")
    end
    local len = sig:size(3)
    if n_fft > len then
        raise(("tide: %s: expected 0 < n_fft <= %d, but got n_fft=%d"):format(op, len, n_fft))
    end
    local frames = sig:unfold(3, n_fft, hop) * stft_window(op, o.window, win, n_fft, x)
    local norm = o.normalized and "ortho" or "backward"
    local z -- [B, frames, freq, 2]
    if complex then
        z = C.ri(M.fft(C.wrap(frames:movedim(2, -1)), nil, -1, norm))
    else
        frames = frames:squeeze(2)
        z = C.ri((onesided and M.rfft or M.fft)(frames, nil, -1, norm))
    end
    z = z:transpose(2, 3)
    if nd == 1 then
        z = z:squeeze(1)
    end
    return rc and C.wrap(z) or z
end

local ISTFT = { "hop_length", "win_length", "window", "center", "normalized", "onesided",
    "length", "return_complex" }

-- istft(input, n_fft, {hop_length, win_length, window, center = true, normalized = false,
-- onesided, length, return_complex = false}): PyTorch 1.13's torch.istft, the inverse of stft
-- by overlap-add (divided by the window's squared overlap-add, which must not vanish); input
-- complex or (1.13's deprecated form, warned once) its view_as_real [..., 2] tensor;
-- return_complex = true (two-sided input only) gives a complex signal
function M.istft(v, ...)
    local op = "istft"
    local n_fft, opts
    v, n_fft, opts = stft_args(op, ISTFT, v, ...)
    local o = args.options(op, opts, ISTFT, "{hop_length = 128, window = tide.hann_window(512)}")
    if not C.is(v) then
        -- PyTorch 1.13 still takes stft's real [..., 2] result (view_as_real), warning once
        if not is_tensor(v) or v:dim() < 1 or v:size(-1) ~= 2 or v:is_complex() then
            raise(("tide: %s: expected a complex tensor (stft's return_complex = true result) "
                .. "or its view_as_real [..., 2] tensor, got %s"):format(op, is_tensor(v) and
                ("a tensor of shape " .. args.shape_str(v:size())) or args.typename(v)))
        end
        require("tide._warn").once("istft.real_input", "istft will require a complex-valued "
            .. "input tensor in a future PyTorch release. Matching the output from stft with "
            .. "return_complex=True. (PyTorch 1.13's warning)")
        v = C.wrap(v)
    end
    local z = input(op, v, false)
    local nd = z:dim() - 1
    if nd ~= 2 and nd ~= 3 then
        raise(("tide: %s: expected a tensor with 2 or 3 dims (freq, frames), got %d dims")
            :format(op, nd))
    end
    local hop, win
    n_fft, hop, win = stft_sizes(op, n_fft, o)
    if nd == 2 then
        z = z:unsqueeze(1)
    end
    local n_freq, n_frames = z:size(2), z:size(3)
    local onesided = o.onesided
    if onesided == nil then
        onesided = n_freq ~= n_fft
    end
    local want = onesided and floor(n_fft / 2) + 1 or n_fft
    if n_freq ~= want then
        raise(("tide: %s: expected the frequency dim to have size %d (n_fft = %d, onesided = %s),"
            .. " got %d"):format(op, want, n_fft, tostring(onesided), n_freq))
    end
    local rc = o.return_complex
    if rc and onesided then
        raise(("tide: %s: Cannot have onesided output if window or input is complex"):format(op))
    end
    local norm = o.normalized and "ortho" or "backward"
    z = C.wrap(z:transpose(2, 3)) -- [B, frames, freq, 2]
    local frames -- [B, frames, n_fft, P]: P = 2 (real, imaginary) for return_complex, else 1
    if onesided then
        frames = M.irfft(z, n_fft, -1, norm):unsqueeze(-1)
    else
        frames = C.ri(M.ifft(z, nil, -1, norm))
        frames = rc and frames or frames:narrow(-1, 1, 1)
    end
    local P = frames:size(4)
    local window = stft_window(op, o.window, win, n_fft, frames)
    frames = frames * window:view(n_fft, 1)
    local total = n_fft + hop * (n_frames - 1)
    local B = frames:size(1)
    local idx = (core.arange(0, n_frames, { dtype = "int64", device = frames.device })
        :view(n_frames, 1) * hop + core.arange(1, n_fft + 1, { dtype = "int64",
        device = frames.device }):view(1, n_fft)):reshape({ n_frames * n_fft })
    local make = { dtype = frames.dtype, device = frames.device }
    local y = core.zeros({ B, total, P }, make):index_add(2, idx,
        frames:reshape({ B, n_frames * n_fft, P }))
    local env = core.zeros({ total }, make):index_add(1, idx,
        (window * window):view(1, n_fft):expand(n_frames, n_fft):reshape({ n_frames * n_fft }))
    local center = o.center == nil or o.center
    local start = center and floor(n_fft / 2) or 0
    local stop = total
    if o.length ~= nil then
        stop = start + args.int_option(op, o, "length", 0, 0)
    elseif center then
        stop = total - floor(n_fft / 2)
    end
    local keep = math.min(stop, total) - start
    y, env = y:narrow(2, start + 1, keep), env:narrow(1, start + 1, keep)
    local least = env:abs():min():item()
    if least < 1e-11 then
        raise(("tide: %s: window overlap add min: %g; the window's squared overlap-add must not "
            .. "vanish (NOLA)"):format(op, least))
    end
    y = y / env:view(keep, 1)
    if stop > total then
        y = core.cat({ y, core.zeros({ B, stop - total, P }, make) }, 2)
    end
    y = nd == 2 and y:squeeze(1) or y
    return rc and C.wrap(y) or y:squeeze(-1)
end

-- tide.stft / tide.istft (lua/tide/_lazy_ops.lua: their stubs load this module)
M.functions = { stft = M.stft, istft = M.istft }

return M
