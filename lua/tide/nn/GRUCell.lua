-- nn.GRUCell(input_size, hidden_size[, {bias = true}]): h = cell(x[, h]) for x [B, in]
-- or [in]; parameters weight_ih [3H, in], weight_hh [3H, H], bias_ih, bias_hh (PyTorch's)
local Module = require "tide.nn.Module"
local R = require "tide.nn._rnn"

local GRUCell = Module:extend("GRUCell")

function GRUCell:init(input_size, hidden_size, opts)
    R.cell_init(self, "GRUCell", "gru", input_size, hidden_size, opts)
end

function GRUCell:forward(x, hx)
    return R.cell_forward(self, "GRUCell", x, hx)
end

function GRUCell:extra_repr()
    return string.format("%d, %d%s", self.input_size, self.hidden_size,
        self.bias and "" or ", bias=false")
end

return GRUCell
