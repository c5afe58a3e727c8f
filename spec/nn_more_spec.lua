-- nn_more_spec.lua — the torch.nn names tide added last, against PyTorch 1.13's values and
-- gradients (spec/fixtures/nn_more_torch.lua, written by spec/fixtures/make_nn_more.py):
-- fractional max pooling (2-D, 3-D, with PyTorch's _random_samples, float64 and float32),
-- max_unpool3d, AdaptiveLogSoftmaxWithLoss, CrossMapLRN2d, F.multi_head_attention_forward,
-- NLLLoss2d; the lazy norms and transposed convolutions, RNNBase / RNNCellBase and Container
-- by their properties; errors, and that a refused call changes nothing.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local D = require("spec.support.device")
local P = require("spec.support.porting")

local T = dofile("spec/fixtures/nn_more_torch.lua")
local DEV = D.name
local unpack = table.unpack or unpack -- 5.1, LuaJIT

local function t64(v)
    return P.t64(v, DEV)
end

local function catch(f)
    local ok, err = pcall(f)
    assert.is_false(ok, "expected an error")
    return tostring(err)
end

local function r(x, ...)
    return x:reshape(...)
end

local function same(a, b)
    return a.dtype == b.dtype and tide.equal(a:to("cpu"), b:to("cpu"))
end

local U12 = { T.U12, 2, 3, 2 }
local U6 = { T.U6, 1, 3, 2 }
local U6B = { T.U6B, 1, 2, 3 }
local U6C = { T.U6C, 1, 2, 3 }

local function samples(u, dtype)
    return tide.tensor(u[1], { dtype = dtype or "float64", device = DEV }):reshape(u[2], u[3],
        u[4])
end

-- the fractional cases: input reshape, the call (x, samples), the samples
local FRACTIONAL = {
    fractional_max_pool2d = { { 2, 3, 9, 11 }, function(x, u)
        return F.fractional_max_pool2d(x, { 2, 3 }, { output_size = { 5, 4 },
            _random_samples = u, return_indices = true })
    end, U12 },
    fractional_max_pool2d_ratio = { { 3, 9, 11 }, function(x, u)
        return nn.FractionalMaxPool2d(2, { output_ratio = { 0.5, 0.7 }, _random_samples = u,
            return_indices = true })(x)
    end, U6 },
    fractional_max_pool3d = { { 1, 2, 7, 8, 9 }, function(x, u)
        return F.fractional_max_pool3d_with_indices(x, 2, { output_size = { 3, 4, 5 },
            _random_samples = u })
    end, U6B },
    fractional_max_pool3d_ratio = { { 2, 7, 8, 9 }, function(x, u)
        return nn.FractionalMaxPool3d({ 2, 3, 2 }, { output_ratio = 0.5, _random_samples = u,
            return_indices = true })(x)
    end, U6C },
}

-- each fractional case's input values (the 2-D ratio case: X594's first 297)
local function fractional_input(name)
    if name == "fractional_max_pool2d_ratio" then
        return { unpack(T.X594, 1, 297) }
    end
    return name:find("2d") and T.X594 or T.X1008
end

-- AdaptiveLogSoftmaxWithLoss(8, 10, {3, 6}, div_value 2, head_bias) with the weights ws
local function asm(ws)
    local m = nn.AdaptiveLogSoftmaxWithLoss(8, 10, { 3, 6 }, { div_value = 2, head_bias = true })
        :to("float64"):to(DEV)
    m.head.weight, m.head.bias = ws[1], ws[2]
    m.tail[1][1].weight, m.tail[1][2].weight = ws[3], ws[4]
    m.tail[2][1].weight, m.tail[2][2].weight = ws[5], ws[6]
    return m
end

local TARGET = { 1, 5, 8, 10, 3 } -- PyTorch's {0, 4, 7, 9, 2}, 1-based

local function target()
    return tide.tensor(TARGET, { dtype = "int64", device = DEV })
end

local function attn_mask()
    return t64({ { 0.0, -1.0, 0.5, 0.0, -2.0 }, { 0.25, 0.0, 0.0, -0.5, 1.0 },
        { 0.0, 0.0, -1.5, 0.0, 0.0 } })
end

local function kpm()
    return tide.tensor({ { false, false, true, false, false },
        { false, true, false, false, true } }, { dtype = "bool", device = DEV })
end

local function bool_mask3()
    local m = {}
    for b = 0, 3 do
        m[b + 1] = {}
        for l = 0, 2 do
            m[b + 1][l + 1] = {}
            for s = 0, 4 do
                m[b + 1][l + 1][s + 1] = (b + l + s) % 4 == 3
            end
        end
    end
    return tide.tensor(m, { dtype = "bool", device = DEV })
