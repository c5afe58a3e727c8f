-- nn module constructors by PyTorch's keyword names: every class tide has of torch.nn 1.13's
-- builds the same module all by position, all by name in one table, mixed (the required
-- positionally, the rest by name) and with the first required positionally and the rest by
-- name; a misspelt name raises. Then the classes a sweep found reading a name as nothing, or
-- refusing PyTorch's positional or keyword form, with PyTorch 1.13's values.
local tide = require("tide")
local nn = tide.nn
local unpack = table.unpack or unpack

local function close(t, expected, tol)
    local got = t:tolist()
    local function walk(g, e, path)
        if type(e) == "table" then
            assert.are.equal(#e, #g, "length at " .. path)
            for i = 1, #e do
                walk(g[i], e[i], path .. "[" .. i .. "]")
            end
        else
            assert(math.abs(g - e) <= (tol or 1e-5), ("%s: got %s, expected %s"):format(path,
                tostring(g), tostring(e)))
        end
    end
    walk(got, expected, "")
end

-- torch.nn's __init__ parameters in order (inspect.signature, PyTorch 1.13): the required
-- before "|", PyTorch's keyword-only after "*"
local SIG = {
    AdaptiveAvgPool1d = "output_size",
    AdaptiveAvgPool2d = "output_size",
    AdaptiveAvgPool3d = "output_size",
    AdaptiveLogSoftmaxWithLoss = "in_features n_classes cutoffs | div_value head_bias device dtype",
    AdaptiveMaxPool1d = "output_size | return_indices",
    AdaptiveMaxPool2d = "output_size | return_indices",
    AdaptiveMaxPool3d = "output_size | return_indices",
    AlphaDropout = "| p inplace",
    AvgPool1d = "kernel_size | stride padding ceil_mode count_include_pad",
    AvgPool2d = "kernel_size | stride padding ceil_mode count_include_pad divisor_override",
    AvgPool3d = "kernel_size | stride padding ceil_mode count_include_pad divisor_override",
    BCELoss = "| weight size_average reduce reduction",
    BCEWithLogitsLoss = "| weight size_average reduce reduction pos_weight",
    BatchNorm1d = "num_features | eps momentum affine track_running_stats device dtype",
    BatchNorm2d = "num_features | eps momentum affine track_running_stats device dtype",
    BatchNorm3d = "num_features | eps momentum affine track_running_stats device dtype",
    Bilinear = "in1_features in2_features out_features | bias device dtype",
    CELU = "| alpha inplace",
    CTCLoss = "| blank reduction zero_infinity",
    ChannelShuffle = "groups",
    ConstantPad1d = "padding value",
    ConstantPad2d = "padding value",
    ConstantPad3d = "padding value",
    Conv1d = "in_channels out_channels kernel_size | stride padding "
        .. "dilation groups bias padding_mode device dtype",
    Conv2d = "in_channels out_channels kernel_size | stride padding "
        .. "dilation groups bias padding_mode device dtype",
    Conv3d = "in_channels out_channels kernel_size | stride padding "
        .. "dilation groups bias padding_mode device dtype",
    ConvTranspose1d = "in_channels out_channels kernel_size | stride padding "
        .. "output_padding groups bias dilation padding_mode device "
        .. "dtype",
    ConvTranspose2d = "in_channels out_channels kernel_size | stride padding "
        .. "output_padding groups bias dilation padding_mode device "
        .. "dtype",
    ConvTranspose3d = "in_channels out_channels kernel_size | stride padding "
        .. "output_padding groups bias dilation padding_mode device "
        .. "dtype",
    CosineEmbeddingLoss = "| margin size_average reduce reduction",
    CosineSimilarity = "| dim eps",
    CrossEntropyLoss = "| weight size_average ignore_index reduce reduction label_smoothing",
    CrossMapLRN2d = "size | alpha beta k",
    Dropout = "| p inplace",
    Dropout1d = "| p inplace",
    Dropout2d = "| p inplace",
    Dropout3d = "| p inplace",
    ELU = "| alpha inplace",
    Embedding = "num_embeddings embedding_dim | padding_idx max_norm "
        .. "norm_type scale_grad_by_freq sparse _weight device dtype",
    EmbeddingBag = "num_embeddings embedding_dim | max_norm norm_type "
        .. "scale_grad_by_freq mode sparse _weight include_last_offset "
        .. "padding_idx device dtype",
    FeatureAlphaDropout = "| p inplace",
    Flatten = "| start_dim end_dim",
    Fold = "output_size kernel_size | dilation padding stride",
    FractionalMaxPool2d = "kernel_size | output_size output_ratio return_indices _random_samples",
    FractionalMaxPool3d = "kernel_size | output_size output_ratio return_indices _random_samples",
    GELU = "| approximate",
    GLU = "| dim",
    GRUCell = "input_size hidden_size | bias device dtype",
    GaussianNLLLoss = "|  * full eps reduction",
    GroupNorm = "num_groups num_channels | eps affine device dtype",
    Hardshrink = "| lambd",
    Hardsigmoid = "| inplace",
    Hardswish = "| inplace",
    Hardtanh = "| min_val max_val inplace min_value max_value",
    HingeEmbeddingLoss = "| margin size_average reduce reduction",
    HuberLoss = "| reduction delta",
    InstanceNorm1d = "num_features | eps momentum affine track_running_stats device dtype",
    InstanceNorm2d = "num_features | eps momentum affine track_running_stats device dtype",
    InstanceNorm3d = "num_features | eps momentum affine track_running_stats device dtype",
    KLDivLoss = "| size_average reduce reduction log_target",
    L1Loss = "| size_average reduce reduction",
    LPPool1d = "norm_type kernel_size | stride ceil_mode",
    LPPool2d = "norm_type kernel_size | stride ceil_mode",
    LSTMCell = "input_size hidden_size | bias device dtype",
    LayerNorm = "normalized_shape | eps elementwise_affine device dtype",
    LazyBatchNorm1d = "| eps momentum affine track_running_stats device dtype",
    LazyBatchNorm2d = "| eps momentum affine track_running_stats device dtype",
    LazyBatchNorm3d = "| eps momentum affine track_running_stats device dtype",
    LazyConv1d = "out_channels kernel_size | stride padding dilation groups "
        .. "bias padding_mode device dtype",
    LazyConv2d = "out_channels kernel_size | stride padding dilation groups "
        .. "bias padding_mode device dtype",
    LazyConv3d = "out_channels kernel_size | stride padding dilation groups "
        .. "bias padding_mode device dtype",
    LazyConvTranspose1d = "out_channels kernel_size | stride padding output_padding "
        .. "groups bias dilation padding_mode device dtype",
    LazyConvTranspose2d = "out_channels kernel_size | stride padding output_padding "
        .. "groups bias dilation padding_mode device dtype",
    LazyConvTranspose3d = "out_channels kernel_size | stride padding output_padding "
        .. "groups bias dilation padding_mode device dtype",
    LazyInstanceNorm1d = "| eps momentum affine track_running_stats device dtype",
    LazyInstanceNorm2d = "| eps momentum affine track_running_stats device dtype",
    LazyInstanceNorm3d = "| eps momentum affine track_running_stats device dtype",
    LazyLinear = "out_features | bias device dtype",
    LeakyReLU = "| negative_slope inplace",
    Linear = "in_features out_features | bias device dtype",
    LocalResponseNorm = "size | alpha beta k",
    LogSigmoid = "",
    LogSoftmax = "| dim",
    MSELoss = "| size_average reduce reduction",
    MarginRankingLoss = "| margin size_average reduce reduction",
    MaxPool1d = "kernel_size | stride padding dilation return_indices ceil_mode",
    MaxPool2d = "kernel_size | stride padding dilation return_indices ceil_mode",
    MaxPool3d = "kernel_size | stride padding dilation return_indices ceil_mode",
    MaxUnpool1d = "kernel_size | stride padding",
    MaxUnpool2d = "kernel_size | stride padding",
    MaxUnpool3d = "kernel_size | stride padding",
    Mish = "| inplace",
    MultiLabelMarginLoss = "| size_average reduce reduction",
    MultiLabelSoftMarginLoss = "| weight size_average reduce reduction",
    MultiMarginLoss = "| p margin weight size_average reduce reduction",
    MultiheadAttention = "embed_dim num_heads | dropout bias add_bias_kv add_zero_attn "
        .. "kdim vdim batch_first device dtype",
    NLLLoss = "| weight size_average ignore_index reduce reduction",
    NLLLoss2d = "| weight size_average ignore_index reduce reduction",
    PReLU = "| num_parameters init device dtype",
    PairwiseDistance = "| p eps keepdim",
    PixelShuffle = "upscale_factor",
    PixelUnshuffle = "downscale_factor",
    PoissonNLLLoss = "| log_input full size_average eps reduce reduction",
    RNNCell = "input_size hidden_size | bias nonlinearity device dtype",
    RReLU = "| lower upper inplace",
    ReLU = "| inplace",
    ReLU6 = "| inplace",
    ReflectionPad1d = "padding",
    ReflectionPad2d = "padding",
    ReflectionPad3d = "padding",
    ReplicationPad1d = "padding",
    ReplicationPad2d = "padding",
    ReplicationPad3d = "padding",
    SELU = "| inplace",
    SiLU = "| inplace",
    Sigmoid = "",
    SmoothL1Loss = "| size_average reduce reduction beta",
    SoftMarginLoss = "| size_average reduce reduction",
    Softmax = "| dim",
    Softmax2d = "",
    Softmin = "| dim",
    Softplus = "| beta threshold",
    Softshrink = "| lambd",
    Softsign = "",
    SyncBatchNorm = "num_features | eps momentum affine track_running_stats "
        .. "process_group device dtype",
    Tanh = "",
    Tanhshrink = "",
    Threshold = "threshold value | inplace",
    Transformer = "| d_model nhead num_encoder_layers num_decoder_layers "
        .. "dim_feedforward dropout activation custom_encoder "
        .. "custom_decoder layer_norm_eps batch_first norm_first device "
        .. "dtype",
    TransformerDecoderLayer = "d_model nhead | dim_feedforward dropout activation "
        .. "layer_norm_eps batch_first norm_first device dtype",
    TransformerEncoderLayer = "d_model nhead | dim_feedforward dropout activation "
        .. "layer_norm_eps batch_first norm_first device dtype",
    TripletMarginLoss = "| margin p eps swap size_average reduce reduction",
    TripletMarginWithDistanceLoss = "|  * distance_function margin swap reduction",
    Unflatten = "dim unflattened_size",
    Unfold = "kernel_size | dilation padding stride",
    Upsample = "| size scale_factor mode align_corners recompute_scale_factor",
    UpsamplingBilinear2d = "| size scale_factor",
    UpsamplingNearest2d = "| size scale_factor",
    ZeroPad2d = "padding",
}

-- a value other than PyTorch's default per parameter (tide's where its 1-based dims differ);
-- false: left out (nil)
local V = {
    in_features = 4, out_features = 3, in1_features = 2, in2_features = 3, n_classes = 8,
    cutoffs = { 2, 5 }, div_value = 2.0, head_bias = true, output_size = 2,
    return_indices = true, p = 0.3, inplace = true, kernel_size = 3, stride = 2, padding = 1,
    ceil_mode = true, count_include_pad = false, divisor_override = 2, reduction = "sum",
    weight = function() return tide.tensor({ 1, 2, 3 }) end,
    pos_weight = function() return tide.tensor({ 1, 2, 3 }) end,
    num_features = 4, eps = 1e-3, momentum = 0.2, affine = false, track_running_stats = false,
    bias = false, alpha = 0.5, blank = 2, zero_infinity = true, groups = 2, value = 1.5,
    in_channels = 4, out_channels = 6, dilation = 2, padding_mode = "reflect",
    output_padding = 1, margin = 0.5, dim = 2, ignore_index = 1, label_smoothing = 0.1,
    size = 3, beta = 0.5, k = 2, num_embeddings = 10, embedding_dim = 4, padding_idx = 1,
    max_norm = 1.0, norm_type = 3.0, scale_grad_by_freq = true, sparse = true, mode = "sum",
    include_last_offset = true, start_dim = 1, end_dim = 3, output_ratio = false,
    approximate = "tanh", input_size = 3, hidden_size = 4, full = true, num_groups = 2,
    num_channels = 4, lambd = 0.3, min_val = -2.0, max_val = 2.0, delta = 0.5,
    log_target = true, normalized_shape = { 4 }, elementwise_affine = false,
    negative_slope = 0.2, embed_dim = 4, num_heads = 2, dropout = 0.25, add_bias_kv = true,
    add_zero_attn = true, kdim = 3, vdim = 5, batch_first = true, num_parameters = 3,
    init = 0.1, keepdim = true, upscale_factor = 2, downscale_factor = 2, log_input = false,
    num_layers = 2, bidirectional = true, proj_size = 0, nonlinearity = "relu", lower = 0.2,
    upper = 0.4, threshold = 5, swap = true, unflattened_size = { 2, 3 }, scale_factor = 2,
    align_corners = true, d_model = 8, nhead = 2, dim_feedforward = 16, activation = "gelu",
    layer_norm_eps = 1e-3, norm_first = true, num_encoder_layers = 1, num_decoder_layers = 1,
    -- not constructor arguments in tide, deprecated, or values no table can compare
    device = false, dtype = false, size_average = false, reduce = false, process_group = false,
    _random_samples = false, custom_encoder = false, custom_decoder = false,
    distance_function = false, min_value = false, max_value = false, _weight = false,
    recompute_scale_factor = false, enable_nested_tensor = false, mask_check = false,
}
local ZEROS = { padding_mode = false }
local OV = {
    AdaptiveLogSoftmaxWithLoss = { in_features = 16 }, CosineSimilarity = { dim = 3 },
    MultiMarginLoss = { p = 2 }, CTCLoss = { blank = 2 },
    Fold = { output_size = { 4, 5 }, kernel_size = 2, stride = 1, padding = 1, dilation = 1 },
    Unfold = { kernel_size = 2 }, LPPool1d = { norm_type = 2, kernel_size = 2 },
    LPPool2d = { norm_type = 2, kernel_size = 2 },
    FractionalMaxPool2d = { kernel_size = 2, output_size = 3 },
    FractionalMaxPool3d = { kernel_size = 2, output_size = 3 },
    ConstantPad1d = { padding = 2 }, ConstantPad2d = { padding = 2 },
    ConstantPad3d = { padding = 2 }, Upsample = { size = false, mode = "bilinear" },
    UpsamplingBilinear2d = { size = false }, UpsamplingNearest2d = { size = false },
    InstanceNorm1d = { affine = true, track_running_stats = true },
    InstanceNorm2d = { affine = true, track_running_stats = true },
    InstanceNorm3d = { affine = true, track_running_stats = true },
    EmbeddingBag = { max_norm = false, scale_grad_by_freq = false, norm_type = false },
    ConvTranspose1d = ZEROS, ConvTranspose2d = ZEROS, ConvTranspose3d = ZEROS,
    LazyConvTranspose1d = ZEROS, LazyConvTranspose2d = ZEROS, LazyConvTranspose3d = ZEROS,
}

