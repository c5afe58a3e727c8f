-- tide.distributions.Kumaraswamy(concentration1, concentration0): the Kumaraswamy
-- distribution on [0, 1], PyTorch 1.13's: a TransformedDistribution of Uniform(0, 1) through
-- u^(1 / concentration0), 1 - that, and that^(1 / concentration1); log_prob, cdf, icdf and
-- rsample (gradients reach both concentrations) through the transforms; mean and variance
-- from b B(1 + n / a, b) by lgamma, entropy PyTorch's closed form. The concentrations must be
-- positive; values in [0, 1].
local core = require("tide.core")
local args = require("tide.op_args")
local Distribution = require("tide.distributions.Distribution")
local TD = require("tide.distributions.TransformedDistribution")
local T = require("tide.distributions.transforms")

local Kumaraswamy = TD:extend("Kumaraswamy")
Kumaraswamy.arg_constraints = require("tide.distributions._arg_constraints").Kumaraswamy
Kumaraswamy.has_rsample = true -- (PyTorch's class field)
Kumaraswamy.arg_names = { "concentration1", "concentration0" } -- (PyTorch's, by name too)

local EULER = 0.57721566490153286060

function Kumaraswamy:init(concentration1, concentration0, ...)
    local who = "Kumaraswamy"
    args.no_extra(who, 3, ...)
    local p, shape = Distribution.broadcast_params(who, { "concentration1", "concentration0" },
        { concentration1, concentration0 })
    self.concentration1, self.concentration0 = p[1], p[2]
    Distribution.require(self.concentration1:detach():gt(0), who,
        "concentration1 must be positive")
    Distribution.require(self.concentration0:detach():gt(0), who,
        "concentration0 must be positive")
    local o = { dtype = self.concentration0.dtype, device = self.concentration0.device }
    local base = require("tide.distributions.Uniform")(core.zeros(shape, o), core.ones(shape, o))
    TD.init(self, base, { T.PowerTransform(self.concentration0:reciprocal()),
        T.AffineTransform(1, -1), T.PowerTransform(self.concentration1:reciprocal()) })
    self._params = { "concentration1", "concentration0" }
end

function Kumaraswamy:support()
    return require("tide.distributions.constraints").unit_interval
end

-- the n-th moment: b B(1 + n / a, b) through lgamma
local function moment(a, b, n)
    local arg1 = n / a + 1
    local log_value = arg1:lgamma() + b:lgamma() - (arg1 + b):lgamma()
    return b * log_value:exp()
end

function Kumaraswamy:mean()
    return moment(self.concentration1, self.concentration0, 1)
end

function Kumaraswamy:variance()
    return moment(self.concentration1, self.concentration0, 2) - self:mean():pow(2)
end

function Kumaraswamy:entropy()
    local t1 = -self.concentration1:reciprocal() + 1
    local t0 = -self.concentration0:reciprocal() + 1
    local h0 = (self.concentration0 + 1):digamma() + EULER
    return t0 + t1 * h0 - self.concentration1:log() - self.concentration0:log()
end

-- PyTorch 1.13's mode: in log space, NaN where a concentration is < 1
function Kumaraswamy:mode()
    local a, b = self.concentration1, self.concentration0
    local lm = b:reciprocal() * b:neg():log1p() - (b:neg() * a):log1p()
    return lm:masked_fill(b:lt(1):logical_or(a:lt(1)), 0 / 0):exp()
end

return Kumaraswamy
