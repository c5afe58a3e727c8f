--- tide.data.ConcatDataset(datasets): the datasets one after another, PyTorch 1.13's.
--
--     local all = tide.data.ConcatDataset({train, extra})  -- all:len() == train:len() + extra:len()
--     all:get(train:len() + 1)                              -- extra's first sample
--
-- `cumulative_sizes` lists the running totals (PyTorch's: {#d1, #d1 + #d2, ...}). The
-- dataset has `len()` (`#ds` on 5.3+), `get(i)`, `ds[i]`, and `batch(index)` when every part
-- has it, so a DataLoader over TensorDatasets still gathers each batch in C (per part).
-- `ds1 + ds2` on map-style datasets makes one; IterableDatasets are refused (ChainDataset).
local compat = require("tide._compat")
local core = require("tide.core")
local raise = require("tide.autograd").raise
local Dataset = require("tide.data.Dataset")

local ConcatDataset = Dataset:extend("ConcatDataset")

function ConcatDataset:init(...)
    -- ConcatDataset({datasets = {a, b}}): PyTorch's keyword form
    local datasets, rest = require("tide.data._by_name").first("ConcatDataset", { "datasets" },
        ...)
    if select("#", ...) > 1 or rest ~= nil then
        raise("tide: ConcatDataset: expected one list of datasets such as {train, extra}, got " ..
            "more arguments; put them all in the list")
    end
    if type(datasets) ~= "table" or getmetatable(datasets) ~= nil then
        raise("tide: ConcatDataset: expected a list of datasets such as {train, extra}, got " ..
            (type(datasets) == "table" and "a dataset (put it in a list)" or type(datasets)))
    end
    if #datasets == 0 then
        raise("tide: ConcatDataset: datasets should not be an empty list")
    end
    local sizes, total, batch = {}, 0, true
    datasets = compat.move(datasets, 1, #datasets, 1, {})
    for k, ds in ipairs(datasets) do
        ds = require("tide.data._list").dataset(ds) -- a plain Lua list, as PyTorch takes a list
        datasets[k] = ds
        if type(ds) == "table" and ds._iterable == true then
            raise(string.format("tide: ConcatDataset: dataset %d is a %s, an IterableDataset, " ..
                "but ConcatDataset (and + on map-style datasets) joins map-style ones; chain " ..
                "IterableDatasets with tide.data.ChainDataset", k, tostring(ds.__name)))
        end
        if type(ds) ~= "table" or type(ds.len) ~= "function" then
            raise(string.format("tide: ConcatDataset: dataset %d is a %s, expected a dataset " ..
                "(tide.data.Dataset or TensorDataset)", k, type(ds)))
        end
        total = total + ds:len()
        sizes[k] = total
        batch = batch and type(ds.batch) == "function"
    end
    self.datasets = datasets
    self.cumulative_sizes = sizes
    if not batch then
        self.batch = false -- the DataLoader then reads samples one by one with get
    end
end

--- ConcatDataset.cumsum(sequence): PyTorch's static helper, the running totals of the lengths
-- of a list of datasets (or plain lists), the cumulative_sizes a ConcatDataset of them has
function ConcatDataset.cumsum(sequence)
    if type(sequence) ~= "table" or getmetatable(sequence) ~= nil then
        raise("tide: ConcatDataset.cumsum: expected a list of datasets, got " .. type(sequence))
    end
    local out, total = {}, 0
    for k, ds in ipairs(sequence) do
        ds = require("tide.data._list").dataset(ds)
        if type(ds) ~= "table" or type(ds.len) ~= "function" then
            raise(string.format("tide: ConcatDataset.cumsum: element %d is a %s, expected a " ..
                "dataset (with len())", k, type(ds)))
        end
        total = total + ds:len()
        out[k] = total
    end
    return out
end

ConcatDataset._negative_index = true -- ds[-1] is the last sample (Dataset's __index)

function ConcatDataset:len()
    return self.cumulative_sizes[#self.cumulative_sizes]
end

-- the part holding sample i and i's index in it (bisect over cumulative_sizes)
function ConcatDataset:locate(i)
    local sizes = self.cumulative_sizes
    local lo, hi = 1, #sizes
    while lo < hi do
        local mid = compat.idiv(lo + hi, 2)
        if sizes[mid] >= i then
            hi = mid
        else
            lo = mid + 1
        end
    end
    return lo, i - (sizes[lo - 1] or 0)
end

function ConcatDataset:get(i)
    local n = self:len()
    if compat.is_integer(i) and i < 0 then
        -- PyTorch's negative index: -1 is the last sample
        if -i > n then
            raise(string.format("tide: ConcatDataset: absolute value of index should not " ..
                "exceed dataset length (index %d, length %d)", i, n))
        end
        i = n + i + 1
    end
    if not compat.is_integer(i) or i < 1 or i > n then
        raise(string.format("tide: ConcatDataset: index %s out of range 1..%d", tostring(i), n))
    end
    local d, j = self:locate(i)
    return self.datasets[d]:get(j)
end

-- ds[i] follows the dataset the sample comes from (Subset's rule)
function ConcatDataset._value_sample(ds, i)
    local n = ds:len()
    if compat.is_integer(i) and i < 0 and -i <= n then
        i = n + i + 1
    end
    local d, j = ds:locate(i)
    return Dataset._value_sample_of(ds.datasets[d], j)
end

--- One batched tensor per field: each part's samples gathered with its batch(), then put back
-- in the order of index (1-based int64)
function ConcatDataset:batch(index)
    local ids = index:to("cpu"):totable()
    local parts, order = {}, {}
    for k, i in ipairs(ids) do
        local d, j = self:locate(i)
        local part = parts[d]
        if not part then
            part = { ids = {}, pos = {} }
            parts[d] = part
            order[#order + 1] = d
        end
        part.ids[#part.ids + 1] = j
        part.pos[#part.pos + 1] = k
    end
    if #order == 1 then
        local d = order[1]
        return self.datasets[d]:batch(core.tensor(parts[d].ids, { dtype = "int64" }))
    end
    table.sort(order)
    local fields, where, count = {}, {}, 0
    for _, d in ipairs(order) do
        local out = compat.pack(self.datasets[d]:batch(core.tensor(parts[d].ids,
            { dtype = "int64" })))
        for f = 1, out.n do
            fields[f] = fields[f] or {}
            fields[f][#fields[f] + 1] = out[f]
        end
        fields.n = out.n
        for _, k in ipairs(parts[d].pos) do
            count = count + 1
            where[k] = count -- sample k of the batch is row `count` of the concatenation
        end
    end
    local back = core.tensor(where, { dtype = "int64" })
    local res = {}
    for f = 1, fields.n do
        local cat = core.cat(fields[f], 1)
        res[f] = cat:index_select(1, back:to(cat.device))
    end
    return compat.unpack(res, 1, fields.n)
end

return ConcatDataset
