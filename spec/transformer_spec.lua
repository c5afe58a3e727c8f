-- nn.TransformerDecoderLayer, nn.TransformerDecoder and nn.Transformer (issue 27) against PyTorch
-- 1.13 (Debian's python3-torch): spec/fixtures/transformer_torch.lua, made by
-- spec/fixtures/make_transformer.py, holds each module's parameters (PyTorch's names), inputs,
-- masks, outputs and the gradients of sum_k sum(outputs[k] * weights[k]).
local tide = require("tide")
local nn = require("tide.nn")
local fx = require("spec.support.fixtures")
local REF = dofile("spec/fixtures/transformer_torch.lua")
local from_torch = nn.utils.state_dict_from_torch

local function T(r, device)
    return tide.tensor(r.data, { dtype = "float32", device = device }):view(r.shape)
end

local function close(got, want, what, tol)
    fx.close(got, want, tol or 2e-5, what)
end

local function raises_here(pattern, f, ...)
    local ok, err = pcall(f, ...)
    assert.is_false(ok)
    assert.matches("transformer_spec%.lua:%d+: tide: " .. pattern, tostring(err))
end

local function copy(t, except)
    local o = {}
    for k, v in pairs(t) do
        if k ~= except then
            o[k] = v
        end
    end
    return o
end

-- the call's masks from the fixture: float ones as tensors, bool ones from Lua booleans
local function call_opts(c, device)
    local o = {}
    for k, v in pairs(c.call) do
        if v.shape then
            o[k] = T(v, device)
        else
            o[k] = tide.tensor(v, { dtype = "bool", device = device })
        end
    end
    return o
end

-- builds the module, checks its parameter names are PyTorch's (up to tide's 1-based lists) in
-- PyTorch's order, loads PyTorch's values, runs, checks outputs and gradients
local function check_case(name, ctor, device)
    local c = REF[name]
    local m = ctor(c)
    local names = {}
    for i, np in ipairs(m:named_parameters()) do
        names[i] = np[1]
    end
    local want = {}
    for i, k in ipairs(c.param_names) do
        want[i] = (k:gsub("%.(%d+)%.", function(d)
            return "." .. (tonumber(d) + 1) .. "."
        end))
    end
    assert.are.same(want, names, name .. ": parameter names")
    local sd = {}
    for k, v in pairs(c.params) do
        sd[k] = T(v)
    end
    m:load_state_dict(from_torch(sd))
    if device then
        m:to(device)
    end
    local inputs = {}
    for i, v in ipairs(c.inputs) do
        inputs[i] = T(v, device):requires_grad_(true)
    end
    local out = m(inputs[1], inputs[2], call_opts(c, device))
    close(out, c.outputs[1], name .. " output")
    out:mul(T(c.weights[1], device)):sum():backward()
    local params = m:named_parameters()
    for k, g in pairs(from_torch(c.grads.params)) do
        assert.is_not_nil(params[k], name .. ": parameter " .. k)
        close(params[k].grad, g, name .. " grad " .. k)
    end
    for i, g in ipairs(c.grads.inputs) do
        close(inputs[i].grad, g, name .. " input grad " .. i)
    end
    return m
end

local function layer_ctor(c)
    return nn.TransformerDecoderLayer(c.ctor[1], c.ctor[2], copy(c.opts))
end

local function decoder_ctor(c)
    local layer = nn.TransformerDecoderLayer(c.ctor[1], c.ctor[2], copy(c.opts, "num_layers"))
    return nn.TransformerDecoder(layer, c.opts.num_layers, { norm = nn.LayerNorm(c.ctor[1]) })
end

local function transformer_ctor(c)
    return nn.Transformer(copy(c.opts))
end

