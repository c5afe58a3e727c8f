-- tide.distributions.Cauchy(loc, scale): the Cauchy (Lorentz) distribution, PyTorch's formulas
-- (log_prob, cdf, icdf, entropy); rsample(shape) is loc + scale tan(pi (u - 1/2)) with u
-- uniform (the reparametrization: gradients reach loc and scale). Its mean is NaN and its
-- variance infinite, as PyTorch's. scale must be positive.
local core = require("tide.core")
local Distribution = require("tide.distributions.Distribution")

local Cauchy = Distribution:extend("Cauchy")
Cauchy.arg_constraints = require("tide.distributions._arg_constraints").Cauchy
Cauchy.has_rsample = true -- (PyTorch's class field)
Cauchy.arg_names = { "loc", "scale" } -- (PyTorch's, by name too)

function Cauchy:init(loc, scale, ...)
    require("tide.op_args").no_extra("Cauchy", 3, ...)
    local p, shape = Distribution.broadcast_params("Cauchy", { "loc", "scale" }, { loc, scale })
    self.loc, self.scale = p[1], p[2]
    Distribution.require(self.scale:detach():gt(0), "Cauchy", "scale must be positive")
    self.batch_shape, self.event_shape = shape, {}
    self._params = { "loc", "scale" }
end

local function full(self, v)
    return core.full(self.batch_shape, v, { dtype = self.loc.dtype, device = self.loc.device })
end

function Cauchy:mean()
    return full(self, 0 / 0)
end

function Cauchy:variance()
    return full(self, math.huge)
end

function Cauchy:stddev()
    return full(self, math.huge)
end

function Cauchy:rsample(shape)
    local s = self:extended_shape(shape, "Cauchy.rsample")
    local u = core.rand(s, { dtype = self.loc.dtype, device = self.loc.device })
    return self.loc + ((u - 0.5) * math.pi):tan() * self.scale
end

function Cauchy:log_prob(value)
    value = self:value_tensor(value, "Cauchy.log_prob", self.loc)
    return -self.scale:log() - ((value - self.loc) / self.scale):pow(2):log1p() -
        math.log(math.pi)
end

function Cauchy:cdf(value)
    value = self:value_tensor(value, "Cauchy.cdf", self.loc)
    return ((value - self.loc) / self.scale):atan() / math.pi + 0.5
end

function Cauchy:icdf(value)
    value = self:value_tensor(value, "Cauchy.icdf", self.loc)
    return ((value - 0.5) * math.pi):tan() * self.scale + self.loc
end

function Cauchy:entropy()
    return self.scale:log() + math.log(4 * math.pi)
end

-- PyTorch 1.13's mode: loc
function Cauchy:mode()
    return self.loc
end

return Cauchy
