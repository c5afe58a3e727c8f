-- nn.GRUCell(input_size, hidden_size[, {bias = true}]): h = cell(x[, h]) for x [B, in]
-- or [in]; parameters weight_ih [3H, in], weight_hh [3H, H], bias_ih, bias_hh (PyTorch's)
local R = require("tide.nn._rnn")

return R.class("GRUCell", "gru", true)
