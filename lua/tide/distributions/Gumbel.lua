-- tide.distributions.Gumbel(loc, scale): the Gumbel (type I extreme value) distribution,
-- PyTorch's formulas; rsample(shape) is loc - scale log(-log u) with u uniform in
-- (tiny, 1 - eps), PyTorch's range (gradients reach loc and scale); cdf and icdf through that
-- same uniform, as PyTorch's transforms compute them. scale must be positive.
local core = require("tide.core")
local Distribution = require("tide.distributions.Distribution")

local Gumbel = Distribution:extend("Gumbel")
Gumbel.arg_constraints = require("tide.distributions._arg_constraints").Gumbel
Gumbel.has_rsample = true -- (PyTorch's class field)
Gumbel.arg_names = { "loc", "scale" } -- (PyTorch's, by name too)

local EULER = 0.57721566490153286061
local EPS = { float64 = 2.220446049250313e-16, float32 = 1.1920928955078125e-07,
    float16 = 0.0009765625, bfloat16 = 0.0078125 }
local TINY = { float64 = 2.2250738585072014e-308, float32 = 1.1754943508222875e-38,
    float16 = 6.103515625e-05, bfloat16 = 1.1754943508222875e-38 }

function Gumbel:init(loc, scale, ...)
    require("tide.op_args").no_extra("Gumbel", 3, ...)
    local p, shape = Distribution.broadcast_params("Gumbel", { "loc", "scale" }, { loc, scale })
    self.loc, self.scale = p[1], p[2]
    Distribution.require(self.scale:detach():gt(0), "Gumbel", "scale must be positive")
    self.batch_shape, self.event_shape = shape, {}
    self._params = { "loc", "scale" }
    -- the base uniform's bounds
    self._low, self._high = TINY[self.loc.dtype], 1 - EPS[self.loc.dtype]
end

function Gumbel:mean()
    return self.loc + self.scale * EULER
end

function Gumbel:stddev()
    return self.scale * (math.pi / math.sqrt(6))
end

function Gumbel:variance()
    return self:stddev():pow(2)
end

function Gumbel:rsample(shape)
    local s = self:extended_shape(shape, "Gumbel.rsample")
    local u = core.rand(s, { dtype = self.loc.dtype, device = self.loc.device })
        :mul(self._high - self._low):add(self._low)
    return self.loc - self.scale * (-u:log()):log()
end

function Gumbel:log_prob(value)
    value = self:value_tensor(value, "Gumbel.log_prob", self.loc)
    local y = (self.loc - value) / self.scale
    return (y - y:exp()) - self.scale:log()
end

function Gumbel:cdf(value)
    value = self:value_tensor(value, "Gumbel.cdf", self.loc)
    local u = (-((self.loc - value) / self.scale):exp()):exp()
    return ((u - self._low) / (self._high - self._low)):clamp(0, 1)
end

function Gumbel:icdf(value)
    value = self:value_tensor(value, "Gumbel.icdf", self.loc)
    local u = value * (self._high - self._low) + self._low
    return self.loc - self.scale * (-u:log()):log()
end

function Gumbel:entropy()
    return self.scale:log() + (1 + EULER)
end

-- PyTorch 1.13's mode: loc
function Gumbel:mode()
    return self.loc
end

return Gumbel
