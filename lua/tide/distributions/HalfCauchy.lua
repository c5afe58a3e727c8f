-- tide.distributions.HalfCauchy(scale): |X| for X ~ Cauchy(0, scale), PyTorch's formulas
-- (twice the Cauchy density on [0, inf), cdf 2 F - 1, icdf F^-1((p + 1) / 2), entropy
-- minus log 2); rsample(shape) is |scale tan(pi (u - 1/2))| (gradients reach scale). Its mean
-- and variance are infinite. scale must be positive, values >= 0.
local core = require("tide.core")
local Distribution = require("tide.distributions.Distribution")
local Cauchy = require("tide.distributions.Cauchy")

local HalfCauchy = Distribution:extend("HalfCauchy")

function HalfCauchy:init(scale, ...)
    require("tide.op_args").no_extra("HalfCauchy", 2, ...)
    local p, shape = Distribution.broadcast_params("HalfCauchy", { "scale" }, { scale })
    self.scale = p[1]
    Distribution.require(self.scale:detach():gt(0), "HalfCauchy", "scale must be positive")
    self.base_dist = Cauchy(core.zeros(shape, { dtype = self.scale.dtype,
        device = self.scale.device }), self.scale)
    self.batch_shape, self.event_shape = shape, {}
    self._params = { "scale" }
end

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

function HalfCauchy:rsample(shape)
    self:extended_shape(shape, "HalfCauchy.rsample")
    return self.base_dist:rsample(shape):abs()
end

local function nonnegative(self, value, who)
    value = self:value_tensor(value, who, self.scale)
    Distribution.require(value:detach():ge(0), who, "the values must be >= 0")
    return value
end

function HalfCauchy:log_prob(value)
    value = nonnegative(self, value, "HalfCauchy.log_prob")
    return self.base_dist:log_prob(value) + math.log(2)
end

function HalfCauchy:cdf(value)
    value = nonnegative(self, value, "HalfCauchy.cdf")
    return self.base_dist:cdf(value) * 2 - 1
end

function HalfCauchy:icdf(value)
    value = self:value_tensor(value, "HalfCauchy.icdf", self.scale)
    return self.base_dist:icdf((value + 1) / 2)
end

function HalfCauchy:entropy()
    return self.base_dist:entropy() - math.log(2)
end

return HalfCauchy
