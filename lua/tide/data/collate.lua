--- tide.data.default_collate(samples): the batch of a list of samples, as the DataLoader makes
-- it when no collate_fn is given; returns one value per field.
--
-- samples[k] is the k-th sample's fields, packed (`table.pack(ds:get(i))`, as `ds[i]` gives).
-- Field by field: tensors are stacked along a new dim 1, numbers and booleans become one
-- tensor (PyTorch's dtypes: integers int64, floats float64, booleans bool), strings a list
-- of strings, and a Lua table (`{input = t, mask = m}`, or a list) is collated key by key,
-- nested tables included, into a table of the same keys (PyTorch's: lists of one length each,
-- a dict by sample 1's keys; nil, PyTorch's None, raises). A custom collate_fn may call it for
-- the fields it does not treat itself.
local compat = require("tide._compat")
local core = require("tide.core")
local raise = require("tide.autograd").raise
local Complex = require("tide.complex.tensor")

-- a tensor, real or of a Lua tensor class (complex, sparse: a table that is no container)
local function tensor_like(v)
    local mt = type(v) == "table" and getmetatable(v)
    return core.is_tensor(v) or Complex.is(v) or (mt and mt.is_sparse == true) or false
end

local collate_values

local function fail(path, msg)
    raise(string.format("tide: DataLoader: cannot batch field %s of the samples (%s); get(i) " ..
        "must return, per field, tensors of one shape, numbers, booleans, strings or tables " ..
        "of those with the same keys", path, msg))
end

-- the batch of the tables in col (n samples): PyTorch's rules. A list (keys 1..#t) is
-- transposed, every sample's of one length; a dict is collated by the first sample's keys, which
-- every sample must have (PyTorch's KeyError), other keys of later samples left out as PyTorch's
local function collate_tables(col, path, n)
    local first = col[1]
    local keys, count = {}, 0
    for k in pairs(first) do
        keys[#keys + 1] = k
        count = count + 1
    end
    local list = count > 0 and count == #first
    table.sort(keys, function(a, b)
        return tostring(a) < tostring(b)
    end)
    for s = 2, n do
        local t = col[s]
        if type(t) ~= "table" or tensor_like(t) then
            fail(path, "sample " .. s .. " has a " .. type(t) .. " where sample 1 has a table")
        end
        if list then
            local m = 0
            for _ in pairs(t) do
                m = m + 1
            end
            if m ~= count or #t ~= count then
                fail(path, "sample " .. s .. " has " .. m .. " elements, sample 1 has " .. count ..
                    ": each element in list of batch should be of equal size")
            end
        else
            for _, k in ipairs(keys) do
                if t[k] == nil then
                    fail(path, "sample " .. s .. " lacks key " .. tostring(k) ..
                        " that sample 1 has")
                end
            end
        end
    end
    local out = {}
    for _, k in ipairs(keys) do
        local sub = {}
        for s = 1, n do
            sub[s] = col[s][k]
        end
        out[k] = collate_values(sub, path .. "." .. tostring(k), n)
    end
    return out
end

function collate_values(col, path, n)
    for s = 1, n do
        if col[s] == nil then
            -- PyTorch's TypeError (batch must contain tensors, ...; found NoneType)
            fail(path, "sample " .. s .. " has nil (PyTorch's None), which cannot be batched")
        end
    end
    local v = col[1]
    local kind = type(v)
    if kind == "string" then
        for s = 2, n do
            if type(col[s]) ~= "string" then
                fail(path, "sample " .. s .. " has a " .. type(col[s]) .. ", sample 1 a string")
            end
        end
        return compat.move(col, 1, n, 1, {})
    elseif kind == "table" and not tensor_like(v) then
        return collate_tables(col, path, n)
    end
    local ok, r
    if kind == "number" and not compat.is_integer(v) then
        -- PyTorch's: a batch of Python floats is float64 (of ints, int64: core.tensor's own)
        ok, r = pcall(core.tensor, col, { dtype = "float64" })
    elseif kind == "number" or kind == "boolean" then
        ok, r = pcall(core.tensor, col)
    else
        ok, r = pcall(core.stack, col, 1)
    end
    if not ok then
        -- the core's message, at the line of the user's `for` (not inside this file)
        fail(path, tostring(r):match("tide:.*") or tostring(r))
    end
    return r
end

return function(samples)
    if type(samples) ~= "table" or tensor_like(samples) or type(samples[1]) ~= "table" then
        raise("tide: default_collate: expected a non-empty list of packed samples " ..
            "({compat.pack(ds:get(i)), ...}), got " .. (tensor_like(samples) and "a tensor" or
            type(samples)))
    end
    -- every sample a packed table: a string or a hole among them failed inside a loop below
    local last = #samples
    for k in pairs(samples) do
        if type(k) == "number" and k > last and k == math.floor(k) then
            last = k
        end
    end
    for s = 2, last do
        if type(samples[s]) ~= "table" then
            raise("tide: default_collate: sample " .. s .. " is " .. (samples[s] == nil and "nil"
                or "a " .. type(samples[s])) .. ", expected a packed sample table like sample 1 " ..
                "({compat.pack(ds:get(i)), ...}, no holes)")
        end
    end
    local out = {}
    local nfields = samples[1].n or #samples[1]
    for f = 1, nfields do
        local col = {}
        for s = 1, #samples do
            col[s] = samples[s][f]
        end
        out[f] = collate_values(col, tostring(f), #samples)
    end
    return compat.unpack(out, 1, nfields)
end
