--- tide.data.ChainDataset(datasets): IterableDatasets one after another, PyTorch 1.13's.
--
--     local all = tide.data.ChainDataset({stream1, stream2})   -- also stream1 + stream2
--     for x, y in all:iter() do ... end                          -- stream1's, then stream2's
--
-- `datasets` is the list of parts. `len()` (`#ds` from 5.3) is the sum of the parts' when
-- every part has one, and raises naming the part without one otherwise (PyTorch's TypeError).
-- Map-style datasets are refused: join those with tide.data.ConcatDataset.
local compat = require("tide._compat")
local raise = require("tide.autograd.raise")
local IterableDataset = require("tide.data.IterableDataset")

local ChainDataset = IterableDataset:extend("ChainDataset")

function ChainDataset:init(datasets)
    if type(datasets) ~= "table" or getmetatable(datasets) ~= nil then
        raise("tide: ChainDataset: expected a list of IterableDatasets such as {ds1, ds2}, got " ..
            (type(datasets) == "table" and "a dataset (put it in a list)" or type(datasets)))
    end
    for k, ds in ipairs(datasets) do
        if type(ds) ~= "table" or ds._iterable ~= true then
            local d = IterableDataset._describe(ds)
            if d:find("map-style", 1, true) then
                raise(string.format("tide: ChainDataset: dataset %d is %s, but only " ..
                    "IterableDatasets chain (with ChainDataset or +); join map-style datasets " ..
                    "with tide.data.ConcatDataset", k, d))
            end
            raise(string.format("tide: ChainDataset: dataset %d is %s, expected an " ..
                "IterableDataset (a subclass of tide.data.IterableDataset)", k, d))
        end
    end
    self.datasets = compat.move(datasets, 1, #datasets, 1, {})
end

function ChainDataset:_lenless()
    for k, ds in ipairs(self.datasets) do
        local name = ds:_lenless()
        if name then
            return string.format("%s (dataset %d of the ChainDataset)", name, k)
        end
    end
    return nil
end

function ChainDataset:len()
    local total = 0
    for k, ds in ipairs(self.datasets) do
        local name = ds:_lenless()
        if name then
            raise(string.format("tide: ChainDataset: len() needs every dataset's length, and " ..
                "dataset %d (%s) has no len(); define len() in it, or iterate without a length",
                k, name))
        end
        total = total + ds:len()
    end
    return total
end

--- The parts' samples in turn: each part's iter() is called when the one before it ends.
function ChainDataset:iter()
    local k, read = 0, nil
    local parts = self.datasets
    return function()
        while true do
            if read then
                local sample = read()
                if sample then
                    return compat.unpack(sample, 1, sample.n)
                end
            end
            k = k + 1
            if k > #parts then
                read = nil
                return nil
            end
            read = IterableDataset._stream(parts[k])
        end
    end
end

return ChainDataset
