-- nn.GRU(input_size, hidden_size[, {num_layers = 1, bias = true, batch_first = false,
-- dropout = 0, bidirectional = false}]): out, h_n = gru(x[, h0]), as PyTorch's
-- (parameters weight_ih_l0 ..., gates r, z, n); the time loop in tide.nn._rnn;
-- x may be a PackedSequence (nn.utils.rnn), then out is one too (tide.nn._rnn_packed)
local R = require("tide.nn._rnn")

return R.class("GRU", "gru")
