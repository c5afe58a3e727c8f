-- random_api_spec.lua — the random number API against PyTorch 1.13: shapes, dtypes, ranges,
-- generators and errors of rand, randn, randint(_like), rand_like/randn_like, randperm,
-- bernoulli, multinomial, normal, poisson, the in-place fills and tide.Generator /
-- tide.default_generator / fork_rng / get_rng_state (not the draws, which are tide's own).
-- Expected values are PyTorch 1.13's (printed by a throwaway script), noted beside each.
local tide = require("tide")

local function shape(t)
    local s, r = t:size(), {}
    for i = 1, #s do
        r[i] = s[i]
    end
    return r
end

-- f's error message without its position, checked to be a tide: error
local function err_of(f)
    local ok, e = pcall(f)
    assert.is_false(ok, "expected an error")
    e = tostring(e)
    assert.matches("tide: ", e, 1, true)
    return (e:gsub("^.-tide: ", "tide: ", 1))
end

local F32 = { dtype = "float32" }
local function z(n, dtype)
    return tide.zeros({ n }, { dtype = dtype or "float32" })
end

describe("random draws: shapes and dtypes (PyTorch 1.13's)", function()
    it("rand, randn: shapes, empty and 0-d sizes, the default dtype, [0, 1)", function()
        assert.are.same({ 2, 3 }, shape(tide.rand(2, 3))) -- [2, 3] float32
        assert.are.equal("float32", tide.randn(2, 3).dtype)
        assert.are.same({ 0, 3 }, shape(tide.rand(0, 3))) -- [0, 3]
        assert.are.same({}, shape(tide.rand({}))) -- torch.rand(()) is 0-d
        local u = tide.rand(4000)
        assert.is_true(u:min():item() >= 0 and u:max():item() < 1)
    end)

    it("randint: the high-only form, low/high, int64 by default, dtype, [low, high)", function()
        local r = tide.randint(10, { 3 })
        assert.are.same({ 3 }, shape(r)) -- torch.randint(10, (3,)): [3] int64
        assert.are.equal("int64", r.dtype)
        assert.are.equal("int64", tide.randint(2, 5, { 2, 2 }).dtype)
        assert.are.equal("int32", tide.randint(2, 5, { 2, 2 }, { dtype = "int32" }).dtype)
        assert.are.equal("float32", tide.randint(2, 5, { 2 }, F32).dtype)
        assert.are.same({ 0 }, shape(tide.randint(5, { 0 })))
        local d = tide.randint(-3, 4, { 2000 })
        assert.are.equal(-3, d:min():item())
        assert.are.equal(3, d:max():item())
        -- PyTorch: random_ expects 'from' to be less than 'to', but got from=5 >= to=5
        assert.are.equal("tide: randint: high (5) must be greater than low (5); high is excluded",
            err_of(function() return tide.randint(5, 5, { 2 }) end))
    end)

    it("randint_like, rand_like, randn_like keep the dtype and shape", function()
        local i32 = tide.zeros({ 2, 3 }, { dtype = "int32" })
        assert.are.equal("int32", tide.randint_like(i32, 5).dtype)
        assert.are.equal("float32", tide.randint_like(tide.zeros(2, 3), 5).dtype)
        assert.are.same({ 2, 3 }, shape(tide.randint_like(tide.zeros(2, 3), 1, 5)))
        local h = z(2, "float64")
        assert.are.equal("float64", tide.rand_like(h).dtype)
        assert.are.equal("float64", tide.randn_like(h).dtype)
        -- PyTorch: "check_uniform_bounds" / "normal_kernel_cpu" not implemented for 'Int'
        assert.matches("rand_like: random values need a floating%-point dtype, got int32",
            err_of(function() return tide.rand_like(i32) end))
        assert.matches("randn_like: random values need a floating%-point dtype",
            err_of(function() return tide.randn_like(i32) end))
    end)

    it("randperm: int64, n = 0, dtype, a negative n", function()
        assert.are.equal("int64", tide.randperm(4).dtype)
        assert.are.same({ 0 }, shape(tide.randperm(0)))
        assert.are.equal("int32", tide.randperm(3, { dtype = "int32" }).dtype)
        assert.are.equal("float32", tide.randperm(3, F32).dtype)
        assert.are.equal("tide: randperm: n = -1 is negative; expected a count >= 0",
            err_of(function() return tide.randperm(-1) end))
    end)

    it("bernoulli: a p tensor, the p option, out of [0, 1], integer input", function()
        local p = tide.full({ 3 }, 0.5)
        assert.are.equal("float32", tide.bernoulli(p).dtype)
        assert.are.same({ 1, 0, 0 }, tide.bernoulli(tide.tensor({ 1, 0, 0 }, F32)):totable())
        assert.are.same({ 1, 1, 1 }, tide.bernoulli(p, 1):totable()) -- bernoulli(p, 1.0)
        assert.are.same({ 1, 1 }, tide.bernoulli(z(2), { p = 1 }):totable())
        assert.matches("bernoulli: the input must hold probabilities in %[0, 1%], got 1.5",
            err_of(function() return tide.bernoulli(tide.tensor({ 1.5 })) end))
        assert.are.equal("tide: bernoulli: p must be in [0, 1], got 1.5",
            err_of(function() return tide.bernoulli(p, 1.5) end))
        assert.matches("bernoulli: needs a floating%-point tensor, got int64",
            err_of(function() return tide.bernoulli(tide.tensor({ 1 })) end))
    end)

    it("multinomial: 1-d and 2-d, int64, replacement, and its errors", function()
        local m = tide.multinomial(tide.ones(4), 2)
        assert.are.same({ 2 }, shape(m))
        assert.are.equal("int64", m.dtype)
        assert.are.same({ 3, 2 }, shape(tide.multinomial(tide.ones(3, 4), 2)))
        assert.are.same({ 6 }, shape(tide.multinomial(tide.ones(4), 6, true)))
        -- PyTorch: cannot sample n_sample > prob_dist.size(-1) samples without replacement
        assert.matches("cannot draw 5 samples without replacement from 4 categories",
            err_of(function() return tide.multinomial(tide.ones(4), 5) end))
        assert.matches("probabilities must be finite and non%-negative, got %-1",
            err_of(function() return tide.multinomial(tide.tensor({ -1, 1 }, F32), 1) end))
        assert.matches("the probabilities of row 1 sum to 0",
            err_of(function() return tide.multinomial(tide.zeros(3), 1) end))
        assert.matches("probabilities must be 1%-d or 2%-d, got 3 dims",
            err_of(function() return tide.multinomial(tide.ones(2, 2, 2), 1) end))
        assert.matches("the number of samples must be positive, got 0",
            err_of(function() return tide.multinomial(tide.ones(4), 0) end))
    end)

    pending("multinomial(tensor({0, 1, 0, 0}), 2): PyTorch 1.13's CPU kernel returns a " ..
        "zero-probability category without error; tide raises (cannot draw 2 samples without " ..
        "replacement from 1 categories of nonzero probability ...): left, a silent wrong draw")

    it("normal: the four forms, broadcasting, std < 0", function()
        local m, s = tide.zeros(2, 1), tide.ones(3)
        assert.are.same({ 2, 3 }, shape(tide.normal(m, s))) -- [2, 3] float32
        assert.are.equal("float32", tide.normal(m, s).dtype)
        assert.are.same({ 2, 3 }, shape(tide.normal(0, tide.ones(2, 3))))
        assert.are.same({ 2, 3 }, shape(tide.normal(tide.zeros(2, 3), 2)))
        assert.are.same({ 2, 3 }, shape(tide.normal(0, 1, { 2, 3 })))
        assert.are.equal("float32", tide.normal(0, 1, { 2, 3 }).dtype)
        assert.are.same({ 0, 0 }, tide.normal(0, 0, { 2 }):totable())
        -- PyTorch: normal expects std >= 0.0, but found std -1
        assert.are.equal("tide: normal: std = -1; expected std >= 0",
            err_of(function() return tide.normal(0, -1, { 2 }) end))
        assert.are.equal("tide: normal: std = -1; expected std >= 0",
            err_of(function() return tide.normal(tide.zeros(2), -1) end))
        assert.matches("normal: std has elements below 0",
            err_of(function() return tide.normal(tide.zeros(2), tide.tensor({ -1, 1 }, F32)) end))
    end)

    it("poisson: rates 0 give 0, the rates' dtype", function()
        assert.are.same({ 0, 0, 0 }, tide.poisson(tide.zeros(3)):totable())
        assert.are.equal("float64", tide.poisson(z(3, "float64")).dtype)
    end)

    it("set_default_dtype(float64): the float draws follow it, the integer ones stay int64",
        function()
            local was = tide.get_default_dtype()
            tide.set_default_dtype("float64")
            local got = { tide.rand(2).dtype, tide.randn(2).dtype, tide.normal(0, 1, { 2 }).dtype,
                tide.randint(3, { 2 }).dtype, tide.randperm(2).dtype,
                tide.poisson(tide.ones(2)).dtype }
            tide.set_default_dtype(was)
            assert.are.same({ "float64", "float64", "float64", "int64", "int64", "float64" },
                got)
        end)
end)

describe("random fills (in place): PyTorch 1.13's errors", function()
    it("uniform_, normal_, log_normal_, geometric_, bernoulli_", function()
        -- uniform_ expects to return a [from, to) range, but found from=2 > to=1
        assert.are.equal("tide: uniform_: from 2 is greater than to 1",
            err_of(function() return z(2):uniform_(2, 1) end))
        assert.are.same({ 1, 1 }, z(2):uniform_(1, 1):totable())
        assert.are.same({ 0, 0 }, z(2):normal_(0, 0):totable()) -- std 0 allowed
        assert.are.equal("tide: normal_: std -1 is negative",
            err_of(function() return z(2):normal_(0, -1) end))
        -- log_normal_ expects std > 0.0, but found std=0
        assert.are.equal("tide: log_normal_: std must be a positive number, got 0",
            err_of(function() return z(2):log_normal_(1, 0) end))
        assert.are.equal("tide: geometric_: p must be a probability in (0, 1], got 0",
            err_of(function() return z(2):geometric_(0) end))
        assert.are.equal("int64", z(2, "int64"):geometric_(0.5).dtype)
        assert.are.same({ 1, 1, 1 }, z(3):bernoulli_(tide.ones(3)):totable())
        assert.are.same({ 1, 1, 1 }, z(3):bernoulli_(1):totable())
        assert.are.equal("int64", z(3, "int64"):bernoulli_(1).dtype)
        assert.matches("bernoulli_: p must be a probability in %[0, 1%] or a tensor of them, " ..
            "got 1.5", err_of(function() return z(3):bernoulli_(1.5) end))
        assert.matches("exponential_: needs a floating%-point tensor, got int64",
            err_of(function() return z(2, "int64"):exponential_() end))
        assert.are.equal("tide: exponential_: lambd must be a positive number, got -1",
            err_of(function() return z(2):exponential_(-1) end))
    end)

    pending("geometric_(1): PyTorch 1.13 raises (p in (0, 1)); tide fills 1s, the exact " ..
        "draw; left: spec/porting_more_spec.lua (not this helper's) asserts the (0, 1] message")
    pending("exponential_(0) and cauchy_(0, 0): PyTorch 1.13 fills inf and the median; tide " ..
        "refuses a rate or scale of 0; left: spec/porting_more_spec.lua asserts " ..
        "exponential_(0)'s error")

    it("random_: ranges per dtype, bool, from and to - 1 past the dtype's values", function()
        assert.are.equal("bool", z(50, "bool"):random_().dtype)
        local b = z(400, "bool"):random_(0, 2):to("int64")
        assert.are.same({ 0, 1 }, { b:min():item(), b:max():item() })
        local u = z(2000, "uint8"):random_()
        assert.are.same({ 0, 255 }, { u:min():item(), u:max():item() })
        local f = z(2000):random_(-2, 3)
        assert.are.same({ -2, 2 }, { f:min():item(), f:max():item() })
        assert.are.equal("uint8", z(2, "uint8"):random_(0, 256).dtype) -- to - 1 = 255 fits
        -- PyTorch: to - 1 is out of bounds for bool / unsigned char / c10::Half / int
        assert.are.equal("tide: random_: to - 1 (2) is out of bounds for bool (its values " ..
            "are 0 to 1)", err_of(function() return z(2, "bool"):random_(0, 3) end))
        assert.are.equal("tide: random_: to - 1 (256) is out of bounds for uint8 (its values " ..
            "are 0 to 255)", err_of(function() return z(2, "uint8"):random_(0, 257) end))
        assert.are.equal("tide: random_: to - 1 (299) is out of bounds for uint8 (its values " ..
            "are 0 to 255)", err_of(function() return z(2, "uint8"):random_(300) end))
        assert.are.equal("tide: random_: to - 1 (69999) is out of bounds for float16 (its " ..
            "values are -65504 to 65504)",
            err_of(function() return z(2, "float16"):random_(0, 70000) end))
        assert.are.equal("tide: random_: to - 1 (2147483648) is out of bounds for int32 (its " ..
            "values are -2147483648 to 2147483647)",
            err_of(function() return z(2, "int32"):random_(0, 2 ^ 31 + 1) end))
        -- PyTorch: from is out of bounds for unsigned char
        assert.are.equal("tide: random_: from (-1) is out of bounds for uint8 (its values " ..
            "are 0 to 255)", err_of(function() return z(2, "uint8"):random_(-1, 3) end))
        assert.are.equal("int32", z(2, "int32"):random_(-2 ^ 31, 0).dtype)
        -- random_ expects 'from' to be less than 'to', but got from=3 >= to=3
        assert.matches("random_: from %(3%) must be below to %(3%)",
            err_of(function() return z(2):random_(3, 3) end))
    end)
end)

describe("generators (PyTorch 1.13's Generator API)", function()
    it("Generator: manual_seed returns it, initial_seed, device, state round trip", function()
        local g = tide.Generator()
        assert.are.equal(g, g:manual_seed(3))
        assert.are.equal(3, g:initial_seed())
        assert.are.equal("cpu", tostring(g.device))
        local s = g:get_state()
        assert.are.same({ "uint8", 1 }, { s.dtype, s:dim() }) -- PyTorch's: uint8, 1-d
        local a = tide.rand({ 3 }, { generator = g })
        assert.are.equal(g, g:set_state(s))
        assert.is_true(tide.rand({ 3 }, { generator = g }):equal(a))
        local sd = g:seed()
        assert.are.equal(sd, g:initial_seed())
    end)

    pending("the state's size: PyTorch's mt19937 state is 5056 bytes, tide's counter-based " ..
        "one 16 bytes and the device's name (documented; the draws differ by design)")

    it("tide.manual_seed returns tide.default_generator, tide's own stream", function()
        local g = tide.manual_seed(11) -- torch.manual_seed returns a Generator
        assert.are.equal(tide.default_generator, g)
        assert.are.equal(getmetatable(tide.Generator()), getmetatable(g))
        assert.are.equal(11, g:initial_seed())
        assert.are.equal("Generator(device=cpu, initial_seed=11)", tostring(g))
        local s = g:get_state()
        assert.is_true(s:equal(tide.get_rng_state()))
        local a = tide.rand(3)
        g:set_state(s)
        assert.is_true(tide.rand(3):equal(a))
        assert.are.equal(g, g:manual_seed(11))
        assert.is_true(tide.rand({ 3 }, { generator = g }):equal(a)) -- draws as none given
        assert.is_false(tide.rand(3):equal(a)) -- and advances tide's stream
        tide.default_generator:manual_seed(11)
        assert.is_true(tide.rand(3):equal(a))
    end)

    it("the generator option on every sampler repeats after manual_seed, apart from tide's",
        function()
            local g = tide.Generator()
            local draws = {
                function() return tide.rand({ 3 }, { generator = g }) end,
                function() return tide.randn({ 3 }, { generator = g }) end,
                function() return tide.randint(0, 9, { 3 }, { generator = g }) end,
                function() return tide.randperm(5, { generator = g }) end,
                function() return tide.multinomial(tide.ones(4), 2, { generator = g }) end,
                function() return tide.normal(0, 1, { 3 }, { generator = g }) end,
                function() return tide.normal(tide.zeros(3), tide.ones(3), { generator = g }) end,
                function() return tide.poisson(tide.ones(3), { generator = g }) end,
                function() return tide.bernoulli(tide.full({ 3 }, 0.5), { generator = g }) end,
                function() return z(3):uniform_(0, 1, { generator = g }) end,
                function() return z(3):normal_(0, 1, { generator = g }) end,
                function() return z(3):exponential_({ generator = g }) end,
                function() return z(3):geometric_(0.5, { generator = g }) end,
                function() return z(3):log_normal_({ generator = g }) end,
                function() return z(3):cauchy_({ generator = g }) end,
                function() return z(3):random_(0, 9, { generator = g }) end,
                function() return z(3):bernoulli_(0.5, { generator = g }) end,
            }
            tide.manual_seed(1)
            local state = tide.get_rng_state()
            for i, f in ipairs(draws) do
                g:manual_seed(100 + i)
                local a = f()
                g:manual_seed(100 + i)
                assert.is_true(f():equal(a), "draw " .. i)
            end
            assert.is_true(tide.get_rng_state():equal(state))
        end)

    it("fork_rng restores tide's generator; get_rng_state / set_rng_state round trip", function()
        tide.manual_seed(2)
        local s = tide.get_rng_state()
        assert.are.same({ "uint8", 1 }, { s.dtype, s:dim() })
        local a, n = tide.fork_rng(function(k) return tide.rand(k), k end, 3)
        assert.are.equal(3, n)
        assert.is_true(tide.get_rng_state():equal(s))
        assert.is_true(tide.rand(3):equal(a))
        assert.has_error(function() tide.fork_rng(function() tide.rand(2); error("x", 0) end) end,
            "x")
        tide.set_rng_state(s)
        assert.is_true(tide.rand(3):equal(a))
        assert.are.equal("tide: fork_rng: expected a function to run (tide.fork_rng(function() " ..
            "... end)), got number", err_of(function() return tide.fork_rng(3) end))
    end)
end)

-- multinomial with replacement built its cumulative sums with a k x k triangle of ones: 1.6 GB
-- and 16 s for 20,000 categories, more than the host's memory for a 50,257-token vocabulary
-- (src/ops_sample.c: the cumsum kernel now, and the draws compared in chunks)
describe("multinomial with replacement over a language model's vocabulary", function()
    it("draws from 50,257 categories in linear memory, with the probabilities' frequencies",
        function()
            local k = 50257
            local logits = tide.full({ k }, -30, { dtype = "float32" })
            logits[7] = 0
            logits[50000] = math.log(3)
            local probs = tide.softmax(logits, 1) -- 1/4 on 7, 3/4 on 50000
            local before = tide.memory_limit()
            tide.set_memory_limit(tide.memory_in_use() + 64 * 1048576)
            local ok, draws = pcall(function() return probs:multinomial(4000, true) end)
            tide.set_memory_limit(before)
            assert.is_true(ok, tostring(draws))
            assert.are.same({ 4000 }, { draws:size(1) })
            local seven = draws:eq(7):sum():item()
            local other = draws:eq(50000):sum():item()
            assert.are.equal(4000, seven + other)
            assert.is_true(math.abs(seven / 4000 - 0.25) < 0.04, tostring(seven))
            -- 2-D: one row per batch entry, each from its own probabilities
            local rows = tide.stack({ probs, probs:flip(1) }, 1)
            local two = rows:multinomial(5, true)
            assert.are.same({ 2, 5 }, { two:size(1), two:size(2) })
            for j = 1, 5 do
                local a, b = two[1][j]:item(), two[2][j]:item()
                assert.is_true(a == 7 or a == 50000)
                assert.is_true(b == k + 1 - 7 or b == k + 1 - 50000)
            end
        end)
end)
