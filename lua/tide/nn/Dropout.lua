-- nn.Dropout([p = 0.5]): in training, zeroes each element with probability p and scales the
-- rest by 1/(1-p); identity in eval mode
local autograd = require "tide.autograd"
local raise = autograd.raise
local Module = require "tide.nn.Module"
local I = require "tide.nn._internal"

local Dropout = Module:extend("Dropout")

function Dropout:init(p)
    p = p or 0.5
    if type(p) ~= "number" or p < 0 or p > 1 then
        raise("tide: Dropout: expected a probability p in [0, 1], got " .. tostring(p))
    end
    self.p = p
end

function Dropout:forward(x)
    I.check_tensor(x, "Dropout")
    if not self.training then
        return x
    end
    return I.dropout(x, self.p)
end

function Dropout:extra_repr()
    return "p " .. self.p
end

return Dropout
