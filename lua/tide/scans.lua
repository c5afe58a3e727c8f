-- tide.scans: running reductions by PyTorch's names (docs/API.md, "The op list"): cummax and
-- cummin (values and 1-based indices; among equal values the later index, a NaN takes over
-- from where it appears, as PyTorch's), logcumsumexp. Each runs its kernel row
-- (include/tide_kernels.def: cummax, logcumsumexp), or, on a device without it, a Hillis-Steele
-- scan (log2 n rounds of narrow, combine and cat) with an associative combine. cummax's values
-- are gathered from x at the indices when a gradient is recorded, so it reaches the element
-- taken, as PyTorch's. Tensor methods, and tide.X functions.
local core = require("tide.core")
local autograd = require("tide.autograd")
local raise = autograd.raise
local args = require("tide.op_args")

local Tensor = core.Tensor
local K = core._internal -- the kernel rows
local check, dim_of = args.check, args.dim_of
local no_grad = autograd.no_grad

-- t's [len, inner] geometry along d: the row's d and inner parameters
local function geometry(t, d)
    local inner = 1
    for i = d + 1, t:dim() do
        inner = inner * t:size(i)
    end
    return t:size(d) * inner, inner
end

local M = {}

-- scans the pair (v, i) along d: combine(earlier, later) -> the pair kept
local function scan_pairs(v, i, d, later_wins)
    local n, s = v:size(d), 1
    while s < n do
        local av, ai = v:narrow(d, 1, n - s), i:narrow(d, 1, n - s)
        local bv, bi = v:narrow(d, s + 1, n - s), i:narrow(d, s + 1, n - s)
        local take_b = later_wins(av, bv)
        v = core.cat({ v:narrow(d, 1, s), core.where(take_b, bv, av) }, d)
        i = core.cat({ i:narrow(d, 1, s), core.where(take_b, bi, ai) }, d)
        s = s * 2
    end
    return v, i
end

-- the kernel row's dtypes, and what the others run in (exactly: float16, bfloat16, uint8 and
-- bool values convert without rounding, bool as uint8, false < true, as PyTorch's)
local EXTREME_AS = { float32 = "float32", float64 = "float64", int32 = "int32", int64 = "int64",
    float16 = "float32", bfloat16 = "float32", uint8 = "int32", bool = "int32" }

-- cummax (cummin) of t (not 0-d) along d by the row: values and indices, or nil where the device
-- has no kernel. Without a gradient to record the kernel's values are the result; with one, x
-- at the indices (gather's node)
local function running_row(t, d, min)
    local as = EXTREME_AS[t.dtype]
    if not as or t:numel() == 0 then
        return nil
    end
    local rec = autograd.needs_record(t)
    local own = as == t.dtype and not rec
    local size, inner = geometry(t, d)
    local v, idx = K.cummax(t:detach():to(as), size, inner, min, own)
    if not idx then
        return nil
    end
    return own and v or t:gather(d, idx), idx
end

-- cummax(dim), cummin(dim): the running max (min) along dim and its 1-based index
local function running(op, better_or_equal)
    Tensor[op] = function(x, dim, ...)
        args.no_extra(op, 2, ...)
        check(op, x)
        if dim == nil then
            raise(("tide: %s: dim is required, as in x:%s(1)"):format(op, op))
        end
        local t = x:dim() == 0 and x:reshape(1) or x
        local d = dim_of(op, t, dim)
        local v, idx = running_row(t, d, op == "cummin")
        if idx then
            if x:dim() == 0 then
                return v:reshape({}), idx:reshape({})
            end
            return v, idx
        end
        -- bool compares as uint8 (false < true), as PyTorch's bool cummax/cummin
        local c = x.dtype == "bool" and t:to("uint8") or t
        idx = no_grad(function()
            local shape = {}
            for k = 1, t:dim() do
                shape[k] = k == d and t:size(d) or 1
            end
            local i = core.arange(1, t:size(d) + 1, { dtype = "int64", device = t.device })
                :reshape(shape):expand(t:size()):contiguous()
            local _, r = scan_pairs(c, i, d, function(a, b)
                return b:isnan():logical_or(a:isnan():logical_not():logical_and(
                    better_or_equal(b, a)))
            end)
            return r
        end)
        v = t:gather(d, idx)
        if x:dim() == 0 then
            return v:reshape({}), idx:reshape({})
        end
        return v, idx
    end
end
running("cummax", function(b, a) return b:ge(a) end)
running("cummin", function(b, a) return b:le(a) end)

-- logcumsumexp of t along d by log2(n) rounds of logaddexp (a device without the row)
local function scan_logcumsumexp(t, d)
    local n, s = t:size(d), 1
    while s < n do
        local tail = t:narrow(d, 1, n - s):logaddexp(t:narrow(d, s + 1, n - s))
        t = core.cat({ t:narrow(d, 1, s), tail }, d)
        s = s * 2
    end
    return t
end

-- logcumsumexp of t (float32 or float64, not 0-d) along d by the row, recorded as one node; nil
-- where the device has no kernel
local LSE_DTYPES = { float32 = true, float64 = true }
local function logcumsumexp_row(t, d)
    if not LSE_DTYPES[t.dtype] or t:numel() == 0 then
        return nil
    end
    local size, inner = geometry(t, d)
    local rec = autograd.needs_record(t)
    local y = K.logcumsumexp(rec and t:detach() or t, size, inner)
    if y and rec then
        autograd.record("logcumsumexp", y, t, d)
    end
    return y
end

-- PyTorch's logcumsumexp_backward (after TensorFlow's): the gradient's positive and negative
-- parts each summed from the end in log space, sum_{j >= i} g_j exp(x_i - y_j), so nothing
-- overflows; it runs logcumsumexp itself (recorded under create_graph)
autograd.def {
    name = "logcumsumexp",
    reads = { 1, "out" },
    backward = function(nd, g)
        local x, y, d = nd[1], nd.out, nd[2]
        if not core.is_grad_enabled() and x:eq(-math.huge):any():item() then
            -- the formula is NaN at a leading -inf (exp(-inf + inf)); the scan's ops give the
            -- true derivative there (1 for the first element, y's own)
            local xr = x:detach():requires_grad_(true)
            local out = autograd.enable_grad(function() return scan_logcumsumexp(xr, d) end)
            return autograd.grad(out, xr, g)[1]
        end
        local lowest = x.dtype == "float64" and -1.7976931348623157e308 or -3.4028234663852886e38
        local log_abs = g:abs():log()
        local function from_end(v)
            return v:flip(d):logcumsumexp(d):flip(d)
        end
        local pos = core.where(g:gt(0), log_abs, lowest)
        local neg = core.where(g:lt(0), log_abs, lowest)
        return from_end(pos - y):add(x):exp() - from_end(neg - y):add(x):exp()
    end,
}

-- logcumsumexp(dim): log(cumsum(exp(x))) without overflow, each step logaddexp (PyTorch's
-- combine: the larger plus log1p(exp(smaller - larger)))
Tensor.logcumsumexp = args.in_float(function(x, dim, ...)
    args.no_extra("logcumsumexp", 2, ...)
    check("logcumsumexp", x)
    if dim == nil then
        raise("tide: logcumsumexp: dim is required, as in x:logcumsumexp(1)")
    end
    args.float_input("logcumsumexp", x)
    local t = x:dim() == 0 and x:reshape(1) or x
    local d = dim_of("logcumsumexp", t, dim)
    local y = logcumsumexp_row(t, d)
    if y then
        return x:dim() == 0 and y:reshape({}) or y
    end
    local n = t:size(d)
    t = scan_logcumsumexp(t, d)
    return x:dim() == 0 and t:reshape({}) or (n > 0 and t or t:clone())
end)

M.names = { "cummax", "cummin", "logcumsumexp" }
return M
