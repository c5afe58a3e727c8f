-- nn.LSTMCell(input_size, hidden_size[, {bias = true}]): h, c = cell(x[, {h, c}]) for x [B, in]
-- or [in]; parameters weight_ih [4H, in], weight_hh [4H, H], bias_ih, bias_hh (PyTorch's)
local R = require("tide.nn._rnn")

return R.class("LSTMCell", "lstm", true)
