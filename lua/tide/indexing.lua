-- tide.indexing: reads and writes by index by PyTorch's names (docs/API.md, "The op list"):
-- take, take_along_dim, index_fill, index_copy, index_add (out of place; index_add_ is the
-- core's, its alpha tide.keyword_options'), masked_scatter, argwhere, scatter_reduce,
-- fill_diagonal_, select_scatter, slice_scatter, diagonal_scatter, with in-place twins where
-- PyTorch has them. Loaded on first use (lua/tide/_lazy_ops.lua). Indices are 1-based, as
-- gather's. Written with gather, index_select, index_add_, scatter_add, masked_fill and where,
-- whose gradients are PyTorch's for these ops; scatter_reduce's prod, amax and amin are one
-- node with PyTorch's formulas. Tensor methods, and tide.X functions.
local core = require("tide.core")
local autograd = require("tide.autograd")
local raise = autograd.raise
local args = require("tide.op_args")
local same_device = require("tide._same_device")
local with_inplace = require("tide.pointwise").with_inplace

local Tensor = core.Tensor
local check, dim_of, shape_str = args.check, args.dim_of, args.shape_str
local no_grad = autograd.no_grad
local FLOAT = args.FLOAT

local M = { functions = {} }

local function index_tensor(op, index, pos)
    check(op, index, pos)
    if index.dtype ~= "int64" and index.dtype ~= "int32" then
        raise(("tide: %s: index must be an int64 or int32 tensor, got %s"):format(op,
            index.dtype))
    end
end

