-- tide.nn: layers, losses and the Module base class (pure Lua, one class per file)
require("tide.autograd")

local nn = {}

local CLASSES = {
    "Module", "Linear", "Conv2d", "MaxPool2d", "Flatten", "ReLU", "Sigmoid", "Tanh", "GELU",
    "Softmax", "LogSoftmax", "Dropout", "Sequential", "Embedding", "LayerNorm", "BatchNorm1d",
    "BatchNorm2d", "MSELoss", "CrossEntropyLoss", "NLLLoss", "BCEWithLogitsLoss",
    "DistributedDataParallel", "DataParallel",
}

for _, name in ipairs(CLASSES) do
    nn[name] = require("tide.nn." .. name)
end
nn.functional = require("tide.nn.functional")
for _, name in ipairs({ "Identity", "ModuleList", "ModuleDict" }) do
    nn[name] = require("tide.nn." .. name)
end
-- the wider surface's layers and losses (docs/API.md)
for _, name in ipairs({ "Conv1d", "ConvTranspose2d", "AvgPool2d", "AdaptiveAvgPool2d",
    "MaxPool1d", "GroupNorm", "RMSNorm", "Dropout2d", "LeakyReLU", "SiLU", "ELU", "Softplus", "Hardtanh",
    "L1Loss", "SmoothL1Loss", "HuberLoss", "BCELoss", "KLDivLoss", "Mish", "Hardswish", "SELU",
    "GLU", "CosineSimilarity", "Unflatten", "PixelShuffle", "PixelUnshuffle", "Upsample" }) do
    nn[name] = require("tide.nn." .. name)
end
for _, name in ipairs({ "RNN", "LSTM", "GRU", "RNNCell", "LSTMCell", "GRUCell",
    "MultiheadAttention", "TransformerEncoderLayer", "TransformerEncoder",
    "TransformerDecoderLayer", "TransformerDecoder", "Transformer", "PackedSequence" }) do
    nn[name] = require("tide.nn." .. name) -- sequence models and attention
end
nn.init = require("tide.nn.initializers") -- not tide/nn/init.lua: that file is tide.nn itself
nn.utils = require("tide.nn.utils")

return nn
