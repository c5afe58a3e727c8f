-- nn.RNN(input_size, hidden_size[, {num_layers = 1, bias = true, batch_first = false,
-- dropout = 0, bidirectional = false, nonlinearity = "tanh"}]): out, h_n = rnn(x[, h0]), as
-- PyTorch's (parameters weight_ih_l0 ...); the time loop in tide.nn._rnn;
-- x may be a PackedSequence (nn.utils.rnn), then out is one too (tide.nn._rnn_packed)
local Module = require "tide.nn.Module"
local R = require "tide.nn._rnn"

local RNN = Module:extend("RNN")

function RNN:init(input_size, hidden_size, opts)
    R.init(self, "RNN", "rnn_tanh", input_size, hidden_size, opts)
end

function RNN:forward(x, hx)
    return R.forward(self, "RNN", x, hx)
end

RNN.extra_repr = R.extra_repr

return RNN
