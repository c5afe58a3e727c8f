-- tide.reductions: the reductions of issue 13 written with existing ops (docs/API.md, "The wider
-- surface"): cumsum, cumprod, var, std, logsumexp, norm, any, all, allclose, equal. Each is a
-- Tensor method and a tide.X function. Composed from recorded ops, so they run on every device
-- and autograd differentiates them with no formula of their own (cumprod at zeros included).
-- Also PyTorch's forms of the core's sum, mean, prod (a list of dims, dtype =), softmax and
-- log_softmax (dtype), sort and argsort (stable): the kernel itself when none is given.
local core = require("tide.core")
local K = core._internal -- the kernel rows (include/tide_kernels.def)
local fp32_first = require("tide._autocast").fp32_first -- PyTorch's autocast float32 list
local autograd = require("tide.autograd")
local evenly = require("tide._evenly")
local raise = autograd.raise
local args = require("tide.op_args")
local no_grad = autograd.no_grad -- for results that are never differentiable (any, allclose)
-- sum, mean, ...: the kernel runs directly for the calls it takes (tide.tensor_keywords.front)
local front = require("tide.tensor_keywords").front

local Tensor = core.Tensor
local check, dim_of, float_input, in_float = args.check, args.dim_of, args.float_input,
    args.in_float

local M = {}

local INTEGRAL = { int32 = true, int64 = true, uint8 = true, bool = true, int8 = true, int16 = true }

-- Hillis-Steele scan along d: ceil(log2 n) steps of narrow, combine and cat (a loop over the n
-- slices would record n nodes and launch n kernels)
local function scan(x, d, combine)
    local n, s = x:size(d), 1
    while s < n do
        local tail = combine(x:narrow(d, s + 1, n - s), x:narrow(d, 1, n - s))
        x = core.cat({ x:narrow(d, 1, s), tail }, d)
        s = s * 2
    end
    return x
end

local DTYPE_OPTION = { "dtype" }

-- x converted to opts.dtype first when given (PyTorch's dtype= on the reductions), else x
-- PyTorch's dtypes tide lacks (tide.int16, ...: their names are defined), named by the op
local TIDE_DTYPES = { float32 = true, float64 = true, float16 = true, bfloat16 = true,
    int32 = true, int64 = true, uint8 = true, bool = true }

local function in_dtype(op, x, opts)
    local dtype = args.options(op, opts, DTYPE_OPTION, '{dtype = "float64"}').dtype
    if type(dtype) == "string" and not TIDE_DTYPES[dtype] then
        raise(("tide: %s: dtype %q is not one of tide's (float32, float64, float16, " ..
            "bfloat16, int32, int64, uint8, bool); for counts use {dtype = tide.int32} or " ..
            "tide.int64"):format(op, dtype))
    end
    return dtype ~= nil and x:to(dtype) or x
end

-- cumsum by the kernel row cumsum (include/tide_kernels.def), x (float32, float64, int32 or
-- int64, not empty) seen as [outer, len, inner] along d (row_scan): one node, whose gradient is
-- g's running sum from the end. nil where the device has no such kernel (the caller then scans)
local ROW_DTYPES = { float32 = true, float64 = true, int32 = true, int64 = true }

local function row_scan(name, x, d)
    local len, inner = x:size(d), 1
    for i = d + 1, x:dim() do
        inner = inner * x:size(i)
    end
    return K[name](x, len * inner, inner)
end

local function cumsum_row(x, d)
    if not ROW_DTYPES[x.dtype] or x:numel() == 0 then
        return nil
    end
    local rec = autograd.needs_record(x)
    local y = row_scan("cumsum", rec and x:detach() or x, d)
    if y and rec then
        autograd.record("cumsum", y, x, d)
    end
    return y
end

-- cumprod by the kernel row cumprod where no gradient is recorded (the recorded scan's ops give
-- PyTorch's gradient through zeros), same dtypes
local function cumprod_row(x, d)
    if not ROW_DTYPES[x.dtype] or x:numel() == 0 or autograd.needs_record(x) then
        return nil
    end
    return row_scan("cumprod", x, d)
end

autograd.def {
    name = "cumsum",
    backward = function(nd, g)
        local d = nd[2]
        return g:flip(d):cumsum(d):flip(d)
    end,
}

-- cumsum(dim[, {dtype =}]): with dtype, x converted first (PyTorch's dtype= keyword)
-- first(x): the scan's start from a float x (cumsum's x + 0: PyTorch's sum starts from +0, so
-- a running sum of -0.0s is 0.0); row(x, d): the op's kernel, or nil (then the scan)
local function cumulative(op, combine, first, row)
    return function(x, dim, opts, ...)
        if type(x) == "table" and require("tide.complex.tensor").is(x) then -- complex: its own
            return x[op](x, dim, opts, ...)
        end
        args.no_extra(op, 3, ...)
        check(op, x)
        if dim == nil then
            raise(("tide: %s: dim is required, as in x:%s(1)"):format(op, op))
        end
        local d = dim_of(op, x, dim)
        local given = type(opts) == "table" and opts.dtype ~= nil
        x = in_dtype(op, x, opts)
        -- integers and bools accumulate in int64, as PyTorch's; a dtype given is the result's
        -- (PyTorch's b.cumsum(0, dtype=torch.int32) is int32)
        local r = INTEGRAL[x.dtype] and x:to("int64") or x
        if x:dim() == 0 then
            r = INTEGRAL[x.dtype] and r or first(r)
        elseif row and x.dtype:find("^b?float16$") then -- in float32, rounded once at the end
            r = row(r:float(), d)
            r = r and r:to(x.dtype) or scan(first(x), d, combine)
        else
            r = row and row(r, d) or scan(INTEGRAL[x.dtype] and r or first(r), d, combine)
        end
        if given and r.dtype ~= x.dtype then
            r = r:to(x.dtype)
        end
        return r
    end
end

Tensor.cumsum = fp32_first(in_float(cumulative("cumsum", function(a, b) return a + b end,
    function(x) return x + 0 end, cumsum_row)))
Tensor.cumprod = fp32_first(in_float(cumulative("cumprod", function(a, b) return a * b end,
    function(x) return x:clone() end, cumprod_row)))

-- a dim argument (one dim or a list) as distinct positive dims, in descending order
local function dims_of(op, x, dim)
    local list, out, seen = type(dim) == "table" and args.check_list(op, dim, "dim") or { dim },
        {}, {}
    if x:dim() == 0 then -- dim 1 or -1 of a 0-d tensor is its one element's (PyTorch's): none
        for i = 1, #list do
            if list[i] ~= 1 and list[i] ~= -1 then
                dim_of(op, x, list[i])
            end
        end
        return out
    end
    for i = 1, #list do
        local d = dim_of(op, x, list[i])
        if seen[d] then
            raise(("tide: %s: dim %d appears twice in the dims"):format(op, d))
        end
        seen[d], out[#out + 1] = true, d
    end
    table.sort(out, function(a, b) return a > b end)
    return out
end

-- t reduced by method how (sum, max) over dims (descending), keeping them when keep
-- max and min over a dim, values only (x:max(dim)'s indices cost eight times the values)
local VALUES = { max = core._internal.max_values, min = core._internal.min_values }

local function over(t, dims, how, keep)
    local values = VALUES[how]
    if values and #dims == t:dim() and #dims > 1 then
        -- every dim: one reduction of all the elements (on the threads), shaped as asked
        local r = t[how](t)
        if not keep then
            return r
        end
        local ones = {}
        for d = 1, t:dim() do
            ones[d] = 1
        end
        return r:reshape(ones)
    end
    local lo, hi = dims[#dims], dims[1]
    if #dims > 1 and hi - lo + 1 == #dims and t:is_contiguous() then
        -- adjacent dims of a contiguous tensor (a CNN's global pool, x:mean({3, 4})): one
        -- reduction over their product (a view); dim by dim had written each partial result
        -- whole, 13x the time of the one pass
        local sizes, merged, n = t:size(), {}, 1
        for d = lo, hi do
            n = n * sizes[d]
        end
        for d = 1, lo - 1 do
            merged[#merged + 1] = sizes[d]
        end
        merged[#merged + 1] = n
        for d = hi + 1, #sizes do
            merged[#merged + 1] = sizes[d]
        end
        local flat = t:view(merged)
        local r = values and values(flat, lo, keep) or flat[how](flat, lo, keep)
        if not keep then
            return r
        end
        local shape = {}
        for d = 1, #sizes do
            shape[d] = (d >= lo and d <= hi) and 1 or sizes[d]
        end
        return r:view(shape)
    end
    for _, d in ipairs(dims) do
        t = values and values(t, d, true) or t[how](t, d, true)
    end
    if not keep then
        for _, d in ipairs(dims) do
            t = t:squeeze(d)
        end
    end
    return t
end

-- var's arguments in PyTorch 1.13's order: x:var(), x:var(unbiased) (a boolean first),
-- x:var(dim[, unbiased[, keepdim]]), and by name (tide.tensor_keywords) x:var({dim =, unbiased
-- =, keepdim =, correction =}), correction coming in the trailing options table. dim may be a
-- list of dims. var_form: the boolean-first form as (dim, unbiased, keepdim)
local function var_form(dim, unbiased, keepdim)
    if type(dim) == "boolean" and unbiased == nil and keepdim == nil then
        return nil, dim, nil
    end
    return dim, unbiased, keepdim
end
M.var_form = var_form -- std_mean's and var_mean's (tide.statistics)

local CORRECTION_OPTION = { "correction" }
local function var_args(op, x, dim, unbiased, keepdim, opts)
    dim, unbiased, keepdim = var_form(dim, unbiased, keepdim)
    opts = args.options(op, opts, CORRECTION_OPTION, "{correction = 0}")
    if unbiased ~= nil and type(unbiased) ~= "boolean" then
        raise(("tide: %s: unbiased must be a boolean, got %s"):format(op, type(unbiased)))
    end
    local correction = unbiased == false and 0 or 1
    if opts.correction ~= nil then
        if unbiased ~= nil then
            raise(("tide: %s: unbiased and correction given together; pass one (unbiased = " ..
                "false is correction = 0)"):format(op))
        end
        correction = args.integer(op, opts.correction, "correction")
    end
    if keepdim ~= nil and type(keepdim) ~= "boolean" then
        raise(("tide: %s: keepdim must be a boolean, got %s"):format(op, type(keepdim)))
    end
    local dims = dim ~= nil and dims_of(op, x, dim) or nil
    return (dims and #dims > 0) and dims or nil, keepdim == true, correction
end

-- the sum of squares s2 of dev (x less its mean, n values each) less (sum of dev)^2 / n: the
-- corrected two-pass form (Chan, Golub and LeVeque), which takes out the error of a mean rounded
-- to x's dtype (float32 values near 1e4: var off by 1e-5 relative, now 1e-8, PyTorch's
-- Welford's). The correction is detached (mathematically 0, it changes no gradient), at most
-- s2 (a constant row stays 0, never a rounded -1e-20 whose std is NaN), and 0 where it overflows
local function centered(dev, s2, n, dims, keep)
    local c = no_grad(function()
        local d = dev:detach()
        local s1 = dims and over(d, dims, "sum", keep) or d:sum()
        local c = core.minimum(s1 * s1 / math.max(n, 1), s2:detach())
        return core.where(c:isinf(), 0, c)
    end)
    return s2 - c
end

local function var(op, x, dim, unbiased, keepdim, opts)
    check(op, x)
    float_input(op, x)
    local dims, keep, correction = var_args(op, x, dim, unbiased, keepdim, opts)
    if not dims or x:dim() == 0 then
        local dev = x - x:mean()
        return centered(dev, (dev * dev):sum(), x:numel()) / math.max(x:numel() - correction, 0)
    end
    local n = 1
    for _, d in ipairs(dims) do
        n = n * x:size(d)
    end
    local dev = x - over(x, dims, "sum", true) / n
    return centered(dev, over(dev * dev, dims, "sum", keep), n, dims, keep) /
        math.max(n - correction, 0)
end

Tensor.var = in_float(function(x, dim, unbiased, keepdim, opts, ...)
    args.no_extra("var", 5, ...)
    return var("var", x, dim, unbiased, keepdim, opts)
end)

-- std's square root as one node: its gradient is 0 where std is 0, as PyTorch's std_backward
-- (sqrt's own would give inf * 0 = nan for a constant row)
autograd.def {
    name = "std_sqrt",
    reads = { "out" },
    backward = function(nd, g)
        local out = nd.out
        return core.where(out:eq(0), 0, g / (out * 2))
    end,
}

Tensor.std = in_float(function(x, dim, unbiased, keepdim, opts, ...)
    args.no_extra("std", 5, ...)
    local v = var("std", x, dim, unbiased, keepdim, opts)
    if not autograd.needs_record(v) then
        return v:sqrt()
    end
    local r = v:detach():sqrt()
    autograd.record("std_sqrt", r, v)
    return r
end)

local function keepdim_arg(op, keepdim)
    if keepdim ~= nil and type(keepdim) ~= "boolean" then
        raise(("tide: %s: keepdim must be a boolean, got %s"):format(op, type(keepdim)))
    end
    return keepdim == true
end

-- the reduction of x over dim (an integer, nil, or a list where lists), by the kernel
local function reduce_dims(op, kernel, lists, x, dim, keepdim)
    if type(dim) ~= "table" then
        return kernel(x, dim, keepdim)
    end
    if not lists then
        raise(("tide: %s: dim must be one integer, got a list; PyTorch's %s reduces one " ..
            "dim: call it once per dim, as x:%s(1):%s(1)"):format(op, op, op, op))
    end
    local keep = keepdim_arg(op, keepdim)
    local dims = dims_of(op, x, dim)
    if #dims == 0 then -- {}: every dim, as PyTorch 1.13's x.sum(())
        return kernel(x)
    end
    return over(x, dims, op, keep) -- descending, so the dims left keep their numbers
end

-- sum([dim[, keepdim[, {dtype =}]]]), mean, prod: the core's kernel, over every element or
-- one dim; PyTorch's dtype = converts x first, and for sum and mean dim may be a list of dims
-- (PyTorch's tuple: x:mean({3, 4}) pools an image batch globally), each reduced in turn by
-- the kernel, so the values and gradients are the kernel's on every device. A call with
-- neither is the kernel's own (its errors, its speed)
local function with_dims(op, lists)
    local kernel = Tensor[op]
    return function(x, dim, keepdim, opts, ...)
        if type(opts) ~= "table" and type(dim) ~= "table" then -- opts: the kernel's error
            return kernel(x, dim, keepdim, opts, ...)
        end
        args.no_extra(op, 4, ...)
        check(op, x)
        local given = type(opts) == "table" and opts.dtype ~= nil
        x = in_dtype(op, x, opts)
        local r = reduce_dims(op, kernel, lists, x, dim, keepdim)
        -- the kernel accumulates integers in int64; a dtype given is the result's, as PyTorch's
        -- (b.sum(-1, dtype=torch.int32) is int32: segment-anything's amg.py counts so)
        if given and r.dtype ~= x.dtype and INTEGRAL[x.dtype] then
            r = r:to(x.dtype)
        end
        return r
    end
end
-- (x, dim, keepdim): the kernel's own calls
Tensor.sum = front(with_dims("sum", true), Tensor.sum, 3)
Tensor.mean = front(with_dims("mean", true), Tensor.mean, 3)
Tensor.prod = front(with_dims("prod", false), Tensor.prod, 3)

-- softmax([dim = -1[, dtype]]), log_softmax: the core's, with PyTorch's dtype (x converted
-- first, as PyTorch's)
for _, op in ipairs({ "softmax", "log_softmax" }) do
    local kernel = Tensor[op]
    Tensor[op] = front(function(x, dim, dtype, ...)
        if dtype == nil then
            return kernel(x, dim, ...)
        end
        args.no_extra(op, 3, ...)
        check(op, x)
        return kernel(x:to(dtype), dim)
    end, kernel, 2)
end

-- sort([dim = -1[, descending[, stable]]]), argsort: the core's, which is stable on every
-- device (equal values keep their order, either direction), so PyTorch's stable = true is
-- what it does anyway; stable must be a boolean
for _, op in ipairs({ "sort", "argsort" }) do
    local kernel = Tensor[op]
    Tensor[op] = front(function(x, dim, descending, stable, ...)
        if stable == nil then
            return kernel(x, dim, descending, ...)
        end
        args.no_extra(op, 4, ...)
        if type(stable) ~= "boolean" then
            raise(("tide: %s: stable must be a boolean, got %s"):format(op, type(stable)))
        end
        return kernel(x, dim, descending)
    end, kernel, 3)
end

-- log(sum(exp(x))) shifted by the (detached) max, so large values do not overflow; a row of
-- -inf gives -inf, as PyTorch's
Tensor.logsumexp = fp32_first(in_float(function(x, dim, keepdim, ...)
    args.no_extra("logsumexp", 3, ...)
    check("logsumexp", x)
    if dim == nil then
        raise("tide: logsumexp: dim is required, as in x:logsumexp(2)")
    end
    local dims = dims_of("logsumexp", x, dim)
    local keep = keepdim_arg("logsumexp", keepdim)
    if INTEGRAL[x.dtype] then
        x = x:to(core.get_default_dtype())
    end
    if x:dim() == 0 then
        return x:clone()
    end
    if x:numel() == 0 then -- the log of an empty sum: -inf, as PyTorch's
        return over(x, dims, "sum", keep) - math.huge
    end
    local m = over(x:detach(), dims, "max", true)
    m = core.where(m:isinf(), 0, m)
    local r = over((x - m):exp(), dims, "sum", true):log() + m
    return keep and r or over(r, dims, "sum", false)
end))

-- the 2-norm as one node, recorded below (nd[2] its dims, descending, or false for all,
-- nd[3] keepdim): its gradient is x / ||x||, and 0 where the norm is 0 (PyTorch's subgradient;
-- sqrt's would give nan)
autograd.def {
    name = "norm",
    reads = { 1, "out" },
    backward = function(nd, g)
        local x, out, dims = nd[1], nd.out, nd[2]
        if dims and not nd[3] then
            for i = #dims, 1, -1 do -- ascending: each unsqueeze at its final place
                g, out = g:unsqueeze(dims[i]), out:unsqueeze(dims[i])
            end
        end
        return x / core.where(out:eq(0), 1, out) * g
    end,
}

-- the 2-norm over x's last dim alone by the row_norm2 kernel row (one pass; nil on a device
-- without it, or for other dims: the ops then)
local NORM2_ROW = { float32 = true, float64 = true, float16 = true, bfloat16 = true }
local function last_dim_norm2(x, dims, keep)
    local nd = x:dim()
    if not (dims and #dims == 1 and dims[1] == nd and NORM2_ROW[x.dtype]) or x:numel() == 0 then
        return nil
    end
    local r = core._internal.row_norm2(x, x:size(nd))
    if not r then
        return nil
    end
    local s = x:size()
    if keep then
        s[nd] = 1
    else
        s[nd] = nil
    end
    return r:view(s)
end

-- norm([p[, dim[, keepdim[, dtype]]]]): p a number (math.huge and -math.huge included), "fro"
-- or "nuc" (linalg.matrix_norm's, over the two dims given or a matrix's); dim one dim or a list (PyTorch's vector norm over them; nil: every element); dtype
-- converts x first, as PyTorch's
Tensor.norm = fp32_first(in_float(function(x, p, dim, keepdim, dtype, ...)
    args.no_extra("norm", 5, ...)
    check("norm", x)
    if dtype ~= nil then
        x = x:to(dtype)
    end
    float_input("norm", x)
    if p == "nuc" then -- the nuclear norm of the matrices over two dims (the last two)
        local mdims = dim == nil and { -2, -1 } or dims_of("norm", x, dim)
        if #mdims ~= 2 or (dim == nil and x:dim() ~= 2) then
            raise(("tide: norm: p = \"nuc\" needs a matrix or two dims, got %s; pass two dims " ..
                "(x:norm(\"nuc\", {1, 2}))"):format(dim == nil and (x:dim() .. "-D input") or
                (#mdims .. " dims")))
        end
        return require("tide.linalg").matrix_norm(x, { ord = "nuc", dim = mdims,
            keepdim = keepdim_arg("norm", keepdim) })
    elseif p == nil or p == "fro" then
        p = 2
    elseif type(p) ~= "number" then
        raise(("tide: norm: p must be a number, \"fro\" or \"nuc\", got %s"):format(
            type(p) == "string" and ("%q"):format(p) or type(p)))
    end
    local dims = dim ~= nil and dims_of("norm", x, dim) or nil
    if dims and #dims == 0 then -- {}: every element
        dims = nil
    end
    local keep = keepdim_arg("norm", keepdim)
    if dims and x:dim() == 0 then
        dims = nil -- a 0-D tensor's one "dim" reduces nothing
    end
    local function reduce(t, how)
        if not dims then
            return t[how](t)
        elseif how ~= "sum" then -- amax, amin: all the dims at once (ties split evenly)
            return t[how](t, dims, keep)
        end
        return over(t, dims, how, keep)
    end
    if p == math.huge then
        return reduce(x:abs(), "amax")
    elseif p == -math.huge then
        return reduce(x:abs(), "amin")
    elseif p == 0 then
        local r = reduce(x:ne(0):to(x.dtype), "sum")
        if autograd.needs_record(x) then -- a count: its gradient is 0, as PyTorch's (no error)
            local all = core.ones(x:size(), { dtype = "bool", device = x.device })
            r = r + reduce(x:masked_fill(all, 0), "sum")
        end
        return r
    elseif p == 1 then
        return reduce(x:abs(), "sum")
    elseif p == 2 then
        -- one node with its own formula: sqrt's gradient at a zero norm would give nan
        if not autograd.needs_record(x) then
            return last_dim_norm2(x, dims, keep) or reduce(x * x, "sum"):sqrt()
        end
        local xd = x:detach()
        local r = last_dim_norm2(xd, dims, keep) or reduce(xd * xd, "sum"):sqrt()
        autograd.record("norm", r, x, dims or false, keep)
        return r
    end
    -- any other p: linalg.vector_norm's, whose gradient is 0 at a zero vector (PyTorch's)
    return require("tide.linalg").vector_norm(x, { ord = p, dim = dims, keepdim = keep })
end))

-- any/all([dim[, keepdim]]): bool results (uint8 for uint8 input, as PyTorch 1.13)
local function logical_reduce(op, count_of)
    return function(x, dim, keepdim, ...)
        args.no_extra(op, 3, ...)
        check(op, x)
        local keep = keepdim_arg(op, keepdim)
        local d = dim ~= nil and dim_of(op, x, dim) or nil
        local r = no_grad(function()
            local c = count_of(x)
            local s = d and c:sum(d, keep) or c:sum()
            return s:eq(0)
        end)
        if op == "any" then
            r = r:logical_not()
        end
        return x.dtype == "uint8" and r:to("uint8") or r
    end
end

Tensor.any = logical_reduce("any", function(x) return x:ne(0) end)
Tensor.all = logical_reduce("all", function(x) return x:eq(0) end)

-- allclose(other[, rtol[, atol[, equal_nan]]]) or allclose(other, {rtol =, atol =, equal_nan =}):
-- isclose everywhere (as PyTorch: same dtype, broadcasting; tide.pointwise.close)
function Tensor.allclose(x, other, rtol, atol, equal_nan, ...)
    args.no_extra("allclose", 5, ...)
    local close = require("tide.pointwise").close("allclose", x, other, rtol, atol, equal_nan)
    return no_grad(function()
        return close:logical_not():sum():item() == 0
    end)
end

-- equal(other): true when the shapes and every element are the same
function Tensor.equal(x, other, ...)
    args.no_extra("equal", 2, ...)
    check("equal", x)
    check("equal", other, 2)
    require("tide._same_device")("equal", x, other) -- named so, not by the ne inside
    if not args.same_shape(x:size(), other:size()) then
        return false
    end
    return no_grad(function()
        return x:ne(other):sum():item() == 0
    end)
end

-- amax and amin as one node each: the values of max / min over the dims, and a gradient split
-- evenly between the elements that tie for it (PyTorch's), where max over a dim picks one
for _, how in ipairs({ "max", "min" }) do
    local name = "a" .. how
    autograd.def {
        name = name,
        reads = { 1, "out" },
        backward = function(nd, g)
            local x, out, dims = nd[1], nd.out, nd[2]
            if not nd[3] then -- keepdim false: the reduced dims back, as size 1
                for i = #dims, 1, -1 do -- ascending: each unsqueeze at its final place
                    g, out = g:unsqueeze(dims[i]), out:unsqueeze(dims[i])
                end
            end
            local hit = x:eq(out)
            -- where: 0 off the ties even where g is NaN, as PyTorch
            return core.where(hit, g / over(hit:to(g.dtype), dims, "sum", true), 0)
        end,
    }
    -- amax([dim[, keepdim]]): dim one dim or a list; every dim when nil or {}
    Tensor[name] = function(x, dim, keepdim, ...)
        args.no_extra(name, 3, ...)
        check(name, x)
        local keep = keepdim_arg(name, keepdim)
        local dims = dim ~= nil and dims_of(name, x, dim) or {}
        if #dims == 0 then
            for d = x:dim(), 1, -1 do
                dims[#dims + 1] = d
            end
        end
        for _, d in ipairs(dims) do
            if x:size(d) == 0 then
                raise(("tide: %s: dim %d has size 0, and the %s of nothing is undefined")
                    :format(name, d, how))
            end
        end
        if x:dim() == 0 then
            return x:clone()
        end
        local r = no_grad(function()
            return over(x, dims, how, keep)
        end)
        if autograd.needs_record(x) then
            autograd.record(name, r, x, dims, keep)
        end
        return r
    end
end

-- count_nonzero([dim]): the int64 count of elements that are not 0 (over a dim or a list)
function Tensor.count_nonzero(x, dim, ...)
    args.no_extra("count_nonzero", 2, ...)
    check("count_nonzero", x)
    local dims = dim ~= nil and dims_of("count_nonzero", x, dim) or nil
    if dims and #dims == 0 then -- {}: every dim, as PyTorch 1.13's x.count_nonzero(())
        dims = nil
    end
    return no_grad(function()
        local nz = x:ne(0):to("int64")
        return dims and over(nz, dims, "sum", false) or nz:sum()
    end)
end

-- median([dim[, keepdim]]): the lower median (of an even count, the smaller middle value), as
-- PyTorch's; over a dim also its 1-based index (of a stable sort: among equal values, the one a
-- stable sort puts there); NaN when the values hold one (the index of the first). The value is
-- gathered from x, so the gradient reaches that element
function Tensor.median(x, dim, keepdim, ...)
    args.no_extra("median", 3, ...)
    check("median", x)
    local keep = keepdim_arg("median", keepdim)
    local flat = dim == nil
    if x:dim() == 0 then -- itself, and index 1 over its one "dim"
        return x:clone(), (not flat) and core.ones({}, { dtype = "int64", device = x.device })
            or nil
    end
    local t, d = x, 1
    if flat then
        t = x:reshape(-1)
    else
        d = dim_of("median", x, dim)
    end
    local n = t:size(d)
    if n == 0 and flat and x.dtype:find("^float") then -- of no element at all: NaN, PyTorch's
        return core.full({}, 0 / 0, { dtype = x.dtype, device = x.device })
    elseif n == 0 then
        raise(("tide: median: dim %d has size 0, and the median of nothing is undefined")
            :format(d))
    end
    local idx = select(2, core._kthvalue(t, 0, d))
    if flat then -- ties share the gradient (tide._evenly)
        return evenly(x, t:detach():gather(d, idx):reshape({}))
    end
    local v = t:gather(d, idx)
    if not keep then
        v, idx = v:squeeze(d), idx:squeeze(d)
    end
    return v, idx
end

-- nansum([dim[, keepdim[, {dtype =}]]]), nanmean: the sum and mean of the values that are not
-- NaN (a mean of none is NaN, as PyTorch's); dim one dim or a list; dtype converts x first
local function nan_reduce(op, mean)
    return function(x, dim, keepdim, opts, ...)
        args.no_extra(op, 4, ...)
        check(op, x)
        x = in_dtype(op, x, opts)
        local keep = keepdim_arg(op, keepdim)
        local dims = dim ~= nil and dims_of(op, x, dim) or nil
        if dims and #dims == 0 then -- {}: every dim, as PyTorch 1.13's x.nansum(())
            dims = nil
        end
        if not mean and INTEGRAL[x.dtype] then -- no NaN to skip: PyTorch's nansum is sum
            return dims and over(x, dims, "sum", keep) or x:sum()
        end
        float_input(op, x)
        local nan = x:isnan()
        local v = core.where(nan, 0, x)
        local s = dims and over(v, dims, "sum", keep) or v:sum()
        if not mean then
            return s
        end
        local n = no_grad(function()
            local ok = nan:logical_not():to(x.dtype)
            return dims and over(ok, dims, "sum", keep) or ok:sum()
        end)
        return s / n
    end
end
Tensor.nansum = nan_reduce("nansum", false)
Tensor.nanmean = nan_reduce("nanmean", true)

-- trace(): the sum of a 2-D tensor's main diagonal
function Tensor.trace(x, ...)
    args.no_extra("trace", 1, ...)
    check("trace", x)
    if x:dim() ~= 2 then
        raise(("tide: trace: needs a 2-D tensor, got %d-D"):format(x:dim()))
    end
    return x:diag():sum()
end

-- diff([n = 1[, dim = -1[, {prepend =, append =}]]]): the n-th forward difference along dim
-- (prepend and append joined on first); bool tensors give their xor, as PyTorch's
function Tensor.diff(x, n, dim, opts, ...)
    args.no_extra("diff", 4, ...)
    check("diff", x)
    n = n == nil and 1 or args.integer("diff", n, "n")
    if n < 0 then
        raise(("tide: diff: n must be >= 0, got %d"):format(n))
    end
    local d = dim_of("diff", x, dim == nil and -1 or dim)
    local o = args.options("diff", opts, { "prepend", "append" }, "{prepend = t}")
    local parts = {}
    for _, t in ipairs({ o.prepend or false, x, o.append or false }) do
        if t then
            check("diff", t)
            parts[#parts + 1] = t
        end
    end
    if #parts > 1 then
        x = core.cat(parts, d)
    end
    for _ = 1, n do
        local len = x:size(d)
        if len == 0 then
            break
        end
        local a, b = x:narrow(d, 2, len - 1), x:narrow(d, 1, len - 1)
        x = x.dtype == "bool" and a:logical_xor(b) or a - b
    end
    return x
end

M.names = { "cumsum", "cumprod", "var", "std", "logsumexp", "norm", "any", "all", "allclose",
    "equal", "amax", "amin", "count_nonzero", "median", "nansum", "nanmean", "trace", "diff",
    "sum", "mean", "prod", "softmax", "log_softmax", "sort", "argsort" }
return M
