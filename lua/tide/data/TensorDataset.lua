--- tide.data.TensorDataset(t1, t2, ...): sample i is (t1[i], t2[i], ...).
--
-- Every tensor has the same size in dim 1. Batches are gathered in C with one index_select per
-- tensor (`batch`), so a DataLoader over it runs no per-sample Lua code. `ds[{a, b}]` is
-- PyTorch's `ds[a-1:b]`: the list of the tensors' rows a..b (a range as tensor indexing takes
-- it: 1-based, inclusive, negative from the end, `{a, b, step}`), sharing their storage.
local compat = require("tide._compat")
local raise = require("tide.autograd.raise")

local Dataset = require("tide.data.Dataset")

local TensorDataset = Dataset:extend("TensorDataset")

function TensorDataset:init(...)
    local n = select("#", ...)
    if n == 0 then
        raise("tide: TensorDataset: no tensors given; pass at least one, e.g. TensorDataset(x, y)")
    end
    self.tensors = {}
    for k = 1, n do
        local t = select(k, ...)
        if type(t) ~= "userdata" or type(t.dim) ~= "function" then
            raise(string.format("tide: TensorDataset: argument %d is a %s, expected a tensor",
                k, type(t)))
        end
        if t:dim() < 1 then
            raise(string.format("tide: TensorDataset: tensor %d is 0-dimensional; samples are "
                .. "taken along dim 1", k))
        end
        if k > 1 and t:size(1) ~= self.tensors[1]:size(1) then
            raise(string.format("tide: TensorDataset: tensor %d has %d samples (size of dim 1) "
                .. "but tensor 1 has %d; every tensor needs the same size in dim 1",
                k, t:size(1), self.tensors[1]:size(1)))
        end
        self.tensors[k] = t
    end
end

function TensorDataset:len()
    return self.tensors[1]:size(1)
end

function TensorDataset:get(i)
    local n = self:len()
    if not compat.is_integer(i) or i < 1 or i > n then
        raise(string.format("tide: TensorDataset: index %s out of range 1..%d",
            tostring(i), n))
    end
    local out = {}
    for k, t in ipairs(self.tensors) do
        out[k] = t[i]
    end
    return compat.unpack(out, 1, #self.tensors)
end

--- ds[range]: each tensor's rows in range, a list (Dataset's __index calls it for a table key)
function TensorDataset:_slice(range)
    local n = 0
    for k, v in pairs(range) do
        n = n + 1
        if not compat.is_integer(k) or not compat.is_integer(v) then
            n = -1
            break
        end
    end
    if n < 0 or n > 3 or n ~= #range then
        raise("tide: TensorDataset: a slice is a range of samples {first, last[, step]} " ..
            "(1-based, inclusive), such as ds[{1, 4}]")
    end
    local out = {}
    for k, t in ipairs(self.tensors) do
        out[k] = t[{ range }]
    end
    return out
end

--- One batched tensor per field: `t:index_select(1, index)` (index 1-based int64).
function TensorDataset:batch(index)
    local out = {}
    for k, t in ipairs(self.tensors) do
        out[k] = t:index_select(1, index:to(t.device))
    end
    return compat.unpack(out, 1, #self.tensors)
end

--- A TensorDataset of `length` samples from `start` on, sharing storage (no copy).
function TensorDataset:narrow(start, length)
    local n = self:len()
    if not compat.is_integer(start) or not compat.is_integer(length) or start < 1
        or length < 0 or start + length - 1 > n then
        raise(string.format("tide: TensorDataset: narrow(%s, %s) out of range for %d samples",
            tostring(start), tostring(length), n))
    end
    local ts = {}
    for k, t in ipairs(self.tensors) do
        ts[k] = t:narrow(1, start, length)
    end
    return TensorDataset(compat.unpack(ts, 1, #self.tensors))
end

--- Moves every tensor to `dev` (a new dataset; the tensors already there are shared).
function TensorDataset:to(dev)
    local ts = {}
    for k, t in ipairs(self.tensors) do
        ts[k] = t:to(dev)
    end
    return TensorDataset(compat.unpack(ts, 1, #self.tensors))
end

return TensorDataset
