-- tide.searching: searches in sorted values and counts by PyTorch's names (docs/API.md, "The op
-- list"): searchsorted, bucketize, isin, bincount, histc, unique_consecutive. 1-based, as
-- tide's indices:
-- searchsorted and bucketize give PyTorch's insertion position plus one (the index of the first
-- element >= v, or > v with right; n + 1 past the end), so that gathering at it reads the
-- element PyTorch's index reads; bincount counts value v at index v (values from 1, as
-- one_hot's classes). The search is the searchsorted kernel row (include/tide_kernels.def), a
-- binary search per value, on the devices that have it; elsewhere a binary search run on every
-- value at once by tensor ops (log2 n rounds of gather and compare). tide.X functions.
local core = require("tide.core")
local autograd = require("tide.autograd")
local raise = autograd.raise
local args = require("tide.op_args")
local same_device = require("tide._same_device")
local compat_unpack = require("tide._compat").unpack

local check, shape_str, dim_of = args.check, args.shape_str, args.dim_of
local Tensor = core.Tensor
local no_grad = autograd.no_grad
local FLOAT = args.FLOAT

local M = { functions = {} }
local F = M.functions

local not_differentiable = args.not_differentiable

-- the dtypes of the searchsorted row (no bool, no complex)
local SEARCH_ROW = { float32 = true, float64 = true, float16 = true, bfloat16 = true,
    int32 = true, int64 = true, uint8 = true }

-- the count of elements of each row of seq ([..., n], sorted ascending) before v's insertion
-- point ([..., k], the same leading dims; 1-D seq: any v, flattened): PyTorch's lower bound
-- (the first element e with not (e < v), written not (e >= v) as PyTorch's so that NaN sorts
-- last), or upper bound with right (the first e > v)
local function insertion(seq, v, right)
    local n = seq:size(-1)
    if n > 0 and v:numel() > 0 and v:dim() > 0 then
        local dt = seq.dtype == v.dtype and seq.dtype
            or require("tide.dtype_queries").functions.promote_types(seq.dtype, v.dtype)
        -- (nil from a device without the row)
        local pos = SEARCH_ROW[dt] and core._internal.searchsorted(v:to(dt), seq:to(dt),
            v:size(-1), n, right)
        if pos then
            return pos
        end
    end
    local lo = core.zeros(v:size(), { dtype = "int64", device = v.device })
    local hi = core.full(v:size(), n, { dtype = "int64", device = v.device })
    if n == 0 then
        return lo
    end
    local rounds, span = 0, n
    while span > 0 do
        rounds, span = rounds + 1, math.floor(span / 2)
    end
    for _ = 1, rounds do
        local active = lo:lt(hi)
        local mid = (lo + hi):floor_divide(2)
        local e = seq:gather(-1, mid:clamp(0, n - 1) + 1)
        local go_right = right and e:gt(v):logical_not() or e:ge(v):logical_not()
        lo = core.where(active:logical_and(go_right), mid + 1, lo)
        hi = core.where(active:logical_and(go_right:logical_not()), mid, hi)
    end
    return lo
end

local SEARCH_OPTIONS = { "right", "side", "out_int32", "sorter" }