-- take(index): the elements of x flattened, at the 1-based positions of index (-n..-1 from
-- the end, as PyTorch's), in its shape
function Tensor.take(x, index, ...)
    args.no_extra("take", 2, ...)
    check("take", x)
    index_tensor("take", index, 2)
    same_device("take", x, index)
    local i, n = index:reshape(-1), x:numel()
    if i:numel() > 0 then
        local lo, hi = no_grad(function() return i:min():item(), i:max():item() end)
        if lo < -n or hi > n or (lo <= 0 and i:eq(0):any():item()) then
            local bad = lo < -n and lo or (hi > n and hi or 0)
            raise(("tide: take: index %d is out of range for %d elements; use 1..%d or -%d..-1")
                :format(bad, n, n, n))
        end
        if lo < 0 then
            i = core.where(i:lt(0), i + (n + 1), i)
        end
    end
    return x:reshape(-1):index_select(1, i):reshape(index:size())
end

-- take_along_dim(indices[, dim]): gather along dim, x and indices broadcast to each other in
-- the other dims; without dim, take of the flattened x (a 1-D result)
function Tensor.take_along_dim(x, index, dim, ...)
    args.no_extra("take_along_dim", 3, ...)
    check("take_along_dim", x)
    index_tensor("take_along_dim", index, 2)
    same_device("take_along_dim", x, index)
    if dim == nil then
        return x:reshape(-1):index_select(1, index:reshape(-1))
    end
    local d = dim_of("take_along_dim", x, dim)
    if x:dim() ~= index:dim() then
        raise(("tide: take_along_dim: input %s and indices %s must have the same number of " ..
            "dims"):format(shape_str(x:size()), shape_str(index:size())))
    end
    local sx, si = x:size(), index:size()
    for i = 1, #sx do
        if i ~= d then
            local a, b = sx[i], si[i]
            if a ~= b and a ~= 1 and b ~= 1 then
                raise(("tide: take_along_dim: input %s and indices %s do not broadcast (dim " ..
                    "%d: %d and %d)"):format(shape_str(sx), shape_str(si), i, a, b))
            end
            local m = a == 1 and b or a
            sx[i], si[i] = m, m
        end
    end
    return x:expand(sx):gather(d, index:expand(si))
end

-- the bool mask, shaped to broadcast against x, of the slices of dim d that index names
local function slices(op, x, d, index)
    index_tensor(op, index, 3)
    same_device(op, x, index)
    if index:dim() > 1 then
        raise(("tide: %s: index must be 0-D or 1-D, got %s"):format(op, shape_str(index:size())))
    end
    return no_grad(function()
        local n = x:dim() == 0 and 1 or x:size(d) -- a 0-D x: one slice, index 1
        -- (an index out of range raises naming op, not the index_add_ it is counted by)
        local hit = args.as_op(op, "index_add_", function()
            return core.zeros({ n }, { dtype = "int64", device = x.device }):index_add_(1,
                index:reshape(-1):to("int64"), core.ones({ index:numel() },
                    { dtype = "int64", device = x.device }))
        end):gt(0)
        local shape = {}
        for i = 1, x:dim() do
            shape[i] = i == d and n or 1
        end
        return x:dim() == 0 and hit:reshape({}) or hit:reshape(shape)
    end)
end

-- index_fill(dim, index, value): x with the slices of dim at index set to value (a number or
-- a 0-D tensor, which gets the gradient of the slices, each counted once)
with_inplace("index_fill", function(x, dim, index, value, ...)
    args.no_extra("index_fill", 4, ...)
    check("index_fill", x)
    local d = dim_of("index_fill", x, dim)
    if type(value) ~= "number" and not (core.is_tensor(value) and value:dim() == 0) then
        raise(("tide: index_fill: value must be a number or a 0-D tensor, got %s"):format(
            core.is_tensor(value) and shape_str(value:size()) or type(value)))
    end
    return x:masked_fill(slices("index_fill", x, d, index), value)
end)

-- index_copy(dim, index, source): x with slice index[i] of dim replaced by source's slice i
with_inplace("index_copy", function(x, dim, index, src, ...)
    args.no_extra("index_copy", 4, ...)
    check("index_copy", x)
    check("index_copy", src, 4)
    same_device("index_copy", x, index, src)
    local d = dim_of("index_copy", x, dim)
    if x:dim() == 0 then -- as a 1-element 1-D tensor
        return Tensor.index_copy(x:reshape(1), 1, index, src:reshape(-1)):reshape({})
    end
    local mask = slices("index_copy", x, d, index)
    local placed = core.zeros(x:size(), { dtype = x.dtype, device = x.device })
        :index_add_(d, index, src)
    return core.where(mask, placed, x)
end)

local ALPHA = { "alpha" }

-- index_add(dim, index, source[, {alpha = 1}]): x with alpha source's slice i added to slice
-- index[i] of dim (the in-place index_add_ is the core's)
function Tensor.index_add(x, dim, index, src, opts, ...)
    args.no_extra("index_add", 5, ...)
    check("index_add", x)
    check("index_add", src, 4)
    same_device("index_add", x, index, src)
    local alpha = args.options("index_add", opts, ALPHA, "{alpha = 2}").alpha or 1
    if type(alpha) ~= "number" then
        raise(("tide: index_add: alpha must be a number, got %s"):format(type(alpha)))
    end
    local d = dim_of("index_add", x, dim)
    index_tensor("index_add", index, 3)
    return x:clone():index_add_(d, index, alpha == 1 and src or src * alpha)
end

-- masked_scatter(mask, source): x with the elements where mask (broadcast to x) is true
-- replaced by source's first elements, in row-major order
with_inplace("masked_scatter", function(x, mask, src, ...)
    args.no_extra("masked_scatter", 3, ...)
    check("masked_scatter", x)
    check("masked_scatter", mask, 2)
    check("masked_scatter", src, 3)
    same_device("masked_scatter", x, mask, src)
    if mask.dtype ~= "bool" then
        raise(("tide: masked_scatter: mask must be a bool tensor, got %s; compare with " ..
            ":ne(0)"):format(mask.dtype))
    end
    if src.dtype ~= x.dtype then -- (PyTorch 1.13 raises too; it converts nothing)
        raise(("tide: masked_scatter: expected self and source to have the same dtype, got " ..
            "%s and %s; convert source with :to(\"%s\")"):format(x.dtype, src.dtype, x.dtype))
    end
    local m = mask
    if not args.same_shape(m:size(), x:size()) then
        if not pcall(m.expand, m, x:size()) then
            raise(("tide: masked_scatter: mask %s does not broadcast to input %s")
                :format(shape_str(mask:size()), shape_str(x:size())))
        end
        m = m:expand(x:size())
    end
    -- each selected element's 1-based rank among the selected: the position in source it takes
    local pos, count = no_grad(function()
        local c = m:reshape(-1):to("int64"):cumsum(1)
        return c, c:numel() > 0 and c[c:numel()]:item() or 0
    end)
    if count > src:numel() then
        raise(("tide: masked_scatter: mask selects %d elements but source has only %d")
            :format(count, src:numel()))
    end
    if count == 0 then
        return x:clone()
    end
    local at = no_grad(function() return pos:clamp(1, nil) end)
    local taken = src:reshape(-1):index_select(1, at):reshape(x:size())
    return core.where(m, taken, x)
end)

-- argwhere(): the 1-based indices of the nonzero elements, one row each ([n, ndim]); nonzero
function Tensor.argwhere(x, ...)
    check("argwhere", x)
    args.no_extra("argwhere", 1, ...)
    return x:nonzero()
end

-- ---- scatter_reduce ----

local REDUCTIONS = { sum = true, prod = true, mean = true, amax = true, amin = true }

-- amax and amin on the CPU: the core's kernel (PyTorch's loop, in index order; the sort and scan
-- of reduce_into cost 200x PyTorch's time), after, where include_self is false, the identity
-- PyTorch writes first (a float's infinity; integers take src's own values: equal ones are alike)
local PICKS = { amax = { kernel = "_scatter_amax_", identity = -math.huge },
    amin = { kernel = "_scatter_amin_", identity = math.huge } }
local SCATTER_OPTIONS = { "include_self" }

-- the reduction of the region of src that index covers, into x, without recording: a stable
-- sort of the index groups each target's src values (in src's order), a segmented
-- Hillis-Steele scan (log2 n rounds) reduces each group into its last element, and one scatter
-- writes those (the others go to a slot past the end, dropped); include_self false leaves x's
-- value out of a target src reaches
local function reduce_into(x, d, index, src, how, include_self)
    local combine = how == "prod" and core.mul or how == "amax" and core.maximum or core.minimum
    local xl, il, sl = x:movedim(d, -1), index:movedim(d, -1), src:movedim(d, -1)
    local n, m = xl:size(-1), il:size(-1)
    local sorted_i, perm = il:sort(-1)
    local vals = sl:gather(-1, perm)
    local s = 1
    while s < m do
        local same = sorted_i:narrow(-1, s + 1, m - s):eq(sorted_i:narrow(-1, 1, m - s))
        local later = vals:narrow(-1, s + 1, m - s)
        local merged = core.where(same, combine(vals:narrow(-1, 1, m - s), later), later)
        vals = core.cat({ vals:narrow(-1, 1, s), merged }, -1)
        s = s * 2
    end
    local last = core.cat({ sorted_i:narrow(-1, 1, m - 1):ne(sorted_i:narrow(-1, 2, m - 1)),
        core.ones(sorted_i:size(), { dtype = "bool", device = x.device }):narrow(-1, 1, 1) }, -1)
    local at = core.where(last, sorted_i, n + 1)
    local out = core.cat({ xl, xl:narrow(-1, 1, 1) }, -1)
    local v = include_self and combine(out:gather(-1, at), vals) or vals
    return out:scatter(-1, at, v):narrow(-1, 1, n):movedim(-1, d)
end

-- PyTorch 1.13's gradients of scatter_reduce's prod, amax and amin (nd[1] = x, nd[2] = the
-- region of src that index covers)
autograd.def {
    name = "scatter_reduce",
    reads = { 1, 2, "out" },
    backward = function(nd, g)
        local x, src, out, d, index, how = nd[1], nd[2], nd.out, nd.dim, nd.index, nd.how
        local gx, gs
        if how == "prod" then
            local masked_x = x:masked_fill(x:eq(0), 1)
            local masked_x_result = reduce_into(masked_x, d, index, src, how, nd.include_self)
            gx = g * masked_x_result / masked_x
            local src_zero = src:eq(0)
            local zeros = core.zeros(x:size(), { dtype = x.dtype, device = x.device })
                :scatter_add(d, index, src_zero:to(x.dtype)):gather(d, index)
            local single = src_zero:logical_and(zeros:eq(1))
            local masked_src = src:masked_fill(single, 1)
            local masked_src_result = reduce_into(x, d, index, masked_src, how, nd.include_self)
            gs = core.where(single, (g * masked_src_result):gather(d, index),
                (g * out):gather(d, index) / src:masked_fill(src_zero, 1))
        else
            local value = out:gather(d, index)
            local x_is = x:eq(out):to(x.dtype)
            local src_is = src:eq(value):to(x.dtype)
            local share = g / x_is:scatter_add(d, index, src_is)
            gx = x_is * share
            gs = src_is * share:gather(d, index)
        end
        if not nd.include_self then
            gx = gx:scatter(d, index, 0)
        end
        return gx, gs
    end,
}

-- scatter_reduce(dim, index, src, reduce[, {include_self = true}]): x with src's elements
-- reduced into the positions index names along dim (as scatter's), reduce one of "sum",
-- "prod", "mean", "amax", "amin"; without include_self, x's own value at a position src
-- reaches takes no part. PyTorch's gradients (amax and amin share among ties)
with_inplace("scatter_reduce", function(x, dim, index, src, reduce, opts, ...)
    args.no_extra("scatter_reduce", 6, ...)
    check("scatter_reduce", x)
    index_tensor("scatter_reduce", index, 3)
    check("scatter_reduce", src, 4)
    same_device("scatter_reduce", x, index, src)
    if not REDUCTIONS[reduce] then
        raise(("tide: scatter_reduce: reduce must be \"sum\", \"prod\", \"mean\", \"amax\" " ..
            "or \"amin\", got %s"):format(type(reduce) == "string" and ("%q"):format(reduce)
            or type(reduce)))
    end
    local o = args.options("scatter_reduce", opts, SCATTER_OPTIONS, "{include_self = false}")
    local include_self = o.include_self ~= false
    local d = dim_of("scatter_reduce", x, dim)
    if x:dim() == 0 then
        raise("tide: scatter_reduce: needs an input with at least one dim, got a 0-D tensor; " ..
            "reshape it with :reshape(1)")
    end
    if index:dim() ~= x:dim() or src:dim() ~= x:dim() then
        raise(("tide: scatter_reduce: input %s, index %s and src %s must have the same " ..
            "number of dims"):format(shape_str(x:size()), shape_str(index:size()),
            shape_str(src:size())))
    end
    for k = 1, x:dim() do
        if index:size(k) > src:size(k) or (k ~= d and index:size(k) > x:size(k)) then
            raise(("tide: scatter_reduce: index %s must be no larger than src %s, nor than " ..
                "input %s except in dim %d"):format(shape_str(index:size()),
                shape_str(src:size()), shape_str(x:size()), d))
        end
    end
    if x.dtype ~= src.dtype then
        raise(("tide: scatter_reduce: input and src must have the same dtype, got %s and %s")
            :format(x.dtype, src.dtype))
    end
    local region = src
    for k = 1, x:dim() do
        if index:size(k) < src:size(k) then
            region = region:narrow(k, 1, index:size(k))
        end
    end
    if index:numel() == 0 then
        return x:clone()
    end
    local idx = index:to("int64")
    -- checked here: prod, amax and amin run on a padded copy, where the core's own check
    -- would name gather and a size one too large
    local mn, mx = idx:aminmax()
    local lo, hi, n = mn:item(), mx:item(), x:size(d)
    if lo < 1 or hi > n then
        raise(("tide: scatter_reduce: index %d is out of range for dim %d of size %d; " ..
            "indices are 1-based: use 1..%d"):format(lo < 1 and lo or hi, d, n, n))
    end
    if reduce == "sum" or reduce == "mean" then
        local base = x
        if not include_self then
            base = x:scatter(d, idx, 0)
        end
        local r = base:scatter_add(d, idx, region)
        if reduce == "sum" then
            return r
        end
        local count = no_grad(function()
            local opt = { dtype = x.dtype, device = x.device }
            local c = (include_self and core.ones(x:size(), opt) or core.zeros(x:size(), opt))
                :scatter_add(d, idx, core.ones(region:size(), opt))
            return c:masked_fill(c:eq(0), 1)
        end)
        return FLOAT[x.dtype] and r / count or r:floor_divide(count)
    end
    local out = no_grad(function()
        local pick = PICKS[reduce]
        if pick and x.device.type == "cpu" then
            local r = x:clone()
            if not include_self then
                r:scatter_(d, idx, FLOAT[x.dtype] and pick.identity or region)
            end
            return r[pick.kernel](r, d, idx, region)
        end
        return reduce_into(x, d, idx, region, reduce, include_self)
    end)
    if autograd.needs_record(x, region) then
        local nd = autograd.record("scatter_reduce", out, x, region)
        nd.dim, nd.index, nd.how, nd.include_self = d, idx, reduce, include_self
    end
    return out
end)

local WRAP = { "wrap" }

-- fill_diagonal_(value[, wrap = false]) (or {wrap =}): value written on the main diagonal of x
-- in place (2-D, or n-D with all dims equal: the elements [i, i, ..., i]); with wrap, a tall
-- matrix's diagonal starts again every (columns + 1) rows, as PyTorch's. Through diagonal's
-- views, so autograd records it as the in-place fills it is
function Tensor.fill_diagonal_(x, value, wrap, ...)
    args.no_extra("fill_diagonal_", 3, ...)
    check("fill_diagonal_", x)
    if type(value) ~= "number" and type(value) ~= "boolean" then
        raise(("tide: fill_diagonal_: value must be a number, got %s"):format(type(value)))
    end
    if type(wrap) == "table" then -- tide's options table
        wrap = args.options("fill_diagonal_", wrap, WRAP, "{wrap = true}").wrap
    end
    if wrap ~= nil and type(wrap) ~= "boolean" then
        raise(("tide: fill_diagonal_: wrap must be true or false, got %s"):format(tostring(wrap)))
    end
    local nd = x:dim()
    if nd < 2 then
        raise(("tide: fill_diagonal_: needs at least 2 dims, got %d"):format(nd))
    end
    if nd > 2 then
        for d = 2, nd do
            if x:size(d) ~= x:size(1) then
                raise(("tide: fill_diagonal_: the dims of a %d-D tensor must all be equal, got " ..
                    "%s"):format(nd, shape_str(x:size())))
            end
        end
        local d = x
        for _ = 2, nd do
            d = d:diagonal(0, 1, 2)
        end
        d:fill_(value)
        return x
    end
    local r, c = x:size(1), x:size(2)
    local start = 0
    repeat -- one block of c rows at a time; without wrap, only the first
        x:narrow(1, start + 1, math.min(c, r - start)):diagonal():fill_(value)
        start = start + c + 1
    until not wrap or start >= r
    return x
end

-- select_scatter(src, dim, index) and diagonal_scatter(src[, offset[, dim1[, dim2]]]): a copy
-- of x with src written where select or diagonal would read, as PyTorch's; written as that view
-- of the copy, copied into, so the gradient goes to x outside the region and to src inside it
-- (autograd's in-place rule for views). slice_scatter(src[, {dim = 1, start = 1, ["end"] = -1,
-- step = 1}]): src written at every step-th position of dim from start to end (both 1-based
-- and inclusive), by index_copy
-- x's values as a new tensor in the graph of src (gradient to x unchanged, none to src): the
-- copy a view of which src is then copied into, when only src requires grad
local graph_copy = autograd.def {
    name = "graph_copy",
    forward = function(_, x)
        return x:clone()
    end,
    backward = function(_, g)
        return g
    end,
}

