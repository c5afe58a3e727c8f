-- The full nn.Transformer model against PyTorch 1.13 (float64, dropout 0): attributes, parameter
-- names and order, outputs and input gradients with every mask, batch_first + norm_first +
-- "gelu", custom_encoder / custom_decoder, TransformerDecoder with a final norm, and the errors.
-- Every parameter is set in both from one formula (names sorted, the i-th filled with
-- sin(k * 0.37 + i * 1.3) / 2, as spec/attention_values_spec.lua), every input is
-- cos(k * 0.53 + s); E holds what PyTorch printed (/tmp script, not kept). d_model 4, 2 heads,
-- dim_feedforward 6, S = 3 source and T = 2 target positions, N = 2.
local E = {
  names = {"encoder.layers.0.self_attn.in_proj_weight","encoder.layers.0.self_attn.in_proj_bias",
        "encoder.layers.0.self_attn.out_proj.weight","encoder.layers.0.self_attn.out_proj.bias",
        "encoder.layers.0.linear1.weight","encoder.layers.0.linear1.bias",
        "encoder.layers.0.linear2.weight","encoder.layers.0.linear2.bias",
        "encoder.layers.0.norm1.weight","encoder.layers.0.norm1.bias",
        "encoder.layers.0.norm2.weight","encoder.layers.0.norm2.bias",
        "encoder.layers.1.self_attn.in_proj_weight","encoder.layers.1.self_attn.in_proj_bias",
        "encoder.layers.1.self_attn.out_proj.weight","encoder.layers.1.self_attn.out_proj.bias",
        "encoder.layers.1.linear1.weight","encoder.layers.1.linear1.bias",
        "encoder.layers.1.linear2.weight","encoder.layers.1.linear2.bias",
        "encoder.layers.1.norm1.weight","encoder.layers.1.norm1.bias",
        "encoder.layers.1.norm2.weight","encoder.layers.1.norm2.bias","encoder.norm.weight",
        "encoder.norm.bias","decoder.layers.0.self_attn.in_proj_weight",
        "decoder.layers.0.self_attn.in_proj_bias","decoder.layers.0.self_attn.out_proj.weight",
        "decoder.layers.0.self_attn.out_proj.bias",
        "decoder.layers.0.multihead_attn.in_proj_weight",
        "decoder.layers.0.multihead_attn.in_proj_bias",
        "decoder.layers.0.multihead_attn.out_proj.weight",
        "decoder.layers.0.multihead_attn.out_proj.bias","decoder.layers.0.linear1.weight",
        "decoder.layers.0.linear1.bias","decoder.layers.0.linear2.weight",
        "decoder.layers.0.linear2.bias","decoder.layers.0.norm1.weight",
        "decoder.layers.0.norm1.bias","decoder.layers.0.norm2.weight",
        "decoder.layers.0.norm2.bias","decoder.layers.0.norm3.weight",
        "decoder.layers.0.norm3.bias","decoder.layers.1.self_attn.in_proj_weight",
        "decoder.layers.1.self_attn.in_proj_bias","decoder.layers.1.self_attn.out_proj.weight",
        "decoder.layers.1.self_attn.out_proj.bias",
        "decoder.layers.1.multihead_attn.in_proj_weight",
        "decoder.layers.1.multihead_attn.in_proj_bias",
        "decoder.layers.1.multihead_attn.out_proj.weight",
        "decoder.layers.1.multihead_attn.out_proj.bias","decoder.layers.1.linear1.weight",
        "decoder.layers.1.linear1.bias","decoder.layers.1.linear2.weight",
        "decoder.layers.1.linear2.bias","decoder.layers.1.norm1.weight",
        "decoder.layers.1.norm1.bias","decoder.layers.1.norm2.weight",
        "decoder.layers.1.norm2.bias","decoder.layers.1.norm3.weight",
        "decoder.layers.1.norm3.bias","decoder.norm.weight","decoder.norm.bias"},
  masks = {out = {-0.669747827,-0.0918042027,-0.549482887,-0.420799747,-0.662702386,-0.0877422299,
        -0.547566148,-0.412783817,-0.665811799,-0.0896342741,-0.548544998,-0.416629242,
        -0.667219551,-0.0910222163,-0.549292496,-0.419229444}, gsrc = {-0.000159211685,
        6.15830697e-05,-0.000315730617,0.00130336357,0,0,0,0,-0.00303533829,-0.00107272618,
        0.00228232451,-3.81631084e-05,-0.00153138854,-0.000594845907,-0.00121954643,0.00289901537,
        0,0,0,0,0.00776306795,0.00266711018,-0.00455196499,-0.00064789994}, gtgt = {0.00030936649,
        -0.000547632686,0.000499212483,0.000354295311,-0.00328429341,0.00194021082,-0.0022528934,
        0.00101841499,-0.000600284458,-0.00187740762,0.00185204151,-0.00627352305,0.000848584211,
        0.000126810032,0.00123905415,-0.0022144484}},
  plain = {out = {-0.660973391,-0.0882430475,-0.548133228,-0.413586009,-0.669742765,-0.0901048996,
        -0.548390776,-0.417820398,-0.664173911,-0.0888712848,-0.54821046,-0.41507288,-0.658947991,
        -0.0878173788,-0.548052492,-0.412569128}},
  bf = {out = {0.181959751,0.376037376,-0.548794461,0.0889783895,0.0156248664,0.463134112,
        -0.647267729,0.29517772,0.162195201,0.434034866,-0.478455343,-0.00824503144,0.178006251,
        0.374407973,-0.559455806,0.105123668}},
  custom_names = {"encoder.layers.0.self_attn.in_proj_weight",
        "encoder.layers.0.self_attn.in_proj_bias","encoder.layers.0.self_attn.out_proj.weight",
        "encoder.layers.0.self_attn.out_proj.bias","encoder.layers.0.linear1.weight",
        "encoder.layers.0.linear1.bias","encoder.layers.0.linear2.weight",
        "encoder.layers.0.linear2.bias","encoder.layers.0.norm1.weight",
        "encoder.layers.0.norm1.bias","encoder.layers.0.norm2.weight",
        "encoder.layers.0.norm2.bias","decoder.layers.0.self_attn.in_proj_weight",
        "decoder.layers.0.self_attn.in_proj_bias","decoder.layers.0.self_attn.out_proj.weight",
        "decoder.layers.0.self_attn.out_proj.bias",
        "decoder.layers.0.multihead_attn.in_proj_weight",
        "decoder.layers.0.multihead_attn.in_proj_bias",
        "decoder.layers.0.multihead_attn.out_proj.weight",
        "decoder.layers.0.multihead_attn.out_proj.bias","decoder.layers.0.linear1.weight",
        "decoder.layers.0.linear1.bias","decoder.layers.0.linear2.weight",
        "decoder.layers.0.linear2.bias","decoder.layers.0.norm1.weight",
        "decoder.layers.0.norm1.bias","decoder.layers.0.norm2.weight",
        "decoder.layers.0.norm2.bias","decoder.layers.0.norm3.weight",
        "decoder.layers.0.norm3.bias","decoder.layers.1.self_attn.in_proj_weight",
        "decoder.layers.1.self_attn.in_proj_bias","decoder.layers.1.self_attn.out_proj.weight",
        "decoder.layers.1.self_attn.out_proj.bias",
        "decoder.layers.1.multihead_attn.in_proj_weight",
        "decoder.layers.1.multihead_attn.in_proj_bias",
        "decoder.layers.1.multihead_attn.out_proj.weight",
        "decoder.layers.1.multihead_attn.out_proj.bias","decoder.layers.1.linear1.weight",
        "decoder.layers.1.linear1.bias","decoder.layers.1.linear2.weight",
        "decoder.layers.1.linear2.bias","decoder.layers.1.norm1.weight",
        "decoder.layers.1.norm1.bias","decoder.layers.1.norm2.weight",
        "decoder.layers.1.norm2.bias","decoder.layers.1.norm3.weight",
        "decoder.layers.1.norm3.bias","decoder.norm.weight","decoder.norm.bias"},
  custom = {out = {-0.697861012,-0.101667564,-0.551074589,-0.437839293,-0.713603578,-0.10663034,
        -0.550987555,-0.445203159,-0.712056038,-0.106430629,-0.551130659,-0.444886245,
        -0.700535976,-0.10271358,-0.551177745,-0.439421931}},
  decoder = {out = {-0.685112894,-0.0845323738,-0.541907064,-0.407328284,-0.697628153,
        -0.0869423015,-0.542140027,-0.412985177,-0.709781441,-0.0893230789,-0.542070616,
        -0.41792725,-0.670587519,-0.0827199192,-0.542157675,-0.402271886}},
}

