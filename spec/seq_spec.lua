-- Sequence models: RNN, LSTM, GRU and their cells against PyTorch 1.13 (Debian's python3-torch):
-- spec/fixtures/seq_reference.lua, made by spec/fixtures/make_seq_reference.py, holds each
-- layer's parameters, inputs, outputs and the gradients of sum_k sum(outputs[k] * weights[k]).
local tide = require("tide")
local nn = require("tide.nn")
local core = require("tide.core")
local K = core._internal -- the internal kernels (tide._internal in docs/API.md)
local autograd = require("tide.autograd")
local gradcheck = require("spec.support.gradcheck")
local fx = require("spec.support.fixtures")
local REF = dofile("spec/fixtures/seq_reference.lua")

local function T(r, device)
    return tide.tensor(r.data, { dtype = "float32", device = device }):view(r.shape)
end

local function close(got, want, what, tol)
    fx.close(got, want, tol or 1e-5, what)
end

local same = fx.same

local function raises_here(pattern, f, ...)
    local ok, err = pcall(f, ...)
    assert.is_false(ok)
    assert.matches("seq_spec%.lua:%d+: tide: " .. pattern, tostring(err))
end

-- builds the module, loads PyTorch's parameters (their names converted by
-- nn.utils.state_dict_from_torch: PyTorch's lists count from 0), runs, and checks outputs and
-- gradients

local function check_case(name, ctor, run, device)
    local c = REF[name]
    local m = ctor(c)
    local sd = {}
    for k, v in pairs(c.params) do
        sd[k] = T(v)
    end
    m:load_state_dict(require("tide.nn").utils.state_dict_from_torch(sd))
    if device then
        m:to(device)
    end
    local inputs = {}
    for i, v in ipairs(c.inputs) do
        inputs[i] = T(v, device):requires_grad_(true)
    end
    local outs = run(m, inputs)
    assert.are.equal(#c.outputs, #outs)
    local loss
    for i, o in ipairs(outs) do
        close(o, c.outputs[i], name .. " output " .. i)
        local l = o:mul(T(c.weights[i], device)):sum()
        loss = loss and loss:add(l) or l
    end
    loss:backward()
    local params = m:named_parameters()
    for k, want in pairs(require("tide.nn").utils.state_dict_from_torch(c.grads.params)) do
        assert.is_not_nil(params[k], name .. ": parameter " .. k)
        close(params[k].grad, want, name .. " grad " .. k)
    end
    for i, want in ipairs(c.grads.inputs) do
        close(inputs[i].grad, want, name .. " input grad " .. i)
    end
    return m
end

local function seq_ctor(cls)
    return function(c)
        local o = {}
        for k, v in pairs(c.opts) do
            o[k] = v
        end
        return cls(c.ctor[1], c.ctor[2], o)
    end
end

local function run_lstm(m, xs)
    local out, hc
    if xs[2] then
        out, hc = m(xs[1], { xs[2], xs[3] })
    else
        out, hc = m(xs[1])
    end
    return { out, hc[1], hc[2] }
end

local function run_rnn(m, xs)
    local out, h = m(xs[1], xs[2])
    return { out, h }
end

describe("nn.LSTM", function()
    it("matches PyTorch: one layer, no state given", function()
        check_case("lstm", seq_ctor(nn.LSTM), run_lstm)
    end)
    it("matches PyTorch: two bidirectional layers with h0, c0", function()
        check_case("lstm_deep_bi", seq_ctor(nn.LSTM), run_lstm)
    end)
    it("matches PyTorch: batch_first, no bias", function()
        check_case("lstm_batch_first_nobias", seq_ctor(nn.LSTM), run_lstm)
    end)
    it("has PyTorch's parameter names, shapes and init bound", function()
        local m = nn.LSTM(4, 3, { num_layers = 2, bidirectional = true })
        local names = {}
        for i, np in ipairs(m:named_parameters()) do
            names[i] = np[1]
        end
        assert.are.same({ "weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0",
            "weight_ih_l0_reverse", "weight_hh_l0_reverse", "bias_ih_l0_reverse",
            "bias_hh_l0_reverse", "weight_ih_l1", "weight_hh_l1", "bias_ih_l1", "bias_hh_l1",
            "weight_ih_l1_reverse", "weight_hh_l1_reverse", "bias_ih_l1_reverse",
            "bias_hh_l1_reverse" }, names)
        assert.are.same({ 12, 6 }, m.weight_ih_l1.shape)
        assert.are.same({ 12, 3 }, m.weight_hh_l0.shape)
        for _, p in ipairs(m:parameters()) do
            assert.is_true(p:abs():max():item() <= 1 / math.sqrt(3))
        end
    end)
    it("takes an unbatched input [T, in]", function()
        local m = nn.LSTM(4, 3)
        local x = tide.randn(5, 4)
        local out, hc = m(x)
        assert.are.same({ 5, 3 }, out.shape)
        assert.are.same({ 1, 3 }, hc[1].shape)
        local out2 = m(x:view(5, 1, 4))
        assert.is_true(same(out, out2:view(5, 3), 1e-6))
    end)
    it("drops out between layers only in training", function()
        tide.manual_seed(1)
        local m = nn.LSTM(4, 3, { num_layers = 2, dropout = 0.5 })
        local x = tide.randn(5, 2, 4)
        m:eval()
        local a = m(x)
        local b = m(x)
        assert.is_true(same(a, b))
        m:train()
        local c = m(x)
        assert.is_false(same(a, c, 1e-6))
    end)
    it("raises on bad options, input and state, at the caller's line", function()
        raises_here('LSTM: unknown option "batchfirst"', function()
            nn.LSTM(4, 3, { batchfirst = true })
        end)
        local m = nn.LSTM(4, 3)
        raises_here("LSTM: expected input of 2 or 3 dims with last dim 4 %(input_size%), " ..
            "got shape {5, 2, 3}", function()
            m(tide.randn(5, 2, 3))
        end)
        raises_here("LSTM: expected h0 of shape {1, 2, 3}, got {1, 3, 3}", function()
            m(tide.randn(5, 2, 4), { tide.zeros(1, 3, 3), tide.zeros(1, 2, 3) })
        end)
        raises_here("LSTM: expected the state as a list {h0, c0}, got a tensor", function()
            m(tide.randn(5, 2, 4), tide.zeros(1, 2, 3))
        end)
    end)
end)

describe("nn.GRU and nn.RNN", function()
    it("GRU matches PyTorch: one layer", function()
        check_case("gru", seq_ctor(nn.GRU), function(m, xs)
            local out, h = m(xs[1])
            return { out, h }
        end)
    end)
    it("GRU matches PyTorch: two bidirectional batch_first layers with h0", function()
        check_case("gru_deep_bi", seq_ctor(nn.GRU), run_rnn)
    end)
    it("RNN (tanh) matches PyTorch: two layers with h0", function()
        check_case("rnn_tanh", seq_ctor(nn.RNN), run_rnn)
    end)
    it("RNN (relu) matches PyTorch: bidirectional", function()
        check_case("rnn_relu_bi", seq_ctor(nn.RNN), run_rnn)
    end)
    it("RNN rejects an unknown nonlinearity", function()
        raises_here('RNN: nonlinearity must be "tanh" or "relu", got gelu', function()
            nn.RNN(4, 3, { nonlinearity = "gelu" })
        end)
    end)
end)

describe("recurrent cells", function()
    it("LSTMCell matches PyTorch", function()
        check_case("lstm_cell", seq_ctor(nn.LSTMCell), function(m, xs)
            local h, c = m(xs[1], { xs[2], xs[3] })
            return { h, c }
        end)
    end)
    it("GRUCell matches PyTorch", function()
        check_case("gru_cell", seq_ctor(nn.GRUCell), function(m, xs)
            return { m(xs[1], xs[2]) }
        end)
    end)
    it("RNNCell matches PyTorch (tanh; relu without bias)", function()
        local run = function(m, xs)
            return { m(xs[1], xs[2]) }
        end
        check_case("rnn_cell", seq_ctor(nn.RNNCell), run)
        check_case("rnn_cell_relu_nobias", seq_ctor(nn.RNNCell), run)
    end)
    it("start from zeros without a state", function()
        local m = nn.LSTMCell(4, 3)
        local x = tide.randn(2, 4)
        local h, c = m(x)
        local h2, c2 = m(x, { tide.zeros(2, 3), tide.zeros(2, 3) })
        assert.is_true(same(h, h2))
        assert.is_true(same(c, c2))
    end)
end)

describe("the fused step (the rows rnn_step, lstm_step, gru_step)", function()
    local function check_kind(kind, G, with_prev)
        tide.manual_seed(3)
        local B, H = 3, 4
        local gi = tide.randn(B, G * H, { dtype = "float64" }):requires_grad_(true)
        local gh = tide.randn(B, G * H, { dtype = "float64" }):requires_grad_(true)
        local inputs = { gi, gh }
        if with_prev then
            inputs[3] = tide.randn(B, H, { dtype = "float64" }):requires_grad_(true)
        end
        local R = require("tide.nn._rnn")
        assert.is_true(gradcheck(function(a, b, p)
            return R.step(kind, a, b, p)
        end, inputs))
    end
    it("has finite-difference-checked gradients for each kind", function()
        check_kind("lstm", 4, true)
        check_kind("gru", 3, true)
        check_kind("rnn_tanh", 1, false)
        check_kind("rnn_relu", 1, false)
    end)
    it("the whole-sequence node (R.layer) has finite-difference-checked gradients", function()
        local R = require("tide.nn._rnn")
        tide.manual_seed(4)
        local T, B, H = 3, 2, 2
        for _, kg in ipairs({ { "lstm", 4, 2 }, { "gru", 3, 1 }, { "rnn_tanh", 1, 1 } }) do
            local kind, G, S = kg[1], kg[2], kg[3]
            for _, rev in ipairs({ false, true }) do
                local function r(...)
                    return tide.randn({ ... }, { dtype = "float64" }):requires_grad_(true)
                end
                assert.is_true(gradcheck(function(gi, w, b, s0)
                    return R.layer(kind, gi, w, b, s0, rev)
                end, { r(T, B, G * H), r(G * H, H), r(G * H), r(B, S * H) }))
            end
        end
    end)
    it("computes the LSTM gates in PyTorch's order i, f, g, o", function()
        local H = 1
        local gi = tide.tensor({ { 0.5, -1, 2, 0.25 } })
        local gh = tide.zeros(1, 4 * H)
        local c = tide.tensor({ { 0.3 } })
        local out = K.lstm_step(gi, gh, c, H)
        local function sig(v) return 1 / (1 + math.exp(-v)) end
        local c1 = sig(-1) * 0.3 + sig(0.5) * math.tanh(2)
        local h1 = sig(0.25) * math.tanh(c1)
        local r = out:double():totable()[1]
        assert.is_true(math.abs(r[1] - h1) < 1e-6 and math.abs(r[2] - c1) < 1e-6)
    end)
    it("gives nil for the gradients a kind does not have", function()
        local R = require("tide.nn._rnn")
        local out = R.kernel_step("rnn_tanh", tide.zeros(2, 3), tide.zeros(2, 3))
        local dgi, dgh, dprev = R.kernel_step_backward("rnn_tanh", nil, nil, out, tide.ones(2, 3))
        assert.are.same({ 2, 3 }, dgi.shape)
        assert.is_nil(dgh)
        assert.is_nil(dprev)
        local o2, saved = R.kernel_step("lstm", tide.zeros(2, 12), tide.zeros(2, 12),
            tide.zeros(2, 3))
        assert.are.same({ 2, 6 }, o2.shape)
        assert.are.same({ 2, 12 }, saved.shape)
        local a, b, c = R.kernel_step_backward("lstm", saved, tide.zeros(2, 3), o2, tide.ones(2, 6))
        assert.are.same({ 2, 12 }, a.shape)
        assert.is_nil(b)
        assert.are.same({ 2, 3 }, c.shape)
        local h2, gsaved = R.kernel_step("gru", tide.zeros(2, 9), tide.zeros(2, 9), tide.zeros(2, 3))
        local d1, d2, d3 = R.kernel_step_backward("gru", gsaved, tide.zeros(2, 3), h2, tide.ones(2, 3))
        assert.are.same({ { 2, 9 }, { 2, 9 }, { 2, 3 } }, { d1.shape, d2.shape, d3.shape })
    end)
    it("raises on bad shapes and gradient inputs", function()
        local R = require("tide.nn._rnn")
        raises_here("lstm_step: gh of shape %[2, 4%] must have gi's shape %[2, 8%] but 4 %* d = 8 " ..
            "in its last dim", function()
                R.kernel_step("lstm", tide.zeros(2, 8), tide.zeros(2, 4), tide.zeros(2, 2))
            end)
        raises_here("gru_step: gi of shape %[2, 8%] must have 3 %* d = 6 elements in its last dim",
            function()
                R.kernel_step("gru", tide.zeros(2, 8), tide.zeros(2, 8), tide.zeros(2, 2))
            end)
        raises_here("lstm_step: c of shape %[2, 3%] must have gi's shape %[2, 8%]", function()
            R.kernel_step("lstm", tide.zeros(2, 8), tide.zeros(2, 8), tide.zeros(2, 3))
        end)
        raises_here("lstm_step: argument #3 must be a tensor, got nil", function()
            R.kernel_step("lstm", tide.zeros(2, 8), tide.zeros(2, 8))
        end)
        -- a huge d is named, not multiplied in int64
        raises_here("lstm_step: gi of shape %[2, 8%] must have 4 %* d = 18446744073709551616 " ..
            "elements in its last dim", function()
                K.lstm_step(tide.zeros(2, 8), tide.zeros(2, 8), tide.zeros(2, 2), 2 ^ 62)
            end)
        raises_here("rnn_step: not differentiable", function()
            K.rnn_step(tide.zeros(2, 2):requires_grad_(true), tide.zeros(2, 2), 2, false)
        end)
    end)
end)

describe("attention", function()
    local F = nn.functional
    local function none(c)
        return nn.Module()
    end
    it("scaled_dot_product_attention matches PyTorch: plain, causal, bool mask", function()
        check_case("sdpa", none, function(_, xs)
            return { F.scaled_dot_product_attention(xs[1], xs[2], xs[3]) }
        end)
        check_case("sdpa_causal", none, function(_, xs)
            return { F.scaled_dot_product_attention(xs[1], xs[2], xs[3], { is_causal = true }) }
        end)
        local mask = tide.tensor(REF.sdpa_bool_mask.opts.attn_mask, { dtype = "bool" })
        check_case("sdpa_bool_mask", none, function(_, xs)
            return { F.scaled_dot_product_attention(xs[1], xs[2], xs[3], { attn_mask = mask }) }
        end)
    end)
    local function mha_ctor(c)
        local o = {}
        for k, v in pairs(c.opts) do
            o[k] = v
        end
        return nn.MultiheadAttention(c.ctor[1], c.ctor[2], o)
    end
    it("MultiheadAttention matches PyTorch: cross-attention with weights", function()
        check_case("mha", mha_ctor, function(m, xs)
            local out, w = m(xs[1], xs[2], xs[3])
            return { out, w }
        end)
    end)
    it("MultiheadAttention matches PyTorch: causal self-attention, batch_first", function()
        local L = REF.mha_self_causal_bf.inputs[1].shape[2]
        -- true above the diagonal: a query does not see later keys
        local mask = tide.arange(1, L + 1):view(L, 1):lt(tide.arange(1, L + 1):view(1, L))
        check_case("mha_self_causal_bf", mha_ctor, function(m, xs)
            local out, w = m(xs[1], xs[1], xs[1], { attn_mask = mask, need_weights = false })
            assert.is_nil(w)
            return { out }
        end)
    end)
    it("MultiheadAttention has PyTorch's parameters and checks its arguments", function()
        local m = nn.MultiheadAttention(8, 2)
        local names = {}
        for i, np in ipairs(m:named_parameters()) do
            names[i] = np[1]
        end
        assert.are.same({ "in_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias" },
            names)
        raises_here("MultiheadAttention: embed_dim 10 must be divisible by num_heads 3", function()
            nn.MultiheadAttention(10, 3)
        end)
        raises_here('MultiheadAttention: unknown option "batchfirst"', function()
            nn.MultiheadAttention(8, 2, { batchfirst = true })
        end)
        raises_here("MultiheadAttention: expected attn_mask of shape {3, 3} or {4, 3, 3}, " ..
            "got {2, 2}",
            function()
                local x = tide.randn(3, 2, 8)
                m(x, x, x, { attn_mask = tide.zeros(2, 2) })
            end)
    end)
    local function tel_ctor(c)
        local o = {}
        for k, v in pairs(c.opts) do
            o[k] = v
        end
        return nn.TransformerEncoderLayer(c.ctor[1], c.ctor[2], o)
    end
    it("TransformerEncoderLayer matches PyTorch (post-norm relu, pre-norm gelu)", function()
        local run = function(m, xs)
            return { m(xs[1]) }
        end
        check_case("encoder_layer", tel_ctor, run)
        check_case("encoder_layer_norm_first_gelu_bf", tel_ctor, run)
    end)
    it("TransformerEncoder matches PyTorch: two layers", function()
        check_case("encoder", function(c)
            local o = {}
            for k, v in pairs(c.opts) do
                if k ~= "num_layers" then
                    o[k] = v
                end
            end
            local layer = nn.TransformerEncoderLayer(c.ctor[1], c.ctor[2], o)
            return nn.TransformerEncoder(layer, c.opts.num_layers)
        end, function(m, xs)
            return { m(xs[1]) }
        end)
    end)
    it("TransformerEncoder copies the layer (same values, separate parameters)", function()
        local layer = nn.TransformerEncoderLayer(8, 2, { dim_feedforward = 16 })
        local enc = nn.TransformerEncoder(layer, 2)
        local a, b = enc.layers[1].linear1.weight, enc.layers[2].linear1.weight
        assert.is_true(same(a, b))
        assert.is_true(same(a, layer.linear1.weight))
        assert.is_false(rawequal(a, b))
        assert.is_not_nil(enc:named_parameters()["layers.2.self_attn.in_proj_weight"])
    end)
end)

describe("sequence models on the GPU #cuda", function()
    local function gpu_it(name, f)
        it(name, function()
            if not tide.cuda.is_available() then
                pending("no CUDA device")
                return
            end
            f()
        end)
    end
    gpu_it("LSTM, GRU, RNN and the cells match PyTorch on cuda:0", function()
        check_case("lstm_deep_bi", seq_ctor(nn.LSTM), run_lstm, "cuda:0")
        check_case("lstm_batch_first_nobias", seq_ctor(nn.LSTM), run_lstm, "cuda:0")
        check_case("gru_deep_bi", seq_ctor(nn.GRU), run_rnn, "cuda:0")
        check_case("rnn_tanh", seq_ctor(nn.RNN), run_rnn, "cuda:0")
        check_case("rnn_relu_bi", seq_ctor(nn.RNN), run_rnn, "cuda:0")
        check_case("lstm_cell", seq_ctor(nn.LSTMCell), function(m, xs)
            local h, c = m(xs[1], { xs[2], xs[3] })
            return { h, c }
        end, "cuda:0")
        check_case("gru_cell", seq_ctor(nn.GRUCell), function(m, xs)
            return { m(xs[1], xs[2]) }
        end, "cuda:0")
    end)
    gpu_it("MultiheadAttention and TransformerEncoderLayer match PyTorch on cuda:0", function()
        check_case("mha", function(c)
            return nn.MultiheadAttention(c.ctor[1], c.ctor[2])
        end, function(m, xs)
            local out, w = m(xs[1], xs[2], xs[3])
            return { out, w }
        end, "cuda:0")
        check_case("encoder_layer", function(c)
            return nn.TransformerEncoderLayer(c.ctor[1], c.ctor[2],
                { dim_feedforward = c.opts.dim_feedforward, dropout = 0 })
        end, function(m, xs)
            return { m(xs[1]) }
        end, "cuda:0")
    end)
    gpu_it("the fused step and its gradient equal the CPU's in float64", function()
        tide.manual_seed(5)
        local kinds = { { "lstm", 4 }, { "gru", 3 }, { "rnn_tanh", 1 }, { "rnn_relu", 1 } }
        for _, kg in ipairs(kinds) do
            local kind, G = kg[1], kg[2]
            local gi = tide.randn(5, G * 7, { dtype = "float64" })
            local gh = tide.randn(5, G * 7, { dtype = "float64" })
            local prev = G > 1 and tide.randn(5, 7, { dtype = "float64" }) or nil
            local R = require("tide.nn._rnn")
            local out, saved = R.kernel_step(kind, gi, gh, prev)
            local cout, csaved = R.kernel_step(kind, gi:cuda(), gh:cuda(), prev and prev:cuda())
            assert.is_true(same(out, cout, 1e-12))
            if saved then
                assert.is_true(same(saved, csaved, 1e-12))
            end
            local g = tide.randn(out.shape, { dtype = "float64" })
            local a = { R.kernel_step_backward(kind, saved, prev, out, g) }
            local b = { R.kernel_step_backward(kind, csaved, prev and prev:cuda(), cout, g:cuda()) }
            for i = 1, 3 do
                assert.are.equal(a[i] == nil, b[i] == nil)
                if a[i] then
                    assert.is_true(same(a[i], b[i], 1e-12), kind .. " gradient " .. i)
                end
            end
        end
    end)
end)
