--- tide.data.Subset(ds, indices): the samples of ds at indices (1-based), in that order.
--
--     local val = tide.data.Subset(train, {1, 5, 9})    -- #val == 3, val:get(2) is train:get(5)
--
-- indices is a Lua list of integers or a 1-d integer tensor. The subset has `len()`, `get(i)`
-- (a negative i counts from the end, -1 the last, as PyTorch's list of indices),
-- and `batch(index)` when ds has it (so a DataLoader over a Subset of a TensorDataset still
-- gathers each batch in C).
local compat = require("tide._compat")
local core = require("tide.core")
local autograd = require("tide.autograd")
local raise = autograd.raise
local Dataset = require("tide.data.Dataset")

local Subset = Dataset:extend("Subset")

function Subset:init(ds, indices, ...)
    local is_options = require("tide.pytorch_args").is_options
    if indices == nil and is_options(ds) and ds.dataset ~= nil then
        -- PyTorch's Subset(dataset=ds, indices=ix): one table by name
        local o = require("tide.op_args").options("Subset", ds, { "dataset", "indices" })
        ds, indices = o.dataset, o.indices
    elseif is_options(indices) and next(indices) ~= nil then
        -- Subset(ds, indices=ix): indices by name (it was read as an empty list)
        indices = require("tide.op_args").options("Subset", indices, { "indices" }).indices
    end
    if select("#", ...) > 0 then
        raise("tide: Subset: expected (dataset, indices), got more arguments")
    end
    ds = require("tide.data._list").dataset(ds) -- a plain Lua list, as PyTorch takes a list
    if type(ds) ~= "table" or type(ds.len) ~= "function" then
        raise("tide: Subset: expected a dataset (tide.data.Dataset, TensorDataset or a plain " ..
            "Lua list of samples), got " .. type(ds))
    end
    if autograd.is_tensor(indices) then
        if indices:dim() ~= 1 or autograd.FLOAT[indices.dtype] or indices.dtype == "bool" then
            raise("tide: Subset: expected indices as a 1-d integer tensor or a list of " ..
                "integers, got a " .. indices:dim() .. "-d " .. indices.dtype .. " tensor")
        end
        indices = indices:to("cpu"):to("int64"):totable()
    elseif type(indices) ~= "table" then
        raise("tide: Subset: expected indices as a list of integers, got " .. type(indices))
    end
    local n = ds:len()
    local list = {}
    for k = 1, #indices do
        local i = indices[k]
        if not compat.is_integer(i) or i < 1 or i > n then
            raise(string.format("tide: Subset: index %s (position %d) out of range 1..%d",
                tostring(i), k, n))
        end
        list[k] = i
    end
    self.dataset = ds
    self.indices = list
    self.index = #list > 0 and core.tensor(list, { dtype = "int64", device = "cpu" }) or
        core.zeros({ 0 }, { dtype = "int64", device = "cpu" })
    if not ds.batch then
        self.batch = false -- the DataLoader then reads samples one by one with get
    end
end

Subset._negative_index = true -- ds[-1] is the last sample (Dataset's __index)

function Subset:len()
    return #self.indices
end

function Subset:get(i)
    local n = #self.indices
    if compat.is_integer(i) and i < 0 and -i <= n then
        i = n + i + 1 -- PyTorch's negative index into its indices list: -1 is the last sample
    end
    if not compat.is_integer(i) or i < 1 or i > n then
        raise(string.format("tide: Subset: index %s out of range 1..%d", tostring(i), n))
    end
    return self.dataset:get(self.indices[i])
end

-- ds[i] follows the dataset the sample comes from (one value of a list or a PyTorch-style
-- __getitem__ is the sample itself, as PyTorch's Subset returns dataset[indices[i]])
function Subset._value_sample(ds, i)
    local n = #ds.indices
    if compat.is_integer(i) and i < 0 and -i <= n then
        i = n + i + 1
    end
    return Dataset._value_sample_of(ds.dataset, ds.indices[i])
end

function Subset:batch(index)
    return self.dataset:batch(self.index:index_select(1, index:to("cpu")))
end

return Subset