describe("nn.TransformerDecoderLayer and nn.TransformerDecoder", function()
    it("match PyTorch: post-norm relu with a float tgt_mask and memory padding", function()
        check_case("decoder_layer", layer_ctor)
    end)
    it("match PyTorch: pre-norm gelu batch_first, bool masks, float memory_mask, eps", function()
        check_case("decoder_layer_pre_gelu_bf", layer_ctor)
    end)
    it("match PyTorch: a decoder of two layers and a final norm", function()
        check_case("decoder", decoder_ctor)
    end)
    it("take a tensor third argument as tgt_mask, and tgt_is_causal as the causal mask", function()
        tide.manual_seed(4)
        local layer = nn.TransformerDecoderLayer(8, 2, { dim_feedforward = 16, dropout = 0 })
        local dec = nn.TransformerDecoder(layer, 2)
        local tgt, mem = tide.randn(5, 2, 8), tide.randn(3, 2, 8)
        local mask = nn.Transformer.generate_square_subsequent_mask(5)
        local a = dec(tgt, mem, { tgt_mask = mask })
        assert.is_true(fx.same(a, dec(tgt, mem, mask)))
        assert.is_true(fx.same(a, dec(tgt, mem, { tgt_is_causal = true }), 1e-6))
        assert.is_false(fx.same(a, dec(tgt, mem), 1e-3))
        -- unbatched [T, E] and [S, E]
        local u = dec(tgt:select(2, 1), mem:select(2, 1), mask)
        assert.is_true(fx.same(u, a:select(2, 1), 1e-5))
    end)
    it("take activation as \"relu\", \"gelu\", a function or a module (encoder layers too)",
        function()
            tide.manual_seed(6)
            local tgt, mem = tide.randn(3, 2, 8), tide.randn(4, 2, 8)
            for _, cls in ipairs({ "TransformerDecoderLayer", "TransformerEncoderLayer" }) do
                local function make(act)
                    tide.manual_seed(2)
                    return nn[cls](8, 2, { dim_feedforward = 16, dropout = 0, activation = act })
                end
                local function run(l)
                    return cls == "TransformerDecoderLayer" and l(tgt, mem) or l(tgt)
                end
                local gelu = run(make("gelu"))
                local mod = make(nn.GELU())
                assert.is_true(fx.same(gelu, run(mod), 1e-6), cls)
                assert.is_not_nil(mod:named_children()["activation"])
                local fn = run(make(function(x)
                    return x:gelu()
                end))
                assert.is_true(fx.same(gelu, fn, 1e-6), cls)
                assert.is_false(fx.same(gelu, run(make("relu")), 1e-4), cls)
            end
        end)
    it("copies the layer (same values, separate parameters), as PyTorch's deep copies", function()
        local layer = nn.TransformerDecoderLayer(8, 2, { dim_feedforward = 16 })
        local dec = nn.TransformerDecoder(layer, 2)
        local a, b = dec.layers[1].multihead_attn.in_proj_weight,
            dec.layers[2].multihead_attn.in_proj_weight
        assert.is_true(fx.same(a, b))
        assert.is_false(rawequal(a, b))
        assert.is_not_nil(dec:named_parameters()["layers.2.norm3.weight"])
        local n = 0
        for _, l in ipairs(dec.layers) do
            n = n + 1
            assert.are.equal("TransformerDecoderLayer", l.__name)
        end
        assert.are.equal(2, n)
    end)
    it("raises on bad options and arguments, naming the module", function()
        raises_here('TransformerDecoderLayer: unknown option "dim_feed_forward"', function()
            nn.TransformerDecoderLayer(8, 2, { dim_feed_forward = 16 })
        end)
        raises_here('TransformerDecoderLayer: activation must be "relu", "gelu", a function ' ..
            "or a module, got tanh", function()
                nn.TransformerDecoderLayer(8, 2, { activation = "tanh" })
            end)
        local layer = nn.TransformerDecoderLayer(8, 2, { dim_feedforward = 16 })
        raises_here("TransformerDecoderLayer: expected memory %(the encoder's output%) to be a " ..
            "tensor, got nil", function()
                layer(tide.randn(3, 2, 8))
            end)
        raises_here('TransformerDecoderLayer: unknown option "src_mask"', function()
            layer(tide.randn(3, 2, 8), tide.randn(4, 2, 8), { src_mask = tide.zeros(3, 3) })
        end)
        raises_here("TransformerDecoder: expected an nn.TransformerDecoderLayer, got " ..
            "TransformerEncoderLayer", function()
                nn.TransformerDecoder(nn.TransformerEncoderLayer(8, 2), 2)
            end)
        raises_here('TransformerDecoder: unknown option "norm_first"', function()
            nn.TransformerDecoder(layer, 2, { norm_first = true })
        end)
    end)
end)

