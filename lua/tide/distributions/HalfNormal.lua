-- tide.distributions.HalfNormal(scale): |X| for X ~ Normal(0, scale), PyTorch's formulas
-- (twice the normal density on [0, inf), cdf 2 F - 1, icdf F^-1((p + 1) / 2), entropy minus
-- log 2; tide.distributions._half); rsample(shape) is |scale eps| (gradients reach scale).
-- scale must be positive, values >= 0.
local core = require("tide.core")
local Normal = require("tide.distributions.Normal")

local HalfNormal = require("tide.distributions._half")("HalfNormal", Normal)

function HalfNormal:mean()
    return self.scale * math.sqrt(2 / math.pi)
end

function HalfNormal:variance()
    return self.scale:pow(2) * (1 - 2 / math.pi)
end

function HalfNormal:stddev()
    return self:variance():sqrt()
end

-- PyTorch 1.13's mode: 0
function HalfNormal:mode()
    local x = self.scale
    return core.zeros(x:size(), { dtype = x.dtype, device = x.device })
end

return HalfNormal
