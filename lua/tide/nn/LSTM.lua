-- nn.LSTM(input_size, hidden_size[, {num_layers = 1, bias = true, batch_first = false,
-- dropout = 0, bidirectional = false, proj_size = 0}]): out, {h_n, c_n} = lstm(x[, {h0, c0}]),
-- as PyTorch's (parameters weight_ih_l0 ..., gates i, f, g, o; with proj_size P > 0, h is
-- projected by weight_hr_l0 [P, H] each step); the time loop in tide.nn._rnn;
-- x may be a PackedSequence (nn.utils.rnn), then out is one too (tide.nn._rnn_packed)
local R = require("tide.nn._rnn")

return R.class("LSTM", "lstm")
