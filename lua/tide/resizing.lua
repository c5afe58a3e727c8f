-- tide.resizing: PyTorch's t:resize_(sizes...) and t:resize_as_(u), in place. t keeps its
-- storage and storage offset and reads it afresh as a contiguous tensor of the new sizes (the
-- storage's elements in order, whatever t's strides were; the same sizes change nothing). When
-- the storage is too short, t takes a new one, the old one's elements copied to its start:
-- PyTorch leaves the elements past them uninitialized, tide makes them 0 (a new storage is
-- zeroed). t's views made before keep the old storage then (PyTorch's would follow it). A
-- tensor that requires grad is refused, also under no_grad, as PyTorch refuses it. Loaded on
-- first use (lua/tide/_lazy_ops.lua).
local core = require("tide.core")
local args = require("tide.op_args")
local raise = require("tide.autograd.raise")
local compat = require("tide._compat")

local Tensor = core.Tensor

local M = { functions = {} }

-- sizes as integers or one list, each >= 0
local function sizes_of(op, ...)
    local a = compat.pack(...)
    while a.n > 0 and a[a.n] == nil do
        a.n = a.n - 1
    end
    local list = a
    if type(a[1]) == "table" then
        args.no_extra(op, 2, compat.unpack(a, 2, a.n))
        list = args.check_list(op, a[1], "sizes")
        list.n = #list
    end
    local shape = {}
    for i = 1, list.n do
        shape[i] = args.integer(op, list[i], "size " .. i)
        if shape[i] < 0 then
            raise(("tide: %s: size %d is %d; sizes must be >= 0"):format(op, i, shape[i]))
        end
    end
    return shape
end

local function contiguous_strides(shape)
    local strides, s = {}, 1
    for i = #shape, 1, -1 do
        strides[i] = s
        s = s * math.max(shape[i], 1)
    end
    return strides
end

-- the element count of shape, or nil past 2^53 (where the product would wrap or round)
local function numel(shape)
    local n = 1
    for i = 1, #shape do
        if shape[i] ~= 0 and n > 2 ^ 53 / shape[i] then
            return nil
        end
        n = n * shape[i]
    end
    return n
end

-- true when the first n elements of t's storage exist (as_strided checks its reach)
local function storage_holds(t, n)
    return n == 0 or (pcall(t.as_strided, t, { n }, { 1 }, 0))
end

-- the number of elements in t's storage: t's own reach is a lower bound; then doubling and a
-- binary search over as_strided's check
local function storage_size(t)
    local lo = t:storage_offset()
    if t:numel() > 0 then
        local shape, strides = t:size(), t:stride()
        for i = 1, #shape do
            lo = lo + (shape[i] - 1) * strides[i]
        end
        lo = lo + 1
    end
    if not storage_holds(t, lo) then -- (an empty t's offset may lie past the storage)
        lo = 0
    end
    local hi = math.max(lo, 1) * 2
    while storage_holds(t, hi) do
        lo, hi = hi, hi * 2
    end
    while hi - lo > 1 do -- storage_holds(lo), not storage_holds(hi)
        local mid = lo + math.floor((hi - lo) / 2)
        if storage_holds(t, mid) then
            lo = mid
        else
            hi = mid
        end
    end
    return lo
end

local function resize(op, t, shape)
    if t.requires_grad then
        raise(("tide: %s: the tensor requires grad, and a resize would cut it from the graph " ..
            "(PyTorch refuses it too); resize t:detach() or a clone, or make a new tensor")
            :format(op))
    end
    if args.same_shape(t:size(), shape) then
        return t
    end
    local offset, n = t:storage_offset(), numel(shape)
    if n == nil then
        raise(("tide: %s: a tensor of shape %s has more elements than any memory holds")
            :format(op, args.shape_str(shape)))
    end
    local strides = contiguous_strides(shape)
    if storage_holds(t, offset + n) then
        return t:set_(t:as_strided(shape, strides, offset))
    end
    local old = storage_size(t)
    local buf = core.zeros({ offset + n }, { dtype = t.dtype, device = t.device })
    if old > 0 then
        buf:narrow(1, 1, old):copy_(t:as_strided({ old }, { 1 }, 0))
    end
    return t:set_(buf:as_strided(shape, strides, offset))
end

function Tensor.resize_(t, ...)
    args.check("resize_", t)
    return resize("resize_", t, sizes_of("resize_", ...))
end

function Tensor.resize_as_(t, u, ...)
    args.no_extra("resize_as_", 2, ...)
    args.check("resize_as_", t)
    if not core.is_tensor(u) then
        raise(("tide: resize_as_: expected a tensor at argument #2 (its sizes are taken), " ..
            "got %s; use t:resize_(sizes) for sizes"):format(type(u)))
    end
    return resize("resize_as_", t, u:size())
end

M.names = {}
return M