local function value(cls, name)
    local v = OV[cls] and OV[cls][name]
    if v == nil then
        v = V[name]
    end
    assert(v ~= nil, cls .. ": no test value for " .. name)
    if type(v) == "function" then
        v = v()
    end
    return v ~= false and v or nil
end

-- a module's attributes, as text: tensors by shape and dtype (initial values are random),
-- tables recursively in key order
local function fingerprint(v, seen)
    if tide.is_tensor(v) then
        return "T" .. table.concat(v:size(), "x") .. tostring(v.dtype)
    elseif type(v) ~= "table" then
        return (tostring(v):gsub("0x%x+", "@"))
    elseif seen[v] then
        return "<cycle>"
    end
    seen[v] = true
    local keys, out = {}, {}
    for k in pairs(v) do
        keys[#keys + 1] = k
    end
    table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
    for _, k in ipairs(keys) do
        out[#out + 1] = tostring(k) .. "=" .. fingerprint(v[k], seen)
    end
    seen[v] = nil
    return "{" .. table.concat(out, ",") .. "}"
end

local function build(C, ...)
    return fingerprint(C(...), {})
end

-- the three forms of one class: positional (PyTorch's order, nil holes for what V leaves
-- out), every name in one table, the required positionally and the rest by name
local function forms(cls)
    local spec = SIG[cls]
    local req_s, opt_s = spec:match("^([^|]*)|?(.*)$")
    local opt_only, kw_s = opt_s:match("^([^*]*)%*?(.*)$")
    local req, opt, kw = {}, {}, {}
    for n in req_s:gmatch("%S+") do req[#req + 1] = n end
    for n in opt_only:gmatch("%S+") do opt[#opt + 1] = n end
    for n in kw_s:gmatch("%S+") do kw[#kw + 1] = n end
    local pos, named, rest, npos = {}, {}, {}, #req
    for i, n in ipairs(req) do
        pos[i], named[n] = value(cls, n), value(cls, n)
    end
    for i, n in ipairs(opt) do
        local v = value(cls, n)
        pos[#req + i], named[n], rest[n] = v, v, v
        if v ~= nil then
            npos = #req + i
        end
    end
    for _, n in ipairs(kw) do
        named[n], rest[n] = value(cls, n), value(cls, n)
    end
    return req, pos, npos, named, rest, #kw > 0
end

describe("nn constructors by PyTorch's keyword names", function()
    local names = {}
    for k in pairs(SIG) do
        names[#names + 1] = k
    end
    table.sort(names)

    it("build the same module by position, by name and mixed (" .. #names .. " classes)",
        function()
            for _, cls in ipairs(names) do
                local C = nn[cls]
                local req, pos, npos, named, rest, kwonly = forms(cls)
                local nr = #req
                local by_name = next(named) ~= nil and build(C, named) or build(C)
                if not kwonly then
                    assert.are.equal(build(C, unpack(pos, 1, npos)), by_name,
                        cls .. ": by position and by name differ")
                end
                if next(rest) ~= nil then
                    pos[nr + 1] = rest
                    assert.are.equal(build(C, unpack(pos, 1, nr + 1)), by_name,
                        cls .. ": mixed and by name differ")
                end
                if nr >= 2 then
                    named[req[1]] = nil
                    assert.are.equal(build(C, pos[1], named), by_name,
                        cls .. ": the first positional, the rest by name differ")
                end
                pos[nr + 1] = { bogus_name = 1 }
                local ok, err = pcall(C, unpack(pos, 1, nr + 1))
                assert(not ok and tostring(err):find("tide: ", 1, true),
                    cls .. ": a misspelt name did not raise a tide error: " .. tostring(err))
            end
        end)

    it("an option by name changes the module (each one alone, over the required)", function()
        -- the sweep's worst case: an option read as nothing; a sample of the classes
        for cls, opt in pairs({ GLU = "dim", MaxUnpool2d = "stride", Threshold = "inplace",
            LocalResponseNorm = "alpha", CrossMapLRN2d = "beta", Unfold = "stride",
            Fold = "padding", CosineSimilarity = "eps", PairwiseDistance = "keepdim",
            CrossEntropyLoss = "label_smoothing", SyncBatchNorm = "momentum" }) do
            local req = forms(cls)
            local args = {}
            for i, n in ipairs(req) do
                args[i] = value(cls, n)
            end
            local plain = build(nn[cls], unpack(args, 1, #req))
            args[#req + 1] = { [opt] = value(cls, opt) }
            assert.are_not.equal(plain, build(nn[cls], unpack(args, 1, #req + 1)),
                cls .. ": {" .. opt .. " =} changed nothing")
        end
    end)

    -- the classes the sweep fixed: PyTorch 1.13's values for the keyword forms
    local x = tide.tensor({ { 1, -2 }, { 0.5, 3 }, { -1, 2 }, { 4, 0 } })

    it("GLU reads dim by name and rejects a misspelt one", function()
        -- F.glu(x, dim=0)
        local expected = { { 0.2689414322, -1.7615940571 }, { 0.4910068810, 1.5 } }
        close(nn.GLU({ dim = 1 })(x), expected)
        close(nn.GLU(1)(x), expected)
        assert.has_error(function() nn.GLU({ dims = 1 }) end,
            'tide: GLU: unknown option "dims" (did you mean "dim"?)')
    end)

    it("MaxUnpool2d takes every argument by name", function()
        local input = tide.arange(1, 17):float():view(1, 1, 4, 4)
        local out, idx = nn.functional.max_pool2d(input, 2, { stride = 2, return_indices = true })
        local u = nn.MaxUnpool2d({ kernel_size = 2, stride = 2 })
        assert.are.same({ 2, 2 }, u.stride) -- PyTorch's (2, 2)
        close(u(out, idx), { { { { 0, 0, 0, 0 }, { 0, 6, 0, 8 }, { 0, 0, 0, 0 },
            { 0, 14, 0, 16 } } } })
    end)

    it("Threshold, ChannelShuffle, LocalResponseNorm and CrossMapLRN2d by name", function()
        close(nn.Threshold({ threshold = 1.5, value = -1 })(x),
            { { -1, -1 }, { -1, 3 }, { -1, 2 }, { 4, -1 } })
        close(nn.ChannelShuffle({ groups = 2 })(tide.arange(1, 5):float():view(1, 4, 1, 1))
            :flatten(), { 1, 3, 2, 4 })
        local l = tide.arange(1, 9):float():view(1, 4, 1, 2)
        close(nn.LocalResponseNorm({ size = 2, alpha = 0.5, beta = 0.5, k = 2 })(l):flatten(),
            { 0.6666666865, 1.1547005177, 1.4142136574, 1.5118579865, 1.5430334806,
                1.5491932631, 1.5460412502, 1.5396007299 })
        close(nn.CrossMapLRN2d({ size = 3, alpha = 0.5, beta = 0.5, k = 2 })(l):flatten(),
            { 0.5222329497, 0.8660254478, 1.0718843937, 1.1881769896, 1.25, 1.2792043686,
                1.8382899761, 1.8194352388 })
    end)

    it("Fold and Unfold take every argument by name", function()
        local u = tide.arange(1, 19):float():view(1, 2, 3, 3)
        local cols = nn.Unfold({ kernel_size = 2, stride = 1 })(u)
        assert.are.same({ 1, 8, 4 }, cols:size())
        close(cols:select(3, 1):flatten(), { 1, 2, 4, 5, 10, 11, 13, 14 })
        close(nn.Fold({ output_size = { 3, 3 }, kernel_size = 2 })(cols), { { { { 1, 4, 3 },
            { 8, 20, 12 }, { 7, 16, 9 } }, { { 10, 22, 12 }, { 26, 56, 30 }, { 16, 34, 18 } } } })
    end)

    it("FractionalMaxPool2d, AdaptiveLogSoftmaxWithLoss and SyncBatchNorm by PyTorch's forms",
        function()
            -- output_size by position, as PyTorch's FractionalMaxPool2d(2, 3)
            local y = nn.FractionalMaxPool2d(2, 3)(tide.randn(1, 2, 6, 6))
            assert.are.same({ 1, 2, 3, 3 }, y:size())
            local asm = nn.AdaptiveLogSoftmaxWithLoss({ in_features = 16, n_classes = 8,
                cutoffs = { 2, 5 }, div_value = 2.0, head_bias = true })
            assert.are.same({ 4, 16 }, asm.head.weight:size())
            assert.are.same({ 4 }, asm.head.bias:size())
            local bn = nn.SyncBatchNorm({ num_features = 4, momentum = 0.2, affine = false })
            assert.are.equal(0.2, bn.momentum)
            assert.is_nil(bn.weight)
        end)

    it("CosineSimilarity and PairwiseDistance take PyTorch's positional arguments", function()
        local a = tide.tensor({ { 1, 2, 3 }, { 0, 1, 1 } }, { dtype = "float32" })
        local b = tide.tensor({ { 1, 0, 3 }, { 2, 1, 0 } }, { dtype = "float32" })
        -- nn.CosineSimilarity(0), nn.PairwiseDistance(1., 0., True)
        close(nn.CosineSimilarity(1)(a, b), { 0.4472135901, 0.4472135901, 0.9486832619 })
        close(nn.PairwiseDistance(1, 0, true)(a, b), { { 2 }, { 3 } })
    end)

    it("the losses take PyTorch's positional arguments", function()
        local lx = tide.tensor({ { 1, 2, 3 }, { 0.5, 0.1, 2 } })
        local t = tide.tensor({ 1, 3 }, { dtype = "int64" })
        local w = tide.tensor({ 1, 2, 3 }, { dtype = "float32" })
        close(nn.CrossEntropyLoss(w)(lx, t), 0.8394855261)
        close(nn.MultiMarginLoss(2, 0.5)(lx, t), 1.4166666269)
        close(nn.NLLLoss(w, nil, 3)(lx, t), -1.0) -- ignore_index (1-based) third
        assert.has_error(function() nn.CrossEntropyLoss(w, { weight = w }) end,
            "tide: CrossEntropyLoss: weight given twice, as argument #1 and by name; pass it once")
    end)

    -- nn.BCELoss("sum") in PyTorch makes "sum" the weight (it fails at the first call); tide
    -- raises at construction, naming the keyword (BCELoss once built and failed at forward)
    it("a reduction's name in the weight's place raises at construction, naming the fix", function()
        assert.has_error(function() nn.CrossEntropyLoss("sum") end,
            "tide: CrossEntropyLoss: weight must be a tensor, got the string \"sum\"; the first " ..
            "parameter is weight, as PyTorch's: pass the reduction by name, " ..
            "nn.CrossEntropyLoss({reduction = \"sum\"})")
        assert.has_error(function() nn.BCELoss("mean") end,
            "tide: BCELoss: weight must be a tensor, got the string \"mean\"; the first " ..
            "parameter is weight, as PyTorch's: pass the reduction by name, " ..
            "nn.BCELoss({reduction = \"mean\"})")
        assert.has_error(function() nn.NLLLoss({ weight = 3 }) end,
            "tide: NLLLoss: weight must be a tensor, got number")
        assert.are.equal("sum", nn.BCELoss({ reduction = "sum" }).opts.reduction)
    end)
end)
