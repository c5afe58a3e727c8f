-- PyTorch's keyword arguments in a trailing table for tide.distributions, nn.init and nn.utils:
-- each by name must compute what it computes by position (values from PyTorch 1.13), and a
-- misspelt name must raise.
local tide = require("tide")
local D = tide.distributions
local I = tide.nn.init
local U = tide.nn.utils
local unpack = table.unpack or unpack

local function close(t, want)
    if type(t) == "number" then
        t = tide.tensor({ t })
    end
    local got = t:reshape({ -1 }):tolist()
    assert.are.equal(#want, #got)
    for i = 1, #want do
        assert.is_true(math.abs(got[i] - want[i]) < 1e-4, ("%g vs %g"):format(got[i], want[i]))
    end
end

local function f32(list)
    return tide.tensor(list, { dtype = "float32" })
end

local function shape(t)
    return t:size()
end

describe("distributions by name", function()
    local v = tide.tensor({ 0.5, 1.0 }, { dtype = "float32" })

    it("constructors read their parameters from a trailing table", function()
        local want = { -1.0439385, -1.6120857 }
        close(D.Normal(f32({ 0.0, 1.0 }), f32({ 1.0, 2.0 })):log_prob(v), want)
        close(D.Normal({ loc = f32({ 0.0, 1.0 }), scale = f32({ 1.0, 2.0 }) }):log_prob(v),
            want)
        close(D.Normal(f32({ 0.0, 1.0 }), { scale = f32({ 1.0, 2.0 }) }):log_prob(v), want)
        close(D.Normal(f32({ 0.0, 1.0 }), f32({ 1.0, 2.0 }), { validate_args = false })
            :log_prob(v), want)
        close(D.Gamma({ concentration = f32({ 2.0 }), rate = f32({ 3.0 }) })
            :log_prob(tide.tensor({ 0.5 })), { 0.0040774 })
        close(D.StudentT(3, { loc = 1, scale = 2 }):log_prob(0.5), { -1.7352746 })
        local L = tide.tensor({ { 1, 0 }, { 0.5, 2 } })
        close(D.MultivariateNormal({ loc = tide.zeros({ 2 }), scale_tril = L })
            :log_prob(v), { -2.7263367 })
        close(D.Binomial({ total_count = 10, probs = tide.tensor({ 0.3 }) })
            :log_prob(f32({ 4.0 })), { -1.6088333 })
        local n = D.Normal(tide.zeros({ 2 }), tide.ones({ 2 }))
        local ind = D.Independent({ base_distribution = n, reinterpreted_batch_ndims = 1 })
        assert.are.same({ {}, { 2 } }, { ind.batch_shape, ind.event_shape })
        assert.are.same({ 2 }, D.Independent(n, { reinterpreted_batch_ndims = 1 }).event_shape)
    end)

    it("raises for a name given twice or misspelt", function()
        assert.has_error(function()
            D.Normal(0, { loc = 0, scale = 1 })
        end, "tide: Normal: loc given twice, as argument #1 and by name; pass it once")
        assert.has_error(function()
            D.Normal(0, { sacle = 1 })
        end, "tide: Normal: unknown option sacle; it takes loc, scale and validate_args")
    end)

    it("sample and rsample take sample_shape by name", function()
        local n = D.Normal(tide.zeros({ 2 }), tide.ones({ 2 }))
        assert.are.same({ 3, 2 }, shape(n:sample({ 3 })))
        assert.are.same({ 3, 2 }, shape(n:sample({ sample_shape = { 3 } })))
        assert.are.same({ 4, 1, 2 }, shape(n:rsample({ sample_shape = { 4, 1 } })))
        assert.has_error(function()
            n:sample({ sampleshape = { 3 } })
        end, "tide: Normal.sample: unknown option sampleshape; it takes sample_shape")
    end)

    it("log_prob, cdf and icdf take value by name", function()
        local n = D.Normal(f32({ 0.0, 1.0 }), f32({ 1.0, 2.0 }))
        close(n:log_prob({ value = v }), { -1.0439385, -1.6120857 })
        close(n:cdf({ value = v }), n:cdf(v):tolist())
        close(n:icdf({ value = f32({ 0.3, 0.6 }) }), n:icdf(f32({ 0.3, 0.6 }))
            :tolist())
    end)

    it("kl_divergence takes p and q by name", function()
        local p, q = D.Normal(0, 1), D.Normal(1, 2)
        close(D.kl_divergence(p, q), { 0.4431472 })
        close(D.kl_divergence({ p = p, q = q }), { 0.4431472 })
        close(D.kl_divergence(p, { q = q }), { 0.4431472 })
        assert.has_error(function()
            D.kl_divergence(p, { qq = q })
        end, "tide: kl_divergence: unknown option qq; it takes p and q")
    end)
end)

describe("nn.init by name", function()
    it("calculate_gain takes param and nonlinearity by name", function()
        assert.is_true(math.abs(I.calculate_gain("leaky_relu", { param = 0.3 }) - 1.3545709) < 1e-6)
        assert.is_true(math.abs(I.calculate_gain({ nonlinearity = "leaky_relu", param = 0.3 })
            - 1.3545709) < 1e-6)
        assert.are.equal(math.sqrt(2), I.calculate_gain("relu"))
    end)

    -- each initializer by position and by name: the same draw from the same seed
    local function w()
        return tide.empty({ 4, 3 })
    end
    local cases = {
        { "uniform_", { -2, 3 }, { a = -2, b = 3 } },
        { "normal_", { 1, 2 }, { mean = 1, std = 2 } },
        { "constant_", { 3 }, { val = 3 } },
        { "xavier_uniform_", { 2 }, { gain = 2 } },
        { "xavier_normal_", { 2 }, { gain = 2 } },
        { "kaiming_uniform_", { 0.1, "fan_out", "leaky_relu" },
            { a = 0.1, mode = "fan_out", nonlinearity = "leaky_relu" } },
        { "kaiming_normal_", { 0, "fan_out", "relu" },
            { mode = "fan_out", nonlinearity = "relu" } },
        { "trunc_normal_", { 1, 2, -1, 3 }, { mean = 1, std = 2, a = -1, b = 3 } },
        { "orthogonal_", { 2 }, { gain = 2 } },
        { "sparse_", { 0.5, 0.1 }, { sparsity = 0.5, std = 0.1 } },
    }
    for _, c in ipairs(cases) do
        it(c[1] .. " by position and by name", function()
            tide.manual_seed(3)
            local a = I[c[1]](w(), unpack(c[2]))
            tide.manual_seed(3)
            local b = I[c[1]](w(), c[3])
            assert.is_true(a:equal(b))
            tide.manual_seed(4)
            assert.is_false(a:equal(I.normal_(w()))) -- (a draw that differs is seen)
        end)
    end
end)

describe("nn.utils by name", function()
    local function ps()
        local p = tide.ones({ 3 }):requires_grad_()
        p.grad = tide.full({ 3 }, 3.0, { dtype = "float32" })
        return { p }
    end
    it("clip_grad_norm_ and clip_grad_value_", function()
        local q = ps()
        close(U.clip_grad_norm_(q, { max_norm = 1, norm_type = 1 }), { 9 })
        close(q[1].grad, { 1 / 3, 1 / 3, 1 / 3 })
        q = ps()
        U.clip_grad_value_(q, { clip_value = 1 })
        close(q[1].grad, { 1, 1, 1 })
    end)
    it("pad_sequence and pad_packed_sequence", function()
        local s = { tide.ones({ 2 }), tide.ones({ 3 }) }
        close(U.rnn.pad_sequence(s, { batch_first = true, padding_value = 5 }),
            { 1, 1, 5, 1, 1, 1 })
        local p = U.rnn.pack_padded_sequence(tide.ones({ 3, 2, 1 }), { 3, 2 })
        local out = U.rnn.pad_packed_sequence(p, { batch_first = true, padding_value = 7,
            total_length = 4 })
        assert.are.same({ 2, 4, 1 }, out:size())
        close(out, { 1, 1, 1, 7, 1, 1, 7, 7 })
    end)
end)

-- PyTorch's d.expand(batch_shape) on every family: the families without an expand of their own
-- broadcast through tide.distributions._expanded (it was Lua's "attempt to call a nil value")
describe("Distribution:expand", function()
    it("broadcasts the batch of a family without its own expand", function()
        local f32 = { dtype = tide.float32 } -- (5.1 and LuaJIT read 0.0 as an integer)
        local n = D.Normal(tide.tensor({ 0.0, 1.0 }, f32), tide.tensor({ 1.0, 2.0 }, f32))
        local e = n:expand({ 3, 2 })
        assert.are.same({ 3, 2 }, { e.batch_shape[1], e.batch_shape[2] })
        assert.are.same({ 4, 3, 2 }, e:sample({ 4 }):size())
        -- log N(0; 1, 2) = -log 2 - log(2 pi) / 2 - 1 / 8
        close(e:log_prob(tide.zeros(3, 2)):select(1, 3), { -0.91893853, -1.73708571 })
        assert.are.same({ 3, 2 }, n:expand({ batch_shape = { 3, 2 } }).batch_shape)
        local ok, err = pcall(n.expand, n, { 3 })
        assert.is_false(ok)
        assert.matches("tide: Normal:expand: the base's batch shape {2} does not broadcast to {3}",
            err, 1, true)
    end)
end)

-- nn.utils' calls with every argument by PyTorch's name in one table, and weight_norm's
-- positional (module, name, dim): they raised
describe("nn.utils in PyTorch's keyword forms", function()
    local R = U.rnn
    it("pad_sequence, pack_padded_sequence and weight_norm", function()
        local a, b = tide.ones(3, 2), tide.ones(2, 2) * 2
        assert.is_true(tide.equal(R.pad_sequence({ a, b }, { batch_first = true }),
            R.pad_sequence({ sequences = { a, b }, batch_first = true })))
        local x = tide.arange(24, { dtype = tide.float32 }):reshape(3, 2, 4)
        local want = R.pack_padded_sequence(x, { 3, 2 }, { enforce_sorted = false })
        local k = R.pack_padded_sequence(x, { lengths = { 3, 2 }, enforce_sorted = false })
        assert.is_true(tide.equal(want.data, k.data))
        k = R.pack_padded_sequence({ input = x, lengths = { 3, 2 } })
        assert.is_true(tide.equal(want.data, k.data))
        local ok, err = pcall(R.pack_padded_sequence, x, { lengths = { 3, 2 }, sorted = false })
        assert.is_false(ok)
        assert.matches('tide: pack_padded_sequence: unknown option "sorted"', err, 1, true)
        local m = tide.nn.Linear(3, 2)
        U.weight_norm(m, "weight", 1) -- dims 1-based: PyTorch's dim=0, the output's
        assert.are.same({ 2, 1 }, m.weight_g:size())
        ok, err = pcall(U.weight_norm, tide.nn.Linear(3, 2), "weight", 1, 5)
        assert.is_false(ok)
        assert.matches("tide: weight_norm: expected at most 3 arguments", err, 1, true)
    end)
end)
