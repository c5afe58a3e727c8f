-- tide.distributions.HalfNormal(scale): |X| for X ~ Normal(0, scale), PyTorch's formulas
-- (twice the normal density on [0, inf), cdf 2 F - 1, icdf F^-1((p + 1) / 2), entropy minus
-- log 2); rsample(shape) is |scale eps| (gradients reach scale). scale must be positive,
-- values >= 0.
local core = require("tide.core")
local Distribution = require("tide.distributions.Distribution")
local Normal = require("tide.distributions.Normal")

local HalfNormal = Distribution:extend("HalfNormal")

function HalfNormal:init(scale, ...)
    require("tide.op_args").no_extra("HalfNormal", 2, ...)
    local p, shape = Distribution.broadcast_params("HalfNormal", { "scale" }, { scale })
    self.scale = p[1]
    Distribution.require(self.scale:detach():gt(0), "HalfNormal", "scale must be positive")
    self.base_dist = Normal(core.zeros(shape, { dtype = self.scale.dtype,
        device = self.scale.device }), self.scale)
    self.batch_shape, self.event_shape = shape, {}
    self._params = { "scale" }
end

function HalfNormal:mean()
    return self.scale * math.sqrt(2 / math.pi)
end

function HalfNormal:variance()
    return self.scale:pow(2) * (1 - 2 / math.pi)
end

function HalfNormal:stddev()
    return self:variance():sqrt()
end

function HalfNormal:rsample(shape)
    self:extended_shape(shape, "HalfNormal.rsample")
    return self.base_dist:rsample(shape):abs()
end

local function nonnegative(self, value, who)
    value = self:value_tensor(value, who, self.scale)
    Distribution.require(value:detach():ge(0), who, "the values must be >= 0")
    return value
end

function HalfNormal:log_prob(value)
    value = nonnegative(self, value, "HalfNormal.log_prob")
    return self.base_dist:log_prob(value) + math.log(2)
end

function HalfNormal:cdf(value)
    value = nonnegative(self, value, "HalfNormal.cdf")
    return self.base_dist:cdf(value) * 2 - 1
end

function HalfNormal:icdf(value)
    value = self:value_tensor(value, "HalfNormal.icdf", self.scale)
    return self.base_dist:icdf((value + 1) / 2)
end

function HalfNormal:entropy()
    return self.base_dist:entropy() - math.log(2)
end

return HalfNormal
