-- tide.distributions.Pareto(scale, alpha): the Pareto type I distribution, PyTorch 1.13's: a
-- TransformedDistribution of Exponential(alpha) through exp and AffineTransform(0, scale), so
-- y = scale exp(e); log_prob, cdf, icdf and rsample (gradients reach scale and alpha) through
-- the transforms; mean inf for alpha <= 1, variance inf for alpha <= 2 (PyTorch's clamps);
-- entropy log(scale / alpha) + 1 + 1 / alpha. scale and alpha must be positive; values >=
-- scale (support() is greater_than_eq(scale)).
local args = require("tide.op_args")
local Distribution = require("tide.distributions.Distribution")
local TD = require("tide.distributions.TransformedDistribution")
local T = require("tide.distributions.transforms")

local Pareto = TD:extend("Pareto")
Pareto.arg_constraints = require("tide.distributions._arg_constraints").Pareto
Pareto.has_rsample = true -- (PyTorch's class field)
Pareto.arg_names = { "scale", "alpha" } -- (PyTorch's, by name too)

function Pareto:init(scale, alpha, ...)
    args.no_extra("Pareto", 3, ...)
    local p = Distribution.broadcast_params("Pareto", { "scale", "alpha" }, { scale, alpha })
    self.scale, self.alpha = p[1], p[2]
    Distribution.require(self.alpha:detach():gt(0), "Pareto", "alpha must be positive")
    Distribution.require(self.scale:detach():gt(0), "Pareto", "scale must be positive")
    local base = require("tide.distributions.Exponential")(self.alpha)
    TD.init(self, base, { T.ExpTransform(), T.AffineTransform(0, self.scale) })
    self._params = { "scale", "alpha" }
end

function Pareto:support()
    local c = require("tide.distributions.constraints").greater_than_eq(self.scale)
    c._text = function()
        return ">= scale"
    end
    return c
end

function Pareto:mean()
    local a = self.alpha:clamp(1, nil)
    return a * self.scale / (a - 1)
end

function Pareto:mode()
    return self.scale
end

function Pareto:variance()
    local a = self.alpha:clamp(2, nil)
    return self.scale:pow(2) * a / ((a - 1):pow(2) * (a - 2))
end

function Pareto:cdf(value)
    local who = "Pareto.cdf"
    value = self:value_tensor(value, who, self.scale)
    Distribution.require(value:detach():ge(self.scale:detach()), who,
        "the values must be >= scale")
    return TD.cdf(self, value)
end

function Pareto:entropy()
    return (self.scale / self.alpha):log() + (self.alpha:reciprocal() + 1)
end

return Pareto
