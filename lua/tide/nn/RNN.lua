-- nn.RNN(input_size, hidden_size[, {num_layers = 1, bias = true, batch_first = false,
-- dropout = 0, bidirectional = false, nonlinearity = "tanh"}]): out, h_n = rnn(x[, h0]), as
-- PyTorch's (parameters weight_ih_l0 ...); the time loop in tide.nn._rnn;
-- x may be a PackedSequence (nn.utils.rnn), then out is one too (tide.nn._rnn_packed)
local R = require("tide.nn._rnn")

return R.class("RNN", "rnn_tanh")
