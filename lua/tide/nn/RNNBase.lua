-- nn.RNNBase(mode, input_size, hidden_size[, {num_layers = 1, bias = true, batch_first =
-- false, dropout = 0, bidirectional = false, proj_size = 0 (mode "LSTM")}]): PyTorch's base
-- class of nn.RNN, nn.LSTM and nn.GRU (each is RNNBase:extend(name), so a method defined on
-- nn.RNNBase reaches all three), mode "RNN_TANH", "RNN_RELU", "LSTM" or "GRU" laying out the
-- parameters as that layer's. As PyTorch's, it has no forward of its own.
local raise = require("tide.autograd").raise
local Module = require("tide.nn.Module")
local R = require("tide.nn._rnn")
local S = require("tide.nn._signature")

local RNNBase = Module:extend("RNNBase")
-- PyTorch's properties all_weights and _flat_weights (tide.nn._rnn's R.base_index); RNN, LSTM,
-- GRU and their subclasses inherit this __index (Module:extend copies a function __index)
RNNBase.__index = R.base_index

local MODES = { RNN_TANH = "rnn_tanh", RNN_RELU = "rnn_relu", LSTM = "lstm", GRU = "gru" }

function RNNBase:init(mode, input_size, hidden_size, opts)
    local kind = MODES[mode]
    if not kind then
        raise("tide: RNNBase: unknown mode " .. (type(mode) == "string" and ("\"" .. mode ..
            "\"") or tostring(mode)) .. "; use \"RNN_TANH\", \"RNN_RELU\", \"LSTM\" or \"GRU\"")
    end
    R.init(self, "RNNBase", kind, input_size, hidden_size, opts)
end

RNNBase.extra_repr = R.extra_repr

-- PyTorch's flatten_parameters(): compacts the weights for cuDNN; tide's already are what the
-- layer computes with, so nothing to do (PyTorch's off cuDNN does nothing too). Returns nothing.
function RNNBase:flatten_parameters(...)
    require("tide.op_args").no_extra("flatten_parameters", 1, ...)
end

S.define(RNNBase, R.signature("RNNBase"))

-- m:reset_parameters(): PyTorch's, every parameter drawn again in place from
-- U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)) (RNN, LSTM, GRU and, by RNNCellBase, the cells)
function RNNBase:reset_parameters()
    local stdv = self.hidden_size > 0 and 1 / math.sqrt(self.hidden_size) or 0
    require("tide.autograd").no_grad(function()
        for _, w in ipairs(self:parameters()) do
            w:uniform_(-stdv, stdv)
        end
    end)
end

return RNNBase
