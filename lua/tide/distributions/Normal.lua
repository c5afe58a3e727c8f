-- tide.distributions.Normal(loc, scale): the normal distribution, PyTorch's formulas (log_prob,
-- entropy, cdf, icdf); rsample(shape) is loc + eps scale with eps ~ N(0, 1) (the
-- reparametrization: gradients reach loc and scale), sample(shape) the same without recording.
-- scale must be positive.
local core = require("tide.core")
local Distribution = require("tide.distributions.Distribution")
local ExponentialFamily = require("tide.distributions.ExponentialFamily")

local Normal = ExponentialFamily:extend("Normal") -- (PyTorch's base)
Normal.arg_constraints = require("tide.distributions._arg_constraints").Normal
Normal.has_rsample = true -- (PyTorch's class field)
Normal.arg_names = { "loc", "scale" } -- (PyTorch's, by name too)

local LOG_SQRT_2PI = math.log(math.sqrt(2 * math.pi))

function Normal:init(loc, scale, ...)
    require("tide.op_args").no_extra("Normal", 3, ...)
    local p, shape = Distribution.broadcast_params("Normal", { "loc", "scale" }, { loc, scale })
    self.loc, self.scale = p[1], p[2]
    Distribution.require(self.scale:detach():gt(0), "Normal", "scale must be positive")
    self.batch_shape, self.event_shape = shape, {}
    self._params = { "loc", "scale" }
end

function Normal:mean()
    return self.loc
end

function Normal:stddev()
    return self.scale
end

function Normal:variance()
    return self.scale:pow(2)
end

function Normal:rsample(shape)
    local s = self:extended_shape(shape, "Normal.rsample")
    local eps = core.randn(s, { dtype = self.loc.dtype, device = self.loc.device })
    return self.loc + eps * self.scale
end

function Normal:log_prob(value)
    value = self:value_tensor(value, "Normal.log_prob", self.loc)
    local var = self.scale:pow(2)
    return -((value - self.loc):pow(2)) / (var * 2) - self.scale:log() - LOG_SQRT_2PI
end

function Normal:cdf(value)
    value = self:value_tensor(value, "Normal.cdf", self.loc)
    return ((value - self.loc) * self.scale:reciprocal() / math.sqrt(2)):erf():add(1):mul(0.5)
end

function Normal:icdf(value)
    value = self:value_tensor(value, "Normal.icdf", self.loc)
    return self.loc + self.scale * (value * 2 - 1):erfinv() * math.sqrt(2)
end

function Normal:entropy()
    return self.scale:log():add(0.5 + 0.5 * math.log(2 * math.pi))
end

-- the exponential family's parts (ExponentialFamily's entropy and KL; PyTorch's)
Normal._mean_carrier_measure = 0

function Normal:_natural_params()
    local var = self.scale:pow(2)
    return { self.loc / var, var:reciprocal() * -0.5 }
end

function Normal:_log_normalizer(x, y)
    return x:pow(2) * -0.25 / y + (y:reciprocal() * -math.pi):log() * 0.5
end

-- PyTorch 1.13's mode: loc
function Normal:mode()
    return self.loc
end

return Normal
