-- nn.GRU(input_size, hidden_size[, {num_layers = 1, bias = true, batch_first = false,
-- dropout = 0, bidirectional = false}]): out, h_n = gru(x[, h0]), as PyTorch's
-- (parameters weight_ih_l0 ..., gates r, z, n); the time loop in tide.nn._rnn;
-- x may be a PackedSequence (nn.utils.rnn), then out is one too (tide.nn._rnn_packed)
local Module = require "tide.nn.Module"
local R = require "tide.nn._rnn"

local GRU = Module:extend("GRU")

function GRU:init(input_size, hidden_size, opts)
    R.init(self, "GRU", "gru", input_size, hidden_size, opts)
end

function GRU:forward(x, hx)
    return R.forward(self, "GRU", x, hx)
end

GRU.extra_repr = R.extra_repr

return GRU
