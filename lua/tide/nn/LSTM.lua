-- nn.LSTM(input_size, hidden_size[, {num_layers = 1, bias = true, batch_first = false,
-- dropout = 0, bidirectional = false, proj_size = 0}]): out, {h_n, c_n} = lstm(x[, {h0, c0}]),
-- as PyTorch's (parameters weight_ih_l0 ..., gates i, f, g, o; with proj_size P > 0, h is
-- projected by weight_hr_l0 [P, H] each step); the time loop in tide.nn._rnn;
-- x may be a PackedSequence (nn.utils.rnn), then out is one too (tide.nn._rnn_packed)
local Module = require "tide.nn.Module"
local R = require "tide.nn._rnn"

local LSTM = Module:extend("LSTM")

function LSTM:init(input_size, hidden_size, opts)
    R.init(self, "LSTM", "lstm", input_size, hidden_size, opts)
end

function LSTM:forward(x, hx)
    return R.forward(self, "LSTM", x, hx)
end

LSTM.extra_repr = R.extra_repr

return LSTM