-- tide.searchsorted(sorted_sequence, values[, {right = false, side = "left", out_int32 =
-- false, sorter =}]): for each value, the 1-based index of the first element of its row of
-- sorted_sequence that is >= it (> it with right or side = "right"), n + 1 when none; values a
-- tensor (the same leading dims as a sorted_sequence of more than 1 dim) or a number (a 0-D
-- result); sorter: the 1-based order that sorts each row (argsort's)
function F.searchsorted(seq, values, opts)
    check("searchsorted", seq)
    local o = args.options("searchsorted", opts, SEARCH_OPTIONS, "{right = true}")
    local right = o.right == true
    if o.side ~= nil then
        if o.side ~= "left" and o.side ~= "right" then
            raise(("tide: searchsorted: side must be \"left\" or \"right\", got %s")
                :format(tostring(o.side)))
        end
        if o.right ~= nil and right ~= (o.side == "right") then
            raise("tide: searchsorted: side = \"left\" and right = true contradict each other")
        end
        right = o.side == "right"
    end
    if seq:dim() == 0 then
        raise("tide: searchsorted: sorted_sequence must have at least one dim, got a 0-D tensor")
    end
    same_device("searchsorted", seq, values, o.sorter)
    local scalar = type(values) == "number"
    if scalar then
        values = core.full({}, values, { dtype = seq.dtype, device = seq.device })
    elseif not core.is_tensor(values) then
        raise(("tide: searchsorted: values must be a tensor or a number, got %s")
            :format(type(values)))
    end
    if o.sorter ~= nil then
        check("searchsorted", o.sorter, 3)
        if not args.same_shape(o.sorter:size(), seq:size()) then
            raise(("tide: searchsorted: sorter %s must have sorted_sequence's shape %s")
                :format(shape_str(o.sorter:size()), shape_str(seq:size())))
        end
        seq = no_grad(function() return seq:gather(-1, o.sorter) end)
    end
    local shape = values:size()
    if seq:dim() > 1 then
        local ok = values:dim() == seq:dim()
        for i = 1, seq:dim() - 1 do
            ok = ok and values:size(i) == seq:size(i)
        end
        if not ok then
            raise(("tide: searchsorted: sorted_sequence %s and values %s must have the same " ..
                "dims but the last (or sorted_sequence 1-D)"):format(shape_str(seq:size()),
                shape_str(values:size())))
        end
    end
    local r = no_grad(function()
        local v = seq:dim() == 1 and values:reshape(-1) or values
        return (insertion(seq, v, right) + 1):reshape(shape)
    end)
    return o.out_int32 and r:to("int32") or r
end

local BUCKET_OPTIONS = { "right", "out_int32" }

-- tide.bucketize(input, boundaries[, {right = false, out_int32 = false}]): the 1-based bucket
-- of each element among the sorted 1-D boundaries: 1 below the first, n + 1 above the last
-- (searchsorted(boundaries, input))
function F.bucketize(input, boundaries, opts)
    check("bucketize", boundaries, 2)
    local o = args.options("bucketize", opts, BUCKET_OPTIONS, "{right = true}")
    if boundaries:dim() ~= 1 then
        raise(("tide: bucketize: boundaries must be 1-D, got %s")
            :format(shape_str(boundaries:size())))
    end
    if type(input) ~= "number" then
        check("bucketize", input)
    end
    same_device("bucketize", input, boundaries)
    return F.searchsorted(boundaries, input, { right = o.right, out_int32 = o.out_int32 })
end

local ISIN_OPTIONS = { "assume_unique", "invert" }

-- tide.isin(elements, test_elements[, {invert = false}]): bool, true where an element is
-- among test_elements (either may be a number); NaN is in nothing
function F.isin(elements, test, opts)
    local o = args.options("isin", opts, ISIN_OPTIONS, "{invert = true}")
    if type(elements) == "number" and type(test) == "number" then
        raise("tide: isin: elements and test_elements cannot both be numbers; make one a tensor")
    end
    if type(elements) ~= "number" then
        check("isin", elements)
    end
    if type(test) ~= "number" then
        check("isin", test, 2)
    end
    same_device("isin", elements, test)
    local like = core.is_tensor(elements) and elements or test
    return no_grad(function()
        local e = type(elements) == "number" and
            core.full({}, elements, { dtype = like.dtype, device = like.device }) or elements
        local t = type(test) == "number" and
            core.full({ 1 }, test, { dtype = like.dtype, device = like.device }) or test
        local s = t:reshape(-1):sort()
        local n = s:numel()
        if args.FLOAT[s.dtype] then -- NaN (sorted last) matches nothing: dropped, so that the
            n = n - s:isnan():sum():item() -- binary search sees ordered values only
            s = s:narrow(1, 1, n)
        end
        local r
        if n == 0 then
            r = core.zeros(e:size(), { dtype = "bool", device = e.device })
        else
            local flat = e:reshape(-1)
            local at = insertion(s, flat, false)
            local hit = s:gather(1, at:clamp(0, n - 1) + 1):eq(flat):logical_and(at:lt(n))
            r = hit:reshape(e:size())
        end
        return o.invert and r:logical_not() or r
    end)
end

local BINCOUNT_OPTIONS = { "weights", "minlength" }

-- tide.bincount(input[, {weights =, minlength = 0}]) (or PyTorch's positional (input,
-- weights[, minlength])): counts[v] = how many elements of the 1-D
-- integer input are v (values >= 1; 1-based, as one_hot's classes), of length max(largest
-- value, minlength); with weights, their sums (float32 weights sum in float32, others in
-- float64, as PyTorch's; an empty input: int64 zeros, as PyTorch's); no gradient
function F.bincount(input, opts, minlength_arg, ...)
    args.no_extra("bincount", 3, ...)
    check("bincount", input)
    if core.is_tensor(opts) or opts == nil and minlength_arg ~= nil then
        -- PyTorch's positional bincount(input, weights[, minlength])
        opts = { weights = opts, minlength = minlength_arg }
    elseif minlength_arg ~= nil then
        args.no_extra("bincount", 2, minlength_arg)
    end
    local o = args.options("bincount", opts, BINCOUNT_OPTIONS, "{minlength = 10}")
    local minlength = args.int_option("bincount", o, "minlength", 0, 0)
    if input:dim() ~= 1 or FLOAT[input.dtype] or input.dtype == "bool" then
        raise(("tide: bincount: input must be a 1-D integer tensor, got %s %s")
            :format(input.dtype, shape_str(input:size())))
    end
    local w = o.weights
    if w ~= nil then
        check("bincount", w, 2)
        if not args.same_shape(w:size(), input:size()) then
            raise(("tide: bincount: weights %s must have input's shape %s")
                :format(shape_str(w:size()), shape_str(input:size())))
        end
    end
    same_device("bincount", input, w)
    not_differentiable("bincount", input, w)
    local lo, hi = no_grad(function()
        if input:numel() == 0 then
            return 1, 0
        end
        return input:min():item(), input:max():item()
    end)
    if lo < 1 then
        raise(("tide: bincount: values must be >= 1 (value v is counted at index v, " ..
            "1-based), got %d; add 1 to 0-based values"):format(lo))
    end
    local n = math.max(hi, minlength)
    args.check_budget("bincount", n, 8, ("%d counts"):format(n),
        "check the largest value of input")
    return no_grad(function()
        -- an empty input gives int64 zeros even with weights, as PyTorch's
        local dtype = (w == nil or input:numel() == 0) and "int64" or
            (w.dtype == "float32" and "float32" or "float64")
        local out = core.zeros({ n }, { dtype = dtype, device = input.device })
        if input:numel() == 0 then
            return out
        end
        local add = w == nil and core.ones({ input:numel() }, { dtype = dtype,
            device = input.device }) or w:to(dtype)
        return out:index_add_(1, input:to("int64"), add)
    end)