local function scatter_into(op, x, src, view)
    check(op, x)
    check(op, src, 2)
    same_device(op, x, src)
    local y
    if autograd.needs_record(src) and FLOAT[x.dtype] then
        y = graph_copy(x, src)
    else
        y = x:clone()
    end
    local region = view(y)
    if not args.same_shape(region:size(), src:size()) then
        raise(("tide: %s: src has shape %s, the region %s; give src the region's shape")
            :format(op, shape_str(src:size()), shape_str(region:size())))
    end
    region:copy_(src)
    return y
end

function Tensor.select_scatter(x, src, dim, index, ...)
    args.no_extra("select_scatter", 4, ...)
    return scatter_into("select_scatter", x, src, function(y)
        return y:select(dim, index)
    end)
end

local SLICE = { "dim", "start", "end", "step" }
local function whole(op, name, v)
    if v ~= nil and (type(v) ~= "number" or v % 1 ~= 0) then
        raise(("tide: %s: %s must be an integer, got %s"):format(op, name, tostring(v)))
    end
    return v
end

-- slice_scatter's positions: start and end 1-based and inclusive (negative from the end);
-- also PyTorch's positional slice_scatter(src, dim, start, end, step), nil for a default
function Tensor.slice_scatter(x, src, opts, ...)
    local op = "slice_scatter"
    local o
    if type(opts) == "number" or (opts == nil and select("#", ...) > 0) then
        local start, last, step = ...
        args.no_extra(op, 6, select(4, ...))
        o = { dim = opts, start = start, ["end"] = last, step = step }
    else
        args.no_extra(op, 3, ...)
        o = args.options(op, opts, SLICE, "{dim = 1, start = 1, step = 2}")
    end
    check(op, x)
    local d = dim_of(op, x, whole(op, "dim", o.dim) or 1)
    local n = x:size(d)
    local first = whole(op, "start", o.start) or 1
    local last = whole(op, "end", o["end"]) or n
    local step = whole(op, "step", o.step) or 1
    if step < 1 then
        raise(("tide: %s: step must be >= 1, got %d"):format(op, step))
    end
    first = first < 0 and math.max(n + first + 1, 1) or math.max(first, 1)
    last = last < 0 and n + last + 1 or math.min(last, n)
    local count = last >= first and math.floor((last - first) / step) + 1 or 0
    local want = x:size()
    want[d] = count
    check(op, src, 2)
    same_device(op, x, src) -- named so, not by the index_copy inside
    if not args.same_shape(src:size(), want) then
        raise(("tide: %s: src has shape %s, the slice %s; give src the slice's shape")
            :format(op, shape_str(src:size()), shape_str(want)))
    end
    if count == 0 then
        return x:clone()
    end
    local positions = core.arange(first, first + (count - 1) * step + 1, step,
        { dtype = "int64", device = x.device })
    return x:index_copy(d, positions, src)
end

function Tensor.diagonal_scatter(x, src, offset, dim1, dim2, ...)
    args.no_extra("diagonal_scatter", 5, ...)
    return scatter_into("diagonal_scatter", x, src, function(y)
        return y:diagonal(offset or 0, dim1 or 1, dim2 or 2)
    end)
end

M.names = { "scatter_reduce", "take", "take_along_dim", "index_fill", "index_copy", "index_add",
    "masked_scatter", "argwhere", "select_scatter", "slice_scatter", "diagonal_scatter" }
return M
