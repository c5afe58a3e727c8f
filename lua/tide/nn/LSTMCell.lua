-- nn.LSTMCell(input_size, hidden_size[, {bias = true}]): h, c = cell(x[, {h, c}]) for x [B, in]
-- or [in]; parameters weight_ih [4H, in], weight_hh [4H, H], bias_ih, bias_hh (PyTorch's)
local Module = require "tide.nn.Module"
local R = require "tide.nn._rnn"

local LSTMCell = Module:extend("LSTMCell")

function LSTMCell:init(input_size, hidden_size, opts)
    R.cell_init(self, "LSTMCell", "lstm", input_size, hidden_size, opts)
end

function LSTMCell:forward(x, hx)
    return R.cell_forward(self, "LSTMCell", x, hx)
end

function LSTMCell:extra_repr()
    return string.format("%d, %d%s", self.input_size, self.hidden_size,
        self.bias and "" or ", bias=false")
end

return LSTMCell
