-- tide.distributions.Laplace(loc, scale): the Laplace distribution, PyTorch's formulas;
-- rsample(shape) is loc - scale sign(u) log(1 - |u|) with u uniform in (-1, 1) (gradients
-- reach loc and scale). scale must be positive.
local core = require("tide.core")
local Distribution = require("tide.distributions.Distribution")

local Laplace = Distribution:extend("Laplace")
Laplace.arg_constraints = require("tide.distributions._arg_constraints").Laplace
Laplace.has_rsample = true -- (PyTorch's class field)
Laplace.arg_names = { "loc", "scale" } -- (PyTorch's, by name too)

local EPS = { float64 = 2.220446049250313e-16, float32 = 1.1920928955078125e-07,
    float16 = 0.0009765625, bfloat16 = 0.0078125 }

function Laplace:init(loc, scale, ...)
    require("tide.op_args").no_extra("Laplace", 3, ...)
    local p, shape = Distribution.broadcast_params("Laplace", { "loc", "scale" }, { loc, scale })
    self.loc, self.scale = p[1], p[2]
    Distribution.require(self.scale:detach():gt(0), "Laplace", "scale must be positive")
    self.batch_shape, self.event_shape = shape, {}
    self._params = { "loc", "scale" }
end

function Laplace:mean()
    return self.loc
end

function Laplace:stddev()
    return self.scale * math.sqrt(2)
end

function Laplace:variance()
    return self.scale:pow(2) * 2
end

function Laplace:rsample(shape)
    local s = self:extended_shape(shape, "Laplace.rsample")
    local eps = EPS[self.loc.dtype]
    local u = core.rand(s, { dtype = self.loc.dtype, device = self.loc.device })
        :mul(2 - eps):add(eps - 1) -- in (-1 + eps, 1): PyTorch's range
    return self.loc - self.scale * u:sign() * (-u:abs()):log1p()
end

function Laplace:log_prob(value)
    value = self:value_tensor(value, "Laplace.log_prob", self.loc)
    return -(self.scale * 2):log() - (value - self.loc):abs() / self.scale
end

function Laplace:cdf(value)
    value = self:value_tensor(value, "Laplace.cdf", self.loc)
    local d = value - self.loc
    return -(d:sign() * (-d:abs() / self.scale):expm1()) * 0.5 + 0.5
end

function Laplace:icdf(value)
    value = self:value_tensor(value, "Laplace.icdf", self.loc)
    local term = value - 0.5
    return self.loc - self.scale * term:sign() * (term:abs() * -2):log1p()
end

function Laplace:entropy()
    return (self.scale * 2):log() + 1
end

-- PyTorch 1.13's mode: loc
function Laplace:mode()
    return self.loc
end

return Laplace