end

-- the fixture's F.multi_head_attention_forward variants (make_nn_more.py's mha())
local function mha(o)
    return function(q, k, v, ...)
        local ws = { ... }
        local i = 0
        local function pop()
            i = i + 1
            return ws[i]
        end
        local kw = { training = false, average_attn_weights = o.average ~= false }
        if o.unbatched then
            q, k, v = q:select(2, 1), k:select(2, 1), v:select(2, 1)
        end
        local w_in
        if o.separate then
            kw.use_separate_proj_weight = true
            kw.q_proj_weight, kw.k_proj_weight, kw.v_proj_weight = pop(), pop(), pop()
        else
            w_in = pop()
        end
        local b_in = pop()
        local bk, bv
        if o.bias_kv then
            bk, bv = pop(), pop()
        end
        if o.static then
            kw.static_k, kw.static_v = pop(), pop()
        end
        local w_out, b_out = pop(), pop()
        if o.masks then
            kw.attn_mask = attn_mask()
            kw.key_padding_mask = o.unbatched and kpm()[1] or kpm()
        end
        if o.bool3 then
            kw.attn_mask = bool_mask3()
        end
        local out, w = F.multi_head_attention_forward(q, k, v, 4, 2, w_in, b_in, bk, bv,
            o.zero_attn == true, 0, w_out, b_out, kw)
        if o.weights then
            return w
        end
        return out
    end
end

