-- tide.histograms: PyTorch's torch.histogram: tide.histogram(t, bins[, {range =, weight =,
-- density = false}]) / t:histogram(...), the counts (or weight sums) of t's elements in bins
-- and the bins' edges, two results in t's float dtype: bins a count of equal-width bins
-- spanning range ({min, max}; the data's own by default, widened by 0.5 each way when they are
-- equal) or a 1-D tensor of increasing edges. An element falls in the bin whose left edge is
-- <= it and right edge > it, the last bin also taking its right edge; elements outside and NaNs
-- are left out. density divides by the total and the bins' widths. And t:bincount(opts), the
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
            else
                lo, hi = 0, 0
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

-- t:bincount([{weights =, minlength =}]): tide.bincount(t, opts)
function Tensor.bincount(x, opts, ...)
    args.no_extra("bincount", 2, ...)
    return require("tide").bincount(x, opts)
end

M.names = { "histogram" }
return M
