-- nn.Dropout([p = 0.5]): in training, zeroes each element with probability p and scales the
-- rest by 1/(1-p); identity in eval mode
local autograd = require "tide.autograd"
local raise = autograd.raise
local core = require "tide.core"
local Module = require "tide.nn.Module"
local F = require "tide.nn.functional"

local Dropout = Module:extend("Dropout")

function Dropout:init(p)
    p = p or 0.5
    if type(p) ~= "number" or p < 0 or p > 1 then
        raise("tide: Dropout: expected a probability p in [0, 1], got " .. tostring(p))
    end
    self.p = p
end

function Dropout:forward(x)
    F.check_tensor(x, "Dropout")
    local p = self.p
    if not self.training or p == 0 then
        return x
    end
    if p == 1 then
        return x:mul(0)
    end
    local keep = core.rand(x.shape, { device = x.device, dtype = x.dtype }):ge(p)
    return x:mul(keep):mul(1 / (1 - p))
end

function Dropout:extra_repr()
    return "p " .. self.p
end

return Dropout
