-- tide.nn: layers, losses and the Module base class (pure Lua, one class per file). A class is
-- loaded on its first use (nn.Linear requires tide.nn.Linear then): a script pays, in load
-- time and in the Lua heap its collector walks, only for the layers it uses (an MLP's four of
-- some seventy; the heap is what an incremental collector's cycle costs).
require("tide.autograd")

local nn = {}

local CLASSES = {
    "Module", "Linear", "Conv2d", "MaxPool2d", "Flatten", "ReLU", "Sigmoid", "Tanh", "GELU",
    "Softmax", "LogSoftmax", "Dropout", "Sequential", "Embedding", "LayerNorm", "BatchNorm1d",
    "BatchNorm2d", "MSELoss", "CrossEntropyLoss", "NLLLoss", "BCEWithLogitsLoss",
    "DistributedDataParallel", "DataParallel", "Identity", "ModuleList", "ModuleDict",
    -- the wider surface's layers and losses (docs/API.md)
    "Conv1d", "ConvTranspose2d", "AvgPool2d", "AdaptiveAvgPool2d", "MaxPool1d", "GroupNorm",
    "RMSNorm", "Dropout2d", "LeakyReLU", "SiLU", "ELU", "Softplus", "Hardtanh", "L1Loss",
    "SmoothL1Loss", "HuberLoss", "BCELoss", "KLDivLoss", "Mish", "Hardswish", "SELU", "GLU",
    "CosineSimilarity", "Unflatten", "PixelShuffle", "PixelUnshuffle", "Upsample", "ReLU6",
    "Hardsigmoid", "LogSigmoid", "Softsign", "PairwiseDistance", "MarginRankingLoss",
    "TripletMarginLoss", "CosineEmbeddingLoss", "PReLU", "InstanceNorm1d", "InstanceNorm2d",
    "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AvgPool1d", "AdaptiveAvgPool1d", "ZeroPad2d",
    "ConstantPad1d", "ConstantPad2d", "ReflectionPad1d", "ReflectionPad2d", "ReplicationPad1d",
    "ReplicationPad2d", "CELU", "Softmin", "Threshold", "Hardshrink", "Softshrink", "Tanhshrink",
    "Softmax2d", "Dropout1d", "AlphaDropout", "ChannelShuffle", "Bilinear", "ConvTranspose1d",
    "Unfold", "Fold", "LocalResponseNorm", "LPPool1d", "LPPool2d", "MaxUnpool1d", "MaxUnpool2d",
    "RReLU", "EmbeddingBag", "CTCLoss",
    "SyncBatchNorm", -- BatchNorm over the ranks of a tide.distributed job
    -- the 3-D layers (spec/nn3d_spec.lua)
    "Conv3d", "ConvTranspose3d", "MaxPool3d", "AvgPool3d", "AdaptiveAvgPool3d",
    "AdaptiveMaxPool3d", "BatchNorm3d", "InstanceNorm3d", "Dropout3d", "ConstantPad3d",
    "ReflectionPad3d", "ReplicationPad3d",
    "SoftMarginLoss", "HingeEmbeddingLoss", "MultiLabelSoftMarginLoss", "MultiMarginLoss",
    "PoissonNLLLoss", "GaussianNLLLoss", "MultiLabelMarginLoss",
    -- parameters and their containers; more of PyTorch's layers and losses
    "Parameter", "ParameterList", "ParameterDict", "TripletMarginWithDistanceLoss",
    "UpsamplingNearest2d", "UpsamplingBilinear2d", "FeatureAlphaDropout",
    -- sized by their first input
    "LazyLinear", "LazyConv1d", "LazyConv2d", "LazyConv3d",
    "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d", "LazyBatchNorm1d",
    "LazyBatchNorm2d", "LazyBatchNorm3d", "LazyInstanceNorm1d", "LazyInstanceNorm2d",
    "LazyInstanceNorm3d",
    -- more of PyTorch's layers (spec/nn_more_spec.lua)
    "FractionalMaxPool2d", "FractionalMaxPool3d", "MaxUnpool3d", "AdaptiveLogSoftmaxWithLoss",
    "CrossMapLRN2d", "NLLLoss2d", "Container",
    -- sequence models and attention
    "RNN", "LSTM", "GRU", "RNNCell", "LSTMCell", "GRUCell", "RNNBase", "RNNCellBase",
    "MultiheadAttention",
    "TransformerEncoderLayer", "TransformerEncoder", "TransformerDecoderLayer",
    "TransformerDecoder", "Transformer", "PackedSequence",
}

local lazy = {}
for _, name in ipairs(CLASSES) do
    lazy[name] = "tide.nn." .. name
end
lazy.attention = "tide.nn.attention" -- torch.nn.attention: sdpa_kernel, SDPBackend
lazy.grad = "tide.nn.grad" -- torch.nn.grad: conv1d/2d/3d_input and _weight
lazy.Buffer = "tide.nn._buffer_class" -- nn.Buffer(t[, {persistent =}]): a function, not a class
lazy.modules = "tide.nn.modules" -- torch.nn.modules.module's global hooks

nn.Module = require("tide.nn.Module")
nn.functional = require("tide.nn.functional")
nn.init = require("tide.nn.initializers") -- not tide/nn/init.lua: that file is tide.nn itself
nn.utils = require("tide.nn.utils")
-- nn.signature(cls, "a, b, c=1, d=None"[, method]): a user's class (or its method) takes
-- Python's keywords (_signature)
function nn.signature(cls, text, method)
    return require("tide.nn._signature").declare(cls, text, method)
end

return require("tide._lazy")(nn, lazy)
