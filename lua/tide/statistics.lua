-- tide.statistics: order statistics, moments and integrals by PyTorch's names (docs/API.md,
-- "The op list"): kthvalue, mode, nanmedian, quantile, nanquantile, msort, aminmax, std_mean,
-- var_mean, dist, renorm, cov, corrcoef, trapezoid, cumulative_trapezoid, vander; and the
-- scans cummax, cummin, logcumsumexp. Indices are 1-based. The order statistics take the
-- element a stable sort puts in their place (among equal values the first in x comes first:
-- kthvalue and nanmedian by the core's selection, tide._kthvalue, the others by sorting) and
-- gather it from x, so the gradient reaches the element taken, as PyTorch's; quantile
-- interpolates with lerp as PyTorch's does. Tensor methods, and tide.X functions.
local core = require("tide.core")
local autograd = require("tide.autograd")
local evenly = require("tide._evenly")
local raise = autograd.raise
local args = require("tide.op_args")
local same_device = require("tide._same_device")

local Tensor = core.Tensor
local check, dim_of, integer, shape_str = args.check, args.dim_of, args.integer, args.shape_str
local no_grad = autograd.no_grad
local FLOAT = args.FLOAT

local M = { functions = {} }

local function keepdim_arg(op, keepdim)
    if keepdim ~= nil and type(keepdim) ~= "boolean" then
        raise(("tide: %s: keepdim must be a boolean, got %s"):format(op, type(keepdim)))
    end
    return keepdim == true
end

local not_differentiable = args.not_differentiable

local function nonempty(op, x, d)
    if x:size(d) == 0 then
        raise(("tide: %s: dim %d has size 0, and the %s of nothing is undefined")
            :format(op, d, op))
    end
end

-- values gathered from t along d at the 1-based idx (keeping d), squeezed unless keep
local function taken(t, d, idx, keep)
    local v = t:gather(d, idx)
    if not keep then
        v, idx = v:squeeze(d), idx:squeeze(d)
    end
    return v, idx
end

-- kthvalue(k[, dim = -1[, keepdim]]): the k-th smallest value along dim and its 1-based index
-- (among equal values, the one a stable sort puts k-th; PyTorch's index is unspecified then)
function Tensor.kthvalue(x, k, dim, keepdim, ...)
    args.no_extra("kthvalue", 4, ...)
    check("kthvalue", x)
    k = integer("kthvalue", k, "k")
    local keep = keepdim_arg("kthvalue", keepdim)
    local t = x:dim() == 0 and x:reshape(1) or x
    local d = dim_of("kthvalue", t, dim == nil and -1 or dim)
    if k < 1 or k > t:size(d) then
        raise(("tide: kthvalue: k = %d is out of range for dim %d of size %d; use 1..%d")
            :format(k, d, t:size(d), t:size(d)))
    end
    local idx = select(2, core._kthvalue(t, k, d))
    local v, i = taken(t, d, idx, keep or x:dim() == 0)
    if x:dim() == 0 then
        return v:reshape({}), i:reshape({})
    end
    return v, i
end

-- the length of each run of equal values in s, sorted along the last dim, in run order
-- ([..., n], int64; 0 past the last run): a run starts where a value differs from the one
-- before, its number the running count of starts, and scatter_add counts its elements (one
-- pass each, where two running max/min scans over the positions took log2 n rounds)
local function run_lengths(s)
    local n = s:size(-1)
    local starts = core.cat({ core.ones(s:size(), { dtype = "bool", device = s.device })
        :narrow(-1, 1, 1), s:narrow(-1, 2, n - 1):ne(s:narrow(-1, 1, n - 1)) }, -1)
    local run = starts:to("int64"):cumsum(-1) -- each element's 1-based run number
    return core.zeros(run:size(), { dtype = "int64", device = s.device })
        :scatter_add(-1, run, core.ones(run:size(), { dtype = "int64", device = s.device }))
end

-- mode([dim = -1[, keepdim]]): the most frequent value along dim (the smallest of equally
-- frequent ones) and the 1-based index of its last occurrence, as PyTorch's
function Tensor.mode(x, dim, keepdim, ...)
    args.no_extra("mode", 3, ...)
    check("mode", x)
    local keep = keepdim_arg("mode", keepdim)
    local t = x:dim() == 0 and x:reshape(1) or x
    local d = dim_of("mode", t, dim == nil and -1 or dim)
    nonempty("mode", t, d)
    local idx = no_grad(function()
        local m = t:movedim(d, -1)
        local s, order = m:sort(-1)
        local count = run_lengths(s)
        local best = count:argmax(-1, true) -- the first of the longest runs: the smallest value
        -- the elements up to the end of that run: the 1-based sorted position of its last one
        local at = count:cumsum(-1):gather(-1, best)
        return order:gather(-1, at):movedim(-1, d)
    end)
    local v, i = taken(t, d, idx, keep or x:dim() == 0)
    if x:dim() == 0 then
        return v:reshape({}), i:reshape({})
    end
    return v, i
end

-- nanmedian([dim[, keepdim]]): median of the values that are not NaN (NaN when all are, with
-- index 1)
function Tensor.nanmedian(x, dim, keepdim, ...)
    args.no_extra("nanmedian", 3, ...)
    check("nanmedian", x)
    local keep = keepdim_arg("nanmedian", keepdim)
    local flat = dim == nil
    local t, d = x, 1
    if flat or x:dim() == 0 then
        t = x:reshape(-1)
    else
        d = dim_of("nanmedian", x, dim)
    end
    nonempty("nanmedian", t, d)
    local idx = select(2, core._kthvalue(t, -1, d))
    if flat then -- ties share the gradient (tide._evenly)
        return evenly(x, t:detach():gather(d, idx):reshape({}))
    end
    local v, i = taken(t, d, idx, keep)
    if x:dim() == 0 then
        return v:reshape({}), i:reshape({})
    end
    return v, i
end

local QUANTILE_OPTIONS = { "interpolation" }
local INTERPOLATIONS = { linear = true, lower = true, higher = true, midpoint = true,
    nearest = true }

-- quantile(q[, dim[, keepdim[, {interpolation = "linear"}]]]), nanquantile (NaNs left out):
-- PyTorch's computation: the values sorted, rank q (n - 1), the two values around it
-- interpolated with lerp; q a number in [0, 1] or a 1-D tensor (its dim first in the result);
-- no dim: over every element
local function quantile(op, ignore_nan)
    return function(x, q, dim, keepdim, opts, ...)
        args.no_extra(op, 5, ...)
        check(op, x)
        if type(keepdim) == "table" and opts == nil then
            keepdim, opts = nil, keepdim
        elseif type(dim) == "table" and keepdim == nil and opts == nil then
            dim, opts = nil, dim
        end
        local keep = keepdim_arg(op, keepdim)
        local o = args.options(op, opts, QUANTILE_OPTIONS, "{interpolation = \"nearest\"}")
        local mode = o.interpolation or "linear"
        if not INTERPOLATIONS[mode] then
            raise(("tide: %s: interpolation must be \"linear\", \"lower\", \"higher\", " ..
                "\"midpoint\" or \"nearest\", got %s"):format(op, tostring(mode)))
        end
        if not (x.dtype == "float32" or x.dtype == "float64") then
            raise(("tide: %s: needs a float32 or float64 tensor, got %s"):format(op, x.dtype))
        end
        same_device(op, x, q)
        local qs = q
        if type(q) == "number" then
            qs = core.full({}, q, { dtype = x.dtype, device = x.device })
        elseif not core.is_tensor(q) then
            raise(("tide: %s: q must be a number or a tensor, got %s"):format(op, type(q)))
        elseif q:dim() > 1 then
            raise(("tide: %s: q must be a number, a 0-D or a 1-D tensor, got %s")
                :format(op, shape_str(q:size())))
        elseif q.dtype ~= x.dtype then
            raise(("tide: %s: q must have input's dtype %s, got %s"):format(op, x.dtype,
                q.dtype))
        end
        local bad = no_grad(function()
            return qs:lt(0):logical_or(qs:gt(1)):any():item()
        end)
        if bad then
            raise(("tide: %s: q values must be in the range [0, 1]"):format(op))
        end
        -- the values to sort as [..., n], the reduced dim last
        local t, d = x, nil
        if dim == nil then
            t = x:reshape(-1)
        else
            d = dim_of(op, x, dim)
            t = x:dim() == 0 and x:reshape(1) or x:movedim(d, -1)
        end
        local n = t:size(-1)
        if n == 0 then
            raise(("tide: %s: the input is empty along the reduced dim"):format(op))
        end
        local sorted = t:sort(-1)
        local lead = sorted:size()
        lead[#lead] = nil
        local nq = qs:numel()
        -- ranks [..., nq], differentiable in q as PyTorch's (linear mode's weights read them)
        local qv = qs:reshape(-1)
        local shape, full = {}, {}
        for i = 1, #lead do
            shape[i], full[i] = 1, lead[i]
        end
        shape[#shape + 1], full[#full + 1] = nq, nq
        qv = qv:reshape(shape)
        local ranks
        if ignore_nan then
            local valid = no_grad(function()
                return sorted:isnan():logical_not():sum(-1, true):to(x.dtype)
            end)
            ranks = qv * (valid - 1)
            ranks = core.where(ranks:lt(0), 0, ranks)
        else
            local any_nan = no_grad(function() return sorted:isnan():any(-1, true) end)
            ranks = core.where(any_nan, n - 1, qv * (n - 1))
        end
        ranks = ranks:expand(full)
        if mode == "lower" then
            ranks = ranks:floor()
        elseif mode == "higher" then
            ranks = ranks:ceil()
        elseif mode == "nearest" then
            ranks = ranks:round()
        end
        local below = no_grad(function() return ranks:to("int64") end)
        local v = sorted:gather(-1, below + 1)
        if mode == "linear" or mode == "midpoint" then
            local above = no_grad(function() return ranks:ceil():to("int64") end)
            local w = mode == "midpoint" and 0.5 or ranks - below:to(x.dtype)
            v = v:lerp(sorted:gather(-1, above + 1), w)
        end
        -- v: [..., nq]: q's dim first, then the kept dims
        v = v:movedim(-1, 1)
        if d ~= nil and keep then
            v = v:unsqueeze(d + 1)
        elseif d == nil and keep then
            for _ = 1, x:dim() do
                v = v:unsqueeze(-1)
            end
        end
        if type(q) == "number" or q:dim() == 0 then
            v = v:squeeze(1)
        end
        return v
    end
end
Tensor.quantile = quantile("quantile", false)
Tensor.nanquantile = quantile("nanquantile", true)

-- msort(): sorted along dim 1 (the values of sort(1))
function Tensor.msort(x, ...)
    args.no_extra("msort", 1, ...)
    check("msort", x)
    return (x:sort(1))
end

-- aminmax([dim[, keepdim]]): amin and amax, two results (no gradient, as PyTorch's)
function Tensor.aminmax(x, dim, keepdim, ...)
    args.no_extra("aminmax", 3, ...)
    check("aminmax", x)
    not_differentiable("aminmax", x)
    return no_grad(function()
        return x:amin(dim, keepdim), x:amax(dim, keepdim)
    end)
end

-- the mean over dims (one or a list; nil: all), as var_mean's second result
local function mean_over(x, dim, keep)
    if dim == nil then
        local m = x:mean()
        if keep then
            local shape = {}
            for i = 1, x:dim() do
                shape[i] = 1
            end
            m = m:reshape(shape)
        end
        return m
    end
    local list, dims, seen = type(dim) == "table" and dim or { dim }, {}, {}
    for i = 1, #list do
        local d = dim_of("var_mean", x, list[i])
        if not seen[d] then
            seen[d], dims[#dims + 1] = true, d
        end
    end
    table.sort(dims, function(a, b) return a > b end)
    local count, s = 1, x
    for _, d in ipairs(dims) do
        count, s = count * x:size(d), s:sum(d, true)
    end
    s = s / count
    if not keep then
        for _, d in ipairs(dims) do
            s = s:squeeze(d)
        end
    end
    return s
end

-- var_mean([dim[, unbiased[, keepdim]]][, {correction =}]), std_mean: var (std) and the
-- mean, two results, the arguments as var's (PyTorch 1.13's)
local var_form = require("tide.reductions").var_form
local function with_mean(op, how)
    Tensor[op] = function(x, dim, unbiased, keepdim, opts, ...)
        args.no_extra(op, 5, ...)
        check(op, x)
        args.float_input(op, x)
        local d, u, k = var_form(dim, unbiased, keepdim)
        return x[how](x, d, u, k, opts), mean_over(x, d, k == true)
    end
end
with_mean("var_mean", "var")
with_mean("std_mean", "std")

-- dist(other[, p = 2]): the p-norm of x - other (broadcast), a 0-D tensor
function Tensor.dist(x, other, p, ...)
    args.no_extra("dist", 3, ...)
    check("dist", x)
    check("dist", other, 2)
    same_device("dist", x, other)
    require("tide._broadcast_rule").check("dist", x, other)
    if p ~= nil and type(p) ~= "number" then
        raise(("tide: dist: p must be a number, got %s"):format(type(p)))
    end
    return (x - other):reshape(-1):norm(p or 2)
end

-- renorm(p, dim, maxnorm): each slice along dim whose p-norm exceeds maxnorm scaled to
-- maxnorm (by maxnorm / (norm + 1e-7), PyTorch's factor)
local function renorm(x, p, dim, maxnorm, ...)
    args.no_extra("renorm", 4, ...)
    check("renorm", x)
    if type(p) ~= "number" or p <= 0 then
        raise(("tide: renorm: p must be a number > 0, got %s"):format(tostring(p)))
    end
    if type(maxnorm) ~= "number" or maxnorm < 0 then
        raise(("tide: renorm: maxnorm must be a number >= 0, got %s"):format(tostring(maxnorm)))
    end
    args.float_input("renorm", x)
    if x:dim() == 0 then
        raise("tide: renorm: needs a tensor with at least one dim, got a 0-dim tensor")
    end
    local d = dim_of("renorm", x, dim)
    if x:numel() == 0 then
        return x * 1
    end
    local rows = x:movedim(d, 1)
    local norm = rows:reshape(rows:size(1), -1):norm(p, 2, true)
    local shape = {}
    for i = 1, x:dim() do
        shape[i] = i == d and x:size(d) or 1
    end
    norm = norm:reshape(shape)
    local factor = core.where(norm:gt(maxnorm), maxnorm / (norm + 1e-7), 1)
    return x * factor
end
require("tide.pointwise").with_inplace("renorm", renorm)

local COV_OPTIONS = { "correction", "fweights", "aweights" }

-- a weight vector of cov (fweights: integral counts; aweights: floats), 1-D of n values >= 0
local function cov_weights(name, w, n, integral)
    if w == nil then
        return nil
    end
    if not core.is_tensor(w) then
        raise(("tide: cov: %s must be a tensor, got %s"):format(name, type(w)))
    elseif w:dim() > 1 then
        raise(("tide: cov: %s must be 1-D, got %s"):format(name, shape_str(w:size())))
    elseif w:numel() ~= n then
        raise(("tide: cov: %s has %d values for %d observations (the columns)")
            :format(name, w:numel(), n))
    elseif (FLOAT[w.dtype] == nil) ~= integral then
        raise(("tide: cov: %s must be %s, got %s"):format(name,
            integral and "an integer tensor" or "a float tensor", w.dtype))
    elseif no_grad(function() return w:lt(0):any():item() end) then
        raise(("tide: cov: %s cannot be negative"):format(name))
    end
    return w:reshape(-1)
end

-- cov([{correction = 1, fweights =, aweights =}]): the covariance of the rows (variables) of a
-- 1-D or 2-D x, whose columns are observations, weighted by fweights (integer repeat counts)
-- and aweights (float importances), PyTorch's formula; a 0-D result for one variable
function Tensor.cov(x, opts, ...)
    args.no_extra("cov", 2, ...)
    check("cov", x)
    local o = args.options("cov", opts, COV_OPTIONS, "{correction = 0}")
    local correction = o.correction == nil and 1 or integer("cov", o.correction, "correction")
    if x:dim() > 2 then
        raise(("tide: cov: expected a 1-D or 2-D input, got %s"):format(shape_str(x:size())))
    end
    local v = x:dim() < 2 and x:reshape(1, -1) or x
    if not FLOAT[v.dtype] then
        v = v:to(core.get_default_dtype())
    end
    local n = v:size(2)
    local fw = cov_weights("fweights", o.fweights, n, true)
    local aw = cov_weights("aweights", o.aweights, n, false)
    local w = fw and fw:to(v.dtype)
    if aw then
        same_device("cov", v, aw)
        w = w and w * aw:to(v.dtype) or aw:to(v.dtype)
    end
    local c, norm
    if w then
        same_device("cov", v, w)
        local wsum = w:sum()
        c = v - ((v * w):sum(2, true) / wsum)
        if correction == 0 then
            norm = wsum
        elseif aw then
            norm = wsum - (w * aw:to(v.dtype)):sum() * correction / wsum
        else
            norm = wsum - correction
        end
        norm = norm:clamp(0, nil)
        c = c:matmul((c * w):t())
    else
        norm = math.max(n - correction, 0)
        c = v - v:mean(2, true)
        c = c:matmul(c:t())
    end
    local r = c / norm
    return (r:numel() == 1) and r:reshape({}) or r
end

-- corrcoef(): the Pearson correlations of cov(), clipped to [-1, 1]
function Tensor.corrcoef(x, ...)
    args.no_extra("corrcoef", 1, ...)
    check("corrcoef", x)
    local c = x:cov()
    if c:dim() == 0 then
        return c / c
    end
    local sd = c:diag():sqrt()
    c = c / sd:view(-1, 1)
    c = c / sd:view(1, -1)
    return c:clamp(-1, 1)
end

local TRAPEZOID_OPTIONS = { "dx", "dim" }

-- trapezoid's and cumulative_trapezoid's arguments: y, the sample points x (or nil), the
-- spacing dx, the dim and its size
local function trapezoid_args(op, y, x, opts)
    check(op, y)
    if type(x) == "table" and not core.is_tensor(x) and opts == nil then
        x, opts = nil, x
    end
    local o = args.options(op, opts, TRAPEZOID_OPTIONS, "{dx = 0.5}")
    if x ~= nil and o.dx ~= nil then
        raise(("tide: %s: give either x or dx, not both"):format(op))
    end
    local dx = o.dx == nil and 1 or o.dx
    if type(dx) ~= "number" then
        raise(("tide: %s: dx must be a number, got %s"):format(op, type(dx)))
    end
    if y:dim() == 0 then
        raise(("tide: %s: y must have at least one dim, got a 0-D tensor"):format(op))
    end
    local d = dim_of(op, y, o.dim == nil and -1 or o.dim)
    return y, x, dx, d, y:size(d)
end

-- tide.vander(x[, {N = #x, increasing = false}]): the Vandermonde matrix of the 1-D x, column
-- j x^(N - j) (x^(j - 1) with increasing), as PyTorch's: a cumulative product, which autograd
-- differentiates
function M.functions.vander(x, opts)
    check("vander", x)
    local o = args.options("vander", opts, { "N", "increasing" }, "{N = 3}")
    if x:dim() ~= 1 then
        raise(("tide: vander: x must be 1-D, got %s"):format(args.shape_str(x:size())))
    end
    local n = x:size(1)
    local N = o.N == nil and n or args.integer("vander", o.N, "N")
    if N < 0 then
        raise(("tide: vander: N must be >= 0, got %d"):format(N))
    end
    local dt = x.dtype == "bool" and "int64" or x.dtype
    if N == 0 then
        return core.empty({ n, 0 }, { dtype = dt, device = x.device })
    end
    local cols = x:to(dt):view(n, 1):expand(n, N - 1)
    local ones = core.ones({ n, 1 }, { dtype = dt, device = x.device })
    local v = core.cat({ ones, cols }, 2):cumprod(2)
    return o.increasing and v or v:flip(2)
end

-- tide.cumulative_trapezoid(y[, x][, {dx = 1, dim = -1}]): the running trapezoidal rule along
-- dim, one fewer element there (PyTorch's), with sample points x or spacing dx as trapezoid's
function M.functions.cumulative_trapezoid(y, x, opts)
    local op = "cumulative_trapezoid"
    local dx, d, n
    y, x, dx, d, n = trapezoid_args(op, y, x, opts)
    if not FLOAT[y.dtype] then
        y = y:to(core.get_default_dtype())
    end
    if n <= 1 then
        local shape = y:size()
        shape[d] = 0
        return core.zeros(shape, { dtype = y.dtype, device = y.device })
    end
    local mids = (y:narrow(d, 1, n - 1) + y:narrow(d, 2, n - 1)) * 0.5
    if x == nil then
        return (mids * dx):cumsum(d)
    end
    check(op, x, 2)
    same_device(op, y, x)
    local steps
    if x:dim() == 1 then
        if x:size(1) ~= n then
            raise(("tide: cumulative_trapezoid: x has %d points but dim %d of y has %d")
                :format(x:size(1), d, n))
        end
        local shape = {}
        for i = 1, y:dim() do
            shape[i] = i == d and n - 1 or 1
        end
        steps = (x:narrow(1, 2, n - 1) - x:narrow(1, 1, n - 1)):view(shape)
    else
        steps = x:narrow(d, 2, n - 1) - x:narrow(d, 1, n - 1)
    end
    return (mids * steps):cumsum(d)
end

-- tide.trapezoid(y[, x][, {dx = 1, dim = -1}]): the trapezoidal rule along dim, with sample
-- points x (a 1-D tensor of the dim's size, or one of y's shape) or spacing dx
function M.functions.trapezoid(y, x, opts)
    local dx, d, n
    y, x, dx, d, n = trapezoid_args("trapezoid", y, x, opts)
    if n == 0 then
        local shape = y:size()
        table.remove(shape, d)
        return core.zeros(shape, { dtype = FLOAT[y.dtype] and y.dtype or core.get_default_dtype(),
            device = y.device })
    end
    if x == nil then
        return (y:sum(d) - (y:select(d, 1) + y:select(d, n)) * 0.5) * dx
    end
    check("trapezoid", x, 2)
    same_device("trapezoid", y, x)
    local xs = x
    if x:dim() == 1 then
        if x:size(1) ~= n then
            raise(("tide: trapezoid: x has %d points but dim %d of y has %d")
                :format(x:size(1), d, n))
        end
        local shape = {}
        for i = 1, y:dim() do
            shape[i] = i == d and n or 1
        end
        xs = x:reshape(shape)
    end
    if xs:dim() ~= y:dim() then
        raise(("tide: trapezoid: x must be 1-D or have y's dims, got x %s and y %s")
            :format(shape_str(x:size()), shape_str(y:size())))
    end
    local dxs = xs:narrow(d, 2, n - 1) - xs:narrow(d, 1, n - 1)
    return (dxs * (y:narrow(d, 2, n - 1) + y:narrow(d, 1, n - 1))):sum(d) / 2
end

-- tide.trapz: PyTorch's older name of trapezoid (the same arguments; errors as trapz's)
function M.functions.trapz(y, x, opts)
    return args.as_op("trapz", "trapezoid", M.functions.trapezoid, y, x, opts)
end

M.names = { "kthvalue", "mode", "nanmedian", "quantile", "nanquantile", "msort", "aminmax",
    "var_mean", "std_mean", "dist", "renorm", "cov", "corrcoef", "trapezoid",
    "cumulative_trapezoid", "vander", "trapz" }
return M
