-- tide.data against PyTorch 1.13's torch.utils.data: names and values (printed by PyTorch 1.13,
-- indices shifted to tide's 1-based ones). tide's random streams are not PyTorch's (docs/API.md,
-- tide.Generator), so seeded orders are checked as sets and lengths, not as PyTorch's sequences.
local tide = require("tide")
local D = tide.data

local function list(it)
    local o = {}
    for x in it do
        o[#o + 1] = x
    end
    return o
end
local function sorted(l)
    local o = {}
    for i, v in ipairs(l) do
        o[i] = v
    end
    table.sort(o)
    return o
end
local function rng(n)
    local o = {}
    for i = 1, n do
        o[i] = i
    end
    return o
end

describe("tide.data samplers as PyTorch 1.13's", function()
    it("Sequential, Random, SubsetRandom, WeightedRandom: lengths, attributes, draws", function()
        local ds5 = rng(5)
        local s = D.SequentialSampler(ds5)
        assert.same({ 1, 2, 3, 4, 5 }, list(s:iter())) -- [0, 1, 2, 3, 4]
        assert.equal(5, s:len())
        s = D.RandomSampler(ds5) -- replacement False, _num_samples None, num_samples 5
        assert.same({ false, nil, 5, nil, 5 },
            { s.replacement, s._num_samples, s.num_samples, s.generator, s:len() })
        s = D.RandomSampler(ds5, true, 7) -- (True, 7, 7, len 7, 7 drawn)
        assert.same({ true, 7, 7, 7, 7 },
            { s.replacement, s._num_samples, s.num_samples, s:len(), #list(s:iter()) })
        s = D.RandomSampler(ds5, { num_samples = 12 }) -- two whole permutations, then part
        local l = s:indices()
        assert.same({ 12, ds5, ds5, 12 }, { s:len(), sorted({ table.unpack(l, 1, 5) }),
            sorted({ table.unpack(l, 6, 10) }), #l })
        s = D.SubsetRandomSampler({ 4, 2, 5 }) -- PyTorch's [3, 1, 4]
        assert.same({ nil, 3, { 2, 4, 5 } }, { s.generator, s:len(), sorted(s:indices()) })
        assert.same({ 4, 2, 5 }, s.list)
        s = D.WeightedRandomSampler({ 0.1, 0.9, 0.4, 0.7 }, 6)
        assert.same({ "float64", { 0.1, 0.9, 0.4, 0.7 }, 6, true, nil, 6, 6 },
            { s.weights.dtype, s.weights:totable(), s.num_samples, s.replacement, s.generator,
                s:len(), #s:indices() })
        s = D.WeightedRandomSampler({ 0.1, 0.9, 0.4, 0.7 }, 3, false)
        l = s:indices()
        local seen, distinct = {}, 0
        for _, v in ipairs(l) do
            distinct = distinct + (seen[v] and 0 or 1)
            seen[v] = true
        end
        assert.same({ 3, 3 }, { #l, distinct })
    end)

    pending("SubsetRandomSampler.indices is PyTorch's list attribute; tide's is s.list, as " ..
        "s:indices() is tide's method giving an epoch's order (docs/API.md)")

    it("BatchSampler: batches, len, attributes", function()
        local ten = rng(10)
        local b = D.BatchSampler(D.SequentialSampler(ten), 3, false)
        assert.same({ { { 1, 2, 3 }, { 4, 5, 6 }, { 7, 8, 9 }, { 10 } }, 4, 3, false },
            { list(b:iter()), b:len(), b.batch_size, b.drop_last })
        b = D.BatchSampler(D.SequentialSampler(ten), 3, true)
        assert.same({ { { 1, 2, 3 }, { 4, 5, 6 }, { 7, 8, 9 } }, 3, 3, true },
            { list(b:iter()), b:len(), b.batch_size, b.drop_last })
        b = D.BatchSampler(ten, 4, false)
        assert.same({ { { 1, 2, 3, 4 }, { 5, 6, 7, 8 }, { 9, 10 } }, 3 }, { list(b:iter()), b:len() })
        -- PyTorch: ValueError batch_size / drop_last should be a positive integer / boolean
        assert.has_error(function() D.BatchSampler(ten, 0, false) end,
            "tide: BatchSampler: batch_size should be a positive integer, got 0")
        assert.has_error(function() D.BatchSampler(ten, 3, 1) end,
            "tide: BatchSampler: drop_last should be a boolean, got number")
    end)
end)

describe("tide.data datasets as PyTorch 1.13's", function()
    it("random_split: counts and fractions with PyTorch 1.13's remainders", function()
        local cases = { { "c", 10, { 3, 7 }, { 3, 7 } }, { "f1", 10, { 0.5, 0.3, 0.2 }, { 5, 3, 2 } },
            { "f2", 11, { 0.3, 0.3, 0.4 }, { 4, 3, 4 } }, { "f3", 10, { 0.33, 0.33, 0.34 }, { 4, 3, 3 } },
            { "f4", 5, { 0.5, 0.5 }, { 3, 2 } }, { "f5", 7, { 0.25, 0.25, 0.25, 0.25 }, { 2, 2, 2, 1 } },
            { "f6", 3, { 0.1, 0.1, 0.8 }, { 1, 0, 2 } } }
        for _, c in ipairs(cases) do
            local parts = D.random_split(rng(c[2]), c[3], tide.Generator():manual_seed(0))
            local lens = {}
            for i, p in ipairs(parts) do
                lens[i] = p:len()
            end
            assert.same(c[4], lens, c[1])
        end
        local parts = D.random_split(rng(6), { 2, 4 }, tide.Generator():manual_seed(0))
        local all = {}
        for _, p in ipairs(parts) do
            assert.equal("Subset", getmetatable(p).__name)
            for _, i in ipairs(p.indices) do
                all[#all + 1] = i
            end
        end
        assert.same(rng(6), sorted(all))
        -- PyTorch: ValueError: Sum of input lengths does not equal the length of the input dataset!
        assert.has_error(function() D.random_split(rng(10), { 3, 6 }) end,
            "tide: random_split: the lengths sum to 9 but the dataset has 10 samples; give " ..
            "counts summing to 10 or fractions summing to 1")
    end)

    it("Subset and ConcatDataset: indexing, negative indices, cumulative_sizes", function()
        local sub = D.Subset({ 10, 11, 12, 13, 14 }, { 5, 1, 3 }) -- (3, 14, 12, [4, 0, 2])
        assert.same({ 3, 14, 12, { 5, 1, 3 } }, { sub:len(), sub[1], sub[-1], sub.indices })
        assert.equal(12, sub:get(-1))
        local cd = D.ConcatDataset({ { 10, 11, 12 }, { 20, 21, 22, 23 } })
        -- len 7, [3, 7]; cd[0], cd[2], cd[3], cd[6], cd[-1], cd[-7], cd[-4]
        assert.same({ 7, { 3, 7 }, 10, 12, 20, 23, 23, 10, 20 }, { cd:len(), cd.cumulative_sizes,
            cd[1], cd[3], cd[4], cd[7], cd[-1], cd[-7], cd[-4] })
        assert.has_error(function() return cd[-8] end, "tide: ConcatDataset: absolute value of " ..
            "index should not exceed dataset length (index -8, length 7)")
        assert.has_error(function() return cd[8] end, "tide: ConcatDataset: index 8 out of range 1..7")
    end)

    it("a list's one-number sample is the number: ds[i], Subset, ConcatDataset, collate_fn",
        function()
        local unpack = table.unpack or unpack -- luacheck: ignore
        local l = { 10, 11, 12, 13, 14 }
        local sub = D.Subset(l, { 5, 1, 3 })           -- Subset(l, [4, 0, 2])
        assert.same({ 14, 12 }, { sub[1], sub[-1] })   -- s[0], s[-1]: 14 12
        local cd = D.ConcatDataset({ { 10, 11, 12 }, { { 20, 21 }, { 22, 23 } } })
        assert.equal(10, cd[1])                        -- c[0]: 10
        assert.same({ 20, 21 }, { unpack(cd[4], 1, 2) }) -- c[3]: (20, 21), fields packed
        assert.same({ 22, 23 }, { unpack(cd[-1], 1, 2) })
        local function batches(ds, o)
            o.collate_fn = o.collate_fn or function(b) return b end
            return list(D.DataLoader(ds, o):iter())
        end
        -- DataLoader(l, batch_size=2, collate_fn=lambda b: b): [[10, 11], [12, 13], [14]]
        assert.same({ { 10, 11 }, { 12, 13 }, { 14 } }, batches(l, { batch_size = 2 }))
        -- batch_size=None, collate_fn=lambda x: x: [10, 11, 12, 13, 14]
        assert.same(l, batches(l, { batch_size = false }))
        -- DataLoader(c, batch_size=5, collate_fn=lambda b: b): [[10, 11, 12, (20, 21), (22, 23)]]
        local got = batches(cd, { batch_size = 5 })[1]
        assert.same({ 10, 11, 12, 20, 23 }, { got[1], got[2], got[3], got[4][1], got[5][2] })
        -- the default collate of numbers, DataLoader(s, batch_size=2):
        -- [tensor([14, 10]), tensor([12])]
        local b = list(D.DataLoader(sub, { batch_size = 2 }):iter())
        assert.same({ { 14, 10 }, { 12 } }, { b[1]:totable(), b[2]:totable() })
        assert.equal("int64", b[1].dtype)
        -- a get-defined dataset keeps its packed fields (docs/API.md): ds[i] is {i}
        local G = D.Dataset:extend("DataValuesOne")
        function G:len() return 2 end
        function G:get(i) return i * 7 end
        assert.same({ 14 }, { unpack(G()[2], 1, 1) })
        assert.equal("table", type(D.Subset(G(), { 2 })[1]))
    end)

    it("ChainDataset of IterableDatasets spelled with __iter__/__len__; TensorDataset", function()
        local It = D.IterableDataset:extend("It")
        function It:init(v) self.v = v end
        function It:__iter__()
            local i = 0
            return function()
                i = i + 1
                return self.v[i]
            end
        end
        function It:__len__() return #self.v end
        local ch = D.ChainDataset({ It({ 1, 2 }), It({ 3 }) })
        assert.same({ { 1, 2, 3 }, 3 }, { list(ch:iter()), ch:len() }) -- ([1, 2, 3], 3)
        local t = D.TensorDataset(tide.arange(0, 6, { dtype = "int64" }):view(3, 2),
            tide.tensor({ 1, 2, 3 }, { dtype = "float32" }))
        local x, y = table.unpack(t[2])
        assert.same({ 3, 2, "int64", { 2, 3 }, "float32", 0, 2 },
            { t:len(), #t.tensors, x.dtype, x:totable(), y.dtype, y:dim(), y:item() })
        -- PyTorch: AssertionError: Size mismatch between tensors
        assert.has_error(function() D.TensorDataset(tide.zeros(3), tide.zeros(4)) end,
            "tide: TensorDataset: tensor 2 has 4 samples (size of dim 1) but tensor 1 has 3; " ..
            "every tensor needs the same size in dim 1")
    end)
end)

describe("tide.data.DataLoader as PyTorch 1.13's", function()
    it("defaults, len with drop_last, shuffle with a generator, batch_sampler", function()
        local ds = D.TensorDataset(tide.arange(0, 10, { dtype = "float32" }))
        local dl = D.DataLoader(ds)
        assert.same({ 1, false, 10, 0, "SequentialSampler", "BatchSampler", nil, true },
            { dl.batch_size, dl.drop_last, dl:len(), dl.num_workers,
                getmetatable(dl.sampler).__name, getmetatable(dl.batch_sampler).__name,
                dl.generator, dl.collate_fn == D.default_collate })
        for _, c in ipairs({ { 3, false, 4, { 3, 3, 3, 1 } }, { 3, true, 3, { 3, 3, 3 } },
            { 5, true, 2, { 5, 5 } }, { 4, false, 3, { 4, 4, 2 } } }) do
            dl = D.DataLoader(ds, { batch_size = c[1], drop_last = c[2] })
            local sizes = {}
            for x in dl:iter() do
                sizes[#sizes + 1] = x:size(1)
            end
            assert.same({ c[3], c[4] }, { dl:len(), sizes }, c[1] .. tostring(c[2]))
        end
        dl = D.DataLoader(ds, { batch_size = 4, shuffle = true,
            generator = tide.Generator():manual_seed(1) })
        local vals = {}
        for x in dl:iter() do
            for _, v in ipairs(x:totable()) do
                vals[#vals + 1] = v
            end
        end
        assert.same({ 3, "RandomSampler", { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 } },
            { dl:len(), getmetatable(dl.sampler).__name, sorted(vals) })
        dl = D.DataLoader(ds, { batch_sampler = D.BatchSampler(rng(10), 3, true) })
        local got = {}
        for x in dl:iter() do
            got[#got + 1] = x:totable()
        end
        assert.same({ 3, nil, false, { { 0, 1, 2 }, { 3, 4, 5 }, { 6, 7, 8 } } },
            { dl:len(), dl.batch_size, dl.drop_last, got })
        -- PyTorch: ValueError: batch_sampler option is mutually exclusive with batch_size,
        -- shuffle, sampler, and drop_last / sampler option is mutually exclusive with shuffle
        local msg = "tide: DataLoader: batch_sampler excludes batch_size, shuffle, sampler and " ..
            "drop_last"
        for k, o in ipairs({ { batch_size = 2 }, { shuffle = true }, { drop_last = true },
            { sampler = D.SequentialSampler(rng(10)) } }) do
            o.batch_sampler = D.BatchSampler(rng(10), 2, false)
            local ok, e = pcall(D.DataLoader, ds, o)
            assert.is_false(ok, k)
            assert.truthy(tostring(e):find(msg, 1, true), k)
        end
        assert.has_error(function()
            D.DataLoader(ds, { sampler = D.SequentialSampler(rng(10)), shuffle = true })
        end, "tide: DataLoader: sampler and shuffle = true exclude each other; shuffle in the sampler")
        assert.is_nil(D.get_worker_info()) -- None outside workers
    end)

    it("default_collate / default_convert of nested tables", function()
        local C = D.default_collate
        -- {'a': int64 [1, 2], 'b': float64 [2.5, 3.5], 's': ['x', 'y'], 't': bool [True, False]}
        local d = C({ { { a = 1, b = 2.5, s = "x", t = true } }, { { a = 2, b = 3.5, s = "y", t = false } } })
        assert.same({ "int64", { 1, 2 }, "float64", { 2.5, 3.5 }, { "x", "y" }, "bool", { true, false } },
            { d.a.dtype, d.a:totable(), d.b.dtype, d.b:totable(), d.s, d.t.dtype, d.t:totable() })
        -- [[1, 2.5], [3, 4.5]] => [int64 [1, 3], float64 [2.5, 4.5]]
        local l = C({ { { 1, 2.5 } }, { { 3, 4.5 } } })
        assert.same({ "int64", { 1, 3 }, "float64", { 2.5, 4.5 } },
            { l[1].dtype, l[1]:totable(), l[2].dtype, l[2]:totable() })
        -- strings kept: ['a', 'b']
        assert.same({ "a", "b" }, C({ { "a" }, { "b" } }))
        local ok, e = pcall(C, { { { 1, 2 } }, { { 3 } } }) -- each element in list of batch
        assert.is_false(ok)                                  -- should be of equal size
        assert.truthy(tostring(e):find("tide: DataLoader: cannot batch field 1", 1, true))
        ok, e = pcall(C, { { tide.zeros(2) }, { tide.zeros(3) } }) -- stack expects each tensor
        assert.is_false(ok)                                        -- to be equal size
        assert.truthy(tostring(e):find("tide: DataLoader: cannot batch field 1", 1, true))
        assert.same({ a = { 1, 2.5, "s" } }, D.default_convert({ a = { 1, 2.5, "s" } }))
    end)

    it("batch_size = false, PyTorch's batch_size=None: no auto-batching", function()
        local ds = D.TensorDataset(tide.arange(0, 10, { dtype = "float32" }))
        local dl = D.DataLoader(ds, { batch_size = false })
        local got = {}
        for x in dl:iter() do
            got[#got + 1] = x
        end
        -- (None, 10, None, SequentialSampler, 10 samples, sample 3 is (tensor(3.),))
        assert.same({ 10, nil, "SequentialSampler", 10, 0, 3 }, { dl:len(), dl.batch_sampler,
            getmetatable(dl.sampler).__name, #got, got[4]:dim(), got[4]:item() })
        assert.is_falsy(dl.batch_size)
    end)
end)
