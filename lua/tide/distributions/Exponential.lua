-- tide.distributions.Exponential(rate): the exponential distribution, PyTorch's formulas;
-- rsample(shape) is an exponential draw divided by rate (gradients reach rate). rate must be
-- positive; values must be >= 0.
local core = require("tide.core")
local Distribution = require("tide.distributions.Distribution")
local ExponentialFamily = require("tide.distributions.ExponentialFamily")

local Exponential = ExponentialFamily:extend("Exponential") -- (PyTorch's base)
Exponential.arg_constraints = require("tide.distributions._arg_constraints").Exponential
Exponential.has_rsample = true -- (PyTorch's class field)
Exponential.arg_names = { "rate" } -- (PyTorch's, by name too)

function Exponential:init(rate, ...)
    require("tide.op_args").no_extra("Exponential", 2, ...)
    local p, shape = Distribution.broadcast_params("Exponential", { "rate" }, { rate })
    self.rate = p[1]
    Distribution.require(self.rate:detach():gt(0), "Exponential", "rate must be positive")
    self.batch_shape, self.event_shape = shape, {}
    self._params = { "rate" }
end

function Exponential:mean()
    return self.rate:reciprocal()
end

function Exponential:stddev()
    return self.rate:reciprocal()
end

function Exponential:variance()
    return self.rate:pow(-2)
end

function Exponential:rsample(shape)
    local s = self:extended_shape(shape, "Exponential.rsample")
    local e = core.empty(s, { dtype = self.rate.dtype, device = self.rate.device }):exponential_()
    return e / self.rate
end

local function nonnegative(self, value, who)
    value = self:value_tensor(value, who, self.rate)
    Distribution.require(value:detach():ge(0), who, "the values must be >= 0")
    return value
end

function Exponential:log_prob(value)
    value = nonnegative(self, value, "Exponential.log_prob")
    return self.rate:log() - self.rate * value
end

function Exponential:cdf(value)
    value = nonnegative(self, value, "Exponential.cdf")
    return -(-self.rate * value):exp() + 1
end

function Exponential:icdf(value)
    value = self:value_tensor(value, "Exponential.icdf", self.rate)
    return -(-value + 1):log() / self.rate
end

function Exponential:entropy()
    return -self.rate:log() + 1
end

-- the exponential family's parts (ExponentialFamily's entropy and KL; PyTorch's)
Exponential._mean_carrier_measure = 0

function Exponential:_natural_params()
    return { -self.rate }
end

function Exponential:_log_normalizer(x)
    return -(-x):log()
end

-- PyTorch 1.13's mode: 0
function Exponential:mode()
    local x = self.rate
    return core.zeros(x:size(), { dtype = x.dtype, device = x.device })
end

return Exponential