describe("nn.Transformer", function()
    it("matches PyTorch: 2 + 2 layers, causal tgt_mask, src and memory padding", function()
        check_case("transformer", transformer_ctor)
    end)
    it("matches PyTorch: pre-norm gelu batch_first, float src_mask, bool masks", function()
        check_case("transformer_pre_gelu_bf", transformer_ctor)
    end)
    it("initialises every matrix xavier-uniform, as PyTorch's _reset_parameters", function()
        tide.manual_seed(7)
        local m = nn.Transformer({ d_model = 8, nhead = 2, num_encoder_layers = 1,
            num_decoder_layers = 1, dim_feedforward = 32 })
        local np = m:named_parameters()
        -- linear1.weight [32, 8]: xavier's bound sqrt(6 / 40) = 0.387 is above the default
        -- init's 1/sqrt(8) = 0.354, so values beyond the latter show xavier ran
        for _, k in ipairs({ "encoder.layers.1.linear1.weight", "decoder.layers.1.linear1.weight",
            "decoder.layers.1.multihead_attn.in_proj_weight" }) do
            local w = np[k]
            local bound = math.sqrt(6 / (w:size(1) + w:size(2)))
            local mx = w:abs():max():item()
            assert.is_true(mx <= bound, k)
            if k:match("linear1") then
                assert.is_true(mx > 1 / math.sqrt(8), k)
            end
        end
        assert.are.equal(0, np["decoder.layers.1.self_attn.in_proj_bias"]:abs():sum():item())
        assert.are.equal(8, np["encoder.norm.weight"]:sum():item()) -- LayerNorm's ones
        assert.is_not_nil(np["decoder.norm.bias"])
    end)
    it("generate_square_subsequent_mask: float -inf above the diagonal, 0 elsewhere", function()
        local mk = nn.Transformer.generate_square_subsequent_mask(3)
        assert.are.equal("float32", mk.dtype)
        local inf = math.huge
        assert.are.same({ { 0, -inf, -inf }, { 0, 0, -inf }, { 0, 0, 0 } }, mk:totable())
        local m = nn.Transformer({ d_model = 4, nhead = 1, num_encoder_layers = 1,
            num_decoder_layers = 1, dim_feedforward = 8 })
        assert.are.same(mk:totable(), m:generate_square_subsequent_mask(3):totable())
        local d = nn.Transformer.generate_square_subsequent_mask(2, { dtype = "float64",
            device = "cpu:1" })
        assert.are.equal("float64", d.dtype)
        assert.are.equal("cpu:1", tostring(d.device))
    end)
    it("uses custom_encoder and custom_decoder as given", function()
        local enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(4, 1, { dim_feedforward = 8,
            dropout = 0 }), 1)
        local m = nn.Transformer({ d_model = 4, nhead = 1, num_decoder_layers = 1,
            dim_feedforward = 8, dropout = 0, custom_encoder = enc })
        assert.is_true(rawequal(m.encoder, enc))
        assert.is_nil(m:named_parameters()["encoder.norm.weight"])
        local src, tgt = tide.randn(3, 2, 4), tide.randn(2, 2, 4)
        local y = m(src, tgt)
        assert.is_true(fx.same(y, m.decoder(tgt, enc(src)), 1e-6))
    end)
    it("raises on mismatched inputs and bad options, naming the module and the fix", function()
        raises_here('Transformer: unknown option "num_layers"', function()
            nn.Transformer({ num_layers = 2 })
        end)
        local m = nn.Transformer({ d_model = 4, nhead = 2, num_encoder_layers = 1,
            num_decoder_layers = 1, dim_feedforward = 8 })
        raises_here("Transformer: the batch number of src and tgt must be equal, got src " ..
            "{3, 2, 4} and tgt {3, 5, 4}", function()
                m(tide.randn(3, 2, 4), tide.randn(3, 5, 4))
            end)
        raises_here("Transformer: the feature number of src and tgt must be equal to d_model " ..
            "4, got src {3, 2, 4} and tgt {3, 2, 6}", function()
                m(tide.randn(3, 2, 4), tide.randn(3, 2, 6))
            end)
        -- the masks go positionally too, in PyTorch's order (src_mask, tgt_mask, ...)
        m:eval()
        local src, tgt = tide.randn(3, 2, 4), tide.randn(3, 2, 4)
        local causal = nn.Transformer.generate_square_subsequent_mask(3)
        assert.are.same(m(src, tgt, { tgt_mask = causal }):totable(),
            m(src, tgt, nil, causal):totable())
        m:train()
        raises_here("Transformer: expected custom_encoder to be a Module, got string", function()
            nn.Transformer({ custom_encoder = "enc" })
        end)
    end)
end)

describe("nn.Transformer on the GPU #cuda", function()
    it("matches PyTorch on cuda:0", function()
        if not tide.cuda.is_available() then
            pending("no CUDA device")
            return
        end
        check_case("decoder_layer", layer_ctor, "cuda:0")
        check_case("transformer_pre_gelu_bf", transformer_ctor, "cuda:0")
    end)
end)
