-- nn.utils.rnn.PackedSequence(data, batch_sizes[, sorted_indices[, unsorted_indices]]): a batch
-- of sequences of different lengths, as PyTorch 1.13's: data [sum of lengths, *] holds, time step
-- after time step, the elements of the sequences still running at that step (longest first);
-- batch_sizes (an int64 CPU tensor) how many run at each step, non-increasing. sorted_indices
-- (1-based, tide's indices) lists the batch in that length order, unsorted_indices is its
-- inverse; both nil when the batch came sorted. Made by pack_padded_sequence and pack_sequence
-- (tide.nn.utils_rnn), taken and given by nn.RNN, nn.LSTM and nn.GRU.
local autograd = require("tide.autograd")
local raise = autograd.raise
local is_tensor = autograd.is_tensor

local PackedSequence = { __name = "PackedSequence" }

-- the fields live in a private table, so assigning one reaches __newindex (read-only)
local FIELDS = setmetatable({}, { __mode = "k" })

-- PyTorch's PackedSequence is a namedtuple: seq[0] is data (hiddens[0] in a script), seq[1]
-- batch_sizes, ...; tide's are 1-based: seq[1] data, seq[2] batch_sizes, seq[3] sorted_indices,
-- seq[4] unsorted_indices (nil when the batch came sorted, as PyTorch's None)
local TUPLE = { "data", "batch_sizes", "sorted_indices", "unsorted_indices" }

function PackedSequence.__index(self, k)
    local f = FIELDS[self]
    if type(k) == "number" then
        local name = TUPLE[k]
        if not name then
            autograd.raise(string.format("tide: PackedSequence: index %s out of range; a " ..
                "PackedSequence is the 4-tuple (data, batch_sizes, sorted_indices, " ..
                "unsorted_indices), 1-based: seq[1] is data (PyTorch's seq[0])", tostring(k)))
        end
        return f and f[name]
    end
    local v = f and f[k]
    if v ~= nil then
        return v
    end
    return PackedSequence[k]
end

local WHO = "PackedSequence"

-- a 1-d integer tensor on a CPU device, read as a Lua list
local function int_list(t, what, who)
    if not is_tensor(t) or t:dim() ~= 1 or not (t.dtype == "int64" or t.dtype == "int32") then
        raise(string.format("tide: %s: expected %s as a 1-d int64 tensor, got %s", who, what,
            is_tensor(t) and (t.dtype .. " of " .. t:dim() .. " dims") or type(t)))
    end
    if t.device.type ~= "cpu" then
        raise(string.format("tide: %s: expected %s on the CPU, got %s; move it with :cpu()",
            who, what, tostring(t.device)))
    end
    return t:to("cpu"):totable()
end

local function new(data, batch_sizes, sorted_indices, unsorted_indices)
    if not is_tensor(data) or data:dim() < 1 then
        raise("tide: " .. WHO .. ": expected data to be a tensor of at least 1 dim, got " ..
            (is_tensor(data) and "a 0-dim tensor" or type(data)))
    end
    local bs = int_list(batch_sizes, "batch_sizes", WHO)
    local n = 0
    for t, b in ipairs(bs) do
        if b < 1 or (t > 1 and b > bs[t - 1]) then
            raise(string.format("tide: %s: batch_sizes must be positive and non-increasing, " ..
                "got %s at step %d", WHO, tostring(b), t))
        end
        n = n + b
    end
    if data:size(1) ~= n then
        raise(string.format("tide: %s: data has %d rows but batch_sizes add up to %d", WHO,
            data:size(1), n))
    end
    if sorted_indices ~= nil then
        if not is_tensor(sorted_indices) or sorted_indices:dim() ~= 1 or
            sorted_indices:numel() ~= (bs[1] or 0) then
            raise(string.format("tide: %s: expected sorted_indices as a 1-d int64 tensor of " ..
                "%d (the batch size), got %s", WHO, bs[1] or 0, is_tensor(sorted_indices) and
                ("shape {" .. table.concat(sorted_indices.shape, ", ") .. "}") or
                type(sorted_indices)))
        end
        if unsorted_indices == nil then
            unsorted_indices = sorted_indices:argsort() -- the inverse permutation
        end
    end
    return PackedSequence._make({ data = data, batch_sizes = batch_sizes,
        sorted_indices = sorted_indices, unsorted_indices = unsorted_indices,
        _bs = bs }) -- _bs: batch_sizes as a Lua list, read once
end

function PackedSequence._make(fields)
    local self = setmetatable({}, PackedSequence)
    FIELDS[self] = fields
    return self
end

setmetatable(PackedSequence, {
    __call = function(_, ...)
        return new(...)
    end,
})

function PackedSequence.is_packed(v)
    return getmetatable(v) == PackedSequence
end

-- the batch sizes as a Lua list (no copy from a device: batch_sizes lives on the CPU)
function PackedSequence:sizes()
    return self._bs
end

-- a PackedSequence with data replaced (same batch sizes and orders)
function PackedSequence:_with_data(data, sorted_indices, unsorted_indices)
    local f = FIELDS[self]
    return PackedSequence._make({ data = data, batch_sizes = f.batch_sizes,
        sorted_indices = sorted_indices or f.sorted_indices,
        unsorted_indices = unsorted_indices or f.unsorted_indices, _bs = f._bs })
end

-- seq:to(...): data (and the index tensors, as PyTorch moves them with it) converted as
-- t:to(...) converts a tensor; batch_sizes stays on the CPU. Returns seq itself when nothing moves.
function PackedSequence:to(...)
    local data = self.data:to(...)
    if rawequal(data, self.data) then
        return self
    end
    local s, u = self.sorted_indices, self.unsorted_indices
    return self:_with_data(data, s and s:to(data.device), u and u:to(data.device))
end

function PackedSequence:cpu()
    return self:to("cpu")
end

function PackedSequence:cuda(n)
    return self:to(n and ("cuda:" .. n) or "cuda")
end

function PackedSequence.__newindex()
    raise("tide: " .. WHO .. ": is read-only (as PyTorch's named tuple); make a new one")
end

function PackedSequence.__tostring(self)
    return string.format("PackedSequence(data = %s %s on %s, batch_sizes = {%s}%s)",
        self.data.dtype, "{" .. table.concat(self.data.shape, ", ") .. "}",
        tostring(self.data.device), table.concat(self._bs, ", "),
        self.sorted_indices and ", sorted" or "")
end

return PackedSequence