local tide = require("tide")
local nn = tide.nn
local unpack = table.unpack or unpack

local function fill(n, i)
    local t = {}
    for k = 0, n - 1 do
        t[k + 1] = math.sin(k * 0.37 + i * 1.3) * 0.5
    end
    return t
end

local function inp(shape, s, grad)
    local n = 1
    for _, d in ipairs(shape) do
        n = n * d
    end
    local t = {}
    for k = 0, n - 1 do
        t[k + 1] = math.cos(k * 0.53 + s)
    end
    local x = tide.tensor(t, { dtype = "float64" }):view(unpack(shape))
    return grad and x:requires_grad_(true) or x
end

local function bools(rows)
    return tide.tensor(rows, { dtype = "bool" })
end

-- the parameters' names in order; each filled with fill(n, i), i its place among the names sorted
local function setp(m)
    m:double()
    local names, sorted, byname = {}, {}, {}
    for i, np in ipairs(m:named_parameters()) do
        names[i], sorted[i], byname[np[1]] = np[1], np[1], np[2]
    end
    table.sort(sorted)
    tide.no_grad(function()
        for i, name in ipairs(sorted) do
            local p = byname[name]
            p:copy_(tide.tensor(fill(p:numel(), i), { dtype = "float64" }):view(p.shape))
        end
    end)
    return names
