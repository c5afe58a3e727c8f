-- generator_spec.lua — tide.Generator, PyTorch's Generator objects: the methods (manual_seed,
-- seed, initial_seed, get_state / set_state, device), the `generator =` option of every draw
-- (a seed gives the draws tide.manual_seed(seed) gives; tide's own stream never moves), the
-- samplers, random_split and DataLoader drawing from a shared one, and the errors, which
-- change no state.
local tide = require("tide")
local D = require("spec.support.device")

local DATA = tide.data

-- the message of f(...)'s error, checked to be raised at this file's line, without the position
local function err_of(f, ...)
    local ok, err = pcall(f, ...)
    assert.is_false(ok, "expected an error")
    err = tostring(err)
    assert.matches("^spec/generator_spec%.lua:%d+: tide: ", err)
    return (err:gsub("^[^:]*:%d+: ", "", 1))
end

local function state_bytes(s)
    return s:totable()
end

-- a generator seeded with seed (a new one each call)
local function G(seed, device)
    return tide.Generator(device):manual_seed(seed)
end

local F64 = { dtype = "float64", device = D.name }

describe("tide.Generator", function()
    it("starts on the CPU from PyTorch's default seed", function()
        local g = tide.Generator()
        assert.are.equal("cpu", tostring(g.device))
        assert.are.equal(67280421310721, g:initial_seed())
        assert.are.equal("Generator(device=cpu, initial_seed=67280421310721)", tostring(g))
        -- its draws are those of that seed
        tide.manual_seed(67280421310721)
        local want = tide.rand({ 4 })
        assert.is_true(tide.rand({ 4 }, { generator = tide.Generator() }):equal(want))
        -- a device by name or object, canonical as tide.get_rng_state writes it
        assert.are.equal(D.name, tostring(tide.Generator(D.name).device))
        assert.are.equal(D.name, tostring(tide.Generator(tide.device(D.name)).device))
        assert.are.equal(tide.get_rng_state(D.name):size(1), G(1, D.name):get_state():size(1))
    end)

    it("manual_seed returns the generator and sets initial_seed; seed() draws one", function()
        local g = tide.Generator()
        assert.are.equal(g, g:manual_seed(123))
        assert.are.equal(123, g:initial_seed())
        assert.are.equal(-5, g:manual_seed(-5):initial_seed())
        assert.are.equal(7, g:manual_seed(7.0):initial_seed()) -- an integral float
        local before = state_bytes(tide.get_rng_state())
        local s = g:seed()
        assert.are.equal(s, g:initial_seed())
        assert.are.equal(s, math.floor(s))
        assert.are_not.equal(s, tide.Generator():seed()) -- (a fresh seed each call)
        -- tide's generator is left as it was
        assert.are.same(before, state_bytes(tide.get_rng_state()))
        tide.manual_seed(s)
        assert.is_true(tide.randn({ 3 }, { generator = g }):equal(tide.randn({ 3 })))
    end)

    it("get_state is tide.get_rng_state's format; set_state restores it", function()
        local g = G(42)
        tide.manual_seed(42)
        assert.are.same(state_bytes(tide.get_rng_state()), state_bytes(g:get_state()))
        local s = g:get_state()
        assert.are.equal("uint8", s.dtype)
        assert.are.equal(16 + #"cpu", s:size(1))
        local a = tide.rand({ 5 }, { generator = g })
        local b = tide.rand({ 5 }, { generator = g })
        assert.is_false(a:equal(b))
        assert.are.equal(g, g:set_state(s))
        assert.is_true(tide.rand({ 5 }, { generator = g }):equal(a))
        assert.is_true(tide.rand({ 5 }, { generator = g }):equal(b))
        -- a state of tide's own generator restores into a Generator, and the other way
        tide.manual_seed(8)
        tide.rand({ 3 })
        local h = tide.Generator():set_state(tide.get_rng_state())
        local want = tide.rand({ 4 })
        assert.is_true(tide.rand({ 4 }, { generator = h }):equal(want))
        tide.set_rng_state(h:get_state())
        assert.is_true(tide.rand({ 4 }):equal(tide.rand({ 4 }, { generator = G(8):set_state(
            h:get_state()) })))
        -- set_state copies: drawing from g later does not change the saved tensor
        local saved = state_bytes(s)
        tide.rand({ 2 }, { generator = g })
        assert.are.same(saved, state_bytes(s))
    end)
end)

describe("the generator option", function()
    -- each case: the draw with {generator = g}, then the same draw from tide's generator
    local x = tide.zeros({ 6 }, F64)
    local p = tide.full({ 6 }, 0.5, F64)
    local cases = {
        { "rand", function(o) return tide.rand({ 2, 3 }, o(F64)) end },
        { "rand(sizes...)", function(o) return tide.rand(2, 3, o(F64)) end },
        { "randn", function(o) return tide.randn({ 4 }, o(F64)) end },
        { "randint", function(o) return tide.randint(3, 9, { 5 }, o({ device = D.name })) end },
        { "randperm", function(o) return tide.randperm(7, o({ device = D.name })) end },
        { "multinomial", function(o) return tide.multinomial(p, 3, o({ replacement = true }))
        end },
        { "t:multinomial", function(o) return p:multinomial(4, o()) end },
        { "normal(numbers)", function(o) return tide.normal(2, 3, { 4 }, o(F64)) end },
        { "normal(tensor)", function(o) return tide.normal(x, 2, o()) end },
        { "poisson", function(o) return tide.poisson(p * 20, o()) end },
        { "bernoulli", function(o) return p:bernoulli(o()) end },
        { "bernoulli(p)", function(o) return x:bernoulli(0.3, o()) end },
        { "uniform_", function(o) return x:clone():uniform_(-2, 2, o()) end },
        { "uniform_()", function(o) return x:clone():uniform_(o()) end },
        { "normal_", function(o) return x:clone():normal_(1, 2, o()) end },
        { "bernoulli_", function(o) return x:clone():bernoulli_(0.4, o()) end },
        { "bernoulli_(tensor)", function(o) return x:clone():bernoulli_(p, o()) end },
        { "exponential_", function(o) return x:clone():exponential_(o()) end },
        { "geometric_", function(o) return x:clone():geometric_(0.2, o()) end },
        { "log_normal_", function(o) return x:clone():log_normal_(0, 1, o()) end },
        { "cauchy_", function(o) return x:clone():cauchy_(1, o()) end },
        { "random_", function(o) return x:clone():random_(5, o()) end },
        { "random_(from, to)", function(o) return x:clone():random_(-3, 3, o()) end },
    }
    local function plain(t)
        return t
    end

    it("gives the draws tide.manual_seed(seed) gives, twice in a row", function()
        for _, c in ipairs(cases) do
            local name, draw = c[1], c[2]
            local g = G(2024, D.name)
            local with = function(t)
                local o = {}
                for k, v in pairs(t or {}) do
                    o[k] = v
                end
                o.generator = g
                return o
            end
            local a1, a2 = draw(with), draw(with)
            tide.manual_seed(2024)
            local b1, b2 = draw(plain), draw(plain)
            assert.is_true(a1:equal(b1), name)
            assert.is_true(a2:equal(b2), name)
        end
    end)

    it("leaves tide's generator where it was", function()
        tide.manual_seed(11)
        local whole = tide.rand({ 8 }, F64)
        tide.manual_seed(11)
        local a = tide.rand({ 4 }, F64)
        local state = state_bytes(tide.get_rng_state())
        local g = G(5, D.name)
        for _, c in ipairs(cases) do
            c[2](function(t)
                local o = {}
                for k, v in pairs(t or {}) do
                    o[k] = v
                end
                o.generator = g
                return o
            end)
        end
        assert.are.same(state, state_bytes(tide.get_rng_state()))
        local b = tide.rand({ 4 }, F64)
        assert.is_true(tide.cat({ a, b }):equal(whole))
    end)

    it("takes the options table in place of omitted arguments, empty or without generator",
        function()
            local x = tide.zeros({ 5 }, F64)
            assert.is_true(x:clone():exponential_({ generator = G(1, D.name) })
                :equal(x:clone():exponential_(1, { generator = G(1, D.name) })))
            assert.is_true(x:clone():log_normal_({ generator = G(1, D.name) })
                :equal(x:clone():log_normal_(1, 2, { generator = G(1, D.name) })))
            tide.manual_seed(3)
            local want = x:clone():uniform_(0, 1)
            tide.manual_seed(3)
            assert.is_true(x:clone():uniform_({}):equal(want))
            tide.manual_seed(3)
            assert.is_true(tide.rand({ 5 }, { dtype = "float64", device = D.name }):equal(want))
        end)
end)

describe("the data samplers with a tide.Generator", function()
    it("draw from it and advance it: two samplers sharing one interleave its stream", function()
        local g = G(77)
        local r = DATA.RandomSampler(6, { generator = g })
        local s = DATA.SubsetRandomSampler({ 10, 20, 30, 40 }, { generator = g })
        local before = state_bytes(tide.get_rng_state())
        local r1, s1, r2 = r:indices(), s:indices(), r:indices()
        assert.are.same(before, state_bytes(tide.get_rng_state()))
        tide.manual_seed(77)
        local p1, q1, p2 = tide.randperm(6):totable(), tide.randperm(4):totable(),
            tide.randperm(6):totable()
        assert.are.same(p1, r1)
        assert.are.same(p2, r2)
        local sub = { 10, 20, 30, 40 }
        assert.are.same({ sub[q1[1]], sub[q1[2]], sub[q1[3]], sub[q1[4]] }, s1)
        -- the generator moved on: a draw from it now is the fourth of that stream
        local next_draw = tide.rand({ 2 }, { generator = g })
        assert.is_true(next_draw:equal(tide.rand({ 2 })))
    end)

    it("WeightedRandomSampler and RandomSampler with replacement", function()
        local w = { 1, 2, 3, 4 }
        local got = DATA.WeightedRandomSampler(w, 8, { generator = G(6) }):indices()
        tide.manual_seed(6)
        local want = tide.multinomial(tide.tensor(w, { dtype = "float64" }), 8,
            { replacement = true }):totable()
        assert.are.same(want, got)
        local r = DATA.RandomSampler(5, { replacement = true, num_samples = 9,
            generator = G(4) }):indices()
        tide.manual_seed(4)
        assert.are.same(tide.randint(1, 6, { 9 }):totable(), r)
    end)

    it("random_split draws its permutation from it", function()
        local ds = DATA.TensorDataset(tide.arange(1, 9))
        local g = G(12)
        local a = DATA.random_split(ds, { 5, 3 }, { generator = g })
        local b = DATA.random_split(ds, { 4, 4 }, { generator = g })
        tide.manual_seed(12)
        local p, q = tide.randperm(8):totable(), tide.randperm(8):totable()
        assert.are.same({ p[1], p[2], p[3], p[4], p[5] }, a[1].indices)
        assert.are.same({ p[6], p[7], p[8] }, a[2].indices)
        assert.are.same({ q[5], q[6], q[7], q[8] }, b[2].indices)
        -- an integer generator: the stream of tide.manual_seed(12), which it leaves alone
        tide.manual_seed(1)
        local state = state_bytes(tide.get_rng_state())
        assert.are.same(a[1].indices,
            DATA.random_split(ds, { 5, 3 }, { generator = 12 })[1].indices)
        assert.are.same(state, state_bytes(tide.get_rng_state()))
    end)

    it("DataLoader shuffles each epoch from it; two loaders sharing one interleave", function()
        local ds = DATA.TensorDataset(tide.arange(1, 7))
        local g = G(31)
        local one = DATA.DataLoader(ds, { batch_size = 6, shuffle = true, generator = g })
        local two = DATA.DataLoader(ds, { batch_size = 6, shuffle = true, generator = g })
        local state = state_bytes(tide.get_rng_state())
        local e1 = one:iter()():totable()
        local e2 = two:iter()():totable()
        local e3 = one:iter()():totable()
        assert.are.same(state, state_bytes(tide.get_rng_state()))
        tide.manual_seed(31)
        assert.are.same(tide.randperm(6):totable(), e1)
        assert.are.same(tide.randperm(6):totable(), e2)
        assert.are.same(tide.randperm(6):totable(), e3)
        -- an integer generator is the loader's own stream: the same epochs for the same seed
        local a = DATA.DataLoader(ds, { batch_size = 6, shuffle = true, generator = 31 })
        assert.are.same(e1, a:iter()():totable())
        assert.are.same(e2, a:iter()():totable())
    end)
end)

describe("the generator's errors", function()
    it("name the op and the bad value, and say the fix", function()
        local g = G(1)
        assert.are.equal("tide: rand: generator must be a tide.Generator, got number; make one " ..
            "with tide.Generator():manual_seed(seed)",
            err_of(tide.rand, { 2 }, { generator = 5 }))
        assert.are.equal("tide: exponential_: generator must be a tide.Generator, got a " ..
            "tensor; make one with tide.Generator():manual_seed(seed)",
            err_of(function()
                return tide.zeros(2):exponential_({ generator = tide.zeros(1) })
            end))
        assert.are.equal('tide: randn: unknown option "generatr" (did you mean "generator"?)',
            err_of(tide.randn, { 2 }, { generatr = g }))
        assert.are.equal('tide: uniform_: unknown option "gen"; options are from, to, generator',
            err_of(function() return tide.zeros(2):uniform_(0, 1, { gen = g }) end))
        assert.are.equal('tide: multinomial: unknown option "replace"; options are ' ..
            'num_samples, replacement, generator',
            err_of(tide.multinomial, tide.ones(3), 1, { replace = true }))
        assert.are.equal('tide: randperm: unknown option "seed"; options are device, dtype, ' ..
            'requires_grad, generator', err_of(tide.randperm, 3, { seed = 1 }))
        assert.are.equal('tide: rand_like: unknown option "generator"; options are dtype, ' ..
            'device, requires_grad, memory_format',
            err_of(tide.rand_like, tide.ones(3), { generator = g }))
        assert.are.equal("tide: Generator:manual_seed: the seed must be an integer, got 2.5",
            err_of(function() return g:manual_seed(2.5) end))
        assert.are.equal("tide: Generator:seed: expected a Generator as self, got nil; call it " ..
            "with a colon: g:seed(...)", err_of(function() return g.seed() end))
        assert.matches('^tide: Generator: unknown device "gpu"',
            err_of(tide.Generator, "gpu"))
        assert.are.equal("tide: Generator:set_state: expected a state from g:get_state() or " ..
            "tide.get_rng_state() (a 1-d uint8 tensor), got a 1-d float32 tensor of 3 elements",
            err_of(function() return g:set_state(tide.zeros(3)) end))
        assert.are.equal("tide: DataLoader: seed and generator exclude each other; pass one of " ..
            "them (seed fixes every epoch's order, generator draws each from its stream)",
            err_of(DATA.DataLoader, DATA.TensorDataset(tide.zeros(2)), { seed = 1,
                generator = g }))
        assert.are.equal("tide: random_split: seed and generator exclude each other; pass one " ..
            "of them", err_of(DATA.random_split, DATA.TensorDataset(tide.zeros(2)), { 1, 1 },
            { seed = 1, generator = g }))
        assert.are.equal("tide: RandomSampler: generator must be an integer seed or a state " ..
            "from tide.get_rng_state() or a tide.Generator, got string",
            err_of(DATA.RandomSampler, 3, { generator = "g" }))
    end)

    it("refuse a generator of another device", function()
        local other = tide.Generator(D.other)
        local x = tide.zeros({ 3 }, { device = D.name })
        assert.are.equal(("tide: rand: generator is for %s, the draw is on %s; pass a " ..
            "tide.Generator(\"%s\")"):format(D.other, D.name, D.name),
            err_of(tide.rand, { 2 }, { device = D.name, generator = other }))
        assert.are.equal(("tide: normal_: generator is for %s, the draw is on %s; pass a " ..
            "tide.Generator(\"%s\")"):format(D.other, D.name, D.name),
            err_of(function() return x:normal_({ generator = other }) end))
        assert.are.equal(("tide: cauchy_: generator is for %s, the draw is on %s; pass a " ..
            "tide.Generator(\"%s\")"):format(D.other, D.name, D.name),
            err_of(function() return x:cauchy_({ generator = other }) end))
        if D.other ~= "cpu" then
            assert.are.equal(("tide: SubsetRandomSampler: generator is for %s, the draw is " ..
                "on cpu; pass a tide.Generator(\"cpu\")"):format(D.other),
                err_of(DATA.SubsetRandomSampler, { 1, 2 }, { generator = other }))
        end
        local s = G(3, D.name):get_state()
        assert.are.equal(("tide: Generator:set_state: the state is %s's " ..
            "(tide.get_rng_state(\"%s\")) and cannot restore a Generator of %s; restore it " ..
            "into a tide.Generator(\"%s\"), or take %s's state with g:get_state() or " ..
            "tide.get_rng_state(\"%s\")"):format(D.name, D.name, D.other, D.name, D.other,
            D.other), err_of(function() return other:set_state(s) end))
    end)

    it("change no state: neither the generator's nor tide's", function()
        local g = G(9, D.name)
        local x = tide.zeros({ 4 }, F64)
        local mine, tides = state_bytes(g:get_state()), state_bytes(tide.get_rng_state())
        local function unchanged()
            assert.are.same(mine, state_bytes(g:get_state()))
            assert.are.same(tides, state_bytes(tide.get_rng_state()))
        end
        -- refused before the draw
        err_of(function() return x:exponential_(-1, { generator = g }) end)
        err_of(function() return x:bernoulli(2, { generator = g }) end)
        err_of(tide.randint, 0, 5, { 2 }, { generator = g, dtype = "nope" })
        err_of(function() return g:manual_seed("x") end)
        err_of(function() return g:set_state(tide.zeros(3, { dtype = "uint8" })) end)
        err_of(function() return g:set_state(tide.Generator(D.other):get_state()) end)
        unchanged()
        -- raised within the draw, g's state swapped in: both put back
        err_of(tide.multinomial, tide.tensor({ -1, 1 }, F64), 1, { generator = g })
        err_of(function() return x:expand({ 2, 4 }):uniform_({ generator = g }) end)
        err_of(tide.randperm, -1, { generator = g })
        unchanged()
    end)
end)
