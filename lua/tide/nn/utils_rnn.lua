-- tide.nn.utils.rnn: batches of sequences of different lengths, as torch.nn.utils.rnn in
-- PyTorch 1.13. Padded batches are [T, B, *] ([B, T, *] with batch_first); a PackedSequence
-- (tide.nn.PackedSequence) holds only the real steps, and nn.RNN, nn.LSTM and nn.GRU run it.
--
--     local R = nn.utils.rnn
--     local padded = R.pad_sequence({a, b, c})                     -- [T, 3, *], zeros after
--     local packed = R.pack_padded_sequence(padded, {5, 2, 3}, {enforce_sorted = false})
--     local out, h_n = gru(packed)                                 -- out: a PackedSequence
--     local y, lengths = R.pad_packed_sequence(out)                -- [T, 3, H], {5, 2, 3}
--
-- Lengths are a Lua list of integers or a 1-d integer tensor on the CPU, in batch order;
-- sorted_indices and unsorted_indices are 1-based (tide's indices). Every function moves the
-- elements with index_select and cat, so gradients flow through packing and padding.
local compat = require("tide._compat")
local core = require("tide.core")
local autograd = require("tide.autograd")
local raise = autograd.raise
local is_tensor = autograd.is_tensor
local PackedSequence = require("tide.nn.PackedSequence")
local merge = require("tide.pytorch_args").merge

local M = {}
M.PackedSequence = PackedSequence

local function shape_str(s)
    return "{" .. table.concat(s, ", ") .. "}"
end

-- the options of a call that takes PyTorch's optional parameters `names` by position after its
-- first `lead` arguments (1 or 2), then optionally a table by name: one table. merge numbers
-- the arguments after the first, so a second leading argument (lengths) holds its place there.
local function options(who, lead, names, ...)
    if lead == 1 then
        return merge(who, names, ...) or {}
    end
    local all = { "lengths" }
    for i, name in ipairs(names) do
        all[i + 1] = name
    end
    local opts = merge(who, all, true, ...)
    opts.lengths = nil
    return opts
end

local function check_bool(v, what, who)
    if v ~= nil and type(v) ~= "boolean" then
        raise(string.format("tide: %s: expected %s to be a boolean, got %s", who, what,
            tostring(v)))
    end
    return v == true
end

local function check_pad_value(v, who)
    if v ~= nil and type(v) ~= "number" then
        raise(string.format("tide: %s: expected padding_value to be a number, got %s", who,
            type(v)))
    end
    return v or 0
end

-- the dims after the first two of a [T, B, *] tensor (or after the first of [L, *])
local function tail(shape, from)
    local t = {}
    for i = from, #shape do
        t[#t + 1] = shape[i]
    end
    return t
end

local function concat(a, b)
    local t = {}
    for _, v in ipairs(a) do t[#t + 1] = v end
    for _, v in ipairs(b) do t[#t + 1] = v end
    return t
end

-- an int64 index tensor of a Lua list, on dev
local function index(list, dev)
    return core.tensor(list, { dtype = "int64", device = dev })
end

-- the rows row(t, b) of a padded batch's T x B grid of steps, in its memory order: {B, T} when
-- batch_first, else {T, B}
local function grid_rows(T, B, batch_first, row)
    local idx = {}
    if batch_first then
        for b = 1, B do
            for t = 1, T do idx[#idx + 1] = row(t, b) end
        end
    else
        for t = 1, T do
            for b = 1, B do idx[#idx + 1] = row(t, b) end
        end
    end
    return idx
end

-- one row of padding_value shaped [1, *] like x's rows, for the padded positions to select
local function pad_row(x, value)
    local shape = x.shape
    shape[1] = 1
    return core.full(shape, value, { dtype = x.dtype, device = x.device })
end

-- lengths as a Lua list of integers >= 1, B of them
local function lengths_list(lengths, B, who)
    if B == 0 then -- PyTorch raises too: a packed batch has at least one sequence
        raise(string.format("tide: %s: the batch is empty (0 sequences); pack at least one " ..
            "sequence", who))
    end
    local list
    if is_tensor(lengths) then
        if lengths:dim() ~= 1 or not (lengths.dtype == "int64" or lengths.dtype == "int32") then
            raise(string.format("tide: %s: expected lengths as a Lua list of integers or a 1-d " ..
                "int64 tensor, got %s of shape %s", who, lengths.dtype, shape_str(lengths.shape)))
        end
        if lengths.device.type ~= "cpu" then
            raise(string.format("tide: %s: expected lengths on the CPU, got %s; pass " ..
                "lengths:cpu() (or a Lua list)", who, tostring(lengths.device)))
        end
        list = lengths:to("cpu"):totable()
    elseif type(lengths) == "table" then
        list = {}
        for i, v in ipairs(lengths) do
            if not compat.is_integer(v) then
                raise(string.format("tide: %s: expected integer lengths, got %s at %d", who,
                    tostring(v), i))
            end
            list[i] = v
        end
    else
        raise(string.format("tide: %s: expected lengths as a Lua list of integers or a 1-d " ..
            "int64 tensor, got %s", who, type(lengths)))
    end
    if #list ~= B then
        raise(string.format("tide: %s: expected %d lengths (the batch size), got %d", who, B,
            #list))
    end
    for i, n in ipairs(list) do
        if n < 1 then
            raise(string.format("tide: %s: sequence %d has length %d; every sequence needs at " ..
                "least one step", who, i, n))
        end
    end
    return list
end

-- the batch sizes of sorted lengths: how many sequences run at each step
local function batch_sizes_of(sorted)
    local bs = {}
    for t = 1, sorted[1] do
        local n = 0
        for _, len in ipairs(sorted) do
            if len >= t then n = n + 1 end
        end
        bs[t] = n
    end
    return bs
end

-- pack_padded_sequence(input, lengths[, batch_first[, enforce_sorted]][, {batch_first = false,
-- enforce_sorted = true}]) -> PackedSequence. With enforce_sorted the lengths must not increase along the batch (no
-- sorted_indices then); otherwise the batch is sorted by decreasing length (ties keep their
-- order).
-- a table of PyTorch's keywords standing where `key`'s value goes (pad_sequence({sequences =
-- s}), pack_padded_sequence(x, {lengths = l, ...})): the value, and the table without it as the
-- options; anything else as it is
local function by_name(v, key, ...)
    if type(v) == "table" and not is_tensor(v) and v[key] ~= nil and select("#", ...) == 0 then
        local rest = {}
        for k, x in pairs(v) do
            if k ~= key then
                rest[k] = x
            end
        end
        return v[key], rest
    end
    return v, ...
end

function M.pack_padded_sequence(input, lengths, ...)
    local who = "pack_padded_sequence"
    if select("#", ...) == 0 then -- PyTorch's keywords: (x, {lengths =, ...}), ({input =, ...})
        local x, rest = input, nil
        if type(input) == "table" and not is_tensor(input) and input.input ~= nil then
            x, rest = by_name(input, "input")
            rest.lengths, lengths = nil, rest.lengths
        else
            lengths, rest = by_name(lengths, "lengths")
        end
        if rest ~= nil then
            return M.pack_padded_sequence(x, lengths, rest)
        end
    end
    local opts = options(who, 2, { "batch_first", "enforce_sorted" }, ...)
    core._check_options(opts, who, { "batch_first", "enforce_sorted" })
    local bf = check_bool(opts.batch_first, "batch_first", who)
    local enforce = opts.enforce_sorted == nil or check_bool(opts.enforce_sorted,
        "enforce_sorted", who)
    if not is_tensor(input) or input:dim() < 2 then
        raise(string.format("tide: %s: expected a padded tensor of at least 2 dims ([T, B, *]," ..
            " or [B, T, *] with batch_first), got %s", who, is_tensor(input) and
            ("shape " .. shape_str(input.shape)) or type(input)))
    end
    local T, B = input:size(1), input:size(2)
    if bf then
        T, B = B, T
    end
    if B > 0 and input:numel() == 0 then -- PyTorch's refusal too; no loop over empty steps
        raise(string.format("tide: %s: cannot pack an empty tensor (shape %s); a packed " ..
            "sequence needs elements at each step", who, shape_str(input.shape)))
    end
    local lens = lengths_list(lengths, B, who)
    local order = {}
    for i = 1, B do
        order[i] = i
        if lens[i] > T then
            raise(string.format("tide: %s: sequence %d has length %d but the input has %d " ..
                "time steps", who, i, lens[i], T))
        end
    end
    local sorted_indices
    if enforce then
        for i = 2, B do
            if lens[i] > lens[i - 1] then
                raise(string.format("tide: %s: lengths must be sorted in decreasing order " ..
                    "when enforce_sorted is true, got %d after %d; pass {enforce_sorted = " ..
                    "false} to sort them here", who, lens[i], lens[i - 1]))
            end
        end
    else
        table.sort(order, function(a, b)
            if lens[a] ~= lens[b] then
                return lens[a] > lens[b]
            end
            return a < b
        end)
        sorted_indices = index(order, input.device)
    end
    local sorted = {}
    for s = 1, B do
        sorted[s] = lens[order[s]]
    end
    local bs = batch_sizes_of(sorted)
    -- the rows of the [T*B, *] input (time-major, or batch-major with batch_first) in packed order
    local idx = {}
    for t = 1, #bs do
        for s = 1, bs[t] do
            local b = order[s]
            idx[#idx + 1] = bf and (b - 1) * T + t or (t - 1) * B + b
        end
    end
    local flat = input:reshape(concat({ T * B }, tail(input.shape, 3)))
    local data = flat:index_select(1, index(idx, input.device))
    return PackedSequence(data, index(bs, "cpu"), sorted_indices)
end

-- pad_packed_sequence(seq[, batch_first[, padding_value[, total_length]]][, {batch_first = false,
-- padding_value = 0, total_length =}]) ->
-- padded [T, B, *] (T = total_length when given) in the batch's first order, and the lengths
-- (an int64 CPU tensor)
function M.pad_packed_sequence(seq, ...)
    local who = "pad_packed_sequence"
    local opts = options(who, 1, { "batch_first", "padding_value", "total_length" }, ...)
    core._check_options(opts, who, { "batch_first", "padding_value", "total_length" })
    if not PackedSequence.is_packed(seq) then
        raise(string.format("tide: %s: expected a PackedSequence (from pack_padded_sequence " ..
            "or pack_sequence), got %s", who, is_tensor(seq) and "a tensor" or type(seq)))
    end
    local bf = check_bool(opts.batch_first, "batch_first", who)
    local value = check_pad_value(opts.padding_value, who)
    local bs = seq:sizes()
    local T, B = #bs, bs[1]
    local Ttot = T
    if opts.total_length ~= nil then
        local tl = opts.total_length
        if not compat.is_integer(tl) or tl < T then
            raise(string.format("tide: %s: expected total_length to be an integer at least " ..
                "the length of the longest sequence (%d), got %s", who, T, tostring(tl)))
        end
        Ttot = tl
    end
    local data = seq.data
    local N = data:size(1)
    local ext = core.cat({ data, pad_row(data, value) }, 1)
    local off, start = 0, {}
    for t = 1, T do
        start[t] = off
        off = off + bs[t]
    end
    local idx = grid_rows(Ttot, B, bf, function(t, s)
        if t <= T and s <= bs[t] then
            return start[t] + s
        end
        return N + 1
    end)
    local rest = tail(data.shape, 2)
    local padded = ext:index_select(1, index(idx, data.device))
        :view(concat(bf and { B, Ttot } or { Ttot, B }, rest))
    local lens = {}
    for s = 1, B do
        local n = 0
        for t = 1, T do
            if bs[t] >= s then n = n + 1 end
        end
        lens[s] = n
    end
    if seq.unsorted_indices then
        padded = padded:index_select(bf and 1 or 2, seq.unsorted_indices)
        local inv = seq.unsorted_indices:to("cpu"):totable()
        local orig = {}
        for b = 1, B do
            orig[b] = lens[inv[b]]
        end
        lens = orig
    end
    return padded, index(lens, "cpu")
end

-- the list of tensors (or a tensor, its first dim the list) checked: one dtype and device,
-- equal trailing dims
local function sequences_of(sequences, who)
    if is_tensor(sequences) then
        sequences = sequences:unbind(1)
    end
    if type(sequences) ~= "table" or #sequences == 0 then
        raise(string.format("tide: %s: expected a non-empty list of tensors [L, *], got %s", who,
            type(sequences) == "table" and "an empty table" or type(sequences)))
    end
    local first = sequences[1]
    for i = 1, #sequences do -- not ipairs: a hole (nil) is refused here, not met later
        local s = sequences[i]
        if not is_tensor(s) or s:dim() < 1 then
            raise(string.format("tide: %s: expected sequence %d to be a tensor [L, *], got %s",
                who, i, is_tensor(s) and "a 0-dim tensor" or type(s)))
        end
        local a, b = tail(first.shape, 2), tail(s.shape, 2)
        if shape_str(a) ~= shape_str(b) or s.dtype ~= first.dtype or s.device ~= first.device then
            raise(string.format("tide: %s: sequence %d is %s %s on %s, sequence 1 %s %s on %s; " ..
                "all need the same dims after the first, dtype and device", who, i, s.dtype,
                shape_str(s.shape), tostring(s.device), first.dtype, shape_str(first.shape),
                tostring(first.device)))
        end
    end
    return sequences
end

-- pad_sequence(sequences[, batch_first[, padding_value]][, {batch_first = false,
-- padding_value = 0}]): a list of [L_i, *]
-- tensors padded to [max L, B, *] ([B, max L, *] with batch_first)
function M.pad_sequence(sequences, ...)
    local who = "pad_sequence"
    if select("#", ...) == 0 then -- PyTorch's pad_sequence(sequences=s, ...): one table
        local seqs, rest = by_name(sequences, "sequences")
        if rest ~= nil then
            return M.pad_sequence(seqs, rest)
        end
    end
    local opts = options(who, 1, { "batch_first", "padding_value" }, ...)
    core._check_options(opts, who, { "batch_first", "padding_value" })
    local bf = check_bool(opts.batch_first, "batch_first", who)
    local value = check_pad_value(opts.padding_value, who)
    sequences = sequences_of(sequences, who)
    local B, T = #sequences, 0
    local parts, start, off = {}, {}, 0
    for b, s in ipairs(sequences) do
        local L = s:size(1)
        T = math.max(T, L)
        start[b] = off
        off = off + L
        parts[b] = s
    end
    local row_shape = tail(sequences[1].shape, 2)
    if sequences[1]:numel() == 0 and off > 0 then -- empty rows: nothing to place, however many
        return core.full(concat(bf and { B, T } or { T, B }, row_shape), value,
            { dtype = sequences[1].dtype, device = sequences[1].device })
    end
    parts[#parts + 1] = pad_row(sequences[1], value)
    local pad = off + 1
    local ext = core.cat(parts, 1)
    local idx = grid_rows(T, B, bf, function(t, b)
        return t <= sequences[b]:size(1) and start[b] + t or pad
    end)
    return ext:index_select(1, index(idx, ext.device))
        :view(concat(bf and { B, T } or { T, B }, tail(sequences[1].shape, 2)))
end

-- pack_sequence(sequences[, enforce_sorted][, {enforce_sorted = true}]): pack_padded_sequence
-- of pad_sequence
function M.pack_sequence(sequences, ...)
    local who = "pack_sequence"
    local opts = options(who, 1, { "enforce_sorted" }, ...)
    core._check_options(opts, who, { "enforce_sorted" })
    sequences = sequences_of(sequences, who)
    local lens = {}
    for i, s in ipairs(sequences) do
        lens[i] = s:size(1)
    end
    return M.pack_padded_sequence(M.pad_sequence(sequences), lens,
        { enforce_sorted = opts.enforce_sorted })
end

-- unpad_sequence(padded, lengths[, batch_first][, {batch_first = false}]): the list of [L_i, *]
-- sequences (views of padded)
function M.unpad_sequence(padded, lengths, ...)
    local who = "unpad_sequence"
    local opts = options(who, 2, { "batch_first" }, ...)
    core._check_options(opts, who, { "batch_first" })
    local bf = check_bool(opts.batch_first, "batch_first", who)
    if not is_tensor(padded) or padded:dim() < 2 then
        raise(string.format("tide: %s: expected a padded tensor of at least 2 dims, got %s", who,
            is_tensor(padded) and ("shape " .. shape_str(padded.shape)) or type(padded)))
    end
    local bdim = bf and 1 or 2
    local lens = lengths_list(lengths, padded:size(bdim), who)
    local out = {}
    for b, L in ipairs(lens) do
        if L > padded:size(3 - bdim) then
            raise(string.format("tide: %s: sequence %d has length %d but the input has %d " ..
                "time steps", who, b, L, padded:size(3 - bdim)))
        end
        out[b] = padded:select(bdim, b):narrow(1, 1, L)
    end
    return out
end

-- unpack_sequence(seq): the list of [L_i, *] sequences of a PackedSequence, in batch order
function M.unpack_sequence(seq)
    local padded, lengths = M.pad_packed_sequence(seq, { batch_first = true })
    return M.unpad_sequence(padded, lengths, { batch_first = true })
end

-- invert_permutation(permutation): the inverse of a 1-d permutation tensor of 1-based indices
-- (out[permutation[i]] = i, PyTorch's with tide's indices; the dtype and device kept), or nil
-- for nil, as PyTorch's None
function M.invert_permutation(permutation)
    if permutation == nil then
        return nil
    end
    if not is_tensor(permutation) or permutation:dim() ~= 1 or permutation.dtype == "bool"
        or permutation:is_floating_point() then
        raise("tide: invert_permutation: expected a 1-d integer tensor of 1-based indices, got " ..
            (is_tensor(permutation) and (permutation:dim() .. "-d " .. permutation.dtype) or
            type(permutation)))
    end
    local n = permutation:numel()
    local pos = core.arange(1, n + 1, { dtype = permutation.dtype, device = permutation.device })
    return core.empty({ n }, { dtype = permutation.dtype, device = permutation.device })
        :scatter_(1, permutation, pos)
end

return M
