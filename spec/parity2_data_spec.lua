-- parity2_data_spec.lua — issue 27, data and the generator: data.WeightedRandomSampler and
-- data.ConcatDataset (PyTorch 1.13's, with 1-based indices) through a DataLoader,
-- tide.get_rng_state / tide.set_rng_state per device, and a Module load_state_dict that
-- points a PyTorch-numbered state dict at nn.utils.state_dict_from_torch. ConcatDataset's
-- indexing is compared with PyTorch 1.13's in spec/fixtures/parity2_data_torch.lua
-- (make_parity2_data.py).
local tide = require("tide")
local data = require("tide.data")
local nn = require("tide.nn")
local F = nn.functional

local function err_of(f, ...)
    local ok, err = pcall(f, ...)
    assert.is_false(ok, "expected an error")
    assert.is_string(err)
    assert.matches("parity2_data_spec%.lua:%d+: tide: ", err)
    return err
end

local function ids_of(loader)
    local out = {}
    for x in loader:iter() do
        for _, v in ipairs(x:totable()) do
            out[#out + 1] = v
        end
    end
    return out
end

describe("data.WeightedRandomSampler (issue 27)", function()
    it("draws num_samples 1-based indices in proportion to the weights", function()
        tide.manual_seed(7)
        local s = data.WeightedRandomSampler({ 1, 0, 3 }, 4000)
        assert.are.equal(4000, s:len())
        local counts = { 0, 0, 0 }
        for _, i in ipairs(s:indices()) do
            counts[i] = counts[i] + 1
        end
        assert.are.equal(0, counts[2])
        assert.are.equal(4000, counts[1] + counts[3])
        assert.is_true(math.abs(counts[3] / 4000 - 0.75) < 0.03, tostring(counts[3]))
        -- a tensor of weights; without replacement every index once
        local w = tide.tensor({ 0.5, 2, 1, 0, 4 }, { dtype = "float32" })
        local u = data.WeightedRandomSampler(w, 4, { replacement = false })
        local list = u:indices()
        table.sort(list)
        assert.are.same({ 1, 2, 3, 5 }, list)
    end)

    it("follows tide.manual_seed, or its own generator without touching tide's", function()
        tide.manual_seed(3)
        local a = data.WeightedRandomSampler({ 1, 2, 3, 4 }, 10):indices()
        tide.manual_seed(3)
        local b = data.WeightedRandomSampler({ 1, 2, 3, 4 }, 10):indices()
        assert.are.same(a, b)
        -- a seed: the same draws whatever tide's generator did in between, which it leaves be
        local s1 = data.WeightedRandomSampler({ 1, 2, 3, 4 }, 10, { generator = 42 })
        tide.manual_seed(1)
        local want = tide.rand({ 3 }, { dtype = "float64" }):totable()
        tide.manual_seed(1)
        local first = s1:indices()
        assert.are.same(want, tide.rand({ 3 }, { dtype = "float64" }):totable())
        local second = s1:indices()
        local s2 = data.WeightedRandomSampler({ 1, 2, 3, 4 }, 10, { generator = 42 })
        assert.are.same(first, s2:indices())
        assert.are.same(second, s2:indices())
        -- a state from tide.get_rng_state
        tide.manual_seed(42)
        local s3 = data.WeightedRandomSampler({ 1, 2, 3, 4 }, 10,
            { generator = tide.get_rng_state() })
        assert.are.same(first, s3:indices())
    end)

    it("is a DataLoader sampler: each epoch a new draw of len() indices", function()
        local x = tide.arange(1, 9, { dtype = "int64" }) -- sample i holds i
        local ds = data.TensorDataset(x)
        local s = data.WeightedRandomSampler({ 0, 1, 0, 1, 0, 1, 0, 1 }, 6, { generator = 5 })
        local loader = data.DataLoader(ds, { batch_size = 4, sampler = s })
        assert.are.equal(2, loader:len())
        local got = ids_of(loader)
        assert.are.equal(6, #got)
        for _, v in ipairs(got) do
            assert.are.equal(0, v % 2)
        end
        local want = data.WeightedRandomSampler({ 0, 1, 0, 1, 0, 1, 0, 1 }, 6, { generator = 5 })
        assert.are.same(want:indices(), got)
        local n = 0
        for i in s:iter() do
            n = n + 1
            assert.are.equal(0, i % 2)
        end
        assert.are.equal(6, n)
    end)

    it("rejects bad weights and options", function()
        assert.matches("WeightedRandomSampler: weight 2 is %-1; weights must be finite and >= 0",
            err_of(data.WeightedRandomSampler, { 1, -1 }, 2))
        assert.matches("WeightedRandomSampler: every weight is 0",
            err_of(data.WeightedRandomSampler, { 0, 0 }, 2))
        assert.matches("WeightedRandomSampler: num_samples = 0; expected a positive integer",
            err_of(data.WeightedRandomSampler, { 1, 1 }, 0))
        assert.matches("WeightedRandomSampler: cannot draw 3 samples without replacement from " ..
            "2 weights that are not 0", err_of(data.WeightedRandomSampler, { 1, 0, 1 }, 3,
            { replacement = false }))
        assert.matches('WeightedRandomSampler: unknown option "seed"',
            err_of(data.WeightedRandomSampler, { 1 }, 1, { seed = 1 }))
        assert.matches("WeightedRandomSampler: generator must be an integer seed or a state",
            err_of(data.WeightedRandomSampler, { 1 }, 1, { generator = "x" }))
        assert.matches("WeightedRandomSampler: expected weights as a list of numbers or a 1%-d " ..
            "tensor, got a 2%-d float32 tensor",
            err_of(data.WeightedRandomSampler, tide.ones({ 2, 2 }), 1))
    end)
end)

describe("data.ConcatDataset (issue 27)", function()
    local function tds(lo, n)
        return data.TensorDataset(tide.arange(lo, lo + n, { dtype = "int64" }),
            tide.arange(lo, lo + n, { dtype = "float64" }):mul(10))
    end

    it("indexes across the boundaries; cumulative_sizes as PyTorch's", function()
        local ds = data.ConcatDataset({ tds(1, 3), tds(100, 0), tds(4, 5) })
        assert.are.same({ 3, 3, 8 }, ds.cumulative_sizes) -- PyTorch 1.13: [3, 3, 8]
        assert.are.equal(8, ds:len())
        for i = 1, 8 do
            local a, b = ds:get(i)
            assert.are.equal(i, a:item())
            assert.are.equal(10 * i, b:item())
        end
        assert.are.equal(4, ds[4][1]:item())
        assert.matches("ConcatDataset: index 9 out of range 1..8", err_of(ds.get, ds, 9))
        assert.matches("ConcatDataset: expected a list of datasets",
            err_of(data.ConcatDataset, tds(1, 2)))
        assert.matches("ConcatDataset: datasets should not be an empty list",
            err_of(data.ConcatDataset, {}))
        assert.matches("ConcatDataset: dataset 2 is a number, expected a dataset",
            err_of(data.ConcatDataset, { tds(1, 2), 3 }))
    end)

    it("maps each sample to the part and index PyTorch 1.13 reads (fixture)", function()
        local REF = dofile("spec/fixtures/parity2_data_torch.lua")
        local parts = {}
        for d, n in ipairs(REF.sizes) do
            parts[d] = data.TensorDataset(tide.full({ n }, d, { dtype = "int64" }),
                tide.arange(1, n + 1, { dtype = "int64" }))
        end
        local ds = data.ConcatDataset(parts)
        assert.are.same(REF.cumulative_sizes, ds.cumulative_sizes)
        assert.are.equal(REF.len, ds:len())
        for i, want in ipairs(REF.where) do
            local d, j = ds:get(i)
            assert.are.same(want, { d:item(), j:item() })
        end
        -- the same through a DataLoader (each batch gathered per part)
        local got = {}
        for d, j in data.DataLoader(ds, { batch_size = 5, shuffle = true, seed = 3 }):iter() do
            local dd, jj = d:totable(), j:totable()
            for k = 1, #dd do
                got[#got + 1] = dd[k] * 100 + jj[k]
            end
        end
        local want = {}
        for _, w in ipairs(REF.where) do
            want[#want + 1] = w[1] * 100 + w[2]
        end
        table.sort(got)
        table.sort(want)
        assert.are.same(want, got)
    end)

    it("has #ds on 5.3+ #lua53", function()
        assert.are.equal(8, #data.ConcatDataset({ tds(1, 3), tds(4, 5) }))
    end)

    it("feeds a DataLoader: in order, shuffled, and with a part that has no batch()", function()
        local ds = data.ConcatDataset({ tds(1, 3), tds(4, 5) })
        local whole = tds(1, 8)
        for _, opts in ipairs({ { batch_size = 3 }, { batch_size = 3, shuffle = true, seed = 9 } }) do
            local got, want = {}, {}
            for x, y in data.DataLoader(ds, opts):iter() do
                got[#got + 1] = { x:totable(), y:totable() }
            end
            for x, y in data.DataLoader(whole, opts):iter() do
                want[#want + 1] = { x:totable(), y:totable() }
            end
            assert.are.same(want, got)
        end
        local Squares = data.Dataset:extend("Squares")
        function Squares:len() return 3 end
        function Squares:get(i) return tide.tensor(8 + i), tide.tensor(10.0 * (8 + i), { dtype = "float64" }) end
        local mixed = data.ConcatDataset({ tds(1, 8), Squares() })
        assert.is_false(mixed.batch)
        local ids = {}
        for x in data.DataLoader(mixed, { batch_size = 5 }):iter() do
            for _, v in ipairs(x:totable()) do
                ids[#ids + 1] = v
            end
        end
        assert.are.same({ 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11 }, ids)
    end)
end)

describe("tide.get_rng_state / tide.set_rng_state (issue 27)", function()
    local function draws()
        local x = tide.ones({ 64 }, { dtype = "float32" })
        return {
            tide.rand({ 5 }, { dtype = "float64" }):totable(),
            tide.randn({ 5 }, { dtype = "float64" }):totable(),
            tide.randint(0, 100, { 5 }):totable(),
            tide.randperm(6):totable(),
            tide.multinomial(tide.tensor({ 1, 2, 3 }, { dtype = "float64" }), 4,
                { replacement = true }):totable(),
            F.dropout(x, { p = 0.5 }):totable(),
        }
    end

    it("repeats the draws that followed the state", function()
        tide.manual_seed(11)
        tide.rand({ 3 })
        local s = tide.get_rng_state()
        assert.are.equal("uint8", s.dtype)
        assert.are.equal(1, s:dim())
        local a = draws()
        tide.set_rng_state(s)
        assert.are.same(a, draws())
        -- through tide.save, and by the explicit device name
        local path = os.tmpname()
        tide.save(path, { rng = s })
        tide.set_rng_state(tide.load(path).rng, "cpu")
        os.remove(path)
        assert.are.same(a, draws())
        -- the state is a copy: drawing does not change it
        tide.set_rng_state(s)
        assert.are.same(a, draws())
    end)

    it("restores on its own device only, naming both", function()
        local s = tide.get_rng_state("cpu")
        -- the same state, marked as another device's
        local bytes = s:totable()
        local other = {}
        for i = 1, 16 do
            other[i] = bytes[i]
        end
        for i = 1, #"cuda:0" do
            other[16 + i] = ("cuda:0"):byte(i)
        end
        local foreign = tide.tensor(other, { dtype = "uint8" })
        assert.matches('set_rng_state: the state is cuda:0\'s %(tide.get_rng_state%("cuda:0"%)%) ' ..
            'and cannot restore cpu; pass it with device "cuda:0", or take cpu\'s state with ' ..
            'tide.get_rng_state%("cpu"%)', err_of(tide.set_rng_state, foreign))
        local ok = pcall(tide.device, "cpu:1")
        if ok then
            local s1 = tide.get_rng_state("cpu:1")
            assert.matches("the state is cpu:1's .* and cannot restore cpu",
                err_of(tide.set_rng_state, s1, "cpu"))
            assert.matches("the state is cpu's .* and cannot restore cpu:1",
                err_of(tide.set_rng_state, s, "cpu:1"))
            tide.set_rng_state(s1, "cpu:1")
        end
        assert.matches("set_rng_state: expected a state from tide.get_rng_state %(a 1%-d uint8 " ..
            "tensor%), got a table", err_of(tide.set_rng_state, {}))
        assert.matches("set_rng_state: expected a state from tide.get_rng_state %(a 1%-d uint8 " ..
            "tensor%), got a 1%-d uint8 tensor of 4 elements",
            err_of(tide.set_rng_state, tide.zeros({ 4 }, { dtype = "uint8" })))
        assert.matches("get_rng_state: cpu:9 does not exist", err_of(tide.get_rng_state, "cpu:9"))
    end)
end)

describe("Module:load_state_dict of a PyTorch-numbered state dict (issue 27)", function()
    it("says to convert it with nn.utils.state_dict_from_torch", function()
        local m = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
        local sd = nn.utils.state_dict_to_torch(m:state_dict())
        assert.matches("load_state_dict: missing keys: 1%.weight, 1%.bias, 3%.weight, 3%.bias; " ..
            "unexpected keys: 0%.bias, 0%.weight, 2%.bias, 2%.weight; the state dict numbers " ..
            "list entries from 0, as PyTorch does %(tide counts from 1%): load " ..
            "nn%.utils%.state_dict_from_torch%(sd%)", err_of(m.load_state_dict, m, sd))
        m:load_state_dict(nn.utils.state_dict_from_torch(sd))
        -- keys that differ otherwise keep the usual advice
        sd["head.weight"] = tide.zeros({ 1 })
        assert.matches("unexpected keys: 0%.bias, 0%.weight, 2%.bias, 2%.weight, head%.weight; " ..
            "pass strict = false", err_of(m.load_state_dict, m, sd))
    end)
end)

describe("tide.get_rng_state on CUDA (issue 27) #cuda", function()
    it("repeats cuda:0's draws and refuses a cpu state there", function()
        if not tide.cuda.is_available() then
            pending("no CUDA device")
            return
        end
        local s = tide.get_rng_state("cuda")
        local a = tide.randn({ 1000 }, { device = "cuda:0" }):cpu():totable()
        local x = tide.ones({ 256 }, { device = "cuda:0" })
        local d = F.dropout(x, { p = 0.5 }):cpu():totable()
        tide.set_rng_state(s, "cuda:0")
        assert.are.same(a, tide.randn({ 1000 }, { device = "cuda:0" }):cpu():totable())
        assert.are.same(d, F.dropout(x, { p = 0.5 }):cpu():totable())
        assert.matches("the state is cpu's .* and cannot restore cuda:0",
            err_of(tide.set_rng_state, tide.get_rng_state(), "cuda:0"))
    end)
end)
