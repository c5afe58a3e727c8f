--- tide.data.Sampler: PyTorch's torch.utils.data.Sampler, the base class of the samplers
-- (SequentialSampler, RandomSampler, SubsetRandomSampler, WeightedRandomSampler and
-- BatchSampler derive from it: `S.super == tide.data.Sampler`). A sampler gives a DataLoader an
-- epoch's dataset indices: it has `len()` and `indices()` (the epoch's list of 1-based
-- indices) or `iter()` (an iterator of them); this class's `iter()` walks `indices()`, so a
-- subclass defines `len()` and either. (DistributedSampler is a dataset in tide, a shard of
-- one, so it derives from tide.data.Dataset instead.)
--
--     local Evens = tide.data.Sampler:extend("Evens")
--     function Evens:init(n) self.n = n end
--     function Evens:len() return math.floor(self.n / 2) end
--     function Evens:indices() local r = {} for i = 2, self.n, 2 do r[#r + 1] = i end return r end
--     tide.data.DataLoader(ds, {sampler = Evens(#ds), batch_size = 4})
local raise = require("tide.autograd.raise")

local Sampler = { __name = "Sampler" }
Sampler.__index = Sampler

-- cls(...) is cls.new(...); what cls lacks comes from base (tide's samplers call this with
-- their class and Sampler; extend's classes get a new that calls init)
local function callable(cls, base)
    return setmetatable(cls, {
        __index = base,
        __call = function(c, ...)
            return c.new(...)
        end,
    })
end
Sampler._callable = callable

function Sampler:extend(name)
    local cls = { __name = name or "Sampler", super = self }
    cls.__index = cls
    cls.__len = function(s)
        return s:len()
    end
    cls.new = function(...)
        local o = setmetatable({}, cls)
        o:init(...)
        return o
    end
    return callable(cls, self)
end

Sampler.new = function(...)
    local o = setmetatable({}, Sampler)
    o:init(...)
    return o
end
callable(Sampler)

-- PyTorch's Sampler(data_source) keeps nothing of it
function Sampler:init() end

function Sampler:len()
    raise(string.format("tide: %s: len() is not defined; define it in the subclass",
        self.__name))
end

-- the indices of indices(), one at a time
function Sampler:iter()
    if type(self.indices) ~= "function" then
        raise(string.format("tide: %s: iter() is not defined; define iter() or indices() in " ..
            "the subclass", self.__name))
    end
    local list, k = self:indices(), 0
    return function()
        k = k + 1
        return list[k]
    end
end

return Sampler
