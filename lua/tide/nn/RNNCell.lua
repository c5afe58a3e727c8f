-- nn.RNNCell(input_size, hidden_size[, {bias = true, nonlinearity = "tanh"}]): h = cell(x[, h])
-- for x [B, in] or [in]; parameters weight_ih [H, in], weight_hh [H, H], bias_ih, bias_hh
-- (PyTorch's)
local R = require("tide.nn._rnn")

return R.class("RNNCell", "rnn_tanh", true)