end

local HISTC_OPTIONS = { "bins", "min", "max" }

-- tide.histc(input[, {bins = 100, min = 0, max = 0}]) or PyTorch's positional (input, bins[,
-- min[, max]]) (also input:histc(...)): the counts of
-- input's elements in bins equal-width bins between min and max (the data's own when min ==
-- max; widened by 1 each way when still equal); elements outside and NaNs are left out, max
-- falls in the last bin; floats only, in input's dtype, no gradient
function F.histc(input, opts, lo_arg, hi_arg, ...)
    args.no_extra("histc", 4, ...)
    check("histc", input)
    if type(opts) == "number" or opts == nil and (lo_arg ~= nil or hi_arg ~= nil) then
        -- PyTorch's positional histc(input, bins[, min[, max]])
        opts = { bins = opts, min = lo_arg, max = hi_arg }
    elseif lo_arg ~= nil or hi_arg ~= nil then
        args.no_extra("histc", 2, lo_arg, hi_arg)
    end
    local o = args.options("histc", opts, HISTC_OPTIONS, "{bins = 10}")
    local bins = args.int_option("histc", o, "bins", 100, 1)
    local lo, hi = o.min or 0, o.max or 0
    if type(lo) ~= "number" or type(hi) ~= "number" then
        raise("tide: histc: min and max must be numbers")
    end
    args.float_input("histc", input)
    not_differentiable("histc", input)
    if lo > hi then
        raise(("tide: histc: max must be larger than min, got min = %s and max = %s")
            :format(tostring(lo), tostring(hi)))
    end
    return no_grad(function()
        local flat = input:reshape(-1)
        if lo == hi and flat:numel() > 0 then
            lo, hi = flat:min():item(), flat:max():item()
        end
        if lo == hi then
            lo, hi = lo - 1, hi + 1
        end
        if lo ~= lo or hi ~= hi or lo == -math.huge or hi == math.huge then
            raise(("tide: histc: range of [%s, %s] is not finite"):format(tostring(lo),
                tostring(hi)))
        end
        local out = core.zeros({ bins }, { dtype = input.dtype, device = input.device })
        local keep = flat:ge(lo):logical_and(flat:le(hi))
        local v = flat:masked_select(keep)
        if v:numel() == 0 then
            return out
        end
        -- PyTorch's bin: (v - min) * bins / (max - min), truncated; max itself in the last bin
        local pos = ((v - lo) * bins / (hi - lo)):to("int64"):clamp(0, bins - 1)
        return out:index_add_(1, pos + 1, core.ones({ v:numel() }, { dtype = input.dtype,
            device = input.device }))
    end)
