-- nn.Dropout2d([p = 0.5]) or Dropout2d({p =, inplace = false}): in training, zeroes whole channels of input {N, C, H, W} (or
-- unbatched {C, H, W}) with probability p and scales the rest by 1/(1-p); identity in eval mode
local core = require "tide.core"
local autograd = require "tide.autograd"
local raise = autograd.raise
local Module = require "tide.nn.Module"
local I = require "tide.nn._internal"

local Dropout2d = Module:extend("Dropout2d")

function Dropout2d:init(p)
    if type(p) == "table" then
        core._check_options(p, "Dropout2d", { "p", "inplace" })
        self.inplace = p.inplace
        p = p.p
    end
    p = p or 0.5
    if type(p) ~= "number" or p < 0 or p > 1 then
        raise("tide: Dropout2d: expected a probability p in [0, 1], got " .. tostring(p))
    end
    self.p = p
end

function Dropout2d:forward(x)
    I.check_tensor(x, "Dropout2d")
    if self.inplace and self.training then
        return I.inplace(x, function(t)
            return I.dropout2d(t, self.p, "Dropout2d")
        end, "Dropout2d")
    end
    return I.dropout2d(x, self.training and self.p or 0, "Dropout2d")
end

function Dropout2d:extra_repr()
    return "p " .. self.p
end

return Dropout2d
