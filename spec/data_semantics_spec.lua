-- torch.utils.data semantics against PyTorch 1.13: batches, orders (SequentialSampler; sets and
-- counts for random ones), collation, lengths and errors, values pasted from PyTorch's output
-- (indices shifted to tide's 1-based ones, as docs/API.md documents).
local tide = require("tide")
local data = tide.data
local compat = require("tide._compat")
local pack = compat.pack

local ds = data.TensorDataset(tide.arange(0, 10))

local function batches(loader)
    local out = {}
    for x in loader:iter() do
        out[#out + 1] = x:dim() == 0 and x:item() or x:totable()
    end
    return out
end

local function sorted(l)
    local c = compat.move(l, 1, #l, 1, {})
    table.sort(c)
    return c
end

local function err_of(f, ...)
    local ok, e = pcall(f, ...)
    assert.is_false(ok)
    return tostring(e)
end

describe("DataLoader batches as PyTorch 1.13's", function()
    it("batch_size, drop_last and len", function()
        -- PyTorch: [[0,1,2],[3,4,5],[6,7,8],[9]] 4; drop_last: 3 batches
        assert.are.same({ { 0, 1, 2 }, { 3, 4, 5 }, { 6, 7, 8 }, { 9 } },
            batches(data.DataLoader(ds, { batch_size = 3 })))
        assert.are.equal(4, data.DataLoader(ds, { batch_size = 3 }):len())
        local dl = data.DataLoader(ds, { batch_size = 3, drop_last = true })
        assert.are.same({ { 0, 1, 2 }, { 3, 4, 5 }, { 6, 7, 8 } }, batches(dl))
        assert.are.equal(3, dl:len())
        -- PyTorch: 3 True SequentialSampler BatchSampler 3 True
        assert.are.equal("SequentialSampler", getmetatable(dl.sampler).__name)
        assert.are.equal(3, dl.batch_sampler.batch_size)
        assert.is_true(dl.batch_sampler.drop_last)
    end)

    it("batch_size = false is PyTorch's None: each sample through default_convert", function()
        -- PyTorch: [tensor(0)], [tensor(1)], ... len 10, batch_size None, batch_sampler None,
        -- sampler SequentialSampler
        local dl = data.DataLoader(ds, { batch_size = false })
        assert.are.same({ 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 }, batches(dl))
        assert.are.equal(10, dl:len())
        assert.is_nil(dl.batch_size)
        assert.is_nil(dl.batch_sampler)
        assert.are.equal("SequentialSampler", getmetatable(dl.sampler).__name)
        local first = dl:iter()()
        assert.are.equal(0, first:dim())
        assert.are.equal("int64", first.dtype)
        -- with a sampler and a collate_fn, which gets each sample as ds[i] reads it
        local got = {}
        local f = function(s) return s[1]:item() * 10 end
        for v in data.DataLoader(ds, { batch_size = false, sampler = { 4, 1 }, collate_fn = f })
            :iter() do
            got[#got + 1] = v
        end
        assert.are.same({ 30, 0 }, got)
        -- PyTorch: ValueError batch_size=None option disables auto-batching and is mutually
        -- exclusive with drop_last
        assert.matches("tide: DataLoader: batch_size = false %(PyTorch's batch_size=None%) " ..
            "disables auto%-batching and is mutually exclusive with drop_last",
            err_of(data.DataLoader, ds, { batch_size = false, drop_last = true }))
    end)

    it("a sampler, a batch_sampler (a list too) and a collate_fn", function()
        -- PyTorch sampler=[4,2,0], batch_size 2: [[4,2],[0]]
        assert.are.same({ { 4, 2 }, { 0 } },
            batches(data.DataLoader(ds, { batch_size = 2, sampler = { 5, 3, 1 } })))
        -- PyTorch batch_sampler=[[0,1],[3],[2,4]]: [[0,1],[3],[2,4]], len 3
        local dl = data.DataLoader(ds, { batch_sampler = { { 1, 2 }, { 4 }, { 3, 5 } } })
        assert.are.same({ { 0, 1 }, { 3 }, { 2, 4 } }, batches(dl))
        assert.are.equal(3, dl:len())
        -- PyTorch collate_fn=len, batch_size 4: [4, 4, 2]
        local got = {}
        for n in data.DataLoader(ds, { batch_size = 4, collate_fn = function(b) return #b end })
            :iter() do
            got[#got + 1] = n
        end
        assert.are.same({ 4, 4, 2 }, got)
    end)

    it("over an IterableDataset: batching, drop_last, batch_size = false", function()
        local It = data.IterableDataset:extend("It")
        function It:init(a, b) self.a, self.b = a, b end
        function It:iter()
            local i = self.a - 1
            return function()
                i = i + 1
                if i < self.b then return i end
            end
        end
        -- PyTorch: [[0,1,2],[3,4,5],[6]] and drop_last [[0,1,2],[3,4,5]]
        assert.are.same({ { 0, 1, 2 }, { 3, 4, 5 }, { 6 } },
            batches(data.DataLoader(It(0, 7), { batch_size = 3 })))
        assert.are.same({ { 0, 1, 2 }, { 3, 4, 5 } },
            batches(data.DataLoader(It(0, 7), { batch_size = 3, drop_last = true })))
        local got = {}
        for v in data.DataLoader(It(0, 3), { batch_size = false }):iter() do
            got[#got + 1] = v
        end
        assert.are.same({ 0, 1, 2 }, got)
        -- PyTorch ChainDataset([It(0,3), It(10,12)]): [0, 1, 2, 10, 11]
        got = {}
        for v in data.ChainDataset({ It(0, 3), It(10, 12) }):iter() do
            got[#got + 1] = v
        end
        assert.are.same({ 0, 1, 2, 10, 11 }, got)
    end)

    it("raises PyTorch's ValueErrors as tide: errors", function()
        -- PyTorch: batch_sampler option is mutually exclusive with batch_size, shuffle,
        -- sampler, and drop_last
        for _, o in ipairs({ { batch_size = 2 }, { shuffle = true }, { drop_last = true } }) do
            o.batch_sampler = { { 1 } }
            assert.matches("tide: DataLoader: batch_sampler excludes batch_size, shuffle, " ..
                "sampler and drop_last", err_of(data.DataLoader, ds, o))
        end
        -- PyTorch: sampler option is mutually exclusive with shuffle
        assert.matches("tide: DataLoader: sampler and shuffle = true exclude each other",
            err_of(data.DataLoader, ds, { sampler = { 1 }, shuffle = true }))
    end)

    it("get_worker_info() outside workers is nil (PyTorch's None)", function()
        assert.is_nil(data.get_worker_info())
    end)
end)

describe("default_collate and default_convert as PyTorch 1.13's", function()
    local dc = data.default_collate
    it("tuples of tensors and numbers", function()
        -- PyTorch: [tensor([[1.,2.],[3.,4.]]), tensor([3, 4])] (int64)
        local f32 = { dtype = "float32" }
        local x, y = dc({ pack(tide.tensor({ 1., 2. }, f32), 3),
            pack(tide.tensor({ 3., 4. }, f32), 4) })
        assert.are.same({ { 1, 2 }, { 3, 4 } }, x:totable())
        assert.are.equal("float32", x.dtype)
        assert.are.same({ 3, 4 }, y:totable())
        assert.are.equal("int64", y.dtype)
    end)

    it("dicts, floats as float64, bools, strings", function()
        -- PyTorch: {'a': tensor([1., 2.]), 'b': tensor([1.5, 2.5], dtype=torch.float64)}
        local d = dc({ pack({ a = tide.tensor(1., { dtype = "float32" }), b = 1.5 }),
            pack({ a = tide.tensor(2., { dtype = "float32" }), b = 2.5 }) })
        assert.are.same({ 1, 2 }, d.a:totable())
        assert.are.equal("float32", d.a.dtype)
        assert.are.same({ 1.5, 2.5 }, d.b:totable())
        assert.are.equal("float64", d.b.dtype)
        -- PyTorch: tensor([True, False]); ['x', 'y']
        local b = dc({ pack(true), pack(false) })
        assert.are.equal("bool", b.dtype)
        assert.are.same({ true, false }, b:totable())
        assert.are.same({ "x", "y" }, dc({ pack("x"), pack("y") }))
        assert.are.equal("int64", dc({ pack(1), pack(2) }).dtype)
    end)

    it("integral floats as float64 (Lua 5.3+ tells 1.0 from 1) #lua53", function()
        -- PyTorch default_collate([1.0, 2.0]).dtype: torch.float64
        assert.are.equal("float64", dc({ pack(1.0), pack(2.0) }).dtype)
    end)

    it("nested lists and dicts of lists", function()
        -- PyTorch: {'x': [tensor([1, 3]), tensor([2, 4])]}
        local d = dc({ pack({ x = { 1, 2 } }), pack({ x = { 3, 4 } }) })
        assert.are.same({ 1, 3 }, d.x[1]:totable())
        assert.are.same({ 2, 4 }, d.x[2]:totable())
        -- PyTorch [[t(1), (2, 'a')], [t(3), (4, 'b')]]:
        -- [tensor([1, 3]), [tensor([2, 4]), ('a', 'b')]]
        local t, rest = dc({ pack(tide.tensor(1), { 2, "a" }), pack(tide.tensor(3), { 4, "b" }) })
        assert.are.same({ 1, 3 }, t:totable())
        assert.are.same({ 2, 4 }, rest[1]:totable())
        assert.are.same({ "a", "b" }, rest[2])
    end)

    it("default_convert leaves tensors and numbers as they are", function()
        -- PyTorch: [1, [tensor(2), 'a']] and {'k': 3}
        local two = tide.tensor(2)
        local c = data.default_convert({ 1, { two, "a" } })
        assert.are.equal(1, c[1])
        assert.are.equal(two, c[2][1])
        assert.are.equal("a", c[2][2])
        assert.are.same({ k = 3 }, data.default_convert({ k = 3 }))
    end)
end)

describe("samplers as PyTorch 1.13's", function()
    it("SequentialSampler, RandomSampler", function()
        local s = data.SequentialSampler(5)
        assert.are.same({ 1, 2, 3, 4, 5 }, s:indices()) -- PyTorch [0..4]
        assert.are.equal(5, s:len())
        local r = data.RandomSampler(5, { generator = 0 })
        assert.are.same({ 1, 2, 3, 4, 5 }, sorted(r:indices()))
        assert.are.equal(5, r:len())
        assert.is_false(r.replacement)
        assert.are.equal(5, r.num_samples)
        -- PyTorch replacement, num_samples 7: len 7, 7 drawn, all in range
        r = data.RandomSampler(5, { replacement = true, num_samples = 7 })
        local l = {}
        for i in r:iter() do
            assert.is_true(i >= 1 and i <= 5)
            l[#l + 1] = i
        end
        assert.are.equal(7, #l)
        assert.are.equal(7, r:len())
        -- PyTorch num_samples 12 without replacement: each index twice, two of them thrice
        l = {}
        for i in data.RandomSampler(5, { num_samples = 12 }):iter() do
            l[i] = (l[i] or 0) + 1
        end
        local counts = sorted({ l[1], l[2], l[3], l[4], l[5] })
        assert.are.same({ 2, 2, 2, 3, 3 }, counts)
        -- PyTorch: two samplers of generators seeded alike give one order
        local g1, g2 = tide.Generator("cpu"), tide.Generator("cpu")
        g1:manual_seed(3)
        g2:manual_seed(3)
        assert.are.same(data.RandomSampler(6, { generator = g1 }):indices(),
            data.RandomSampler(6, { generator = g2 }):indices())
    end)

    it("SubsetRandomSampler, WeightedRandomSampler, BatchSampler", function()
        local s = data.SubsetRandomSampler({ 8, 4, 6 }) -- PyTorch [7,3,5]: {3,5,7}
        assert.are.same({ 4, 6, 8 }, sorted(s:indices()))
        assert.are.equal(3, s:len())
        -- PyTorch weights [0,1,1,0,1], 3, replacement False: {1,2,4}
        local w = data.WeightedRandomSampler({ 0, 1, 1, 0, 1 }, 3, false)
        assert.are.same({ 2, 3, 5 }, sorted(w:indices()))
        assert.are.equal(3, w:len())
        assert.is_false(w.replacement)
        assert.are.equal("float64", w.weights.dtype)
        -- PyTorch BatchSampler(range(10), 3, False/True)
        assert.are.same({ { 1, 2, 3 }, { 4, 5, 6 }, { 7, 8, 9 }, { 10 } },
            data.BatchSampler(data.SequentialSampler(10), 3, false):batches())
        local b = data.BatchSampler(data.SequentialSampler(10), 3, true)
        assert.are.same({ { 1, 2, 3 }, { 4, 5, 6 }, { 7, 8, 9 } }, b:batches())
        assert.are.equal(3, b:len())
        assert.are.equal(4, data.BatchSampler(data.SequentialSampler(10), 3, false):len())
    end)

    it("SubsetRandomSampler.indices, PyTorch's list attribute", function()
        pending("SubsetRandomSampler.indices is tide's method (an epoch's order), the list given "
            .. "is s.list: PyTorch's s.indices attribute would rename what tide code reads")
    end)

    it("DistributedSampler: replicas, rank, padding, drop_last, set_epoch", function()
        -- PyTorch num_replicas 3, rank 1, no shuffle: [1,4,7,0], len 4, total_size 12
        local d = data.DistributedSampler(ds, { num_replicas = 3, rank = 1, shuffle = false })
        assert.are.same({ 2, 5, 8, 1 }, d:indices())
        local it = {}
        for i in d:iter() do -- PyTorch's `for i in sampler`
            it[#it + 1] = i
        end
        assert.are.same({ 2, 5, 8, 1 }, it)
        assert.are.equal(4, d:len())
        assert.are.equal(4, d.num_samples)
        assert.are.equal(12, d.total_size)
        assert.are.equal(3, d.num_replicas)
        assert.are.equal(1, d.rank)
        assert.are.equal(0, d.epoch)
        assert.are.equal(0, d.seed)
        assert.is_false(d.drop_last)
        -- PyTorch rank 2: [2,5,8,1]; drop_last rank 1: [1,4,7], total_size 9
        assert.are.same({ 3, 6, 9, 2 },
            data.DistributedSampler(ds, { num_replicas = 3, rank = 2, shuffle = false }):indices())
        d = data.DistributedSampler(ds, { num_replicas = 3, rank = 1, shuffle = false,
            drop_last = true })
        assert.are.same({ 2, 5, 8 }, d:indices())
        assert.are.equal(9, d.total_size)
        -- PyTorch shuffled, 2 replicas: 5 per rank, set_epoch(1) changes the order
        d = data.DistributedSampler(ds, { num_replicas = 2, rank = 0 })
        local e0 = d:indices()
        d:set_epoch(1)
        assert.are.equal(5, #e0)
        assert.are_not.same(e0, d:indices())
        assert.are.equal(1, d.epoch)
    end)
end)

describe("datasets as PyTorch 1.13's", function()
    local ten = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 }
    it("random_split by lengths and by fractions (the remainder round-robin)", function()
        local a, b = compat.unpack(data.random_split(ten, { 3, 7 }, 0))
        assert.are.equal(3, a:len())
        assert.are.equal(7, b:len())
        local all = compat.move(a.indices, 1, 3, 1, {})
        compat.move(b.indices, 1, 7, 4, all)
        assert.are.same({ 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 }, sorted(all))
        local function lens(n, fr)
            local l = {}
            for i = 1, n do l[i] = i end
            local out = {}
            for k, s in ipairs(data.random_split(l, fr)) do out[k] = s:len() end
            return out
        end
        -- PyTorch: [4,3,3], [6,5], [1,1,1,7]
        assert.are.same({ 4, 3, 3 }, lens(10, { 0.33, 0.33, 0.34 }))
        assert.are.same({ 6, 5 }, lens(11, { 0.5, 0.5 }))
        assert.are.same({ 1, 1, 1, 7 }, lens(10, { 0.1, 0.1, 0.1, 0.7 }))
    end)

    it("Subset of a Subset", function()
        -- PyTorch Subset(Subset(range(10), [9,8,7,6,5]), [4,0]): [5, 9]
        local s = data.Subset(data.Subset(ten, { 10, 9, 8, 7, 6 }), { 5, 1 })
        assert.are.same({ 5, 9 }, { s:get(1), s:get(2) })
        assert.are.same({ 5, 1 }, s.indices)
        assert.are.same({ 10, 9, 8, 7, 6 }, s.dataset.indices)
    end)

    it("ConcatDataset of lists: cumulative_sizes, negative indices and their error", function()
        -- PyTorch ConcatDataset([range(3), range(10,14)]): [3, 7] 7 c[3]=10 c[-1]=13 c[-7]=0
        local c = data.ConcatDataset({ { 0, 1, 2 }, { 10, 11, 12, 13 } })
        assert.are.same({ 3, 7 }, c.cumulative_sizes)
        assert.are.equal(7, c:len())
        assert.are.equal(10, c:get(4))
        assert.are.equal(13, c:get(-1))
        assert.are.equal(0, c:get(-7))
        -- PyTorch: ValueError absolute value of index should not exceed dataset length
        assert.matches("tide: ConcatDataset: absolute value of index should not exceed dataset " ..
            "length %(index %-8, length 7%)", err_of(c.get, c, -8))
    end)

    it("TensorDataset refuses tensors of other sizes", function()
        -- PyTorch: AssertionError Size mismatch between tensors
        assert.matches("tide: TensorDataset: tensor 2 has 4 samples",
            err_of(data.TensorDataset, tide.zeros({ 3 }), tide.zeros({ 4 })))
    end)
end)
