--- tide.data.Dataset: the base class of datasets.
--
-- A dataset has a length (`#ds`) and samples 1..#ds. A subclass defines `len()` and `get(i)`,
-- which returns the sample's fields as several values (`local x, y = ds:get(i)`); `ds[i]`
-- returns them packed in a table. A dataset that can gather many samples at once defines
-- `batch(index)` (index: a 1-based int64 tensor) returning one batched tensor per field; the
-- DataLoader then builds each batch with that one call instead of one `get` per sample.
-- `ds1 + ds2` is `ConcatDataset({ds1, ds2})`, as in PyTorch. A class that defines
-- `_slice(range)` (TensorDataset) answers `ds[{a, b}]`, PyTorch's `ds[a-1:b]`; any other key
-- that is neither an integer nor a string raises rather than reading as nil.
--
--     local Squares = tide.data.Dataset:extend("Squares")
--     function Squares:init(n) self.n = n end
--     function Squares:len() return self.n end
--     function Squares:get(i) return tide.tensor({i}), i * i end
--
-- A subclass ported from PyTorch may define `__len__()` and `__getitem__(i)` instead (i 1-based,
-- as get's): len and get then call them, so the DataLoader, random_split, Subset and
-- ConcatDataset take it as they take one that defines len and get.
local compat = require("tide._compat")
local class = require("tide._class")
local raise = require("tide.autograd.raise")

local Dataset = { __name = "Dataset" }

-- ds[i]: the sample's fields packed in a list; one field that is itself a plain table (PyTorch's
-- dict or list sample, {image = t, landmarks = l}), or the one value a PyTorch-style
-- __getitem__ returns, is ds[i] as it is, as PyTorch's dataset[i] is what __getitem__ returns.
-- A class may decide per sample with cls._value_sample(ds, i) (a plain Lua list's number is the
-- sample itself; Subset and ConcatDataset ask the dataset the sample comes from).
local function value_sample(ds, i)
    local cls = getmetatable(ds)
    if type(cls) ~= "table" then
        return false
    end
    local f = cls._value_sample
    if type(f) == "function" then
        return f(ds, i)
    end
    return type(cls.__getitem__) == "function"
end

local function sample_of(packed, ds, i)
    if packed.n == 1 then
        local v = packed[1]
        local plain = type(v) == "table" and getmetatable(v) == nil
        if plain or value_sample(ds, i) then
            return v
        end
    end
    return packed
end
Dataset._value_sample_of = value_sample
Dataset._sample_of = sample_of

-- metamethods are not inherited through __index: every class gets its own copies
local function install(cls)
    cls.__index = function(self, k)
        local i = type(k) == "number" and compat.tointeger(k) or nil -- 2.0 is sample 2
        if i ~= nil then
            local n = self:len()
            -- Subset and ConcatDataset take PyTorch's negative index (-1 the last): their get
            if (i < 1 or i > n) and not (i < 0 and cls._negative_index) then
                raise(string.format("tide: %s: index %d out of range 1..%d", cls.__name, i, n))
            end
            return sample_of(compat.pack(self:get(i)), self, i)
        end
        if type(k) == "string" then
            return cls[k] -- a method, or nil for a field the instance lacks (ds.transform)
        end
        if type(k) == "table" and cls._slice and getmetatable(k) == nil then
            return self:_slice(k)
        end
        raise(string.format("tide: %s: cannot index a dataset with %s; ds[i] takes a sample's " ..
            "1-based index%s", cls.__name, type(k) == "number" and tostring(k) or
            (require("tide.autograd").is_tensor(k) and "a tensor" or "a " .. type(k)),
            cls._slice and ", ds[{a, b}] the samples a..b" or ""))
    end
    cls.__len = function(self)
        return self:len()
    end
    cls.__tostring = function(self)
        return string.format("%s(%d samples)", cls.__name, self:len())
    end
    -- PyTorch's Dataset.__add__ (required here: ConcatDataset requires this file)
    cls.__add = function(a, b)
        return require("tide.data.ConcatDataset")({ a, b })
    end
end

install(Dataset)
class.class(Dataset)

--- A subclass named `name`; `Sub(...)` makes an instance and calls `Sub:init(...)`.
function Dataset:extend(name)
    local cls = { __name = name or "Dataset", super = self }
    install(cls)
    return class.class(cls, self)
end

function Dataset.new(cls, ...)
    local o = setmetatable({}, cls)
    o:init(...)
    return o
end

function Dataset:init() end

function Dataset:len()
    local pytorch_len = self.__len__
    if type(pytorch_len) == "function" then
        return pytorch_len(self)
    end
    require("tide.autograd").raise(string.format(
        "tide: %s: len() is not defined; define it (or PyTorch's __len__) in the subclass",
        self.__name))
end

function Dataset:get(i)
    local pytorch_getitem = self.__getitem__
    if type(pytorch_getitem) == "function" then
        return pytorch_getitem(self, i)
    end
    require("tide.autograd").raise(string.format(
        "tide: %s: get(%s) is not defined; define it (or PyTorch's __getitem__) in the subclass",
        self.__name, tostring(i)))
end

return Dataset
