-- tide.distributions.Chi2(df): the chi-squared distribution, PyTorch's: exactly
-- Gamma(df / 2, 1 / 2), whose methods it inherits (log_prob, cdf, entropy, moments, sample and
-- rsample, whose gradient reaches df). df must be positive.
local Distribution = require("tide.distributions.Distribution")
local Gamma = require("tide.distributions.Gamma")

local Chi2 = Gamma:extend("Chi2")
Chi2.arg_constraints = require("tide.distributions._arg_constraints").Chi2
Chi2.arg_names = { "df" } -- (PyTorch's, by name too)

function Chi2:init(df, ...)
    require("tide.op_args").no_extra("Chi2", 2, ...)
    local p = Distribution.broadcast_params("Chi2", { "df" }, { df })
    Distribution.require(p[1]:detach():gt(0), "Chi2", "df must be positive")
    Gamma.init(self, p[1] * 0.5, 0.5)
    self.df = p[1]
    self._params = { "df" }
end

return Chi2
