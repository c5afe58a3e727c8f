-- tide.distributions.LogNormal(loc, scale): exp(X) for X ~ Normal(loc, scale), PyTorch's
-- formulas (log_prob is the normal's at log y minus log y, cdf and icdf through the normal's,
-- entropy the normal's plus loc); rsample(shape) is exp(loc + scale eps) (gradients reach loc
-- and scale). scale must be positive, values positive.
local Distribution = require("tide.distributions.Distribution")
local Normal = require("tide.distributions.Normal")

local LogNormal = Distribution:extend("LogNormal")

function LogNormal:init(loc, scale, ...)
    require("tide.op_args").no_extra("LogNormal", 3, ...)
    local p, shape = Distribution.broadcast_params("LogNormal", { "loc", "scale" },
        { loc, scale })
    self.loc, self.scale = p[1], p[2]
    Distribution.require(self.scale:detach():gt(0), "LogNormal", "scale must be positive")
    self.base_dist = Normal(self.loc, self.scale)
    self.batch_shape, self.event_shape = shape, {}
    self._params = { "loc", "scale" }
end

function LogNormal:mean()
    return (self.loc + self.scale:pow(2) / 2):exp()
end

function LogNormal:variance()
    local s2 = self.scale:pow(2)
    return s2:expm1() * (self.loc * 2 + s2):exp()
end

function LogNormal:stddev()
    return self:variance():sqrt()
end

function LogNormal:rsample(shape)
    self:extended_shape(shape, "LogNormal.rsample")
    return self.base_dist:rsample(shape):exp()
end

function LogNormal:log_prob(value)
    local who = "LogNormal.log_prob"
    value = self:value_tensor(value, who, self.loc)
    Distribution.require(value:detach():gt(0), who, "the values must be positive")
    local y = value:log()
    return self.base_dist:log_prob(y) - y
end

function LogNormal:cdf(value)
    local who = "LogNormal.cdf"
    value = self:value_tensor(value, who, self.loc)
    Distribution.require(value:detach():ge(0), who, "the values must be >= 0")
    return self.base_dist:cdf(value:log())
end

function LogNormal:icdf(value)
    value = self:value_tensor(value, "LogNormal.icdf", self.loc)
    return self.base_dist:icdf(value):exp()
end

function LogNormal:entropy()
    return self.base_dist:entropy() + self.loc
end

return LogNormal
