-- nn.RNNCellBase(input_size, hidden_size, bias, num_chunks): PyTorch's base class of
-- nn.RNNCell, nn.LSTMCell and nn.GRUCell (each is RNNCellBase:extend(name)): weight_ih
-- [num_chunks * H, in], weight_hh [num_chunks * H, H] and with bias (true when nil) bias_ih,
-- bias_hh [num_chunks * H], all drawn from U(-1/sqrt(H), 1/sqrt(H)). As PyTorch's, it has no
-- forward of its own.
local raise = require("tide.autograd").raise
local Module = require("tide.nn.Module")
local I = require("tide.nn._internal")
local R = require("tide.nn._rnn")
local S = require("tide.nn._signature")

local RNNCellBase = Module:extend("RNNCellBase")

function RNNCellBase:init(input_size, hidden_size, bias, num_chunks)
    local who = "RNNCellBase"
    I.check_int(input_size, "input_size", who)
    I.check_int(hidden_size, "hidden_size", who)
    if bias ~= nil and type(bias) ~= "boolean" then
        raise("tide: RNNCellBase: expected bias to be a boolean, got " .. type(bias))
    end
    I.check_int(num_chunks, "num_chunks", who)
    self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias ~= false
    R.add_params(self, "", input_size, hidden_size, num_chunks, self.bias)
end

RNNCellBase.extra_repr = R.cell_extra_repr

S.define(RNNCellBase, { names = { "input_size", "hidden_size", "bias", "num_chunks" },
    required = 4, flat = true })

-- m:reset_parameters(): PyTorch's, as RNNBase's (U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)))
RNNCellBase.reset_parameters = require("tide.nn.RNNBase").reset_parameters

return RNNCellBase