end
core.Tensor.histc = function(x, ...)
    return F.histc(x, ...)
end

-- unique_consecutive([{return_inverse = false, return_counts = false, dim =}]): each run of equal
-- consecutive elements (flattened) or slices along dim kept once, as PyTorch's; then, when
-- asked, the 1-based inverse (the input's shape; [size of dim] with dim) and the runs' counts,
-- int64. A NaN is its own run. Not differentiable (raises while recording, as PyTorch's
-- backward does).
local UNIQUE_CONSECUTIVE = { "return_inverse", "return_counts", "dim" }

function Tensor.unique_consecutive(x, opts, ...)
    local op = "unique_consecutive"
    args.no_extra(op, 2, ...)
    check(op, x)
    local o = args.options(op, opts, UNIQUE_CONSECUTIVE, "{return_counts = true}")
    args.not_differentiable(op, x)
    local rows, d
    if o.dim ~= nil then
        d = dim_of(op, x, o.dim)
        rows = x:movedim(d, 1)
        local inner = 1 -- not -1: a dim of size 0 leaves -1 undetermined
        for i = 2, rows:dim() do
            inner = inner * rows:size(i)
        end
        rows = rows:reshape(rows:size(1), inner)
    else
        rows = x:reshape(-1, 1)
    end
    local m = rows:size(1)
    local keep
    if m == 0 then
        keep = core.zeros({ 0 }, { dtype = "bool", device = x.device })
    else
        local first = core.ones({ 1 }, { dtype = "bool", device = x.device })
        local change = rows:narrow(1, 2, m - 1):ne(rows:narrow(1, 1, m - 1))
        if rows:size(2) > 0 then
            change = change:any(2)
        else
            change = change:sum(2):gt(0) -- slices of no elements are all equal
        end
        keep = core.cat({ first, change }, 1)
    end
    local starts = keep:nonzero():reshape(-1) -- 1-based
    local values
    if d then
        values = x:movedim(d, 1):index_select(1, starts):movedim(1, d)
    else
        values = x:reshape(-1):index_select(1, starts)
    end
    local out = { values }
    if o.return_inverse then
        local inv = keep:long():cumsum(1)
        out[#out + 1] = d and inv or inv:view(x:size())
    end
    if o.return_counts and m == 0 then -- no runs (narrow cannot start past an empty dim)
        out[#out + 1] = core.zeros({ 0 }, { dtype = "int64", device = x.device })
    elseif o.return_counts then
        local ends = core.cat({ starts:narrow(1, 2, starts:numel() - 1),
            core.full({ 1 }, m + 1, { dtype = "int64", device = x.device }) }, 1)
        out[#out + 1] = ends - starts
    end
    return compat_unpack(out, 1, #out)
end
M.functions.unique_consecutive = Tensor.unique_consecutive

M.names = { "searchsorted", "bucketize", "isin", "bincount", "histc", "unique_consecutive" }
return M