end

-- PyTorch's names with tide's 1-based lists (docs/API.md)
local function tide_names(names)
    local o = {}
    for i, n in ipairs(names) do
        o[i] = n:gsub("layers%.(%d+)", function(d)
            return string.format("layers.%d", tonumber(d) + 1) -- (5.3: "0" + 1 is 1.0)
        end)
    end
    return o
end

local function check(want, got, what)
    assert.is_not_nil(got, what)
    local flat = got:contiguous():view(-1)
    assert.are.equal(#want, flat:numel(), what .. ": size")
    for i, w in ipairs(want) do
        local g = flat[i]:item()
        assert.is_true(math.abs(g - w) <= 1e-6 * math.max(1, math.abs(w)),
            string.format("%s[%d]: %.9g, PyTorch %.9g", what, i, g, w))
    end
end

local kpm_s = { { false, false, true }, { true, false, false } }
local kpm_t = { { false, false }, { false, true } }
local am2b = { { false, true, false }, { false, false, true } }

local function model(opts)
    opts.d_model, opts.nhead, opts.dim_feedforward, opts.dropout = 4, 2, 6, 0
    return nn.Transformer(opts)
end

local function square(n)
    return nn.Transformer.generate_square_subsequent_mask(n, { dtype = "float64" })
end

describe("nn.Transformer against PyTorch 1.13", function()
    it("attributes: PyTorch's names and values", function()
        local m = model({ num_encoder_layers = 1, num_decoder_layers = 1 })
        assert.are.same({ 4, 2, false, true }, { m.d_model, m.nhead, m.batch_first, m.training })
        local e, d = m.encoder, m.decoder
        assert.are.same({ 1, true, true, true }, { e.num_layers, e.enable_nested_tensor,
            e.mask_check, e.training })
        assert.are.same({ 1, true }, { d.num_layers, d.training })
        -- the final norms: LayerNorm(d_model, eps = layer_norm_eps)
        assert.are.equal("LayerNorm", e.norm.__name)
        assert.are.equal("LayerNorm", d.norm.__name)
        assert.are.same({ 4 }, { unpack(d.norm.normalized_shape) })
        assert.are.same({ 1e-5, true }, { d.norm.eps, d.norm.elementwise_affine })
        assert.are.same({ true, false }, { model({ batch_first = true }).batch_first,
            model({ batch_first = false }).batch_first })
        -- a custom encoder built without a norm: PyTorch's norm is None
        local ce = nn.TransformerEncoder(nn.TransformerEncoderLayer(4, 2, { dim_feedforward = 6 }),
            1)
        assert.is_nil(ce.norm)
        assert.are.equal(ce, model({ custom_encoder = ce }).encoder)
    end)

    it("device and dtype (PyTorch's factory arguments, #13 and #14), layer_norm_eps", function()
        local function dtypes(m)
            local seen, n = {}, 0
            for _, np in ipairs(m:named_parameters()) do
                seen[np[2].dtype], n = true, n + 1
            end
            return seen, n
        end
        local m = model({ num_encoder_layers = 1, num_decoder_layers = 1, dtype = "float64",
            device = "cpu", layer_norm_eps = 1e-6 })
        local seen, n = dtypes(m)
        assert.are.same({ float64 = true }, seen)
        assert.are.equal(12 + 2 + 18 + 2, n) -- (PyTorch: 34 parameters)
        assert.are.same({ 1e-6, 1e-6, 1e-6 }, { m.encoder.norm.eps, m.decoder.norm.eps,
            m.decoder.layers[1].norm3.eps })
        local p = nn.Transformer(4, 2, 1, 1, 6, 0, "relu", nil, nil, 1e-5, false, false, "cpu",
            "float64")
        assert.are.same({ float64 = true }, (dtypes(p)))
        local l = nn.TransformerDecoderLayer(4, 2, { dim_feedforward = 6, dtype = "float64" })
        assert.are.same({ float64 = true }, (dtypes(nn.TransformerDecoder(l, 2))))
        local ok, err = pcall(nn.Transformer, { dtype = "int64" })
        assert.is_false(ok)
        assert.matches("tide: Transformer: dtype must be a floating%-point dtype", tostring(err))
    end)

    it("parameter names and order, every mask: outputs and input gradients", function()
        local m = model({ num_encoder_layers = 2, num_decoder_layers = 2 })
        assert.are.same(tide_names(E.names), setp(m))
        local src, tgt = inp({ 3, 2, 4 }, 1, true), inp({ 2, 2, 4 }, 2, true)
        local y = m(src, tgt, { src_mask = inp({ 3, 3 }, 4), tgt_mask = square(2),
            memory_mask = bools(am2b), src_key_padding_mask = bools(kpm_s),
            tgt_key_padding_mask = bools(kpm_t), memory_key_padding_mask = bools(kpm_s) })
        assert.are.same({ 2, 2, 4 }, { unpack(y.shape) })
        check(E.masks.out, y, "out")
        y:mul(inp({ 2, 2, 4 }, 7)):sum():backward()
        check(E.masks.gsrc, src.grad, "src.grad")
        check(E.masks.gtgt, tgt.grad, "tgt.grad")
        check(E.plain.out, m(inp({ 3, 2, 4 }, 1), inp({ 2, 2, 4 }, 2)), "no masks")
    end)

    it("batch_first, norm_first and activation \"gelu\"", function()
        local m = model({ num_encoder_layers = 1, num_decoder_layers = 1, activation = "gelu",
            batch_first = true, norm_first = true })
        setp(m)
        check(E.bf.out, m(inp({ 2, 3, 4 }, 1), inp({ 2, 2, 4 }, 2), { tgt_mask = square(2),
            src_key_padding_mask = bools(kpm_s) }), "out")
    end)

    it("custom_encoder and custom_decoder (a TransformerDecoder with a final norm)", function()
        local o = { dim_feedforward = 6, dropout = 0 }
        local ce = nn.TransformerEncoder(nn.TransformerEncoderLayer(4, 2, o), 1)
        local cd = nn.TransformerDecoder(nn.TransformerDecoderLayer(4, 2, o), 2,
            { norm = nn.LayerNorm(4) })
        local m = model({ custom_encoder = ce, custom_decoder = cd })
        assert.are.equal(cd, m.decoder)
        assert.are.same(tide_names(E.custom_names), setp(m))
        check(E.custom.out, m(inp({ 3, 2, 4 }, 1), inp({ 2, 2, 4 }, 2),
            { memory_mask = inp({ 2, 3 }, 8) }), "out")
        check(E.decoder.out, cd(inp({ 2, 2, 4 }, 1), inp({ 3, 2, 4 }, 2), square(2)), "decoder")
    end)

    it("unbatched src [S, E] and tgt [T, E] give [T, E] (as PyTorch's)", function()
        local m = model({ num_encoder_layers = 1, num_decoder_layers = 1 })
        m:double()
        local y = m(inp({ 3, 4 }, 1), inp({ 2, 4 }, 2))
        assert.are.same({ 2, 4 }, { unpack(y.shape) })
    end)

    it("PyTorch's errors: batch numbers, d_model", function()
        local m = model({ num_encoder_layers = 1, num_decoder_layers = 1 })
        m:double()
        local function raises(pattern, s, t)
            local ok, err = pcall(m, inp(s, 1), inp(t, 2))
            assert.is_false(ok)
            assert.matches("tide: Transformer: " .. pattern, tostring(err))
        end
        raises("the batch number of src and tgt must be equal", { 3, 2, 4 }, { 2, 3, 4 })
        raises("the feature number of src and tgt must be equal to d_model", { 3, 2, 4 },
            { 2, 2, 5 })
        raises("the feature number of src and tgt must be equal to d_model", { 3, 2, 5 },
            { 2, 2, 4 })
    end)
end)
