-- tide.distributions.Poisson(rate): the Poisson distribution, PyTorch's formulas (log_prob with
-- xlogy, so rate 0 gives log 1 at 0); sample(shape) draws counts in the rate's dtype by
-- tide.poisson (exact: the product method for small rates, PTRS rejection for large ones; no
-- gradient). PyTorch's Poisson has no entropy, nor has this one. rate must be >= 0, values
-- integers >= 0.
local autograd = require("tide.autograd")
local Distribution = require("tide.distributions.Distribution")
local ExponentialFamily = require("tide.distributions.ExponentialFamily")

local Poisson = ExponentialFamily:extend("Poisson") -- (PyTorch's base)
Poisson.arg_constraints = require("tide.distributions._arg_constraints").Poisson
Poisson.has_rsample = false -- (PyTorch's class field)
Poisson.arg_names = { "rate" } -- (PyTorch's, by name too)

function Poisson:init(rate, ...)
    require("tide.op_args").no_extra("Poisson", 2, ...)
    local p, shape = Distribution.broadcast_params("Poisson", { "rate" }, { rate })
    self.rate = p[1]
    Distribution.require(self.rate:detach():ge(0), "Poisson", "rate must be >= 0")
    self.batch_shape, self.event_shape = shape, {}
    self._params = { "rate" }
end

function Poisson:mean()
    return self.rate
end

function Poisson:variance()
    return self.rate
end

function Poisson:stddev()
    return self.rate:sqrt()
end

function Poisson:sample(shape)
    local s = self:extended_shape(shape, "Poisson.sample")
    return autograd.no_grad(function()
        return require("tide").poisson(self.rate:detach():expand(s):contiguous())
    end)
end

function Poisson:log_prob(value)
    local who = "Poisson.log_prob"
    value = self:value_tensor(value, who, self.rate)
    value = value.dtype == self.rate.dtype and value or value:to(self.rate.dtype)
    local v = value:detach()
    Distribution.require(v:ge(0):logical_and(v:eq(v:floor())):logical_and(v:lt(math.huge)), who,
        "the values must be integers >= 0")
    return value:xlogy(self.rate) - self.rate - (value + 1):lgamma()
end

-- the exponential family's parts (ExponentialFamily's KL; PyTorch's: no carrier measure, so
-- no entropy)
function Poisson:_natural_params()
    return { self.rate:log() }
end

function Poisson:_log_normalizer(x)
    return x:exp()
end

-- PyTorch 1.13's mode: floor(rate)
function Poisson:mode()
    return self.rate:floor()
end

return Poisson
