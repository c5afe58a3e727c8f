-- tide.histograms: PyTorch's torch.histogram: tide.histogram(t, bins[, {range =, weight =,
-- density = false}]) / t:histogram(...), the counts (or weight sums) of t's elements in bins
-- and the bins' edges, two results in t's float dtype: bins a count of equal-width bins
-- spanning range ({min, max}; the data's own by default, widened by 0.5 each way when they are
-- equal) or a 1-D tensor of increasing edges. An element falls in the bin whose left edge is
-- <= it and right edge > it, the last bin also taking its right edge; elements outside and NaNs
-- are left out. density divides by the total and the bins' widths. tide.histogramdd, the same
-- over points of D coordinates (PyTorch's torch.histogramdd). And t:bincount(opts), the
-- method of tide.bincount. No gradient (as PyTorch's histogram's backward). Loaded on first use
-- (lua/tide/_lazy_ops.lua).
local core = require("tide.core")
local args = require("tide.op_args")
local raise = require("tide.autograd.raise")
local no_grad = require("tide.autograd").no_grad
local same_device = require("tide._same_device")

local Tensor = core.Tensor
local check, shape_str = args.check, args.shape_str

local M = { functions = {} }
local F = M.functions

local OPTIONS = { "range", "weight", "density" }

function F.histogram(input, bins, opts, ...)
    local op = "histogram"
    args.no_extra(op, 3, ...)
    check(op, input)
    args.float_input(op, input)
    local o = args.options(op, opts, OPTIONS, "{density = true}")
    local w = o.weight
    if w ~= nil then
        check(op, w, 3)
        if not args.same_shape(w:size(), input:size()) then
            raise(("tide: %s: weight %s must have input's shape %s"):format(op,
                shape_str(w:size()), shape_str(input:size())))
        end
    end
    if o.density ~= nil and type(o.density) ~= "boolean" then
        raise(("tide: %s: density must be a boolean, got %s"):format(op, type(o.density)))
    end
    local edges_given = core.is_tensor(bins)
    if edges_given then
        if bins:dim() ~= 1 or bins:numel() < 2 then
            raise(("tide: %s: bins as a tensor must be 1-D edges, at least 2, got %s")
                :format(op, shape_str(bins:size())))
        end
        if o.range ~= nil then
            raise(("tide: %s: range is for a number of bins; the edges tensor gives its own " ..
                "range"):format(op))
        end
    else
        if bins == nil then -- PyTorch's default
            bins = 100
        end
        bins = args.integer(op, bins, "bins")
        if bins < 1 then
            raise(("tide: %s: bins = %d; expected a count >= 1 or a tensor of edges")
                :format(op, bins))
        end
        args.check_budget(op, bins, 8, ("%d bins"):format(bins), "ask for fewer bins")
    end
    local r = o.range
    if r ~= nil and (type(r) ~= "table" or #r ~= 2 or type(r[1]) ~= "number"
        or type(r[2]) ~= "number") then
        raise(("tide: %s: range must be {min, max}, two numbers"):format(op))
    end
    same_device(op, input, edges_given and bins or nil, w)
    args.not_differentiable(op, input, edges_given and bins or nil, w)
    return no_grad(function()
        local flat = input:reshape(-1)
        local edges
        if edges_given then
            edges = bins:to(input.dtype)
        else
            local lo, hi
            if r then
                lo, hi = r[1], r[2]
            elseif flat:numel() > 0 then
                lo, hi = flat:min():item(), flat:max():item()
            else -- no elements: PyTorch's [0, 1]
                lo, hi = 0, 1
            end
            if lo > hi then
                raise(("tide: %s: range {%s, %s}: max must be >= min"):format(op, tostring(lo),
                    tostring(hi)))
            end
            if lo ~= lo or hi ~= hi or lo == -math.huge or hi == math.huge then
                raise(("tide: %s: range of [%s, %s] is not finite"):format(op, tostring(lo),
                    tostring(hi)))
            end
            if lo == hi then
                lo, hi = lo - 0.5, hi + 0.5
            end
            edges = require("tide").linspace(lo, hi, bins + 1, { dtype = input.dtype,
                device = input.device })
        end
        local nb = edges:numel() - 1
        local dtype = input.dtype
        local hist = core.zeros({ nb }, { dtype = dtype, device = input.device })
        local first, last = edges[1]:item(), edges[nb + 1]:item()
        local keep = flat:ge(first):logical_and(flat:le(last))
        local v = flat:masked_select(keep)
        if v:numel() > 0 then
            -- the bin: the last edge <= v (a search, exact against the edges), the last bin
            -- taking its right edge
            local pos = require("tide").searchsorted(edges, v, { right = true }) - 1
            pos = pos:clamp(1, nb)
            local add = w and w:reshape(-1):masked_select(keep):to(dtype) or
                core.ones({ v:numel() }, { dtype = dtype, device = input.device })
            hist = hist:index_add_(1, pos, add)
        end
        if o.density then
            local widths = edges:narrow(1, 2, nb) - edges:narrow(1, 1, nb)
            hist = hist / (hist:sum() * widths)
        end
        return hist, edges
    end)
end
function Tensor.histogram(x, bins, opts, ...)
    args.no_extra("histogram", 3, ...)
    return F.histogram(x, bins, opts)
end

-- the edges of a histogramdd's dim j: given, or bins + 1 equally spaced over range's pair j
-- or the column's own extremes (0 and 1 with no points), widened by 0.5 when they are equal
local function dd_edges(op, col, j, given, count, range, dtype)
    if given then
        return given:to(dtype)
    end
    local lo, hi
    if range then
        lo, hi = range[2 * j - 1], range[2 * j]
    elseif col:numel() > 0 then
        lo, hi = col:min():item(), col:max():item()
    else
        lo, hi = 0, 1
    end
    if lo ~= lo or hi ~= hi or lo == -math.huge or hi == math.huge then
        raise(("tide: %s: the range of dim %d, [%s, %s], is not finite; pass a finite range")
            :format(op, j, tostring(lo), tostring(hi)))
    end
    if lo > hi then
        raise(("tide: %s: the range of dim %d, {%s, %s}: max must be >= min"):format(op, j,
            tostring(lo), tostring(hi)))
    end
    if lo == hi then
        lo, hi = lo - 0.5, hi + 0.5
    end
    return require("tide").linspace(lo, hi, count + 1, { dtype = dtype, device = col.device })
end

local MAX_DIMS = 8 -- a tensor's dims at most (TIDE_MAX_DIMS, include/tide.h)

-- histogramdd's bins: an integer for every dim, a list of D integers, or a list of D 1-D
-- tensors of increasing edges; counts (or nil) and edges (or nil), one per dim
local function dd_bins(op, bins, D)
    local counts, edges = {}, nil
    if type(bins) == "number" then
        bins = args.integer(op, bins, "bins")
        for j = 1, D do
            counts[j] = bins
        end
    elseif type(bins) == "table" and #bins == D then
        args.check_list(op, bins, "bins")
        if core.is_tensor(bins[1]) then
            edges = {}
        end
        for j = 1, D do
            local b = bins[j]
            if edges and core.is_tensor(b) then
                if b:dim() ~= 1 or b:numel() < 1 then
                    raise(("tide: %s: the edges of dim %d must be a 1-D tensor of at least " ..
                        "1 edge, got %s"):format(op, j, shape_str(b:size())))
                end
                edges[j] = b
            elseif not edges and type(b) == "number" then
                counts[j] = args.integer(op, b, "bins[" .. j .. "]")
            else
                raise(("tide: %s: bins must be all counts or all tensors of edges, got a %s " ..
                    "at %d"):format(op, core.is_tensor(b) and "tensor" or type(b), j))
            end
        end
    else
        raise(("tide: %s: bins must be a count, or a list of %d counts or of %d 1-D tensors " ..
            "of edges (one per dim of the points), got %s"):format(op, D, D,
            type(bins) == "table" and #bins .. " entries" or type(bins)))
    end
    for j = 1, #counts do
        if counts[j] < 1 then
            raise(("tide: %s: bins = %d for dim %d; expected a count >= 1"):format(op,
                counts[j], j))
        end
    end
    return counts, edges
end

-- tide.histogramdd(input, bins[, {range =, weight =, density = false}]): PyTorch's
-- torch.histogramdd: input [..., D] holds points of D coordinates; the counts (or weight sums)
-- of the points in each cell, hist of shape {bins_1, ..., bins_D}, and bin_edges, a list of D
-- 1-D tensors, both in input's float dtype. bins as above; range a flat list {min_1, max_1,
-- ..., min_D, max_D} for counts; weight of input's shape without its last dim; each dim's
-- bins as histogram's (the last takes its right edge), a point outside any dim's edges left
-- out; density divides by the total and the cells' volumes. Not differentiable.
function F.histogramdd(input, bins, opts, ...)
    local op = "histogramdd"
    args.no_extra(op, 3, ...)
    check(op, input)
    args.float_input(op, input)
    if input:dim() < 2 then
        raise(("tide: %s: input must have at least 2 dims, points of D coordinates [..., D], " ..
            "got %s; reshape 1-D values with :reshape(-1, 1)"):format(op,
            shape_str(input:size())))
    end
    local o = args.options(op, opts, OPTIONS, "{density = true}")
    local D = input:size(-1)
    if D > MAX_DIMS then -- before any loop over the dims (a last dim of 2^32 never ends)
        raise(("tide: %s: points of %d coordinates (input %s) would make a histogram of %d " ..
            "dims; tide supports at most %d"):format(op, D, shape_str(input:size()), D,
            MAX_DIMS))
    end
    local counts, given = dd_bins(op, bins, D)
    local r, w = o.range, o.weight
    if r ~= nil then
        if given then
            raise(("tide: %s: range is for counts of bins; tensors of edges give their own " ..
                "range"):format(op))
        end
        if type(r) ~= "table" or #r ~= 2 * D then
            raise(("tide: %s: range must be a list of %d numbers {min_1, max_1, ...}, two " ..
                "per dim, got %s"):format(op, 2 * D, type(r) == "table" and #r .. " entries"
                or type(r)))
        end
        for i = 1, 2 * D do
            if type(r[i]) ~= "number" then
                raise(("tide: %s: range[%d] must be a number, got %s"):format(op, i,
                    type(r[i])))
            end
        end
    end
    local point_shape = input:size()
    point_shape[#point_shape] = nil
    if w ~= nil then
        check(op, w, 3)
        if not args.same_shape(w:size(), point_shape) then
            raise(("tide: %s: weight %s must have input's shape without its last dim, %s")
                :format(op, shape_str(w:size()), shape_str(point_shape)))
        end
    end
    if o.density ~= nil and type(o.density) ~= "boolean" then
        raise(("tide: %s: density must be a boolean, got %s"):format(op, type(o.density)))
    end
    same_device(op, input, w)
    for j = 1, given and D or 0 do
        same_device(op, input, given[j])
    end
    args.not_differentiable(op, input, w)
    return no_grad(function()
        local dtype = input.dtype
        local pts = input:reshape(-1, D)
        local edges, shape, flat = {}, {}, nil
        local keep = core.ones({ pts:size(1) }, { dtype = "bool", device = input.device })
        for j = 1, D do
            local col = pts:select(2, j)
            edges[j] = dd_edges(op, col, j, given and given[j], counts[j], r, dtype)
            local nb = math.max(edges[j]:numel() - 1, 1)
            shape[j] = edges[j]:numel() - 1
            keep = keep:logical_and(col:ge(edges[j][1]:item()))
                :logical_and(col:le(edges[j][edges[j]:numel()]:item()))
            -- the bin: the last edge <= v, the last bin taking its right edge
            local pos = (require("tide").searchsorted(edges[j], col:contiguous(),
                { right = true }) - 2):clamp(0, nb - 1)
            flat = flat and flat * nb + pos or pos
        end
        local cells = 1
        for j = 1, D do
            cells = cells * shape[j]
        end
        local hist = core.zeros({ cells }, { dtype = dtype, device = input.device })
        if cells > 0 and keep:any():item() then
            local add = w and w:reshape(-1):to(dtype) or
                core.ones({ pts:size(1) }, { dtype = dtype, device = input.device })
            hist:index_add_(1, flat:masked_select(keep) + 1, add:masked_select(keep))
        end
        hist = hist:reshape(shape)
        if o.density then
            local volume = hist:sum()
            for j = 1, D do
                local e, n = edges[j], shape[j]
                local s = {}
                for k = 1, D do
                    s[k] = k == j and n or 1
                end
                volume = volume * (e:narrow(1, 2, n) - e:narrow(1, 1, n)):reshape(s)
            end
            hist = hist / volume
        end
        return hist, edges
    end)
end

-- t:bincount([{weights =, minlength =}]) or t:bincount(weights[, minlength]): tide.bincount's
function Tensor.bincount(x, ...)
    return require("tide.searching").functions.bincount(x, ...)
end

M.names = { "histogram", "histogramdd" }
return M
