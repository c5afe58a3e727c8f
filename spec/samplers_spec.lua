-- samplers_spec.lua — tide.data's samplers as PyTorch 1.13's torch.utils.data ones:
-- SequentialSampler, RandomSampler (permutations, num_samples past n, replacement, generator),
-- SubsetRandomSampler, BatchSampler, and the DataLoader's batch_sampler; their errors.
local tide = require("tide")
local D = tide.data

local unpack = table.unpack or unpack -- 5.1, LuaJIT

local function sorted(list)
    local c = { unpack(list) }
    table.sort(c)
    return c
end

local function catch(f)
    local ok, err = pcall(f)
    assert.is_false(ok, "expected an error")
    return tostring(err)
end

describe("samplers", function()
    it("SequentialSampler gives 1..n of a dataset, a list or a count", function()
        local ds = D.TensorDataset(tide.zeros(4))
        assert.are.same({ 1, 2, 3, 4 }, D.SequentialSampler(ds):indices())
        assert.are.same({ 1, 2 }, D.SequentialSampler({ "a", "b" }):indices())
        assert.are.equal(3, D.SequentialSampler(3):len())
        local seen = {}
        for i in D.SequentialSampler(3):iter() do
            seen[#seen + 1] = i
        end
        assert.are.same({ 1, 2, 3 }, seen)
    end)

    it("RandomSampler permutes each epoch, repeats past n, or draws with replacement", function()
        tide.manual_seed(4)
        local r = D.RandomSampler(6)
        local a, b = r:indices(), r:indices()
        assert.are.same({ 1, 2, 3, 4, 5, 6 }, sorted(a))
        assert.are.same({ 1, 2, 3, 4, 5, 6 }, sorted(b))
        assert.are_not.same(a, b) -- (a new order each epoch: 1 in 720 to be equal)
        local long = D.RandomSampler(4, { num_samples = 10 }):indices()
        assert.are.equal(10, #long)
        assert.are.same({ 1, 2, 3, 4 }, sorted({ long[1], long[2], long[3], long[4] }))
        assert.are.same({ 1, 2, 3, 4 }, sorted({ long[5], long[6], long[7], long[8] }))
        local drawn = D.RandomSampler(3, { replacement = true, num_samples = 300 }):indices()
        local counts = { 0, 0, 0 }
        for _, i in ipairs(drawn) do
            counts[i] = counts[i] + 1
        end
        assert.is_true(counts[1] > 60 and counts[2] > 60 and counts[3] > 60)
    end)

    it("a generator seed gives the same draws and leaves tide's generator alone", function()
        tide.manual_seed(9)
        local before = tide.rand(1):item()
        tide.manual_seed(9)
        local x = D.RandomSampler(8, { generator = 123 }):indices()
        local y = D.RandomSampler(8, { generator = 123 }):indices()
        assert.are.same(x, y)
        assert.are.equal(before, tide.rand(1):item())
        assert.are.same(D.SubsetRandomSampler({ 5, 6, 7 }, { generator = 1 }):indices(),
            D.SubsetRandomSampler({ 5, 6, 7 }, { generator = 1 }):indices())
    end)

    it("SubsetRandomSampler permutes the given indices", function()
        tide.manual_seed(2)
        local s = D.SubsetRandomSampler(tide.tensor({ 10, 20, 30, 40 }))
        assert.are.equal(4, s:len())
        assert.are.same({ 10, 20, 30, 40 }, sorted(s:indices()))
    end)

    it("BatchSampler cuts an epoch into batches, the last one dropped with drop_last", function()
        local full = D.BatchSampler(D.SequentialSampler(7), 3, false)
        assert.are.same({ { 1, 2, 3 }, { 4, 5, 6 }, { 7 } }, full:batches())
        assert.are.equal(3, full:len())
        local dropped = D.BatchSampler({ 4, 3, 2, 1, 9 }, 2, true)
        assert.are.same({ { 4, 3 }, { 2, 1 } }, dropped:batches())
        assert.are.equal(2, dropped:len())
    end)

    it("DataLoader reads the batches of a batch_sampler", function()
        local ds = D.TensorDataset(tide.arange(1, 8))
        local loader = D.DataLoader(ds, { batch_sampler = D.BatchSampler({ 7, 1, 2, 5, 3 }, 2,
            false) })
        local got = {}
        for x in loader:iter() do
            got[#got + 1] = x:totable()
        end
        assert.are.same({ { 7, 1 }, { 2, 5 }, { 3 } }, got)
        assert.are.equal(3, loader:len())
        -- and a sampler of a subset
        local sub = {}
        for x in D.DataLoader(ds, { batch_size = 10, sampler = D.SubsetRandomSampler({ 2, 4 }) })
            :iter() do
            sub = sorted(x:totable())
        end
        assert.are.same({ 2, 4 }, sub)
    end)

    it("name the argument at fault", function()
        assert.matches("tide: RandomSampler: num_samples should be a positive integer, got 0",
            catch(function() return D.RandomSampler(3, { num_samples = 0 }) end), 1, true)
        assert.matches('tide: RandomSampler: unknown option "seed"',
            catch(function() return D.RandomSampler(3, { seed = 1 }) end), 1, true)
        assert.matches("tide: SubsetRandomSampler: index 2 is 1.5, expected an integer",
            catch(function() return D.SubsetRandomSampler({ 1, 1.5 }) end), 1, true)
        assert.matches("tide: BatchSampler: batch_size should be a positive integer, got 0",
            catch(function() return D.BatchSampler({ 1 }, 0, false) end), 1, true)
        local ds = D.TensorDataset(tide.zeros(3))
        assert.matches("tide: DataLoader: batch_sampler excludes batch_size, shuffle, sampler " ..
            "and drop_last", catch(function()
                return D.DataLoader(ds, { batch_sampler = D.BatchSampler({ 1 }, 1, false),
                    shuffle = true })
            end), 1, true)
        assert.matches("tide: DataLoader: the sampler gave index 9 (position 1), out of range 1..3",
            catch(function()
                for _ in D.DataLoader(ds, { batch_sampler = D.BatchSampler({ 9 }, 1, false) })
                    :iter() do
                end
            end), 1, true)
    end)
end)
