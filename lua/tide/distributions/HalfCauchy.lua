-- tide.distributions.HalfCauchy(scale): |X| for X ~ Cauchy(0, scale), PyTorch's formulas
-- (twice the Cauchy density on [0, inf), cdf 2 F - 1, icdf F^-1((p + 1) / 2), entropy
-- minus log 2; tide.distributions._half); rsample(shape) is |scale tan(pi (u - 1/2))|
-- (gradients reach scale). Its mean and variance are infinite. scale must be positive,
-- values >= 0.
local core = require("tide.core")
local Cauchy = require("tide.distributions.Cauchy")

local HalfCauchy = require("tide.distributions._half")("HalfCauchy", Cauchy)

local function full(self, v)
    return core.full(self.batch_shape, v, { dtype = self.scale.dtype,
        device = self.scale.device })
end

function HalfCauchy:mean()
    return full(self, math.huge)
end

function HalfCauchy:variance()
    return full(self, math.huge)
end

function HalfCauchy:stddev()
    return full(self, math.huge)
end

-- PyTorch 1.13's mode: 0
function HalfCauchy:mode()
    local x = self.scale
    return core.zeros(x:size(), { dtype = x.dtype, device = x.device })
end

return HalfCauchy
