-- tide.data.IterableDataset, ChainDataset, get_worker_info and the DataLoader over a stream
-- (PyTorch 1.13's torch.utils.data: values checked against it)
local tide = require("tide")
local data = require("tide.data")

local function raises_here(msg, f, ...)
    local ok, err = pcall(f, ...)
    assert.is_false(ok)
    local at = err:find("tide: ", 1, true)
    assert.matches("iterable_dataset_spec%.lua:%d+: $", err:sub(1, at - 1))
    assert.are.equal("tide: " .. msg, err:sub(at))
end

-- 1..n from a generator (an ended coroutine.wrap raises when called again)
local Count = data.IterableDataset:extend("Count")
function Count:init(n)
    self.n = n
    self.calls = 0
end
function Count:iter()
    self.calls = self.calls + 1
    return coroutine.wrap(function()
        for i = 1, self.n do
            coroutine.yield(i)
        end
    end)
end

-- the same with a length
local Sized = Count:extend("Sized")
function Sized:len()
    return self.n
end

-- samples of two fields: the tensor {i, i * i} and the number 10 * i, from a closure
local Pairs = data.IterableDataset:extend("Pairs")
function Pairs:init(n)
    self.n = n
end
function Pairs:iter()
    local i = 0
    return function()
        i = i + 1
        if i <= self.n then
            return tide.tensor({ i, i * i }), 10 * i
        end
    end
end

local function values(batches)
    local out = {}
    for _, b in ipairs(batches) do
        out[#out + 1] = b:totable()
    end
    return out
end

local function epoch(loader)
    local out = {}
    for b in loader:iter() do
        out[#out + 1] = b
    end
    return values(out)
end

local function stream(ds)
    local out = {}
    for v in ds:iter() do
        out[#out + 1] = v
    end
    return out
end

local function range_ds(n)
    return data.TensorDataset(tide.arange(1, n + 1, { dtype = "int64" }))
end

describe("IterableDataset", function()
    it("is iterated with for ... in ds:iter(), each call a new stream", function()
        local ds = Count(4)
        assert.are.same({ 1, 2, 3, 4 }, stream(ds))
        assert.are.same({ 1, 2, 3, 4 }, stream(ds))
        assert.are.equal(2, ds.calls)
        assert.are.equal("Count(iterable)", tostring(ds))
        assert.are.equal("Sized(iterable, 4 samples)", tostring(Sized(4)))
        assert.are.equal(4, Sized(4):len())
    end)

    it("takes what a generic for takes from iter(): ipairs of a list", function()
        local L = data.IterableDataset:extend("L")
        function L:iter()
            return ipairs({ "a", "b" })
        end
        local got = {}
        for i, v in data.DataLoader(L(), { batch_size = 2 }):iter() do
            got[#got + 1] = { i:totable(), v }
        end
        assert.are.same({ { { 1, 2 }, { "a", "b" } } }, got)
    end)

    it("says what is missing: iter(), len(), indexing, get", function()
        local Bare = data.IterableDataset:extend("Bare")
        raises_here("Bare: iter() is not defined; define it in the subclass, returning an " ..
            "iterator function that gives a sample per call and nil at the end", function()
                return Bare():iter()
            end)
        raises_here("Count: len() is not defined; an IterableDataset's len() is optional: " ..
            "define it in the subclass to give the dataset a length", function()
                return Count(3):len()
            end)
        raises_here("Count: an IterableDataset has no indexing (ds[1]); read its samples " ..
            "with ds:iter(), or make it a map-style tide.data.Dataset", function()
                return Count(3)[1]
            end)
        raises_here("Count: an IterableDataset has no get(2); read its samples with " ..
            "ds:iter(), or make it a map-style tide.data.Dataset", function()
                return Count(3):get(2)
            end)
        local Five = data.IterableDataset:extend("Five")
        function Five:iter()
            return 5
        end
        raises_here("Five: iter() returned 5 (a number), expected an iterator function that " ..
            "gives a sample per call and nil at the end", function()
                for _ in data.DataLoader(Five()):iter() do end
            end)
    end)

    it("has #ds from Lua 5.2 #lua53", function()
        if _VERSION == "Lua 5.1" then
            return
        end
        assert.are.equal(7, #Sized(7))
    end)
end)

describe("DataLoader over an IterableDataset", function()
    it("batches the stream: 10 numbers by 3", function()
        assert.are.same({ { 1, 2, 3 }, { 4, 5, 6 }, { 7, 8, 9 }, { 10 } },
            epoch(data.DataLoader(Count(10), { batch_size = 3 })))
        assert.are.same({ { 1, 2, 3 }, { 4, 5, 6 }, { 7, 8, 9 } },
            epoch(data.DataLoader(Count(10), { batch_size = 3, drop_last = true })))
        assert.are.same({ { 1, 2, 3 }, { 4, 5, 6 } },
            epoch(data.DataLoader(Count(6), { batch_size = 3 })))
        assert.are.same({ { 1 }, { 2 } }, epoch(data.DataLoader(Count(2))))
        assert.are.same({}, epoch(data.DataLoader(Count(0), { batch_size = 3 })))
        assert.are.same({}, epoch(data.DataLoader(Count(2), { batch_size = 3,
            drop_last = true })))
    end)

    it("stops calling an ended stream", function()
        local f = data.DataLoader(Count(4), { batch_size = 3 }):iter()
        assert.are.same({ 1, 2, 3 }, f():totable())
        assert.are.same({ 4 }, f():totable())
        assert.is_nil(f())
        assert.is_nil(f())
    end)

    it("stacks tensors and makes numbers a tensor, field by field", function()
        local xs, ys = {}, {}
        for x, y in data.DataLoader(Pairs(5), { batch_size = 2 }):iter() do
            xs[#xs + 1] = x:totable()
            ys[#ys + 1] = y:totable()
        end
        assert.are.same({ { { 1, 1 }, { 2, 4 } }, { { 3, 9 }, { 4, 16 } }, { { 5, 25 } } }, xs)
        assert.are.same({ { 10, 20 }, { 30, 40 }, { 50 } }, ys)
    end)

    it("takes collate_fn and pin_memory", function()
        local sums = {}
        local loader = data.DataLoader(Pairs(4), { batch_size = 3, pin_memory = true,
            collate_fn = function(samples)
                local s = 0
                for _, sample in ipairs(samples) do
                    s = s + sample[2]
                end
                return s, #samples
            end })
        for s, n in loader:iter() do
            sums[#sums + 1] = { s, n }
        end
        assert.are.same({ { 60, 3 }, { 40, 1 } }, sums)
        local x = data.DataLoader(Pairs(2), { batch_size = 2, pin_memory = true }):iter()()
        assert.are.same({ { 1, 1 }, { 2, 4 } }, x:totable())
    end)

    it("restarts the dataset's iter() each epoch", function()
        local ds = Count(5)
        local loader = data.DataLoader(ds, { batch_size = 2 })
        assert.are.same({ { 1, 2 }, { 3, 4 }, { 5 } }, epoch(loader))
        assert.are.same({ { 1, 2 }, { 3, 4 }, { 5 } }, epoch(loader))
        assert.are.equal(2, ds.calls)
    end)

    it("has len() when the dataset has one: ceil, floor with drop_last", function()
        assert.are.equal(4, data.DataLoader(Sized(10), { batch_size = 3 }):len())
        assert.are.equal(3, data.DataLoader(Sized(10), { batch_size = 3, drop_last = true }):len())
        assert.are.equal(2, data.DataLoader(Sized(6), { batch_size = 3 }):len())
        assert.are.equal(4, data.DataLoader(Sized(2) + Sized(8), { batch_size = 3 }):len())
        if _VERSION ~= "Lua 5.1" then
            assert.are.equal(4, #data.DataLoader(Sized(10), { batch_size = 3 }))
        end
        assert.are.equal("DataLoader(Sized(iterable, 10 samples), batch_size=3, " ..
            "shuffle=false, drop_last=false, 4 batches)",
            tostring(data.DataLoader(Sized(10), { batch_size = 3 })))
        assert.are.equal("DataLoader(Count(iterable), batch_size=3, drop_last=true)",
            tostring(data.DataLoader(Count(10), { batch_size = 3, drop_last = true })))
    end)

    it("raises on len() when the dataset has none", function()
        raises_here("DataLoader: len() needs the dataset's length, and Count has no len() " ..
            "(an IterableDataset's is optional); define len() in it, or count the batches " ..
            "as you iterate", function()
                return data.DataLoader(Count(10), { batch_size = 3 }):len()
            end)
        raises_here("DataLoader: len() needs the dataset's length, and Count (dataset 2 of " ..
            "the ChainDataset) has no len() (an IterableDataset's is optional); define len() " ..
            "in it, or count the batches as you iterate", function()
                return data.DataLoader(Sized(1) + Count(2)):len()
            end)
    end)

    it("refuses shuffle, sampler and batch_sampler, naming the fix", function()
        raises_here("DataLoader: shuffle = true does not apply to an IterableDataset (Count " ..
            "gives its samples in its own order); leave shuffle out, or shuffle inside " ..
            "Count:iter()", function()
                return data.DataLoader(Count(3), { shuffle = true })
            end)
        raises_here("DataLoader: sampler does not apply to an IterableDataset (Count has no " ..
            "indices to sample); leave sampler out, and choose the samples inside " ..
            "Count:iter()", function()
                return data.DataLoader(Count(3), { sampler = { 1, 2 } })
            end)
        raises_here("DataLoader: batch_sampler does not apply to an IterableDataset (Count " ..
            "has no indices to batch); leave batch_sampler out, and batch with batch_size " ..
            "and drop_last", function()
                return data.DataLoader(Count(3), { batch_sampler = data.BatchSampler({ 1 }, 1,
                    false) })
            end)
        -- shuffle = false is PyTorch's accepted "unspecified"
        assert.are.same({ { 1, 2, 3 } },
            epoch(data.DataLoader(Count(3), { batch_size = 3, shuffle = false })))
        local ok, err = pcall(data.DataLoader, Count(3), { batch_sise = 3 })
        assert.is_false(ok)
        assert.matches("tide: DataLoader: .*batch_sise", err)
    end)
end)

describe("ChainDataset", function()
    it("reads each dataset in turn, and len() sums theirs", function()
        local c = data.ChainDataset({ Count(2), Sized(3), Count(0), Count(1) })
        assert.are.same({ 1, 2, 1, 2, 3, 1 }, stream(c))
        assert.are.same({ 1, 2, 1, 2, 3, 1 }, stream(c))
        assert.are.equal(4, #c.datasets)
        local s = data.ChainDataset({ Sized(2), Sized(3) })
        assert.are.equal(5, s:len())
        assert.are.equal("ChainDataset(iterable, 5 samples)", tostring(s))
        assert.are.equal("ChainDataset(iterable)", tostring(c))
        assert.are.same({}, stream(data.ChainDataset({})))
        assert.are.equal(0, data.ChainDataset({}):len())
        assert.are.same({ { 1, 2, 3 }, { 4, 5, 1 }, { 2, 3 } },
            epoch(data.DataLoader(data.ChainDataset({ Count(5), Count(3) }), { batch_size = 3 })))
    end)

    it("keeps every field of the samples", function()
        local got = {}
        for x, y in data.ChainDataset({ Pairs(1), Pairs(2) }):iter() do
            got[#got + 1] = { x:totable(), y }
        end
        assert.are.same({ { { 1, 1 }, 10 }, { { 1, 1 }, 10 }, { { 2, 4 }, 20 } }, got)
    end)

    it("raises on len() when a dataset has none (PyTorch's TypeError)", function()
        raises_here("ChainDataset: len() needs every dataset's length, and dataset 2 (Count) " ..
            "has no len(); define len() in it, or iterate without a length", function()
                return data.ChainDataset({ Sized(2), Count(3) }):len()
            end)
    end)

    it("refuses what is not a list of IterableDatasets", function()
        raises_here("ChainDataset: expected a list of IterableDatasets such as {ds1, ds2}, " ..
            "got number", function()
                return data.ChainDataset(3)
            end)
        raises_here("ChainDataset: expected a list of IterableDatasets such as {ds1, ds2}, " ..
            "got a dataset (put it in a list)", function()
                return data.ChainDataset(Count(3))
            end)
        raises_here("ChainDataset: dataset 2 is a TensorDataset, a map-style dataset, but " ..
            "only IterableDatasets chain (with ChainDataset or +); join map-style datasets " ..
            "with tide.data.ConcatDataset", function()
                return data.ChainDataset({ Count(3), range_ds(2) })
            end)
        raises_here("ChainDataset: dataset 1 is a number, expected an IterableDataset (a " ..
            "subclass of tide.data.IterableDataset)", function()
                return data.ChainDataset({ 7 })
            end)
    end)
end)

describe("+ on datasets", function()
    it("chains IterableDatasets into a ChainDataset", function()
        local c = Count(2) + Sized(3)
        assert.are.equal("ChainDataset", c.__name)
        assert.are.same({ 1, 2, 1, 2, 3 }, stream(c))
        assert.are.same({ 1, 1, 2, 1, 2, 3 }, stream(Count(1) + Count(2) + Count(3)))
        assert.are.equal(6, (Sized(1) + Sized(2) + Sized(3)):len())
    end)

    it("keeps joining map-style datasets into a ConcatDataset", function()
        local c = range_ds(2) + range_ds(3)
        assert.are.equal("ConcatDataset", c.__name)
        assert.are.same({ 2, 5 }, c.cumulative_sizes)
        assert.are.equal(2, c:get(4):item())
        local direct = data.ConcatDataset({ range_ds(2), range_ds(1) })
        assert.are.equal(3, direct:len())
    end)

    it("refuses to mix map-style and iterable datasets", function()
        raises_here("ConcatDataset: dataset 2 is a Count, an IterableDataset, but " ..
            "ConcatDataset (and + on map-style datasets) joins map-style ones; chain " ..
            "IterableDatasets with tide.data.ChainDataset", function()
                return range_ds(2) + Count(2)
            end)
        raises_here("ConcatDataset: dataset 1 is a Sized, an IterableDataset, but " ..
            "ConcatDataset (and + on map-style datasets) joins map-style ones; chain " ..
            "IterableDatasets with tide.data.ChainDataset", function()
                return data.ConcatDataset({ Sized(2), range_ds(2) })
            end)
        raises_here("ChainDataset: dataset 2 is a TensorDataset, a map-style dataset, but " ..
            "only IterableDatasets chain (with ChainDataset or +); join map-style datasets " ..
            "with tide.data.ConcatDataset", function()
                return Count(2) + range_ds(2)
            end)
        raises_here("ChainDataset: dataset 2 is a number, expected an IterableDataset (a " ..
            "subclass of tide.data.IterableDataset)", function()
                return Count(2) + 1
            end)
    end)
end)

describe("get_worker_info", function()
    it("is nil: tide's DataLoader reads in the calling process", function()
        assert.is_nil(data.get_worker_info())
        local seen = {}
        local W = data.IterableDataset:extend("W")
        function W:iter()
            seen[#seen + 1] = data.get_worker_info() == nil
            return ipairs({ 1 })
        end
        for _ in data.DataLoader(W()):iter() do end
        assert.are.same({ true }, seen)
    end)
end)
