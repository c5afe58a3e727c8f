-- tide.segment_reduce: PyTorch's torch.segment_reduce(data, reduce[, {lengths =, offsets =,
-- axis = 1, unsafe = false, initial =}]): data (a float tensor, as PyTorch's) cut along axis
-- into consecutive segments, each reduced to one slice: reduce "sum", "mean", "max", "min"
-- or "prod". lengths (int64 or int32, [B..., S]) gives the segments' sizes, or offsets
-- ([B..., S + 1]) their bounds (0-based, as PyTorch's), for each batch index B... of data's
-- leading dims; axis (1-based) must be lengths' last dim, as PyTorch requires. The result is
-- data's shape with S at axis. An empty segment gives initial, or 0 (sum), 1 (prod), -inf
-- (max), inf (min), NaN (mean); with initial, each segment starts from it (mean: the sum from
-- it over the segment's length). Unless unsafe, the lengths must be >= 0 and sum to data's
-- size at axis. Written as scatter_reduce, whose gradients it takes (max and min share among
-- ties, as PyTorch's). Loaded on first use (lua/tide/_lazy_ops.lua).
local core = require("tide.core")
local args = require("tide.op_args")
local raise = require("tide.autograd.raise")
local no_grad = require("tide.autograd").no_grad
local same_device = require("tide._same_device")

local check, shape_str = args.check, args.shape_str

local M = { functions = {} }

local REDUCE = { sum = "sum", mean = "sum", max = "amax", min = "amin", prod = "prod" }
local EMPTY = { sum = 0, mean = 0 / 0, max = -math.huge, min = math.huge, prod = 1 }
local OPTIONS = { "lengths", "offsets", "indices", "axis", "unsafe", "initial" }

local function int_tensor(op, name, t)
    check(op, t, 3)
    if t.dtype ~= "int64" and t.dtype ~= "int32" then
        raise(("tide: %s: %s must be an int64 or int32 tensor, got %s"):format(op, name,
            t.dtype))
    end
    if t:dim() < 1 then
        raise(("tide: %s: %s must have at least 1 dim, got a 0-D tensor"):format(op, name))
    end
    return t:to("int64")
end

function M.functions.segment_reduce(data, reduce, opts, ...)
    local op = "segment_reduce"
    args.no_extra(op, 3, ...)
    check(op, data)
    args.float_input(op, data) -- (PyTorch's too: an empty segment's -inf, inf or NaN needs it)
    if type(reduce) ~= "string" or not REDUCE[reduce] then
        raise(("tide: %s: reduce must be \"sum\", \"mean\", \"max\", \"min\" or \"prod\", got %s")
            :format(op, type(reduce) == "string" and ("%q"):format(reduce) or type(reduce)))
    end
    local o = args.options(op, opts, OPTIONS, "{lengths = tide.tensor({2, 3})}")
    if o.indices ~= nil then
        raise(("tide: %s: indices is not supported (nor in PyTorch 1.13); pass lengths or " ..
            "offsets"):format(op))
    end
    if (o.lengths == nil) == (o.offsets == nil) then
        raise(("tide: %s: pass one of lengths and offsets, got %s"):format(op,
            o.lengths == nil and "neither" or "both"))
    end
    local lengths
    if o.lengths ~= nil then
        lengths = int_tensor(op, "lengths", o.lengths)
    else
        local off = int_tensor(op, "offsets", o.offsets)
        if off:size(-1) < 1 then
            raise(("tide: %s: offsets needs at least one bound in its last dim"):format(op))
        end
        local s = off:size(-1) - 1
        lengths = off:narrow(-1, 2, s) - off:narrow(-1, 1, s)
    end
    same_device(op, data, lengths)
    local k = lengths:dim()
    local axis = o.axis == nil and 1 or args.integer(op, o.axis, "axis")
    if axis < 0 then
        axis = data:dim() + axis + 1
    end
    if axis ~= k then
        raise(("tide: %s: axis %d must be the last dim of %s, %d (lengths %s); batch dims of " ..
            "data come first"):format(op, axis, o.lengths and "lengths" or "offsets", k,
            shape_str(lengths:size())))
    end
    if data:dim() < k then
        raise(("tide: %s: data %s has fewer dims than lengths %s"):format(op,
            shape_str(data:size()), shape_str(lengths:size())))
    end
    for d = 1, k - 1 do
        if data:size(d) ~= lengths:size(d) then
            raise(("tide: %s: lengths %s must have data's leading dims %s before its last")
                :format(op, shape_str(lengths:size()), shape_str(data:size())))
        end
    end
    if o.unsafe ~= nil and type(o.unsafe) ~= "boolean" then
        raise(("tide: %s: unsafe must be a boolean, got %s"):format(op, type(o.unsafe)))
    end
    local initial = o.initial
    if initial ~= nil and type(initial) ~= "number" then
        raise(("tide: %s: initial must be a number, got %s"):format(op, type(initial)))
    end
    local n, s = data:size(axis), lengths:size(-1)
    if not o.unsafe and no_grad(function()
            return lengths:lt(0):any():item() or
                (lengths:numel() > 0 and lengths:sum(-1):ne(n):any():item())
        end) then
        raise(("tide: %s: the lengths must be >= 0 and sum to data's size at axis %d, %d, in " ..
            "every row; got lengths %s"):format(op, axis, n, shape_str(lengths:size())))
    end
    -- each position's segment (1-based): the count of segment ends at or before it, plus one
    local seg = no_grad(function()
        local ends = lengths:cumsum(-1)
        local shape = lengths:size()
        shape[k] = n
        local pos = core.arange(0, n, { dtype = "int64", device = data.device })
        return require("tide").searchsorted(ends:contiguous(), pos:expand(shape):contiguous(),
            { right = true })
    end)
    local idx_shape = seg:size()
    for d = k + 1, data:dim() do
        idx_shape[d] = 1
    end
    local idx = seg:reshape(idx_shape):expand(data:size())
    local out_shape = data:size()
    out_shape[axis] = s
    local fill = initial == nil and EMPTY[reduce] or initial
    local base = core.full(out_shape, fill, { dtype = data.dtype, device = data.device })
    if n == 0 or s == 0 then
        return base
    end
    local r = base:scatter_reduce(axis, idx, data, REDUCE[reduce],
        { include_self = initial ~= nil })
    if reduce == "mean" then
        local count = lengths:to(data.dtype)
        local cs = count:size()
        for d = k + 1, data:dim() do
            cs[d] = 1
        end
        count = count:reshape(cs)
        -- an empty segment keeps its fill: initial, or NaN
        r = core.where(count:eq(0), base, r / core.where(count:eq(0), 1, count))
    end
    return r
end

M.names = { "segment_reduce" }
return M
