--- tide.data.Dataset: the base class of datasets.
--
-- A dataset has a length (`#ds`) and samples 1..#ds. A subclass defines `len()` and `get(i)`,
-- which returns the sample's fields as several values (`local x, y = ds:get(i)`); `ds[i]`
-- returns them packed in a table. A dataset that can gather many samples at once defines
-- `batch(index)` (index: a 1-based int64 tensor) returning one batched tensor per field; the
-- DataLoader then builds each batch with that one call instead of one `get` per sample.
-- `ds1 + ds2` is `ConcatDataset({ds1, ds2})`, as in PyTorch.
--
--     local Squares = tide.data.Dataset:extend("Squares")
--     function Squares:init(n) self.n = n end
--     function Squares:len() return self.n end
--     function Squares:get(i) return tide.tensor({i}), i * i end
local compat = require("tide._compat")
local class = require("tide._class")
local raise = require("tide.autograd.raise")

local Dataset = { __name = "Dataset" }

-- metamethods are not inherited through __index: every class gets its own copies
local function install(cls)
    cls.__index = function(self, k)
        if compat.is_integer(k) then
            local n = self:len()
            if k < 1 or k > n then
                raise(string.format("tide: %s: index %d out of range 1..%d", cls.__name, k, n))
            end
            return compat.pack(self:get(k))
        end
        return cls[k]
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
    require("tide.autograd").raise(string.format(
        "tide: %s: len() is not defined; define it in the subclass", self.__name))
end

function Dataset:get(i)
    require("tide.autograd").raise(string.format(
        "tide: %s: get(%s) is not defined; define it in the subclass", self.__name, tostring(i)))
end

return Dataset
