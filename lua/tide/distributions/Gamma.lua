-- tide.distributions.Gamma(concentration, rate): the gamma distribution, PyTorch's formulas
-- (log_prob with xlogy, so x^0 at 0 is 1); rsample(shape) draws by rejection (tide's generator)
-- with gradients to both parameters, the concentration's by implicit reparametrization
-- (tide.distributions.gamma_rsample, as PyTorch's). Both parameters must be positive, values
-- positive or zero (log_prob; cdf positive).
local Distribution = require("tide.distributions.Distribution")
local ExponentialFamily = require("tide.distributions.ExponentialFamily")
local gamma_rsample = require("tide.distributions.gamma_rsample")

local Gamma = ExponentialFamily:extend("Gamma") -- (PyTorch's base)
Gamma.arg_constraints = require("tide.distributions._arg_constraints").Gamma
Gamma.has_rsample = true -- (PyTorch's class field)
Gamma.arg_names = { "concentration", "rate" } -- (PyTorch's, by name too)

function Gamma:init(concentration, rate, ...)
    require("tide.op_args").no_extra("Gamma", 3, ...)
    local p, shape = Distribution.broadcast_params("Gamma", { "concentration", "rate" },
        { concentration, rate })
    self.concentration, self.rate = p[1], p[2]
    Distribution.require(self.concentration:detach():gt(0), "Gamma",
        "concentration must be positive")
    Distribution.require(self.rate:detach():gt(0), "Gamma", "rate must be positive")
    self.batch_shape, self.event_shape = shape, {}
    self._params = { "concentration", "rate" }
end

function Gamma:mean()
    return self.concentration / self.rate
end

function Gamma:variance()
    return self.concentration / self.rate:pow(2)
end

function Gamma:stddev()
    return self:variance():sqrt()
end

-- (sample is Distribution's: this without recording)
function Gamma:rsample(shape)
    local s = self:extended_shape(shape, self.__name .. ".rsample") -- (Chi2's too)
    return gamma_rsample.sample(self.concentration:expand(s):contiguous()) / self.rate
end

function Gamma:log_prob(value)
    local who = self.__name .. ".log_prob"
    value = self:value_tensor(value, who, self.rate)
    -- PyTorch's support: nonnegative, 0 included (the message kept: specs match it)
    Distribution.require(value:detach():ge(0), who, "the values must be positive")
    local a, b = self.concentration, self.rate
    return a:xlogy(b) + (a - 1):xlogy(value) - b * value - a:lgamma()
end

-- P(concentration, rate value), the regularized lower incomplete gamma (PyTorch 2.0's cdf; 1.13
-- has none): no gradient to concentration (igamma's, as PyTorch's)
function Gamma:cdf(value)
    local who = self.__name .. ".cdf"
    value = self:value_tensor(value, who, self.rate)
    Distribution.require(value:detach():gt(0), who, "the values must be positive")
    local autograd = require("tide.autograd")
    if autograd.needs_record(self.concentration) then
        autograd.raise(("tide: %s: no gradient to %s (igamma's derivative in its shape is " ..
            "not implemented, as in PyTorch); detach it"):format(who, self._params[1]))
    end
    return self.concentration:igamma(self.rate * value)
end

function Gamma:entropy()
    local a = self.concentration
    return a - self.rate:log() + a:lgamma() + (-a + 1) * a:digamma()
end

-- the exponential family's parts (ExponentialFamily's entropy and KL; PyTorch's)
Gamma._mean_carrier_measure = 0

function Gamma:_natural_params()
    return { self.concentration - 1, -self.rate }
end

function Gamma:_log_normalizer(x, y)
    return (x + 1):lgamma() + (x + 1) * (-y:reciprocal()):log()
end

-- PyTorch 1.13's mode: (concentration - 1) / rate, at least 0
function Gamma:mode()
    return ((self.concentration - 1) / self.rate):clamp(0, math.huge)
end

return Gamma
