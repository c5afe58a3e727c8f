-- The options of the sequence layers built after the layers themselves (issue 13), against
-- PyTorch 1.13 (Debian's python3-torch): nn.MultiheadAttention's kdim/vdim, add_bias_kv,
-- add_zero_attn and is_causal, nn.LSTM's proj_size. spec/fixtures/seq_options_reference.lua,
-- made by spec/fixtures/make_seq_options.py, holds each layer's parameters, inputs, outputs and
-- the gradients of sum_k sum(outputs[k] * weights[k]).
local tide = require("tide")
local nn = require("tide.nn")
local gradcheck = require("spec.support.gradcheck")
local fx = require("spec.support.fixtures")
local REF = dofile("spec/fixtures/seq_options_reference.lua")

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
    assert.matches("seq_options_spec%.lua:%d+: tide: " .. pattern, tostring(err))
end

local function copy(t)
    local o = {}
    for k, v in pairs(t) do
        o[k] = v
    end
    return o
end

-- builds the module from the case's constructor arguments, loads PyTorch's parameters (the
-- state_dict keys must be exactly PyTorch's), runs, and checks outputs and gradients
local function check_case(name, cls, run, device)
    local c = REF[name]
    local m = cls(c.ctor[1], c.ctor[2], copy(c.opts))
    -- the names in PyTorch's order (the ipairs listing; pairs keeps no order on 5.1/LuaJIT),
    -- and the state_dict's keys the same set
    local names, keys, want = {}, {}, {}
    for i, np in ipairs(m:named_parameters()) do
        names[i] = np[1]
    end
    assert.are.same(c.param_names, names, name .. ": parameter names")
    for k in pairs(m:state_dict()) do
        keys[#keys + 1] = k
    end
    for i, k in ipairs(c.param_names) do
        want[i] = k
    end
    table.sort(keys)
    table.sort(want)
    assert.are.same(want, keys, name .. ": state_dict keys")
    local sd = {}
    for k, v in pairs(c.params) do
        sd[k] = T(v)
    end
    m:load_state_dict(sd)
    if device then
        m:to(device)
    end
    local inputs = {}
    for i, v in ipairs(c.inputs) do
        inputs[i] = T(v, device):requires_grad_(true)
    end
    local outs = run(m, inputs, c, device)
    assert.are.equal(#c.outputs, #outs)
    local loss
    for i, o in ipairs(outs) do
        close(o, c.outputs[i], name .. " output " .. i)
        local l = o:mul(T(c.weights[i], device)):sum()
        loss = loss and loss:add(l) or l
    end
    loss:backward()
    local params = m:named_parameters()
    for k, want in pairs(c.grads.params) do
        assert.is_not_nil(params[k], name .. ": parameter " .. k)
        close(params[k].grad, want, name .. " grad " .. k)
    end
    for i, want in ipairs(c.grads.inputs) do
        close(inputs[i].grad, want, name .. " input grad " .. i)
    end
    return m
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

-- the call's options from the fixture: masks as tensors (bool from Lua booleans)
local function call_opts(c, device)
    local o = {}
    for k, v in pairs(c.call) do
        if type(v) == "table" and v.shape then
            o[k] = T(v, device)
        elseif type(v) == "table" then
            o[k] = tide.tensor(v, { dtype = "bool", device = device })
        else
            o[k] = v
        end
    end
    return o
end

local function run_mha(m, xs, c, device)
    local q = xs[1]
    local k = xs[2] or q
    local v = xs[3] or k
    local out, w = m(q, k, v, call_opts(c, device))
    return #c.outputs == 2 and { out, w } or { out }
end

local MHA_CASES = { "mha_kdim_vdim", "mha_kdim_vdim_nobias_bf", "mha_bias_kv_zero_attn",
    "mha_bias_kv_kdim_bf", "mha_zero_attn_float_mask", "mha_unbatched_bias_kv_zero_attn",
    "mha_causal_self", "mha_causal_self_bias_kv_zero_attn" }

describe("nn.MultiheadAttention's kdim, vdim, add_bias_kv, add_zero_attn, is_causal", function()
    for _, name in ipairs(MHA_CASES) do
        it("matches PyTorch: " .. name, function()
            check_case(name, nn.MultiheadAttention, run_mha)
        end)
    end
    it("has PyTorch's parameters, shapes and init", function()
        local m = nn.MultiheadAttention(8, 2, { kdim = 5, vdim = 6, add_bias_kv = true })
        local names = {}
        for i, np in ipairs(m:named_parameters()) do
            names[i] = np[1]
        end
        assert.are.same({ "q_proj_weight", "k_proj_weight", "v_proj_weight", "in_proj_bias",
            "bias_k", "bias_v", "out_proj.weight", "out_proj.bias" }, names)
        assert.is_nil(m.in_proj_weight)
        assert.are.same({ 8, 5 }, m.k_proj_weight.shape)
        assert.are.same({ 8, 6 }, m.v_proj_weight.shape)
        assert.are.same({ 1, 1, 8 }, m.bias_k.shape)
        assert.is_true(m.k_proj_weight:abs():max():item() <= math.sqrt(6 / 13))
        assert.is_true(m.bias_k:abs():max():item() > 0)
        -- kdim and vdim equal to embed_dim keep the packed in_proj_weight
        local packed = nn.MultiheadAttention(8, 2, { kdim = 8, vdim = 8, add_zero_attn = true })
        assert.are.same({ 24, 8 }, packed.in_proj_weight.shape)
        assert.is_nil(packed.q_proj_weight)
        assert.matches("kdim=5, vdim=6, add_bias_kv=true", tostring(m))
    end)
    it("appends the bias and zero keys to the weights' last dim", function()
        local m = nn.MultiheadAttention(8, 2, { add_bias_kv = true, add_zero_attn = true })
        local x = tide.randn(3, 2, 8)
        local out, w = m(x, x, x)
        assert.are.same({ 3, 2, 8 }, out.shape)
        assert.are.same({ 2, 3, 5 }, w.shape)
        local _, wh = m(x, x, x, { average_attn_weights = false })
        assert.are.same({ 2, 2, 3, 5 }, wh.shape)
    end)
    it("is_causal: a query sees no later key, with or without attn_mask", function()
        local m = nn.MultiheadAttention(8, 2)
        local x = tide.randn(4, 2, 8)
        local _, w = m(x, x, x, { is_causal = true })
        local wt = w:totable()
        for b = 1, 2 do
            for i = 1, 4 do
                for j = i + 1, 4 do
                    assert.are.equal(0, wt[b][i][j])
                end
            end
        end
        -- the causal mask given too (PyTorch 2's hint) changes nothing
        local L = 4
        local mask = tide.arange(1, L + 1):view(L, 1):lt(tide.arange(1, L + 1):view(1, L))
        local out1 = m(x, x, x, { is_causal = true })
        local out2 = m(x, x, x, { is_causal = true, attn_mask = mask })
        local out3 = m(x, x, x, { attn_mask = mask })
        assert.is_true(same(out1, out2, 1e-6))
        assert.is_true(same(out1, out3, 1e-6))
    end)
    it("TransformerEncoderLayer and TransformerEncoder take is_causal (the causal mask)",
        function()
            local L = 5
            local causal = tide.arange(1, L + 1):view(L, 1):lt(tide.arange(1, L + 1):view(1, L))
            local layer = nn.TransformerEncoderLayer(8, 2, { dim_feedforward = 16, dropout = 0 })
            local x = tide.randn(L, 3, 8)
            local by_flag = layer(x, { is_causal = true })
            assert.is_true(same(by_flag, layer(x, { src_mask = causal }), 1e-6))
            assert.is_true(same(by_flag, layer(x, { src_mask = causal, is_causal = true }), 1e-6))
            assert.is_false(same(by_flag, layer(x), 1e-3)) -- the flag does change the result
            local enc = nn.TransformerEncoder(layer, 2)
            assert.is_true(same(enc(x, { is_causal = true }), enc(x, { mask = causal }), 1e-6))
            raises_here("TransformerEncoderLayer: expected is_causal to be a boolean, got number",
                function()
                    layer(x, { is_causal = 1 })
                end)
        end)

    it("raises on bad options and inputs at the caller's line", function()
        raises_here("MultiheadAttention: expected kdim to be an integer >= 1, got 0", function()
            nn.MultiheadAttention(8, 2, { kdim = 0 })
        end)
        raises_here("MultiheadAttention: expected add_bias_kv to be a boolean, got 1", function()
            nn.MultiheadAttention(8, 2, { add_bias_kv = 1 })
        end)
        raises_here('MultiheadAttention: unknown option "add_zero_atn" %(did you mean ' ..
            '"add_zero_attn"%?%)', function()
                nn.MultiheadAttention(8, 2, { add_zero_atn = true })
            end)
        local m = nn.MultiheadAttention(8, 2, { kdim = 5, vdim = 6 })
        local q = tide.randn(3, 2, 8)
        raises_here("MultiheadAttention: expected key of last dim 5 %(kdim%) and value of last " ..
            "dim 6 %(vdim%), with query's batch and one length, got query {3, 2, 8}, key " ..
            "{4, 2, 6} and value {4, 2, 6}", function()
                local kv = tide.randn(4, 2, 6)
                m(q, kv, kv)
            end)
        raises_here("MultiheadAttention: expected is_causal to be a boolean, got 1", function()
            m(q, tide.randn(4, 2, 5), tide.randn(4, 2, 6), { is_causal = 1 })
        end)
        raises_here('MultiheadAttention: unknown option "is_casual" %(did you mean ' ..
            '"is_causal"%?%)', function()
                m(q, tide.randn(4, 2, 5), tide.randn(4, 2, 6), { is_casual = true })
            end)
    end)
end)

describe("nn.LSTM's proj_size", function()
    it("matches PyTorch: one layer, no state given", function()
        check_case("lstm_proj", nn.LSTM, run_lstm)
    end)
    it("matches PyTorch: two bidirectional layers with h0, c0", function()
        check_case("lstm_proj_deep_bi", nn.LSTM, run_lstm)
    end)
    it("matches PyTorch: batch_first, no bias, with h0, c0", function()
        check_case("lstm_proj_bf_nobias", nn.LSTM, run_lstm)
    end)
    it("has PyTorch's parameter names and shapes; proj_size = 0 is no projection", function()
        local m = nn.LSTM(4, 3, { num_layers = 2, bidirectional = true, proj_size = 2 })
        local names = {}
        for i, np in ipairs(m:named_parameters()) do
            names[i] = np[1]
        end
        assert.are.same({ "weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0",
            "weight_hr_l0", "weight_ih_l0_reverse", "weight_hh_l0_reverse",
            "bias_ih_l0_reverse", "bias_hh_l0_reverse", "weight_hr_l0_reverse", "weight_ih_l1",
            "weight_hh_l1", "bias_ih_l1", "bias_hh_l1", "weight_hr_l1", "weight_ih_l1_reverse",
            "weight_hh_l1_reverse", "bias_ih_l1_reverse", "bias_hh_l1_reverse",
            "weight_hr_l1_reverse" }, names)
        assert.are.same({ 12, 2 }, m.weight_hh_l0.shape)
        assert.are.same({ 2, 3 }, m.weight_hr_l0.shape)
        assert.are.same({ 12, 4 }, m.weight_ih_l1.shape)
        for _, p in ipairs(m:parameters()) do
            assert.is_true(p:abs():max():item() <= 1 / math.sqrt(3))
        end
        local out, hc = m(tide.randn(5, 2, 4))
        assert.are.same({ 5, 2, 4 }, out.shape)
        assert.are.same({ 4, 2, 2 }, hc[1].shape)
        assert.are.same({ 4, 2, 3 }, hc[2].shape)
        assert.matches("proj_size=2", tostring(m))
        local plain = nn.LSTM(4, 3, { proj_size = 0 })
        assert.is_nil(plain.weight_hr_l0)
        assert.are.same({ 12, 3 }, plain.weight_hh_l0.shape)
    end)
    it("takes an unbatched input [T, in] with states [L*D, P] and [L*D, H]", function()
        local m = nn.LSTM(4, 3, { proj_size = 2 })
        local x = tide.randn(5, 4)
        local h0, c0 = tide.randn(1, 2), tide.randn(1, 3)
        local out, hc = m(x, { h0, c0 })
        assert.are.same({ 5, 2 }, out.shape)
        assert.are.same({ 1, 2 }, hc[1].shape)
        assert.are.same({ 1, 3 }, hc[2].shape)
        local out2 = m(x:view(5, 1, 4), { h0:view(1, 1, 2), c0:view(1, 1, 3) })
        assert.is_true(same(out, out2:view(5, 2), 1e-6))
    end)
    it("the projected layer node has finite-difference-checked gradients", function()
        local R = require("tide.nn._rnn")
        tide.manual_seed(4)
        local T, B, H, P = 3, 2, 3, 2
        local function r(...)
            return tide.randn({ ... }, { dtype = "float64" }):requires_grad_(true)
        end
        for _, rev in ipairs({ false, true }) do
            assert.is_true(gradcheck(function(gi, w, whr, s0)
                return R.layer("lstm", gi, w, nil, s0, rev, whr)
            end, { r(T, B, 4 * H), r(4 * H, P), r(P, H), r(B, P + H) }))
        end
        -- b_hh given with w_hr joins gi
        assert.is_true(gradcheck(function(gi, w, b, whr, s0)
            return R.layer("lstm", gi, w, b, s0, false, whr)
        end, { r(T, B, 4 * H), r(4 * H, P), r(4 * H), r(P, H), r(B, P + H) }))
    end)
    it("raises on a bad proj_size and state shapes at the caller's line", function()
        raises_here("LSTM: proj_size 3 must be smaller than hidden_size 3 %(0 turns the " ..
            "projection off%)", function()
                nn.LSTM(4, 3, { proj_size = 3 })
            end)
        raises_here("LSTM: expected proj_size to be an integer >= 0, got %-1", function()
            nn.LSTM(4, 3, { proj_size = -1 })
        end)
        raises_here('GRU: unknown option "proj_size"', function()
            nn.GRU(4, 3, { proj_size = 2 })
        end)
        local m = nn.LSTM(4, 3, { proj_size = 2 })
        raises_here("LSTM: expected h0 of shape {1, 2, 2}, got {1, 2, 3}", function()
            m(tide.randn(5, 2, 4), { tide.zeros(1, 2, 3), tide.zeros(1, 2, 3) })
        end)
        raises_here("LSTM: expected c0 of shape {1, 2, 3}, got {1, 2, 2}", function()
            m(tide.randn(5, 2, 4), { tide.zeros(1, 2, 2), tide.zeros(1, 2, 2) })
        end)
    end)
end)

describe("sequence-model options on the GPU #cuda", function()
    local function gpu_it(name, f)
        it(name, function()
            if not tide.cuda.is_available() then
                pending("no CUDA device")
                return
            end
            f()
        end)
    end
    gpu_it("MultiheadAttention's options match PyTorch on cuda:0", function()
        for _, name in ipairs(MHA_CASES) do
            check_case(name, nn.MultiheadAttention, run_mha, "cuda:0")
        end
    end)
    gpu_it("LSTM's proj_size matches PyTorch on cuda:0", function()
        check_case("lstm_proj_deep_bi", nn.LSTM, run_lstm, "cuda:0")
        check_case("lstm_proj_bf_nobias", nn.LSTM, run_lstm, "cuda:0")
    end)
end)
