-- nn.Dropout2d([p = 0.5]): in training, zeroes whole channels of input {N, C, H, W} (or
-- unbatched {C, H, W}) with probability p and scales the rest by 1/(1-p); identity in eval mode
local core = require "tide.core"
local autograd = require "tide.autograd"
local raise = autograd.raise
local Module = require "tide.nn.Module"
local I = require "tide.nn._internal"

local Dropout2d = Module:extend("Dropout2d")

function Dropout2d:init(p)
    if type(p) == "table" then
        core._check_options(p, "Dropout2d", { "p" }, { "inplace" })
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
    local nd = x:dim()
    if nd ~= 3 and nd ~= 4 then
        raise("tide: Dropout2d: expected input {N, C, H, W} or {C, H, W}, got " ..
            I.shape_str(x.shape))
    end
    if not self.training or self.p == 0 then
        return x
    end
    if self.p == 1 then
        return x:mul(0)
    end
    local shape = x.shape -- one draw per channel, broadcast over H and W
    shape[nd], shape[nd - 1] = 1, 1
    local keep = core.rand(shape, { device = x.device, dtype = x.dtype }):ge(self.p)
    return x:mul(keep):mul(1 / (1 - self.p))
end

function Dropout2d:extra_repr()
    return "p " .. self.p
end

return Dropout2d
