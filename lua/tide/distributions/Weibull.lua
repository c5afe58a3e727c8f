-- tide.distributions.Weibull(scale, concentration): the two-parameter Weibull distribution,
-- PyTorch's (an Exponential(1) draw raised to 1 / concentration, times scale): rsample(shape)
-- is that (gradients reach both parameters), log_prob, cdf and icdf are PyTorch's transforms'
-- in closed form. Both must be positive, values positive.
local core = require("tide.core")
local Distribution = require("tide.distributions.Distribution")

local Weibull = Distribution:extend("Weibull")
Weibull.arg_constraints = require("tide.distributions._arg_constraints").Weibull
Weibull.has_rsample = true -- (PyTorch's class field)
Weibull.arg_names = { "scale", "concentration" } -- (PyTorch's, by name too)

local EULER = 0.57721566490153286061

function Weibull:init(scale, concentration, ...)
    require("tide.op_args").no_extra("Weibull", 3, ...)
    local p, shape = Distribution.broadcast_params("Weibull", { "scale", "concentration" },
        { scale, concentration })
    self.scale, self.concentration = p[1], p[2]
    Distribution.require(self.scale:detach():gt(0), "Weibull", "scale must be positive")
    Distribution.require(self.concentration:detach():gt(0), "Weibull",
        "concentration must be positive")
    self.concentration_reciprocal = self.concentration:reciprocal()
    self.batch_shape, self.event_shape = shape, {}
    self._params = { "scale", "concentration" }
end

function Weibull:mean()
    return self.scale * (self.concentration_reciprocal + 1):lgamma():exp()
end

function Weibull:variance()
    local r = self.concentration_reciprocal
    return self.scale:pow(2) * ((r * 2 + 1):lgamma():exp() - ((r + 1):lgamma() * 2):exp())
end

function Weibull:stddev()
    return self:variance():sqrt()
end

function Weibull:rsample(shape)
    local s = self:extended_shape(shape, "Weibull.rsample")
    local e = core.empty(s, { dtype = self.scale.dtype, device = self.scale.device })
        :exponential_()
    return e:pow(self.concentration_reciprocal) * self.scale
end

function Weibull:log_prob(value)
    local who = "Weibull.log_prob"
    value = self:value_tensor(value, who, self.scale)
    Distribution.require(value:detach():gt(0), who, "the values must be positive")
    local k = self.concentration
    local x = value / self.scale
    return (k / self.scale):log() + (k - 1) * x:log() - x:pow(k)
end

-- 1 - exp(-(y / scale)^k); PyTorch checks (y / scale)^k >= 0 (the exponential's support)
function Weibull:cdf(value)
    local who = "Weibull.cdf"
    value = self:value_tensor(value, who, self.scale)
    local x = (value / self.scale):pow(self.concentration)
    Distribution.require(x:detach():ge(0), who, "the values must be >= 0")
    return -(-x):expm1()
end

function Weibull:icdf(value)
    value = self:value_tensor(value, "Weibull.icdf", self.scale)
    return (-(-value):log1p()):pow(self.concentration_reciprocal) * self.scale
end

function Weibull:entropy()
    local r = self.concentration_reciprocal
    return (-r + 1) * EULER + (self.scale * r):log() + 1
end

-- PyTorch 1.13's mode: scale ((k - 1) / k)^(1 / k)
function Weibull:mode()
    local k = self.concentration
    return self.scale * ((k - 1) / k):pow(k:reciprocal())
end

return Weibull
