-- tide.data: Subset, random_split, DataLoader's collate_fn and sampler, table samples,
-- default_collate, text
local tide = require("tide")
local data = require("tide.data")

local function raises_here(pattern, f, ...)
    local ok, err = pcall(f, ...)
    assert.is_false(ok)
    assert.matches("data_surface_spec%.lua:%d+: tide: " .. pattern, err)
end

local function ids_of(ds)
    local r = {}
    for i = 1, ds:len() do
        r[i] = math.tointeger(ds:get(i)[1]:item())
    end
    return r
end

local function range_ds(n)
    return data.TensorDataset(tide.arange(1, n + 1, { dtype = "int64" }):view(n, 1),
        tide.arange(1, n + 1, { dtype = "float32" }) * 10)
end

-- a dataset without batch(): sample i is {x = {i, i}, meta = {id = i, tag = "s<i>"}}, i % 2 == 0
local Tabled = data.Dataset:extend("Tabled")
function Tabled:init(n)
    self.n = n
end
function Tabled:len()
    return self.n
end
function Tabled:get(i)
    return { x = tide.tensor({ i, i }), meta = { id = i, tag = "s" .. i } }, i % 2 == 0
end

describe("Subset", function()
    it("reads the samples at its indices, in order, and batches through the dataset #lua53", function()
        local s = data.Subset(range_ds(10), { 3, 1, 7 })
        assert.are.equal(3, #s)
        assert.are.same({ 3, 1, 7 }, ids_of(s))
        local batches = {}
        for x, y in data.DataLoader(s, { batch_size = 2 }):iter() do
            batches[#batches + 1] = { x:view(-1):totable(), y:totable() }
        end
        assert.are.same({ { { 3, 1 }, { 30, 10 } }, { { 7 }, { 70 } } }, batches)
        local t = data.Subset(Tabled(4), tide.tensor({ 4, 2 }))
        assert.are.same(4, t:get(1).meta.id)
        assert.is_false(t.batch)
    end)

    it("refuses indices out of range at the caller's line", function()
        raises_here("Subset: index 11 %(position 2%) out of range 1..10", function()
            return data.Subset(range_ds(10), { 1, 11 })
        end)
        raises_here("Subset: index 4 out of range 1..1", function()
            return data.Subset(range_ds(10), { 1 }):get(4)
        end)
    end)
end)

describe("random_split", function()
    it("splits by counts into disjoint subsets covering the dataset, reproducibly #lua53", function()
        local ds = range_ds(10)
        local parts = data.random_split(ds, { 3, 7 }, { seed = 5 })
        assert.are.equal(2, #parts)
        assert.are.equal(3, #parts[1])
        assert.are.equal(7, #parts[2])
        local seen = {}
        for _, p in ipairs(parts) do
            for _, i in ipairs(ids_of(p)) do
                assert.is_nil(seen[i])
                seen[i] = true
            end
        end
        for i = 1, 10 do
            assert.is_true(seen[i])
        end
        local again = data.random_split(ds, { 3, 7 }, { seed = 5 })
        assert.are.same(ids_of(parts[1]), ids_of(again[1]))
        tide.manual_seed(1)
        local a = ids_of(data.random_split(ds, { 5, 5 })[1])
        tide.manual_seed(1)
        assert.are.same(a, ids_of(data.random_split(ds, { 5, 5 })[1]))
    end)

    it("splits by fractions as PyTorch 1.13: floors, then the remainder round-robin #lua53", function()
        local parts = data.random_split(range_ds(10), { 0.33, 0.33, 0.34 }, { seed = 1 })
        -- floor: 3, 3, 3; remainder 1 goes to the first
        assert.are.same({ 4, 3, 3 }, { #parts[1], #parts[2], #parts[3] })
        parts = data.random_split(range_ds(7), { 0.5, 0.5 }, { seed = 1 })
        assert.are.same({ 4, 3 }, { #parts[1], #parts[2] })
    end)

    it("refuses lengths that do not fit and unknown options", function()
        raises_here("random_split: the lengths sum to 9 but the dataset has 10 samples", function()
            return data.random_split(range_ds(10), { 4, 5 })
        end)
        raises_here('random_split: unknown option "sed" %(did you mean "seed"%?%)', function()
            return data.random_split(range_ds(10), { 5, 5 }, { sed = 1 })
        end)
        raises_here("random_split: length 2 is %-1", function()
            return data.random_split(range_ds(10), { 11, -1 })
        end)
    end)
end)

describe("DataLoader collate_fn, sampler and table samples", function()
    it("collates table samples key by key, nested, strings as lists", function()
        local got = {}
        for sample, even in data.DataLoader(Tabled(5), { batch_size = 3 }):iter() do
            got[#got + 1] = { sample.x.shape, sample.meta.id:totable(), sample.meta.tag,
                even:totable() }
        end
        assert.are.same({ { 3, 2 }, { 1, 2, 3 }, { "s1", "s2", "s3" }, { false, true, false } },
            got[1])
        assert.are.same({ { 2, 2 }, { 4, 5 }, { "s4", "s5" }, { true, false } }, got[2])
    end)

    it("says which nested field it cannot batch", function()
        local Bad = data.Dataset:extend("Bad")
        function Bad:len() return 2 end
        function Bad:get(i) return { a = { b = tide.zeros(i) } } end
        local ok, err = pcall(function()
            for _ in data.DataLoader(Bad(), { batch_size = 2 }):iter() do end
        end)
        assert.is_false(ok)
        assert.matches("data_surface_spec%.lua:%d+: tide: DataLoader: cannot batch field 1%.a%.b", err)
    end)

    it("calls collate_fn with the packed samples, also for datasets with batch()", function()
        local seen
        local loader = data.DataLoader(range_ds(5), {
            batch_size = 2,
            collate_fn = function(samples)
                seen = #samples
                local x = data.default_collate(samples)
                return x:sum(), samples[1].n
            end,
        })
        local sums = {}
        for s, nfields in loader:iter() do
            sums[#sums + 1] = s:item()
            assert.are.equal(2, nfields)
        end
        assert.are.same({ 3, 7, 5 }, sums)
        assert.are.equal(1, seen)
    end)

    it("takes the epoch's order from a sampler: a list, an iter() object, a DistributedSampler #lua53", function()
        local function epoch(loader)
            local r = {}
            for x in loader:iter() do
                for _, v in ipairs(x:view(-1):totable()) do
                    r[#r + 1] = v
                end
            end
            return r
        end
        local list = data.DataLoader(range_ds(10), { batch_size = 2, sampler = { 9, 2, 2, 5 } })
        assert.are.equal(2, #list)
        assert.are.same({ 9, 2, 2, 5 }, epoch(list))
        local Reverse = {
            len = function() return 4 end,
            iter = function()
                local i = 5
                return function()
                    i = i - 1
                    if i > 0 then return i end
                end
            end,
        }
        assert.are.same({ 4, 3, 2, 1 }, epoch(data.DataLoader(range_ds(6), { batch_size = 3,
            sampler = Reverse })))
        local ds = range_ds(10)
        local shard = data.DistributedSampler(ds, { rank = 1, world_size = 2, seed = 3 })
        assert.are.same(shard:indices(), epoch(data.DataLoader(ds, { batch_size = 4,
            sampler = shard })))
        -- a sampler over a dataset without batch(): samples read with get
        local t = data.DataLoader(Tabled(4), { batch_size = 2, sampler = { 4, 1 } })
        for s in t:iter() do
            assert.are.same({ 4, 1 }, s.meta.id:totable())
        end
    end)

    it("refuses bad samplers and collate_fns", function()
        local ok, err = pcall(data.DataLoader, range_ds(3), { sampler = { 1 }, shuffle = true })
        assert.is_false(ok)
        assert.matches("data_surface_spec.lua:%d+: tide: DataLoader: sampler and shuffle = true exclude each other", err)
        ok, err = pcall(data.DataLoader, range_ds(3), { sampler = 5 })
        assert.is_false(ok)
        assert.matches("tide: DataLoader: sampler must be a list of sample indices", err)
        ok, err = pcall(function()
            for _ in data.DataLoader(range_ds(3), { sampler = { 1, 4 } }):iter() do end
        end)
        assert.is_false(ok)
        assert.matches("data_surface_spec%.lua:%d+: tide: DataLoader: the sampler gave index 4 %(position 2%), out of range 1..3", err)
    end)
end)

describe("tide.data.text", function()
    it("reads a file's bytes as a uint8 tensor", function()
        local path = os.tmpname()
        local f = assert(io.open(path, "wb"))
        local big = string.rep("abc\n", 40000) .. "\0\255"
        f:write(big)
        f:close()
        local t = data.text(path)
        assert.are.equal("uint8", t.dtype)
        assert.are.same({ #big }, t.shape)
        assert.are.same({ 97, 98, 99, 10 }, t:narrow(1, 1, 4):totable())
        assert.are.same({ 0, 255 }, t:narrow(1, #big - 1, 2):totable())
        f = assert(io.open(path, "wb"))
        f:close()
        assert.are.same({ 0 }, data.text(path).shape)
        os.remove(path)
    end)

    it("says when the file is missing or io is absent", function()
        raises_here("data.text: cannot open /nonexistent/x.txt %(.*No such file", function()
            return data.text("/nonexistent/x.txt")
        end)
        local saved = _G.io
        _G.io = nil
        local ok, err = pcall(data.text, "x.txt")
        _G.io = saved
        assert.is_false(ok)
        assert.matches("tide: data.text: the io library is not available in this Lua host", err)
    end)
end)

-- Python's `for i, (x, y) in enumerate(loader)`: loader:enumerate() numbers the batches from 1
-- (Lua's lists), loader:enumerate(0) from 0 as Python's does
describe("DataLoader:enumerate", function()
    it("yields the batch number and the batch's values, from 1 or from start", function()
        local loader = data.DataLoader(range_ds(5), { batch_size = 2 })
        local seen = {}
        for i, x, y in loader:enumerate() do
            seen[#seen + 1] = { i, x:size(1), y[1]:item() }
        end
        assert.are.same({ { 1, 2, 10 }, { 2, 2, 30 }, { 3, 1, 50 } }, seen)
        local from0 = {}
        for batch_idx, x in loader:enumerate(0) do
            from0[#from0 + 1] = batch_idx
            assert.are.equal(2 * batch_idx + 1, x[1][1]:item())
        end
        assert.are.same({ 0, 1, 2 }, from0)
        -- a stream (an IterableDataset) too
        local Stream = data.IterableDataset:extend("EnumerateStream")
        function Stream:iter()
            local k = 0
            return function()
                k = k + 1
                if k <= 3 then
                    return tide.tensor({ k })
                end
            end
        end
        local n = 0
        for i, b in data.DataLoader(Stream(), { batch_size = 2 }):enumerate() do
            n = n + 1
            assert.are.equal(n, i)
            assert.are.equal(2 * i - 1, b[1][1]:item())
        end
        assert.are.equal(2, n)
    end)

    it("refuses a start that is not an integer", function()
        local loader = data.DataLoader(range_ds(2), { batch_size = 1 })
        raises_here("DataLoader:enumerate: start must be an integer %(1 by default; 0 numbers " ..
            "the batches as Python's enumerate%), got 0.5", loader.enumerate, loader, 0.5)
        raises_here("DataLoader:enumerate: start must be an integer", loader.enumerate, loader,
            "0")
    end)
end)
