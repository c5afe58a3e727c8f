--- tide.data.IterableDataset: the base class of datasets read as a stream, PyTorch 1.13's.
--
-- A subclass defines `iter()`, returning what a generic `for` takes: an iterator function
-- (optionally with its state and first control value, as `ipairs(list)` gives) that returns
-- the next sample's fields as several values, nil when the stream ends. Each `iter()` call
-- starts the stream again. `len()` is optional (PyTorch's __len__ is): define it to give the
-- dataset, and a DataLoader over it, a length. `ds1 + ds2` is `ChainDataset({ds1, ds2})`.
--
--     local Count = tide.data.IterableDataset:extend("Count")
--     function Count:init(n) self.n = n end
--     function Count:iter()
--         return coroutine.wrap(function()
--             for i = 1, self.n do coroutine.yield(tide.tensor({i}), i * i) end
--         end)
--     end
--     for x, y in Count(3):iter() do ... end
--     for x, y in tide.data.DataLoader(Count(10), {batch_size = 4}):iter() do ... end
local compat = require("tide._compat")
local class = require("tide._class")
local raise = require("tide.autograd.raise")

local IterableDataset = { __name = "IterableDataset", _iterable = true }

-- metamethods are not inherited through __index: every class gets its own copies
local function install(cls)
    cls.__index = function(self, k)
        if compat.is_integer(k) then
            raise(string.format("tide: %s: an IterableDataset has no indexing (ds[%d]); read " ..
                "its samples with ds:iter(), or make it a map-style tide.data.Dataset", cls.__name,
                k))
        end
        return cls[k]
    end
    cls.__len = function(self)
        return self:len()
    end
    cls.__tostring = function(self)
        if self:_lenless() then
            return cls.__name .. "(iterable)"
        end
        return string.format("%s(iterable, %d samples)", cls.__name, self:len())
    end
    cls.__add = function(a, b)
        return require("tide.data.ChainDataset")({ a, b })
    end
end

install(IterableDataset)
class.class(IterableDataset)

--- A subclass named `name`; `Sub(...)` makes an instance and calls `Sub:init(...)`.
function IterableDataset:extend(name)
    local cls = { __name = name or "IterableDataset", super = self }
    install(cls)
    return class.class(cls, self)
end

function IterableDataset.new(cls, ...)
    local o = setmetatable({}, cls)
    o:init(...)
    return o
end

function IterableDataset:init() end

function IterableDataset:iter()
    if type(self.__iter__) == "function" then
        return self:__iter__() -- PyTorch's spelling: an iterator function, as iter() returns
    end
    raise(string.format("tide: %s: iter() is not defined; define it in the subclass, returning " ..
        "an iterator function that gives a sample per call and nil at the end", self.__name))
end

function IterableDataset:len()
    if type(self.__len__) == "function" then
        return self:__len__() -- PyTorch's spelling
    end
    raise(string.format("tide: %s: len() is not defined; an IterableDataset's len() is " ..
        "optional: define it in the subclass to give the dataset a length", self.__name))
end

-- map-style readers (Subset, DistributedSampler) reach this: say what to do instead
function IterableDataset:get(i)
    raise(string.format("tide: %s: an IterableDataset has no get(%s); read its samples with " ..
        "ds:iter(), or make it a map-style tide.data.Dataset", self.__name, tostring(i)))
end

-- nil when the dataset has a len(), else the name of what lacks one (the DataLoader's and
-- ChainDataset's messages name it)
function IterableDataset:_lenless()
    if self.len == IterableDataset.len and type(self.__len__) ~= "function" then
        return self.__name
    end
    return nil
end

-- v described for a message: "a TensorDataset, a map-style dataset", "a number", ...
function IterableDataset._describe(v)
    if type(v) ~= "table" then
        return "a " .. type(v)
    elseif v._iterable == true then
        return "a " .. tostring(v.__name) .. ", an IterableDataset"
    elseif type(v.get) == "function" and type(v.len) == "function" then
        return "a " .. tostring(v.__name or "table") .. ", a map-style dataset"
    end
    return "a " .. tostring(v.__name or "table")
end

-- a function reading ds's stream (a new ds:iter()) one sample at a time: each call returns the
-- next sample's fields packed ({n =, ...}), nil at the end; once ended it stays ended without
-- calling the iterator again (an ended coroutine.wrap raises when called)
function IterableDataset._stream(ds)
    local f, s, c = ds:iter()
    if type(f) ~= "function" then
        raise(string.format("tide: %s: iter() returned %s, expected an iterator function " ..
            "that gives a sample per call and nil at the end", ds.__name,
            f == nil and "nil" or (tostring(f) .. " (a " .. type(f) .. ")")))
    end
    local ended = false
    return function()
        if ended then
            return nil
        end
        local sample = compat.pack(f(s, c))
        c = sample[1]
        if c == nil then
            ended = true
            return nil
        end
        return sample
    end
end

return IterableDataset
