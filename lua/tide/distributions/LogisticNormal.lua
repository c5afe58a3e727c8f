-- tide.distributions.LogisticNormal(loc, scale): the logistic-normal distribution on the
-- simplex, PyTorch 1.13's: a TransformedDistribution of Independent(Normal(loc, scale), 1)
-- through StickBreakingTransform, so the event has one entry more than loc's last dim (a
-- 0-dim loc and scale read as of one entry); log_prob and rsample (gradients reach loc and
-- scale) through the transform. scale must be positive; values on the simplex.
local args = require("tide.op_args")
local Distribution = require("tide.distributions.Distribution")
local TD = require("tide.distributions.TransformedDistribution")
local T = require("tide.distributions.transforms")

local LogisticNormal = TD:extend("LogisticNormal")
LogisticNormal.arg_constraints = require("tide.distributions._arg_constraints").LogisticNormal
LogisticNormal.arg_names = { "loc", "scale" } -- (PyTorch's, by name too)

function LogisticNormal:init(loc, scale, ...)
    local who = "LogisticNormal"
    args.no_extra(who, 3, ...)
    local p, shape = Distribution.broadcast_params(who, { "loc", "scale" }, { loc, scale })
    Distribution.require(p[2]:detach():gt(0), who, "scale must be positive")
    if #shape == 0 then -- (PyTorch's base_dist.expand([1]))
        p[1], p[2] = p[1]:reshape({ 1 }), p[2]:reshape({ 1 })
    end
    self.loc, self.scale = p[1], p[2]
    TD.init(self, require("tide.distributions.Normal")(self.loc, self.scale),
        T.StickBreakingTransform())
    self.has_rsample = true
    self._params = { "loc", "scale" }
end

function LogisticNormal:support()
    return require("tide.distributions.constraints").simplex
end

return LogisticNormal
