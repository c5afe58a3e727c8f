-- tide.distributions.LogNormal(loc, scale): exp(X) for X ~ Normal(loc, scale), PyTorch's: a
-- TransformedDistribution of Normal(loc, scale) through ExpTransform (log_prob is the normal's
-- at log y minus log y, cdf and icdf through the normal's, rsample exp(loc + scale eps):
-- gradients reach loc and scale), with its own moments and entropy (the normal's plus loc).
-- scale must be positive, values positive (>= 0 for cdf).
local Distribution = require("tide.distributions.Distribution")
local TD = require("tide.distributions.TransformedDistribution")
local Normal = require("tide.distributions.Normal")

local LogNormal = TD:extend("LogNormal")
LogNormal.arg_constraints = require("tide.distributions._arg_constraints").LogNormal
LogNormal.has_rsample = true -- (PyTorch's class field)
LogNormal.arg_names = { "loc", "scale" } -- (PyTorch's, by name too)

function LogNormal:init(loc, scale, ...)
    require("tide.op_args").no_extra("LogNormal", 3, ...)
    local p = Distribution.broadcast_params("LogNormal", { "loc", "scale" }, { loc, scale })
    self.loc, self.scale = p[1], p[2]
    Distribution.require(self.scale:detach():gt(0), "LogNormal", "scale must be positive")
    TD.init(self, Normal(self.loc, self.scale),
        require("tide.distributions.transforms.ExpTransform")())
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

function LogNormal:cdf(value)
    local who = "LogNormal.cdf"
    value = self:value_tensor(value, who, self.loc)
    Distribution.require(value:detach():ge(0), who, "the values must be >= 0")
    return TD.cdf(self, value)
end

function LogNormal:icdf(value)
    value = self:value_tensor(value, "LogNormal.icdf", self.loc)
    return TD.icdf(self, value)
end

function LogNormal:entropy()
    return self.base_dist:entropy() + self.loc
end

-- PyTorch 1.13's mode: exp(loc - scale^2)
function LogNormal:mode()
    return (self.loc - self.scale:pow(2)):exp()
end

return LogNormal
