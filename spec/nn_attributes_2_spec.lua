-- nn modules' public attributes against PyTorch 1.13's (part 2: recurrent, attention,
-- transformer, dropout, activation, reshaping, upsampling and distance modules). Each case: the
-- tide constructor and the attributes PyTorch's module has (vars(m) without "_" names and
-- training, plus its parameters and buffers), as PyTorch prints them; dims given 1-based in tide
-- (docs/API.md) are listed 1-based. NIL: PyTorch's None (tide's nil); FN: a function; T{...}: a
-- tensor of that shape.
local tide = require("tide")
local nn = tide.nn

local NIL, FN = {}, {}
local function T(shape)
    return { shape = shape }
end

local function dims(t)
    local s = {}
    for i = 1, t:dim() do
        s[i] = t:size(i)
    end
    return s
end

local CASES = {
    -- nn.RNN(3, 4)
    { "nn.RNN(3, 4)", {
        batch_first = false, bias = true, bias_hh_l0 = T{4}, bias_ih_l0 = T{4},
        bidirectional = false, dropout = 0.0, hidden_size = 4, input_size = 3, mode = "RNN_TANH",
        nonlinearity = "tanh", num_layers = 1, proj_size = 0, weight_hh_l0 = T{4, 4},
        weight_ih_l0 = T{4, 3},
    } },
    -- nn.RNN(3, 4, num_layers=2, nonlinearity='relu', bias=False, batch_first=True, dropout=0.5, b
    { "nn.RNN(3, 4, {num_layers = 2, nonlinearity = 'relu', bias = false, " ..
        "batch_first = true, dropout = 0.5, bidirectional = true})", {
        batch_first = true, bias = false, bidirectional = true, dropout = 0.5, hidden_size = 4,
        input_size = 3, mode = "RNN_RELU", nonlinearity = "relu", num_layers = 2, proj_size = 0,
        weight_hh_l0 = T{4, 4}, weight_hh_l0_reverse = T{4, 4}, weight_hh_l1 = T{4, 4},
        weight_hh_l1_reverse = T{4, 4}, weight_ih_l0 = T{4, 3}, weight_ih_l0_reverse = T{4, 3},
        weight_ih_l1 = T{4, 8}, weight_ih_l1_reverse = T{4, 8},
    } },
    -- nn.LSTM(3, 4)
    { "nn.LSTM(3, 4)", {
        batch_first = false, bias = true, bias_hh_l0 = T{16}, bias_ih_l0 = T{16},
        bidirectional = false, dropout = 0.0, hidden_size = 4, input_size = 3, mode = "LSTM",
        num_layers = 1, proj_size = 0, weight_hh_l0 = T{16, 4}, weight_ih_l0 = T{16, 3},
    } },
    -- nn.LSTM(3, 4, num_layers=2, proj_size=2, batch_first=True)
    { "nn.LSTM(3, 4, {num_layers = 2, proj_size = 2, batch_first = true})", {
        batch_first = true, bias = true, bias_hh_l0 = T{16}, bias_hh_l1 = T{16},
        bias_ih_l0 = T{16}, bias_ih_l1 = T{16}, bidirectional = false, dropout = 0.0,
        hidden_size = 4, input_size = 3, mode = "LSTM", num_layers = 2, proj_size = 2,
        weight_hh_l0 = T{16, 2}, weight_hh_l1 = T{16, 2}, weight_hr_l0 = T{2, 4},
        weight_hr_l1 = T{2, 4}, weight_ih_l0 = T{16, 3}, weight_ih_l1 = T{16, 2},
    } },
    -- nn.GRU(3, 4)
    { "nn.GRU(3, 4)", {
        batch_first = false, bias = true, bias_hh_l0 = T{12}, bias_ih_l0 = T{12},
        bidirectional = false, dropout = 0.0, hidden_size = 4, input_size = 3, mode = "GRU",
        num_layers = 1, proj_size = 0, weight_hh_l0 = T{12, 4}, weight_ih_l0 = T{12, 3},
    } },
    -- nn.GRU(3, 4, bidirectional=True, bias=False)
    { "nn.GRU(3, 4, {bidirectional = true, bias = false})", {
        batch_first = false, bias = false, bidirectional = true, dropout = 0.0, hidden_size = 4,
        input_size = 3, mode = "GRU", num_layers = 1, proj_size = 0, weight_hh_l0 = T{12, 4},
        weight_hh_l0_reverse = T{12, 4}, weight_ih_l0 = T{12, 3}, weight_ih_l0_reverse = T{12, 3},
    } },
    -- nn.RNNCell(3, 4)
    { "nn.RNNCell(3, 4)", {
        bias = true, bias_hh = T{4}, bias_ih = T{4}, hidden_size = 4, input_size = 3,
        nonlinearity = "tanh", weight_hh = T{4, 4}, weight_ih = T{4, 3},
    } },
    -- nn.RNNCell(3, 4, bias=False, nonlinearity='relu')
    { "nn.RNNCell(3, 4, {bias = false, nonlinearity = 'relu'})", {
        bias = false, bias_hh = NIL, bias_ih = NIL, hidden_size = 4, input_size = 3,
        nonlinearity = "relu", weight_hh = T{4, 4}, weight_ih = T{4, 3},
    } },
    -- nn.LSTMCell(3, 4)
    { "nn.LSTMCell(3, 4)", {
        bias = true, bias_hh = T{16}, bias_ih = T{16}, hidden_size = 4, input_size = 3,
        weight_hh = T{16, 4}, weight_ih = T{16, 3},
    } },
    -- nn.LSTMCell(3, 4, bias=False)
    { "nn.LSTMCell(3, 4, {bias = false})", {
        bias = false, bias_hh = NIL, bias_ih = NIL, hidden_size = 4, input_size = 3,
        weight_hh = T{16, 4}, weight_ih = T{16, 3},
    } },
    -- nn.GRUCell(3, 4)
    { "nn.GRUCell(3, 4)", {
        bias = true, bias_hh = T{12}, bias_ih = T{12}, hidden_size = 4, input_size = 3,
        weight_hh = T{12, 4}, weight_ih = T{12, 3},
    } },
    -- nn.GRUCell(3, 4, bias=False)
    { "nn.GRUCell(3, 4, {bias = false})", {
        bias = false, bias_hh = NIL, bias_ih = NIL, hidden_size = 4, input_size = 3,
        weight_hh = T{12, 4}, weight_ih = T{12, 3},
    } },
    -- nn.MultiheadAttention(8, 2)
    { "nn.MultiheadAttention(8, 2)", {
        add_zero_attn = false, batch_first = false, bias_k = NIL, bias_v = NIL, dropout = 0.0,
        embed_dim = 8, head_dim = 4, in_proj_bias = T{24}, in_proj_weight = T{24, 8},
        k_proj_weight = NIL, kdim = 8, num_heads = 2, q_proj_weight = NIL, v_proj_weight = NIL,
        vdim = 8,
    } },
    -- nn.MultiheadAttention(8, 2, dropout=0.1, bias=False, add_bias_kv=True, add_zero_attn=True, k
    { "nn.MultiheadAttention(8, 2, {dropout = 0.1, bias = false, add_bias_kv = " ..
        "true, add_zero_attn = true, kdim = 4, vdim = 6, batch_first = true})", {
        add_zero_attn = true, batch_first = true, bias_k = T{1, 1, 8}, bias_v = T{1, 1, 8},
        dropout = 0.1, embed_dim = 8, head_dim = 4, in_proj_bias = NIL, in_proj_weight = NIL,
        k_proj_weight = T{8, 4}, kdim = 4, num_heads = 2, q_proj_weight = T{8, 8},
        v_proj_weight = T{8, 6}, vdim = 6,
    } },
    -- nn.Transformer(d_model=8, nhead=2, num_encoder_layers=1, num_decoder_layers=1, dim_feedforwa
    { "nn.Transformer({d_model = 8, nhead = 2, num_encoder_layers = 1, " ..
        "num_decoder_layers = 1, dim_feedforward = 16})", {
        batch_first = false, d_model = 8, nhead = 2,
    } },
    -- nn.Transformer(d_model=8, nhead=2, num_encoder_layers=2, num_decoder_layers=1, dim_feedforwa
    { "nn.Transformer({d_model = 8, nhead = 2, num_encoder_layers = 2, " ..
        "num_decoder_layers = 1, dim_feedforward = 16, batch_first = true, " ..
        "norm_first = true})", {
        batch_first = true, d_model = 8, nhead = 2,
    } },
    -- nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16), 2)
    { "nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, {dim_feedforward = " ..
        "16}), 2)", {
        enable_nested_tensor = true, mask_check = true, norm = NIL, num_layers = 2,
    } },
    -- nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16), 1, norm=nn.LayerNorm(8), enable_
    { "nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, {dim_feedforward = " ..
        "16}), 1, {norm = nn.LayerNorm(8), enable_nested_tensor = false})", {
        enable_nested_tensor = false, mask_check = true, num_layers = 1,
    } },
    -- nn.TransformerDecoder(nn.TransformerDecoderLayer(8, 2, 16), 2)
    { "nn.TransformerDecoder(nn.TransformerDecoderLayer(8, 2, {dim_feedforward = " ..
        "16}), 2)", {
        norm = NIL, num_layers = 2,
    } },
    -- nn.TransformerDecoder(nn.TransformerDecoderLayer(8, 2, 16), 1, norm=nn.LayerNorm(8))
    { "nn.TransformerDecoder(nn.TransformerDecoderLayer(8, 2, {dim_feedforward = " ..
        "16}), 1, {norm = nn.LayerNorm(8)})", {
        num_layers = 1,
    } },
    -- nn.TransformerEncoderLayer(8, 2, 16)
    { "nn.TransformerEncoderLayer(8, 2, {dim_feedforward = 16})", {
        activation = FN, activation_relu_or_gelu = 1, norm_first = false,
    } },
    -- nn.TransformerEncoderLayer(8, 2, 16, dropout=0.2, activation='gelu', layer_norm_eps=1e-6, ba
    { "nn.TransformerEncoderLayer(8, 2, {dim_feedforward = 16, dropout = 0.2, " ..
        "activation = 'gelu', layer_norm_eps = 1e-6, batch_first = true, norm_first " ..
        "= true})", {
        activation = FN, activation_relu_or_gelu = 2, norm_first = true,
    } },
    -- nn.TransformerDecoderLayer(8, 2, 16)
    { "nn.TransformerDecoderLayer(8, 2, {dim_feedforward = 16})", {
        activation = FN, norm_first = false,
    } },
    -- nn.TransformerDecoderLayer(8, 2, 16, dropout=0.2, activation='gelu', layer_norm_eps=1e-6, ba
    { "nn.TransformerDecoderLayer(8, 2, {dim_feedforward = 16, dropout = 0.2, " ..
        "activation = 'gelu', layer_norm_eps = 1e-6, batch_first = true, norm_first " ..
        "= true})", {
        activation = FN, norm_first = true,
    } },
    -- nn.Dropout()
    { "nn.Dropout()", {
        inplace = false, p = 0.5,
    } },
    -- nn.Dropout(0.25, inplace=True)
    { "nn.Dropout(0.25, {inplace = true})", {
        inplace = true, p = 0.25,
    } },
    -- nn.Dropout1d()
    { "nn.Dropout1d()", {
        inplace = false, p = 0.5,
    } },
    -- nn.Dropout1d(0.25, inplace=True)
    { "nn.Dropout1d(0.25, {inplace = true})", {
        inplace = true, p = 0.25,
    } },
    -- nn.Dropout2d()
    { "nn.Dropout2d()", {
        inplace = false, p = 0.5,
    } },
    -- nn.Dropout2d(0.25, inplace=True)
    { "nn.Dropout2d(0.25, {inplace = true})", {
        inplace = true, p = 0.25,
    } },
    -- nn.Dropout3d()
    { "nn.Dropout3d()", {
        inplace = false, p = 0.5,
    } },
    -- nn.Dropout3d(0.25, inplace=True)
    { "nn.Dropout3d(0.25, {inplace = true})", {
        inplace = true, p = 0.25,
    } },
    -- nn.AlphaDropout()
    { "nn.AlphaDropout()", {
        inplace = false, p = 0.5,
    } },
    -- nn.AlphaDropout(0.25, inplace=True)
    { "nn.AlphaDropout(0.25, {inplace = true})", {
        inplace = true, p = 0.25,
    } },
    -- nn.FeatureAlphaDropout()
    { "nn.FeatureAlphaDropout()", {
        inplace = false, p = 0.5,
    } },
    -- nn.FeatureAlphaDropout(0.25, inplace=True)
    { "nn.FeatureAlphaDropout(0.25, {inplace = true})", {
        inplace = true, p = 0.25,
    } },
    -- nn.ELU()
    { "nn.ELU()", {
        alpha = 1.0, inplace = false,
    } },
    -- nn.ELU(0.5, True)
    { "nn.ELU(0.5, true)", {
        alpha = 0.5, inplace = true,
    } },
    -- nn.CELU()
    { "nn.CELU()", {
        alpha = 1.0, inplace = false,
    } },
    -- nn.CELU(0.5, True)
    { "nn.CELU(0.5, true)", {
        alpha = 0.5, inplace = true,
    } },
    -- nn.SELU()
    { "nn.SELU()", {
        inplace = false,
    } },
    -- nn.SELU(True)
    { "nn.SELU(true)", {
        inplace = true,
    } },
    -- nn.GELU()
    { "nn.GELU()", {
        approximate = "none",
    } },
    -- nn.GELU('tanh')
    { "nn.GELU('tanh')", {
        approximate = "tanh",
    } },
    -- nn.GLU()
    { "nn.GLU()", {
        dim = -1,
    } },
    -- nn.GLU(1)
    { "nn.GLU(2)", {
        dim = 2,
    } },
    -- nn.Hardshrink()
    { "nn.Hardshrink()", {
        lambd = 0.5,
    } },
    -- nn.Hardshrink(0.25)
    { "nn.Hardshrink(0.25)", {
        lambd = 0.25,
    } },
    -- nn.Hardsigmoid()
    { "nn.Hardsigmoid()", {
        inplace = false,
    } },
    -- nn.Hardsigmoid(True)
    { "nn.Hardsigmoid(true)", {
        inplace = true,
    } },
    -- nn.Hardswish()
    { "nn.Hardswish()", {
        inplace = false,
    } },
    -- nn.Hardswish(True)
    { "nn.Hardswish(true)", {
        inplace = true,
    } },
    -- nn.Hardtanh()
    { "nn.Hardtanh()", {
        inplace = false, max_val = 1.0, min_val = -1.0,
    } },
    -- nn.Hardtanh(-2.0, 3.0, True)
    { "nn.Hardtanh(-2.0, 3.0, true)", {
        inplace = true, max_val = 3.0, min_val = -2.0,
    } },
    -- nn.LeakyReLU()
    { "nn.LeakyReLU()", {
        inplace = false, negative_slope = 0.01,
    } },
    -- nn.LeakyReLU(0.2, True)
    { "nn.LeakyReLU(0.2, true)", {
        inplace = true, negative_slope = 0.2,
    } },
    -- nn.LogSigmoid()
    { "nn.LogSigmoid()", {

    } },
    -- nn.LogSoftmax()
    { "nn.LogSoftmax()", {
        dim = NIL,
    } },
    -- nn.LogSoftmax(1)
    { "nn.LogSoftmax(2)", {
        dim = 2,
    } },
    -- nn.Mish()
    { "nn.Mish()", {
        inplace = false,
    } },
    -- nn.Mish(True)
    { "nn.Mish(true)", {
        inplace = true,
    } },
    -- nn.PReLU()
    { "nn.PReLU()", {
        num_parameters = 1, weight = T{1},
    } },
    -- nn.PReLU(3, 0.1)
    { "nn.PReLU(3, 0.1)", {
        num_parameters = 3, weight = T{3},
    } },
    -- nn.RReLU()
    { "nn.RReLU()", {
        inplace = false, lower = 0.125, upper = 0.3333333333333333,
    } },
    -- nn.RReLU(0.1, 0.3, True)
    { "nn.RReLU(0.1, 0.3, true)", {
        inplace = true, lower = 0.1, upper = 0.3,
    } },
    -- nn.ReLU()
    { "nn.ReLU()", {
        inplace = false,
    } },
    -- nn.ReLU(True)
    { "nn.ReLU(true)", {
        inplace = true,
    } },
    -- nn.ReLU6()
    { "nn.ReLU6()", {
        inplace = false, max_val = 6.0, min_val = 0.0,
    } },
    -- nn.ReLU6(True)
    { "nn.ReLU6(true)", {
        inplace = true, max_val = 6.0, min_val = 0.0,
    } },
    -- nn.SiLU()
    { "nn.SiLU()", {
        inplace = false,
    } },
    -- nn.SiLU(True)
    { "nn.SiLU(true)", {
        inplace = true,
    } },
    -- nn.Sigmoid()
    { "nn.Sigmoid()", {

    } },
    -- nn.Softmax()
    { "nn.Softmax()", {
        dim = NIL,
    } },
    -- nn.Softmax(1)
    { "nn.Softmax(2)", {
        dim = 2,
    } },
    -- nn.Softmax(-1)
    { "nn.Softmax(-1)", {
        dim = -1,
    } },
    -- nn.Softmax2d()
    { "nn.Softmax2d()", {

    } },
    -- nn.Softmin()
    { "nn.Softmin()", {
        dim = NIL,
    } },
    -- nn.Softmin(0)
    { "nn.Softmin(1)", {
        dim = 1,
    } },
    -- nn.Softplus()
    { "nn.Softplus()", {
        beta = 1, threshold = 20,
    } },
    -- nn.Softplus(2, 10)
    { "nn.Softplus(2, 10)", {
        beta = 2, threshold = 10,
    } },
    -- nn.Softshrink()
    { "nn.Softshrink()", {
        lambd = 0.5,
    } },
    -- nn.Softshrink(0.25)
    { "nn.Softshrink(0.25)", {
        lambd = 0.25,
    } },
    -- nn.Softsign()
    { "nn.Softsign()", {

    } },
    -- nn.Tanh()
    { "nn.Tanh()", {

    } },
    -- nn.Tanhshrink()
    { "nn.Tanhshrink()", {

    } },
    -- nn.Threshold(0.1, 20.0)
    { "nn.Threshold(0.1, 20.0)", {
        inplace = false, threshold = 0.1, value = 20.0,
    } },
    -- nn.Threshold(0.1, 20.0, True)
    { "nn.Threshold(0.1, 20.0, true)", {
        inplace = true, threshold = 0.1, value = 20.0,
    } },
    -- nn.Flatten()
    { "nn.Flatten()", {
        end_dim = -1, start_dim = 2,
    } },
    -- nn.Flatten(0, 2)
    { "nn.Flatten(1, 3)", {
        end_dim = 3, start_dim = 1,
    } },
    -- nn.Unflatten(1, (2, 3))
    { "nn.Unflatten(2, {2, 3})", {
        dim = 2, unflattened_size = {2, 3},
    } },
    -- nn.Unflatten(-1, (2, 2, 3))
    { "nn.Unflatten(-1, {2, 2, 3})", {
        dim = -1, unflattened_size = {2, 2, 3},
    } },
    -- nn.PixelShuffle(2)
    { "nn.PixelShuffle(2)", {
        upscale_factor = 2,
    } },
    -- nn.PixelUnshuffle(3)
    { "nn.PixelUnshuffle(3)", {
        downscale_factor = 3,
    } },
    -- nn.ChannelShuffle(2)
    { "nn.ChannelShuffle(2)", {
        groups = 2,
    } },
    -- nn.Upsample(scale_factor=2)
    { "nn.Upsample({scale_factor = 2})", {
        align_corners = NIL, mode = "nearest", name = "Upsample", recompute_scale_factor = NIL,
        scale_factor = 2.0, size = NIL,
    } },
    -- nn.Upsample(size=(4, 5), mode='bilinear', align_corners=True)
    { "nn.Upsample({size = {4, 5}, mode = 'bilinear', align_corners = true})", {
        align_corners = true, mode = "bilinear", name = "Upsample", recompute_scale_factor = NIL,
        scale_factor = NIL, size = {4, 5},
    } },
    -- nn.Upsample(scale_factor=(2.0, 3.0), mode='bicubic', recompute_scale_factor=True)
    { "nn.Upsample({scale_factor = {2.0, 3.0}, mode = 'bicubic', " ..
        "recompute_scale_factor = true})", {
        align_corners = NIL, mode = "bicubic", name = "Upsample", recompute_scale_factor = true,
        scale_factor = {2.0, 3.0}, size = NIL,
    } },
    -- nn.UpsamplingBilinear2d(scale_factor=2)
    { "nn.UpsamplingBilinear2d({scale_factor = 2})", {
        align_corners = true, mode = "bilinear", name = "UpsamplingBilinear2d",
        recompute_scale_factor = NIL, scale_factor = 2.0, size = NIL,
    } },
    -- nn.UpsamplingBilinear2d(size=(4, 5))
    { "nn.UpsamplingBilinear2d({size = {4, 5}})", {
        align_corners = true, mode = "bilinear", name = "UpsamplingBilinear2d",
        recompute_scale_factor = NIL, scale_factor = NIL, size = {4, 5},
    } },
    -- nn.UpsamplingNearest2d(scale_factor=2)
    { "nn.UpsamplingNearest2d({scale_factor = 2})", {
        align_corners = NIL, mode = "nearest", name = "UpsamplingNearest2d",
        recompute_scale_factor = NIL, scale_factor = 2.0, size = NIL,
    } },
    -- nn.UpsamplingNearest2d(size=4)
    { "nn.UpsamplingNearest2d({size = 4})", {
        align_corners = NIL, mode = "nearest", name = "UpsamplingNearest2d",
        recompute_scale_factor = NIL, scale_factor = NIL, size = 4,
    } },
    -- nn.CosineSimilarity()
    { "nn.CosineSimilarity()", {
        dim = 2, eps = 1e-08,
    } },
    -- nn.CosineSimilarity(dim=0, eps=1e-6)
    { "nn.CosineSimilarity({dim = 1, eps = 1e-6})", {
        dim = 1, eps = 1e-06,
    } },
    -- nn.PairwiseDistance()
    { "nn.PairwiseDistance()", {
        eps = 1e-06, keepdim = false, norm = 2.0,
    } },
    -- nn.PairwiseDistance(p=1.0, eps=1e-4, keepdim=True)
    { "nn.PairwiseDistance({p = 1.0, eps = 1e-4, keepdim = true})", {
        eps = 0.0001, keepdim = true, norm = 1.0,
    } },
}

local function check(m, k, want)
    local got = m[k]
    if want == NIL then
        assert.is_nil(got, k)
    elseif want == FN then
        assert.is_not_nil(got, k)
    elseif type(want) == "table" and want.shape then
        assert.is_true(tide.is_tensor(got), k)
        assert.are.same(want.shape, dims(got), k)
    elseif type(want) == "table" then
        assert.are.equal("table", type(got), k)
        assert.are.equal(#want, #got, k)
        for i, v in ipairs(want) do
            assert.are.equal(v, got[i], k)
        end
    else
        assert.are.equal(type(want), type(got), k)
        assert.are.equal(want, got, k)
    end
end

describe("nn attributes (part 2) as PyTorch's", function()
    for _, c in ipairs(CASES) do
        it(c[1], function()
            local m = assert((loadstring or load)("local nn = ... return " .. c[1]))(nn)
            for k, want in pairs(c[2]) do
                check(m, k, want)
            end
        end)
    end
end)

describe("nn attributes (part 2): forward follows them", function()
    it("Upsample reads scale_factor and mode as set", function()
        local up = nn.Upsample({ scale_factor = 2 })
        up.scale_factor = 3
        assert.are.same({ 1, 1, 3, 6 }, dims(up(tide.ones(1, 1, 1, 2))))
        local b = nn.UpsamplingBilinear2d({ size = { 2, 3 } })
        assert.are.same({ 1, 1, 2, 3 }, dims(b(tide.ones(1, 1, 1, 2))))
    end)
    it("PairwiseDistance reads norm, eps and keepdim", function()
        local d = nn.PairwiseDistance()
        d.norm, d.eps, d.keepdim = 1, 0, true
        local f32 = { dtype = "float32" }
        local y = d(tide.tensor({ { 1, 2 } }, f32), tide.tensor({ { 3, 5 } }, f32))
        assert.are.same({ 1, 1 }, dims(y))
        assert.are.equal(5, y:item())
    end)
    it("Unflatten reads unflattened_size; ReLU6 and Dropout run with their defaults", function()
        local u = nn.Unflatten(2, { 2, 3 })
        u.unflattened_size = { 3, 2 }
        assert.are.same({ 4, 3, 2 }, dims(u(tide.zeros(4, 6))))
        local x = tide.tensor({ -1, 3, 8 })
        assert.are.same({ 0, 3, 6 }, nn.ReLU6()(x):tolist())
        assert.are.same({ -1, 3, 8 }, x:tolist())
        local drop = nn.Dropout()
        drop:eval()
        assert.are.same({ -1, 3, 8 }, drop(x):tolist())
        assert.are.same({ 0, 3, 8 }, nn.ReLU()(x):tolist())
    end)
end)
