-- nn.RNNCell(input_size, hidden_size[, {bias = true, nonlinearity = "tanh"}]): h = cell(x[, h])
-- for x [B, in] or [in]; parameters weight_ih [H, in], weight_hh [H, H], bias_ih, bias_hh
-- (PyTorch's)
local Module = require "tide.nn.Module"
local R = require "tide.nn._rnn"

local RNNCell = Module:extend("RNNCell")

function RNNCell:init(input_size, hidden_size, opts)
    R.cell_init(self, "RNNCell", "rnn_tanh", input_size, hidden_size, opts)
end

function RNNCell:forward(x, hx)
    return R.cell_forward(self, "RNNCell", x, hx)
end

function RNNCell:extra_repr()
    return string.format("%d, %d%s", self.input_size, self.hidden_size,
        self.bias and "" or ", bias=false")
end

return RNNCell
