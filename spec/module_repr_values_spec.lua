-- Module printing against PyTorch 1.13: m:extra_repr() (what tostring(m) shows in parentheses)
-- for modules built with non-default options. The strings are PyTorch's repr(m) with Lua's
-- literals (true, false, nil, {3, 3}) and tide's 1-based dims and indices (Softmax dim,
-- Flatten/Unflatten dims, padding_idx), as docs/API.md writes them.
local tide = require("tide")
local nn = tide.nn
local loadstring = loadstring or load

-- on PUC 5.1 and LuaJIT every number is a float that prints as "2": PyTorch's "2.0" reads so
local INTS = math.type ~= nil
local function host(s)
    return INTS and s or (s:gsub("(%d)%.0([^%d])", "%1%2"):gsub("(%d)%.0$", "%1"))
end

-- { case, tide constructor, PyTorch's extra_repr as tide writes it }
local CASES = {
    { "Linear_nobias",
        "nn.Linear(4, 3, {bias = false})",
        "in_features=4, out_features=3, bias=false" },
    { "Linear",
        "nn.Linear(4, 3)",
        "in_features=4, out_features=3, bias=true" },
    { "Conv1d_stride",
        "nn.Conv1d(2, 4, 3, {stride = 2, padding = 1})",
        "2, 4, kernel_size={3}, stride={2}, padding={1}" },
    { "Conv1d_same",
        "nn.Conv1d(2, 4, 3, {padding = \"same\", dilation = 2, bias = false})",
        "2, 4, kernel_size={3}, stride={1}, padding=same, dilation={2}, " ..
            "bias=false" },
    { "Conv1d_reflect",
        "nn.Conv1d(2, 4, 3, {padding = 1, padding_mode = \"reflect\", groups = " ..
            "2})",
        "2, 4, kernel_size={3}, stride={1}, padding={1}, groups=2, " ..
            "padding_mode=reflect" },
    { "Conv2d_plain",
        "nn.Conv2d(2, 4, 3)",
        "2, 4, kernel_size={3, 3}, stride={1, 1}" },
    { "Conv2d_tuple",
        "nn.Conv2d(2, 4, {3, 2}, {stride = {2, 1}, padding = {1, 0}})",
        "2, 4, kernel_size={3, 2}, stride={2, 1}, padding={1, 0}" },
    { "Conv2d_same",
        "nn.Conv2d(2, 4, 3, {padding = \"same\", dilation = 2, groups = 2, bias " ..
            "= false})",
        "2, 4, kernel_size={3, 3}, stride={1, 1}, padding=same, dilation={2, " ..
            "2}, groups=2, bias=false" },
    { "Conv2d_valid",
        "nn.Conv2d(2, 4, 3, {padding = \"valid\"})",
        "2, 4, kernel_size={3, 3}, stride={1, 1}, padding=valid" },
    { "Conv2d_circular",
        "nn.Conv2d(2, 4, 3, {padding = 1, padding_mode = \"circular\"})",
        "2, 4, kernel_size={3, 3}, stride={1, 1}, padding={1, 1}, " ..
            "padding_mode=circular" },
    { "Conv3d",
        "nn.Conv3d(2, 4, 3, {stride = 2, padding = {1, 0, 1}, bias = false})",
        "2, 4, kernel_size={3, 3, 3}, stride={2, 2, 2}, padding={1, 0, 1}, " ..
            "bias=false" },
    { "ConvTranspose1d",
        "nn.ConvTranspose1d(2, 4, 3, {stride = 2, output_padding = 1})",
        "2, 4, kernel_size={3}, stride={2}, output_padding={1}" },
    { "ConvTranspose2d",
        "nn.ConvTranspose2d(2, 4, 3, {stride = 2, padding = 1, output_padding " ..
            "= 1, bias = false})",
        "2, 4, kernel_size={3, 3}, stride={2, 2}, padding={1, 1}, " ..
            "output_padding={1, 1}, bias=false" },
    { "ConvTranspose2d_groups",
        "nn.ConvTranspose2d(2, 4, {3, 2}, {groups = 2, dilation = 2})",
        "2, 4, kernel_size={3, 2}, stride={1, 1}, dilation={2, 2}, groups=2" },
    { "BatchNorm1d",
        "nn.BatchNorm1d(3, {eps = 1e-3, momentum = 0.2})",
        "3, eps=0.001, momentum=0.2, affine=true, track_running_stats=true" },
    { "BatchNorm2d_noaffine",
        "nn.BatchNorm2d(3, {affine = false, track_running_stats = false})",
        "3, eps=1e-05, momentum=0.1, affine=false, track_running_stats=false" },
    { "BatchNorm2d",
        "nn.BatchNorm2d(3)",
        "3, eps=1e-05, momentum=0.1, affine=true, track_running_stats=true" },
    { "LayerNorm",
        "nn.LayerNorm(4, {elementwise_affine = false})",
        "{4}, eps=1e-05, elementwise_affine=false" },
    { "LayerNorm_shape",
        "nn.LayerNorm({2, 4}, {eps = 1e-6})",
        "{2, 4}, eps=1e-06, elementwise_affine=true" },
    { "GroupNorm",
        "nn.GroupNorm(2, 4, {eps = 1e-3, affine = false})",
        "2, 4, eps=0.001, affine=false" },
    { "InstanceNorm2d",
        "nn.InstanceNorm2d(3, {affine = true})",
        "3, eps=1e-05, momentum=0.1, affine=true, track_running_stats=false" },
    { "Dropout",
        "nn.Dropout(0.3, {inplace = true})",
        "p=0.3, inplace=true" },
    { "Dropout2d",
        "nn.Dropout2d()",
        "p=0.5, inplace=false" },
    { "ReLU_inplace",
        "nn.ReLU({inplace = true})",
        "inplace=true" },
    { "ReLU",
        "nn.ReLU()",
        "" },
    { "LeakyReLU",
        "nn.LeakyReLU(0.2)",
        "negative_slope=0.2" },
    { "LeakyReLU_inplace",
        "nn.LeakyReLU(0.1, {inplace = true})",
        "negative_slope=0.1, inplace=true" },
    { "ELU",
        "nn.ELU({alpha = 0.5})",
        "alpha=0.5" },
    { "CELU",
        "nn.CELU({alpha = 2.0, inplace = true})",
        "alpha=2.0, inplace=true" },
    { "GELU",
        "nn.GELU()",
        "approximate='none'" },
    { "GELU_tanh",
        "nn.GELU({approximate = \"tanh\"})",
        "approximate='tanh'" },
    { "Softmax",
        "nn.Softmax({dim = 1})",
        "dim=1" },
    { "LogSoftmax",
        "nn.LogSoftmax({dim = -1})",
        "dim=-1" },
    { "Hardtanh",
        "nn.Hardtanh(-2.0, 2.0)",
        "min_val=-2.0, max_val=2.0" },
    { "Threshold",
        "nn.Threshold(0.1, 20.0)",
        "threshold=0.1, value=20.0" },
    { "Embedding",
        "nn.Embedding(10, 3, {padding_idx = 1})",
        "10, 3, padding_idx=1" },
    { "EmbeddingBag",
        "nn.EmbeddingBag(10, 3, {mode = \"sum\"})",
        "10, 3, mode=sum" },
    { "EmbeddingBag_max",
        "nn.EmbeddingBag(10, 3, {mode = \"max\", padding_idx = 3})",
        "10, 3, mode=max, padding_idx=3" },
    { "LSTM",
        "nn.LSTM(3, 4, {num_layers = 2, batch_first = true, bidirectional = " ..
            "true, dropout = 0.5})",
        "3, 4, num_layers=2, batch_first=true, dropout=0.5, bidirectional=true" },
    { "LSTM_proj",
        "nn.LSTM(3, 4, {proj_size = 2, bias = false})",
        "3, 4, proj_size=2, bias=false" },
    { "GRU",
        "nn.GRU(3, 4, {num_layers = 3})",
        "3, 4, num_layers=3" },
    { "RNN",
        "nn.RNN(3, 4, {nonlinearity = \"relu\", batch_first = true})",
        "3, 4, batch_first=true" },
    { "LSTMCell",
        "nn.LSTMCell(3, 4, {bias = false})",
        "3, 4, bias=false" },
    { "RNNCell",
        "nn.RNNCell(3, 4, {nonlinearity = \"relu\"})",
        "3, 4, nonlinearity=relu" },
    { "MaxPool2d",
        "nn.MaxPool2d(3, {stride = 2, padding = 1, ceil_mode = true})",
        "kernel_size=3, stride=2, padding=1, dilation=1, ceil_mode=true" },
    { "MaxPool2d_plain",
        "nn.MaxPool2d(2)",
        "kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=false" },
    { "MaxPool2d_dil",
        "nn.MaxPool2d({2, 3}, {dilation = 2})",
        "kernel_size={2, 3}, stride={2, 3}, padding=0, dilation=2, " ..
            "ceil_mode=false" },
    { "MaxPool1d",
        "nn.MaxPool1d(3, {stride = 2})",
        "kernel_size=3, stride=2, padding=0, dilation=1, ceil_mode=false" },
    { "AvgPool2d",
        "nn.AvgPool2d(3, {stride = 2, padding = 1, count_include_pad = false, " ..
            "divisor_override = 4})",
        "kernel_size=3, stride=2, padding=1" },
    { "AvgPool2d_plain",
        "nn.AvgPool2d(2)",
        "kernel_size=2, stride=2, padding=0" },
    { "AvgPool1d",
        "nn.AvgPool1d(3, {ceil_mode = true})",
        "kernel_size={3}, stride={3}, padding={0}" },
    { "AdaptiveAvgPool2d",
        "nn.AdaptiveAvgPool2d({2, 3})",
        "output_size={2, 3}" },
    { "AdaptiveAvgPool2d_int",
        "nn.AdaptiveAvgPool2d(1)",
        "output_size=1" },
    { "AdaptiveMaxPool2d",
        "nn.AdaptiveMaxPool2d(2)",
        "output_size=2" },
    { "AdaptiveAvgPool1d",
        "nn.AdaptiveAvgPool1d(3)",
        "output_size=3" },
    { "Upsample_bilinear",
        "nn.Upsample({size = {4, 6}, mode = \"bilinear\", align_corners = true})",
        "size={4, 6}, mode=bilinear" },
    { "Flatten",
        "nn.Flatten()",
        "start_dim=2, end_dim=-1" },
    { "Flatten_dims",
        "nn.Flatten(1, 3)",
        "start_dim=1, end_dim=3" },
    { "Unflatten",
        "nn.Unflatten(2, {2, 3})",
        "dim=2, unflattened_size={2, 3}" },
    { "Identity",
        "nn.Identity()",
        "" },
    { "PixelShuffle",
        "nn.PixelShuffle(2)",
        "upscale_factor=2" },
    { "PixelUnshuffle",
        "nn.PixelUnshuffle(3)",
        "downscale_factor=3" },
    { "PReLU",
        "nn.PReLU(3)",
        "num_parameters=3" },
    { "Bilinear",
        "nn.Bilinear(2, 3, 4, {bias = false})",
        "in1_features=2, in2_features=3, out_features=4, bias=false" },
    { "ZeroPad2d",
        "nn.ZeroPad2d(1)",
        "{1, 1, 1, 1}" },
    { "ConstantPad1d",
        "nn.ConstantPad1d({1, 2}, 3.5)",
        "padding={1, 2}, value=3.5" },
    { "ReflectionPad2d",
        "nn.ReflectionPad2d(2)",
        "{2, 2, 2, 2}" },
    { "TransformerEncoderLayer",
        "nn.TransformerEncoderLayer(4, 2, {dim_feedforward = 8})",
        "" },
    { "Sequential",
        "nn.Sequential(nn.Linear(2, 3), nn.ReLU())",
        "" },
    { "ModuleList",
        "nn.ModuleList({nn.Identity()})",
        "" },
    { "ModuleDict",
        "nn.ModuleDict({a = nn.Identity()})",
        "" },
}

describe("module printing as PyTorch 1.13's", function()
    it("extra_repr of each module", function()
        for _, c in ipairs(CASES) do
            local m = loadstring("local nn = ...; return " .. c[2])(nn)
            assert.are.equal(host(c[3]), m:extra_repr(), c[1])
        end
    end)

    it("tostring shows it, and a container's children", function()
        local m = nn.Sequential(nn.Linear(2, 3, { bias = false }), nn.ReLU({ inplace = true }))
        assert.are.equal("Sequential  [6 parameters]\n" ..
            "  1: Linear(in_features=2, out_features=3, bias=false)  [6 parameters]\n" ..
            "  2: ReLU(inplace=true)  [0 parameters]", tostring(m))
        local d = nn.ModuleDict({ pool = nn.MaxPool2d(2), conv = nn.Conv2d(1, 2, 3) })
        assert.matches("conv: Conv2d(1, 2, kernel_size={3, 3}, stride={1, 1})  [20 parameters]",
            tostring(d), 1, true)
        assert.matches("pool: MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, " ..
            "ceil_mode=false)", tostring(d), 1, true)
    end)

    pending("nn.BatchNorm3d(3, momentum=None) prints momentum=None; tide's options table " ..
        "cannot hold nil, so {momentum = nil} is the default 0.1")
    pending("nn.Embedding(.., sparse=True) prints sparse=True in both PyTorch and tide (the " ..
        "Lua literal would be true; spec/ported_scripts9_spec.lua and optim_surface_spec.lua " ..
        "read 'sparse=True')")
    pending("nn.MultiheadAttention and nn.CosineSimilarity have no extra_repr in PyTorch; " ..
        "tide's shows 'embed_dim=4, num_heads=2[, kdim=..]' and 'dim 1, eps 1e-06' " ..
        "(spec/seq_options_spec.lua reads the MHA one)")
    pending("float defaults print as integers where tide stores an integer: " ..
        "nn.Upsample({scale_factor = 2}) 'scale_factor=2' (PyTorch's float: 2.0), " ..
        "nn.LocalResponseNorm(3) 'k=1' (1.0), nn.ELU() 'alpha=1' (1.0): the constructors' " ..
        "values, not extra_repr")
end)