-- the inputs of a mha() variant, in its order (make_nn_more.py's mha_inputs())
local function mha_inputs(o)
    local ins = { r(t64(T.XQ), 3, 2, 4) }
    local function add(t)
        ins[#ins + 1] = t
    end
    if o.separate then
        add(r(t64(T.XK3), 5, 2, 3))
        add(r(t64(T.XV5), 5, 2, 5))
        add(r(t64(T.WQ), 4, 4))
        add(r(t64(T.WK3), 4, 3))
        add(r(t64(T.WV5), 4, 5))
    else
        add(r(t64(T.XK), 5, 2, 4))
        add(r(t64(T.XV), 5, 2, 4))
        add(r(t64(T.WIN), 12, 4))
    end
    add(t64(T.BIN))
    if o.bias_kv then
        add(r(t64(T.BK), 1, 1, 4))
        add(r(t64(T.BV), 1, 1, 4))
    end
    if o.static then
        add(r(t64(T.SK), 4, 5, 2))
        add(r(t64(T.SV), 4, 5, 2))
    end
    add(r(t64(T.WOUT), 4, 4))
    add(t64(T.BOUT))
    return ins
end

describe("nn, more of PyTorch's layers: values (" .. DEV .. ")", function()
    local CASES = {}
    for name, c in pairs(FRACTIONAL) do
        CASES[name] = { function(x)
            local y = c[2](r(x, unpack(c[1])), samples(c[3]))
            return y
        end, fractional_input(name) }
    end
    CASES.max_unpool3d = { function(x)
        local y, i = F.max_pool3d(r(x, 1, 2, 4, 4, 6), 2, { return_indices = true })
        return F.max_unpool3d(y, i, 2)
    end, T.X192 }
    CASES.max_unpool3d_size = { function(x)
        local y, i = F.max_pool3d(r(x, 2, 4, 4, 6), { 2, 2, 3 }, { stride = { 2, 2, 2 },
            return_indices = true })
        return nn.MaxUnpool3d({ 2, 2, 3 }, 2)(y, i, { 5, 4, 6 })
    end, T.X192 }
    local W = T.values.asm.weights
    CASES.asm_output = { function(x, ...)
        local out = asm({ ... })(r(x, 5, 8), target())
        return out
    end, T.X40, W[1], W[2], W[3], W[4], W[5], W[6] }
    CASES.asm_loss = { function(x, ...)
        local _, loss = asm({ ... })(r(x, 5, 8), target())
        return loss
    end, T.X40, W[1], W[2], W[3], W[4], W[5], W[6] }
    CASES.asm_log_prob = { function(x, ...)
        return asm({ ... }):log_prob(r(x, 5, 8))
    end, T.X40, W[1], W[2], W[3], W[4], W[5], W[6] }
    CASES.cross_map_lrn2d = { function(x)
        return nn.CrossMapLRN2d(5, { alpha = 0.1, beta = 0.75, k = 1 })(r(x, 2, 7, 2, 3))
    end, T.X84 }
    CASES.cross_map_lrn2d_even = { function(x)
        return nn.CrossMapLRN2d(4, 0.3, 0.5, 2)(r(x, 2, 7, 2, 3))
    end, T.X84 }
    CASES.cross_map_lrn2d_wide = { function(x)
        return nn.CrossMapLRN2d(9, { alpha = 0.2, beta = 0.6, k = 1.5 })(r(x, 2, 7, 2, 3))
    end, T.X84 }
    CASES.nll_loss2d = { function(x)
        local t = tide.tensor(T.NLL_TARGET, { dtype = "int64", device = DEV }):add(1)
        return nn.NLLLoss2d({ weight = t64({ 0.5, 2.0, 1.0 }), ignore_index = 2 })(
            F.log_softmax(r(x, 2, 3, 3, 5), 2), t)
    end, T.X90 }
    P.run_cases(it, T, CASES, function(name, fn, ...)
        P.check_case(T.cases[name], name, DEV, { out = 1e-12, grad = 1e-11 }, fn, ...)
    end)

    -- F.multi_head_attention_forward's variants (make_nn_more.py's mha())
    local ATTENTION = {
        mha = { masks = true },
        mha_weights = { masks = true, weights = true },
        mha_bias_kv = { bias_kv = true, zero_attn = true, masks = true },
        mha_bias_kv_weights = { bias_kv = true, zero_attn = true, masks = true, weights = true,
            average = false },
        mha_separate = { separate = true, bool3 = true },
        mha_separate_weights = { separate = true, bool3 = true, weights = true, average = false },
        mha_static = { static = true, zero_attn = true },
        mha_unbatched = { unbatched = true, masks = true },
        mha_unbatched_weights = { unbatched = true, masks = true, weights = true },
    }
    local names = {}
    for name in pairs(ATTENTION) do
        names[#names + 1] = name
    end
    table.sort(names)
    for _, name in ipairs(names) do
        it(name, function()
            local o = ATTENTION[name]
            local c = T.cases[name]
            assert(c, "no PyTorch fixture for " .. name)
            local ins = mha_inputs(o)
            local lists = {}
            for i, t in ipairs(ins) do
                lists[i] = t:to("cpu"):totable()
            end
            P.check_case(c, name, DEV, { out = 1e-12, grad = 1e-11 }, mha(o), unpack(lists))
        end)
    end

    it("fractional pools give PyTorch's indices, and its float32 intervals", function()
        for name, c in pairs(FRACTIONAL) do
            local x = t64(fractional_input(name)):reshape(c[1])
            local _, idx = c[2](x, samples(c[3]))
            assert.are.equal("int64", idx.dtype)
            P.close(T.values[name .. "_indices"], idx, 0, name .. " indices")
            local y32, i32 = c[2](x:to("float32"), samples(c[3], "float32"))
            assert.are.equal("float32", y32.dtype)
            P.close(T.values[name .. "_f32"][1], y32, 0, name .. " float32")
            P.close(T.values[name .. "_f32"][2], i32, 0, name .. " float32 indices")
        end
    end)

    it("AdaptiveLogSoftmaxWithLoss predicts and takes an unbatched input as PyTorch's", function()
        local ws = {}
        for i, w in ipairs(T.values.asm.weights) do
            ws[i] = t64(w)
        end
        local m = asm(ws)
        local x = r(t64(T.X40), 5, 8)
        P.close(T.values.asm.head_argmax, m.head(x):argmax(2), 0, "head argmax")
        local p = m:predict(x)
        assert.are.equal("int64", p.dtype)
        P.close(T.values.asm.predict, p, 0, "predict")
        local out, loss = m(x[2], tide.tensor(5, { dtype = "int64", device = DEV }))
        assert.are.same({}, out.shape)
        P.close(T.values.asm.unbatched_output, out, 1e-12, "unbatched output")
        P.close(T.values.asm.unbatched_loss, loss, 1e-12, "unbatched loss")
        -- predict is log_prob's argmax
        P.close(m:log_prob(x):argmax(2):to("cpu"):totable(), p, 0, "predict = log_prob argmax")
    end)

    it("CrossMapLRN2d of size 1 (PyTorch's backward raises there; its forward)", function()
        local y = nn.CrossMapLRN2d(1, { alpha = 0.1 })(r(t64(T.X84), 2, 7, 2, 3))
        P.close(T.values.cross_map_lrn2d_size1, y, 1e-13, "size 1")
    end)

    it("the lazy norms train as PyTorch's", function()
        local L = T.values.lazy
        local bn = nn.LazyBatchNorm2d({ momentum = 0.2 }):to(DEV):double()
        local x = r(t64(T.X90), 2, 3, 3, 5)
        P.close(L.batch_norm2d, bn(x), 1e-12, "LazyBatchNorm2d")
        P.close(L.batch_norm2d_running[1], bn.running_mean, 1e-12, "running_mean")
        P.close(L.batch_norm2d_running[2], bn.running_var, 1e-12, "running_var")
        assert.are.equal(nn.BatchNorm2d, getmetatable(bn))
        assert.are.equal(1, bn.num_batches_tracked:item())
        local inn = nn.LazyInstanceNorm1d():to(DEV):double()
        local xi = r(t64(T.X60), 3, 4, 5)
        P.close(L.instance_norm1d, inn(xi), 1e-12, "LazyInstanceNorm1d")
        assert.is_true(inn.affine and inn.track_running_stats)
        P.close(L.instance_norm1d_running[1], inn.running_mean, 1e-12, "running_mean")
        P.close(L.instance_norm1d_running[2], inn.running_var, 1e-12, "running_var")
        inn:eval()
        P.close(L.instance_norm1d_eval, inn(xi), 1e-12, "eval")
    end)

    it("RNNBase and RNNCellBase lay out PyTorch's parameters", function()
        local function check(want, m, what)
            local got = {}
            for _, np in ipairs(m:named_parameters()) do
                got[np[1]] = np[2].shape
            end
            assert.are.same(want, got, what)
        end
        check(T.values.rnn_base_lstm, nn.RNNBase("LSTM", 3, 4, { num_layers = 2,
            proj_size = 2 }), "LSTM")
        check(T.values.rnn_base_gru, nn.RNNBase("GRU", 3, 5, { bias = false,
            bidirectional = true }), "GRU")
        check(T.values.rnn_cell_base, nn.RNNCellBase(3, 4, true, 4), "cell")
    end)
end)

describe("nn, more of PyTorch's layers: behaviour (" .. DEV .. ")", function()
    it("fractional pools draw their samples from tide's generator", function()
        local x = tide.randn({ 2, 3, 9, 11 }, { device = DEV })
        tide.manual_seed(5)
        local a, ia = F.fractional_max_pool2d(x, 2, { output_size = 4, return_indices = true })
        tide.manual_seed(5)
        local u = tide.rand({ 2, 3, 2 }, { device = DEV })
        local b, ib = F.fractional_max_pool2d(x, 2, { output_size = 4, return_indices = true,
            _random_samples = u })
        assert.is_true(same(a, b) and same(ia, ib))
        -- a module given samples keeps them (a buffer, moved by :to) and pools alike each call
        local m = nn.FractionalMaxPool2d(2, { output_size = 4, _random_samples = u:to("cpu") })
            :to(DEV)
        assert.are.equal(tide.device(DEV), m._random_samples.device)
        assert.is_true(same(b, m(x)) and same(m(x), m(x)))
        -- gradients reach the maxima only, summed where windows overlap
        local xg = x:detach():requires_grad_(true)
        local y, idx = F.fractional_max_pool3d(xg:reshape(2, 3, 1, 9, 11), { 1, 3, 3 },
            { output_size = { 1, 5, 5 }, return_indices = true })
        y:sum():backward()
        local counts = tide.zeros({ 6, 99 }, { device = DEV }):scatter_add(2,
            idx:reshape(6, 25), tide.ones({ 6, 25 }, { device = DEV }))
        assert.is_true(same(counts, xg.grad:reshape(6, 99)))
    end)

    it("fractional pools take an empty batch, with _random_samples too (PyTorch's)", function()
        local x = tide.randn({ 0, 3, 8, 8 }, { device = DEV })
        local y = F.fractional_max_pool2d(x, 2, { output_size = 4,
            _random_samples = tide.rand({ 0, 3, 2 }, { device = DEV }) })
        assert.are.same({ 0, 3, 4, 4 }, y.shape)
        local z = F.fractional_max_pool3d(tide.randn({ 0, 2, 4, 4, 4 }, { device = DEV }), 2,
            { output_size = 2, _random_samples = tide.rand({ 0, 2, 3 }, { device = DEV }) })
        assert.are.same({ 0, 2, 2, 2, 2 }, z.shape)
    end)

    it("max_unpool3d puts each value back at its index", function()
        local x = tide.randn({ 2, 4, 4, 6 }, { device = DEV })
        local y, i = F.max_pool3d(x, 2, { return_indices = true })
        local u = nn.MaxUnpool3d(2)(y, i)
        assert.are.same({ 2, 4, 4, 6 }, u.shape)
        local back = F.max_pool3d(u, 2)
        assert.is_true(same(y, back))
    end)

    it("F.multi_head_attention_forward is nn.MultiheadAttention's code path", function()
        tide.manual_seed(2)
        local m = nn.MultiheadAttention(4, 2, { add_bias_kv = true, add_zero_attn = true })
            :to(DEV)
        local q = tide.randn({ 3, 2, 4 }, { device = DEV })
        local k = tide.randn({ 5, 2, 4 }, { device = DEV })
        local mask = tide.randn({ 3, 5 }, { device = DEV })
        local a, wa = m(q, k, k, { attn_mask = mask })
        local b, wb = F.multi_head_attention_forward(q, k, k, 4, 2, m.in_proj_weight,
            m.in_proj_bias, m.bias_k, m.bias_v, true, 0, m.out_proj.weight, m.out_proj.bias,
            { attn_mask = mask })
        assert.is_true(same(a, b) and same(wa, wb))
        -- dropout_p applies while training, PyTorch's default
        local function run(training)
            return F.multi_head_attention_forward(q, q, q, 4, 2, m.in_proj_weight, nil, nil,
                nil, false, 0.5, m.out_proj.weight, nil, { training = training,
                    need_weights = false })
        end
        local c, none = run(false)
        assert.is_nil(none)
        assert.is_true(same(c, run(false)))
        assert.is_false(same(c, run(nil)))
    end)

    it("the lazy modules hold PyTorch's placeholders, draw nothing and stay lazy on refusal",
        function()
            local m = nn.LazyBatchNorm1d({ affine = false })
            assert.are.same({}, m._params)
            assert.are.same({ "running_mean", "running_var", "num_batches_tracked" }, m._buffers)
            assert.are.equal(0, m.running_mean:numel())
            assert.are.equal("int64", m.num_batches_tracked.dtype)
            local lin = nn.LazyLinear(3, false)
            assert.are.same({ "weight" }, lin._params)
            local inn = nn.LazyInstanceNorm2d({ affine = false, track_running_stats = false })
            assert.are.same({}, inn._params)
            local y = inn(tide.randn({ 3, 4, 5 }, { device = DEV })) -- unbatched: C is dim 1
            assert.are.equal(3, inn.num_features)
            assert.are.same({ 3, 4, 5 }, y.shape)
            tide.manual_seed(4)
            local before = tide.rand(1):item()
            tide.manual_seed(4)
            local ct = nn.LazyConvTranspose2d(4, 3, { groups = 2, stride = 2 })
            assert.are.equal(before, tide.rand(1):item())
            -- an input the layer refuses leaves it lazy, and draws nothing
            local bad = tide.randn({ 1, 3, 5, 5 })
            tide.manual_seed(4)
            assert.matches("tide: LazyConvTranspose2d: in_channels 3 is not divisible by " ..
                "groups 2", catch(function() return ct(bad) end), 1, true)
            assert.are.equal(before, tide.rand(1):item())
            assert.are.equal("LazyConvTranspose2d", ct.__name)
            ct:to(DEV):double()
            tide.manual_seed(9)
            local x = tide.randn({ 2, 4, 5, 5 }, { dtype = "float64", device = DEV })
            local out = ct(x)
            tide.manual_seed(9)
            tide.randn({ 2, 4, 5, 5 }, { dtype = "float64", device = DEV })
            local plain = nn.ConvTranspose2d(4, 4, 3, { groups = 2, stride = 2 }):to(DEV):double()
            assert.is_true(same(plain.weight, ct.weight) and same(plain(x), out))
            assert.are.equal(nn.ConvTranspose2d, getmetatable(ct))
            -- a grouped LazyConv2d too: the probe is built with in_channels = groups
            local gc = nn.LazyConv2d(4, 3, { groups = 2 }):to(DEV)
            assert.are.same({ 1, 4, 3, 3 }, gc(tide.randn({ 1, 4, 5, 5 }, { device = DEV })).shape)
            for d, shape in ipairs({ { 3, 6 }, { 2, 3, 6, 6 }, { 1, 3, 4, 4, 4 } }) do
                local lz = nn["LazyConvTranspose" .. d .. "d"](2, 3):to(DEV)
                local z = lz(tide.randn(shape, { device = DEV }))
                assert.are.equal(3, lz.in_channels)
                assert.are.equal(2, z:size(#shape - d))
            end
        end)

    it("a lazy module whose layer refuses the input (past its size) stays lazy", function()
        local cases = {
            { nn.LazyConv2d(4, 3), tide.randn({ 1, 2, 2, 2 }, { device = DEV }), "Conv2d",
                tide.randn({ 1, 2, 5, 5 }, { device = DEV }) },
            { nn.LazyLinear(3), tide.randn({ 2, 4 }, { dtype = "float64", device = DEV }),
                "Linear", tide.randn({ 2, 4 }, { device = DEV }) },
            { nn.LazyBatchNorm1d(), tide.randn({ 1, 4 }, { device = DEV }), "BatchNorm1d",
                tide.randn({ 2, 4 }, { device = DEV }) },
        }
        for _, c in ipairs(cases) do
            local m, bad, base, good = c[1]:to(DEV), c[2], c[3], c[4]
            tide.manual_seed(3)
            local before = tide.rand(1):item()
            tide.manual_seed(3)
            assert.matches("tide: " .. base .. ":", catch(function() return m(bad) end), 1, true)
            assert.are.equal("Lazy" .. base, m.__name)
            assert.are.equal(0, m:num_parameters())
            assert.are.equal(before, tide.rand(1):item(), base .. ": the generator moved")
            tide.manual_seed(5)
            local y = m(good)
            tide.manual_seed(5)
            local plain = nn[base](good:size(2), base ~= "BatchNorm1d" and (base == "Conv2d" and
                4 or 3) or nil, base == "Conv2d" and 3 or nil):to(DEV)
            assert.are.equal(nn[base], getmetatable(m))
            assert.is_true(same(plain(good), y), base)
        end
    end)

    it("RNN, LSTM, GRU and the cells are subclasses of RNNBase and RNNCellBase", function()
        local function is_a(m, cls)
            local c = getmetatable(m)
            while type(c) == "table" do
                if c == cls then
                    return true
                end
                local mt = getmetatable(c)
                c = mt and mt.__index
            end
            return false
        end
        for _, name in ipairs({ "RNN", "LSTM", "GRU" }) do
            local m = nn[name](3, 4)
            assert.is_true(is_a(m, nn.RNNBase), name)
            assert.is_false(is_a(m, nn.RNNCellBase), name)
        end
        for _, name in ipairs({ "RNNCell", "LSTMCell", "GRUCell" }) do
            assert.is_true(is_a(nn[name](3, 4), nn.RNNCellBase), name)
        end
        assert.are.equal("RNN_RELU", nn.RNN(3, 4, { nonlinearity = "relu" }).mode)
        assert.is_true(is_a(nn.NLLLoss2d(), nn.NLLLoss))
        assert.matches("tide: RNNBase: forward is not defined",
            catch(function() return nn.RNNBase("GRU", 3, 4)(tide.randn(2, 1, 3)) end), 1, true)
        local c = nn.Container({ fc = nn.Linear(2, 3), act = nn.ReLU() })
        assert.are.equal(c.fc, c:named_children()[2][2])
        assert.are.same({ "act", "fc" }, { c:named_children()[1][1], c:named_children()[2][1] })
        assert.are.equal(9, c:num_parameters())
    end)

    it("print as PyTorch's modules", function()
        local function shows(want, m)
            assert.matches(want, tostring(m), 1, true)
        end
        shows("FractionalMaxPool2d(kernel_size=2, output_ratio={0.5, 0.7})",
            nn.FractionalMaxPool2d(2, { output_ratio = { 0.5, 0.7 } }))
        shows("CrossMapLRN2d(5, alpha=0.0001, beta=0.75, k=1)", nn.CrossMapLRN2d(5))
        shows("AdaptiveLogSoftmaxWithLoss(in_features=16, n_classes=10, cutoffs={3, 6}, " ..
            "div_value=4, head_bias=false)", nn.AdaptiveLogSoftmaxWithLoss(16, 10, { 3, 6 }))
        shows("RNNBase(3, 4, num_layers=2)", nn.RNNBase("LSTM", 3, 4, { num_layers = 2 }))
        shows("LazyBatchNorm3d(uninitialized: a BatchNorm3d sized by its first input)",
            nn.LazyBatchNorm3d())
    end)
end)

describe("nn, more of PyTorch's layers: errors", function()
    local x = tide.randn({ 2, 3, 9, 11 })

    it("fractional pools name the bad value and the fix", function()
        local function err(want, f)
            assert.matches(want, catch(f), 1, true)
        end
        err("tide: fractional_max_pool2d: pass output_size or output_ratio (the pooled size, " ..
            "or its ratio to the input's)", function() return F.fractional_max_pool2d(x, 2) end)
        err("tide: fractional_max_pool2d: pass output_size or output_ratio, not both",
            function()
                return F.fractional_max_pool2d(x, 2, { output_size = 3, output_ratio = 0.5 })
            end)
        err("tide: fractional_max_pool2d: kernel_size 2 and output size 9 need at least 10 " ..
            "cells along dim 3, got 9; use a smaller kernel_size or output size",
            function() return F.fractional_max_pool2d(x, 2, { output_size = { 9, 4 } }) end)
        err("tide: fractional_max_pool2d: expected _random_samples of shape {2, 3, 2} (batch, " ..
            "channels, one per pooled dim), got {1, 3, 2}", function()
                return F.fractional_max_pool2d(x, 2, { output_size = 4,
                    _random_samples = tide.rand(1, 3, 2) })
            end)
        err("tide: fractional_max_pool2d: expected _random_samples of the input's dtype " ..
            "float32, got float64", function()
                return F.fractional_max_pool2d(x, 2, { output_size = 4,
                    _random_samples = tide.rand({ 2, 3, 2 }, { dtype = "float64" }) })
            end)
        err("tide: fractional_max_pool2d: expected _random_samples in [0, 1), got values " ..
            "from 0 to 1.5", function()
                return F.fractional_max_pool2d(x, 2, { output_size = 4,
                    _random_samples = tide.tensor({ 0, 1.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5,
                        0.5, 0.5, 0.5 }):reshape(2, 3, 2) })
            end)
        err("tide: fractional_max_pool3d: expected input {N, C, D, H, W} or {C, D, H, W}, got " ..
            "{2, 3, 99}", function() return F.fractional_max_pool3d(x:reshape(2, 3, 99), 2,
                { output_size = 2 }) end)
        err("tide: fractional_max_pool2d: expected output_ratio to be a number in (0, 1] or a " ..
            "list of 2 such numbers, got 1.5", function()
                return F.fractional_max_pool2d(x, 2, { output_ratio = 1.5 })
            end)
        err("tide: fractional_max_pool2d: unknown option", function()
            return F.fractional_max_pool2d(x, 2, { output_size = 4, ratio = 1 })
        end)
        err("tide: FractionalMaxPool2d: expected output_ratio between 0 and 1 (a number or 2 " ..
            "numbers), got 1", function() return nn.FractionalMaxPool2d(2,
                { output_ratio = 1 }) end)
        err("tide: FractionalMaxPool3d: pass output_size or output_ratio (one of them",
            function() return nn.FractionalMaxPool3d(2) end)
        err("tide: FractionalMaxPool3d: expected kernel_size to be an integer or {d, h, w}, " ..
            "got {2, 2}", function() return nn.FractionalMaxPool3d({ 2, 2 },
                { output_size = 3 }) end)
        -- a refused call draws nothing
        tide.manual_seed(1)
        local a = tide.rand(1):item()
        tide.manual_seed(1)
        pcall(F.fractional_max_pool2d, x, 5, { output_size = 9 })
        assert.are.equal(a, tide.rand(1):item())
    end)

    it("max_unpool3d, CrossMapLRN2d, AdaptiveLogSoftmaxWithLoss", function()
        local function err(want, f)
            assert.matches(want, catch(f), 1, true)
        end
        local y, i = F.max_pool3d(tide.randn({ 1, 2, 4, 4, 4 }), 2, { return_indices = true })
        err("tide: max_unpool3d: expected input {N, C, D, H, W} or {C, D, H, W}, got {2, 8}",
            function() return F.max_unpool3d(y:reshape(2, 8):contiguous(), i, 2) end)
        err("tide: max_unpool3d: output_size 9 is outside 2..6 for dim 3", function()
            return F.max_unpool3d(y, i, 2, { output_size = { 9, 4, 4 } })
        end)
        err("tide: max_unpool3d: expected kernel_size to be an integer or {d, h, w}, got {2, 2}",
            function() return F.max_unpool3d(y, i, { 2, 2 }) end)
        err("tide: CrossMapLRN2d: expected input {N, C, H, W}, got {3, 9, 11}",
            function() return nn.CrossMapLRN2d(3)(x[1]) end)
        err("tide: CrossMapLRN2d: expected beta to be a number, got nope",
            function() return nn.CrossMapLRN2d(3, { beta = "nope" }) end)
        err("tide: CrossMapLRN2d: unknown option", function()
            return nn.CrossMapLRN2d(3, { gamma = 1 })
        end)
        err("tide: AdaptiveLogSoftmaxWithLoss: expected cutoffs to be a list of unique " ..
            "integers in increasing order, each between 1 and n_classes - 1 = 9, got {6, 3}",
            function() return nn.AdaptiveLogSoftmaxWithLoss(8, 10, { 6, 3 }) end)
        err("tide: AdaptiveLogSoftmaxWithLoss: div_value 8 leaves cluster 1 a hidden size of " ..
            "0 (in_features 4 / div_value^1); use a smaller div_value", function()
                return nn.AdaptiveLogSoftmaxWithLoss(4, 10, { 3 }, { div_value = 8 })
            end)
        err("tide: AdaptiveLogSoftmaxWithLoss: unknown option", function()
            return nn.AdaptiveLogSoftmaxWithLoss(8, 10, { 3 }, { cutoff = 2 })
        end)
        local m = nn.AdaptiveLogSoftmaxWithLoss(8, 10, { 3, 6 }, { div_value = 2 })
        local inp = tide.randn(4, 8)
        err("tide: AdaptiveLogSoftmaxWithLoss: expected target classes in 1..10, got values " ..
            "from 0 to 4", function()
                return m(inp, tide.tensor({ 1, 0, 4, 2 }, { dtype = "int64" }))
            end)
        err("tide: AdaptiveLogSoftmaxWithLoss: a target {N} needs input {N, 8} with the same " ..
            "N, got input {4, 8} and target {3}", function()
                return m(inp, tide.tensor({ 1, 2, 3 }, { dtype = "int64" }))
            end)
        err("tide: AdaptiveLogSoftmaxWithLoss: expected an int64 target of 1-based classes, " ..
            "got float32", function() return m(inp, tide.ones(4)) end)
        err("tide: AdaptiveLogSoftmaxWithLoss:log_prob: expected input {N, 8}, got {8}",
            function() return m:log_prob(inp[1]) end)
        err("tide: RNNBase: unknown mode \"lstm\"; use \"RNN_TANH\", \"RNN_RELU\", \"LSTM\" or " ..
            "\"GRU\"", function() return nn.RNNBase("lstm", 3, 4) end)
        err("tide: RNNBase: unknown option \"nonlinearity\"", function()
            return nn.RNNBase("RNN_RELU", 3, 4, { nonlinearity = "relu" })
        end)
        err("tide: RNNCellBase: expected num_chunks to be an integer >= 1, got nil",
            function() return nn.RNNCellBase(3, 4, true) end)
        err("tide: NLLLoss2d: unknown option", function() return nn.NLLLoss2d({ size = 1 }) end)
        err("tide: Container:init: expected a Module for 'fc', got number",
            function() return nn.Container({ fc = 1 }) end)
        err("tide: LazyInstanceNorm3d: expected {N, C, D, H, W} or {C, D, H, W} input, got " ..
            "{6, 99}", function() return nn.LazyInstanceNorm3d()(x:reshape(6, 99)) end)
        err("tide: LazyBatchNorm2d: unknown option", function()
            return nn.LazyBatchNorm2d({ track_running_stat = false })
        end)
        err("tide: LazyConvTranspose1d: expected a 3-D input {N, C, L} or a 2-D {C, L}, got 4 " ..
            "dims", function() return nn.LazyConvTranspose1d(2, 3)(x) end)
    end)

    it("F.multi_head_attention_forward checks its arguments", function()
        local q = tide.randn(3, 2, 4)
        local w, wo = tide.randn(12, 4), tide.randn(4, 4)
        local function call(...)
            local a = { ... }
            return function()
                return F.multi_head_attention_forward(a[1] or q, a[2] or q, a[3] or q, a[4] or 4,
                    a[5] or 2, a[6] or w, a[7], a[8], a[9], false, 0, a[12] or wo, a[13], a[14])
            end
        end
        local function err(want, f)
            assert.matches(want, catch(f), 1, true)
        end
        err("tide: multi_head_attention_forward: expected query's embedding size 6 " ..
            "(embed_dim_to_check), got 4 in {3, 2, 4}", call(nil, nil, nil, 6))
        err("tide: multi_head_attention_forward: embed_dim 4 must be divisible by num_heads 3",
            call(nil, nil, nil, nil, 3))
        err("tide: multi_head_attention_forward: expected in_proj_weight of shape {12, 4}, got " ..
            "{4, 4}", call(nil, nil, nil, nil, nil, wo))
        err("tide: multi_head_attention_forward: pass bias_k and bias_v together, or neither",
            call(nil, nil, nil, nil, nil, nil, nil, tide.randn(1, 1, 4)))
        err("tide: multi_head_attention_forward: expected attn_mask of shape {3, 3} or " ..
            "{4, 3, 3}, got {3, 5}", call(nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil,
                nil, nil, { attn_mask = tide.zeros(3, 5) }))
        err("tide: multi_head_attention_forward: expected static_k of shape {4, S, 2} (batch * " ..
            "num_heads, S, head_dim), got {2, 3, 2}", call(nil, nil, nil, nil, nil, nil, nil,
                nil, nil, nil, nil, nil, nil, { static_k = tide.randn(2, 3, 2) }))
        err("tide: multi_head_attention_forward: expected k_proj_weight to be a tensor, got nil",
            call(nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil,
                { use_separate_proj_weight = true, q_proj_weight = wo }))
        err("tide: multi_head_attention_forward: unknown option", call(nil, nil, nil, nil, nil,
            nil, nil, nil, nil, nil, nil, nil, nil, { is_causal = true }))
    end)
end)
