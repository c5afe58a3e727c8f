-- tide.flat_indexing: indices into a tensor's row-major flattening, 1-based as tide's indices:
-- x:put_(index, source[, accumulate]) / x:put(...) / tide.put (PyTorch's put_: source's
-- elements written, or added with accumulate, at the flat positions index names; -n..-1 count
-- from the end) and tide.unravel_index(indices, shape) (the flat positions as one index tensor
-- per dim, PyTorch 2's torch.unravel_index). put_ unravels the positions and runs index_put_,
-- which autograd differentiates: source gets its elements' gradients, x the rest. Loaded on
-- first use (lua/tide/_lazy_ops.lua).
local core = require("tide.core")
local args = require("tide.op_args")
local raise = require("tide.autograd.raise")
local autograd = require("tide.autograd")
local no_grad = autograd.no_grad
local same_device = require("tide._same_device")
local compat = require("tide._compat")

local Tensor = core.Tensor
local check, shape_str = args.check, args.shape_str

local M = { functions = {} }
local F = M.functions

local INDEX_DTYPES = { int64 = true, int32 = true }

-- the 0-based positions of flat (int64, any shape) in a tensor of this shape, one int64 tensor
-- per dim (1-based): row-major, the last dim fastest
local function unravel(flat0, shape)
    local out, stride = {}, 1
    if flat0:numel() == 0 then -- no positions (a shape of no elements has none either)
        for d = 1, #shape do
            out[d] = flat0 + 1
        end
        return out
    end
    for d = #shape, 1, -1 do
        out[d] = flat0:floor_divide(stride):remainder(shape[d]) + 1
        stride = stride * shape[d]
    end
    return out
end

-- index as int64 positions, 0-based, checked against n elements (negatives from the end when
-- negatives is set); raises naming op and the first position out of range
local function positions(op, index, n, negatives)
    return no_grad(function()
        local i = index:to("int64")
        if i:numel() == 0 then
            return i
        end
        local lo, hi = i:min():item(), i:max():item()
        local low_ok = negatives and -n or 1
        if lo < low_ok or hi > n or (lo <= 0 and (not negatives or i:eq(0):any():item())) then
            local bad = lo < low_ok and lo or (hi > n and hi or 0)
            raise(("tide: %s: index %d is out of range for %d elements; use 1..%d%s"):format(op,
                bad, n, n, negatives and (" or -" .. n .. "..-1") or ""))
        end
        if negatives and lo < 0 then
            i = core.where(i:lt(0), i + (n + 1), i)
        end
        return i - 1
    end)
end

-- x:put_(index, source[, accumulate = false]): x's flattened elements at index (1-based, an
-- int64 or int32 tensor of any shape) set to source's (as many elements, x's dtype), or
-- added to them with accumulate (repeats add up; without, a repeated position keeps one)
function Tensor.put_(x, index, source, accumulate, ...)
    local op = "put_"
    args.no_extra(op, 4, ...)
    check(op, x)
    check(op, index, 2)
    if not INDEX_DTYPES[index.dtype] then
        raise(("tide: %s: index must be an int64 or int32 tensor, got %s"):format(op,
            index.dtype))
    end
    check(op, source, 3)
    if accumulate ~= nil and type(accumulate) ~= "boolean" then
        raise(("tide: %s: accumulate must be a boolean, got %s"):format(op, type(accumulate)))
    end
    if source.dtype ~= x.dtype then
        raise(("tide: %s: source is %s and the tensor %s; they must match (as PyTorch's); " ..
            "convert source with :to(\"%s\")"):format(op, source.dtype, x.dtype, x.dtype))
    end
    if source:numel() ~= index:numel() then
        raise(("tide: %s: index %s has %d elements and source %s has %d; they must have as " ..
            "many"):format(op, shape_str(index:size()), index:numel(),
            shape_str(source:size()), source:numel()))
    end
    same_device(op, x, index, source)
    if x.requires_grad and core.is_grad_enabled() then
        local why = autograd._inplace_refusal(x) -- the engine's rule, named put_
        if why then
            raise("tide: put_: in-place operation " .. why[1] .. "; " .. why[2])
        end
    end
    local shape, strides = x:size(), x:stride()
    for i = 1, #shape do
        if strides[i] == 0 and shape[i] > 1 then
            raise(("tide: put_: the tensor is an expanded view (stride 0 at dim %d), so " ..
                "several positions would land on one element; call :clone() first"):format(i))
        end
    end
    local i0 = positions(op, index, x:numel(), true)
    if i0:numel() == 0 then
        return x
    end
    local target = x
    if #shape == 0 then
        target, shape = x:view(1), { 1 }
    end
    -- an error of the write inside names put_, the op the user called
    local ok, err = pcall(target.index_put_, target, unravel(i0:reshape(-1), shape),
        source:reshape(-1), accumulate == true)
    if not ok then
        local rest = tostring(err):match("tide: [%w_]+: (.*)$")
        raise(rest and ("tide: put_: " .. rest) or tostring(err))
    end
    return x
end

function Tensor.put(x, index, source, accumulate, ...)
    args.no_extra("put", 4, ...)
    check("put", x)
    return args.as_op("put", "put_", Tensor.put_, x:clone(), index, source, accumulate)
end
F.put = Tensor.put

-- tide.unravel_index(indices, shape): for 1-based positions into a tensor of shape flattened
-- (an integer tensor, or a number), one int64 tensor per dim of shape, each of indices' shape,
-- with the 1-based index along that dim (as many results)
function F.unravel_index(indices, shape, ...)
    local op = "unravel_index"
    args.no_extra(op, 2, ...)
    local dev
    if type(indices) == "number" then
        local v = args.integer(op, indices, "an index")
        indices = core.full({}, v, { dtype = "int64", device = "cpu" })
    else
        check(op, indices)
        if not INDEX_DTYPES[indices.dtype] and indices.dtype ~= "uint8" then
            raise(("tide: %s: indices must be an integer tensor, got %s"):format(op,
                indices.dtype))
        end
    end
    dev = indices.device
    if type(shape) == "number" then
        shape = { shape }
    elseif type(shape) ~= "table" or core.is_tensor(shape) then
        raise(("tide: %s: shape must be a table of sizes or an integer, got %s"):format(op,
            core.is_tensor(shape) and "a tensor" or type(shape)))
    end
    args.check_list(op, shape, "shape")
    local n, nf = 1, 1.0 -- nf in floating point: n, an integer on 5.3+, would wrap silently
    for i = 1, #shape do
        local s = args.integer(op, shape[i], "a size")
        if s < 0 then
            raise(("tide: %s: shape %s has a negative size; sizes are >= 0"):format(op,
                shape_str(shape)))
        end
        n, nf = n * s, nf * s
    end
    if nf >= 2 ^ 62 then
        raise(("tide: %s: shape %s has more elements than an int64 index reaches"):format(op,
            shape_str(shape)))
    end
    local i0 = positions(op, indices, n, false)
    local out = unravel(i0, shape)
    for d = 1, #out do
        out[d] = out[d]:to(dev)
    end
    return compat.unpack(out, 1, #out)
end

M.names = { "put", "unravel_index" }
return M
