-- tide.distributions.FisherSnedecor(df1, df2[, {validate_args =}]): the F distribution,
-- PyTorch's formulas: rsample(shape) is X1 / X2 with X1 ~ Gamma(df1 / 2, df1) and
-- X2 ~ Gamma(df2 / 2, df2), both clamped to the dtype's smallest normal, differentiable to both
-- degrees of freedom (Gamma's implicit reparametrization); mean NaN for df2 <= 2, variance NaN
-- for df2 <= 4, mode NaN for df1 <= 2 (PyTorch's). Both must be positive, values positive.
-- No entropy nor cdf, as PyTorch 1.13's.
local core = require("tide.core")
local Distribution = require("tide.distributions.Distribution")
local gamma_rsample = require("tide.distributions.gamma_rsample")
local X = require("tide.distributions._extras")

local FisherSnedecor = Distribution:extend("FisherSnedecor")
FisherSnedecor.arg_constraints = require("tide.distributions._arg_constraints").FisherSnedecor
FisherSnedecor.arg_names = { "df1", "df2", options = true } -- (PyTorch's, by name too)
FisherSnedecor.has_rsample = true

local NAN = 0 / 0

function FisherSnedecor:init(df1, df2, opts, ...)
    local who = "FisherSnedecor"
    local validate = X.trailing(who, 2, opts, ...)
    local p, shape = Distribution.broadcast_params(who, { "df1", "df2" }, { df1, df2 })
    if validate then
        Distribution.require(p[1]:detach():gt(0), who, "df1 must be positive")
        Distribution.require(p[2]:detach():gt(0), who, "df2 must be positive")
    end
    self.df1, self.df2 = p[1], p[2]
    self._validate = validate
    self.batch_shape, self.event_shape = shape, {}
    self._params = { "df1", "df2" }
end

function FisherSnedecor:expand(batch_shape)
    local s = X.expand_shape(self, batch_shape)
    local new = X.copy(self)
    new.df1, new.df2, new.batch_shape = self.df1:expand(s), self.df2:expand(s), s
    return new
end

function FisherSnedecor:support()
    return X.support("positive")
end

function FisherSnedecor:mean()
    local df2 = core.where(self.df2:detach():le(2), NAN, self.df2)
    return df2 / (df2 - 2)
end

function FisherSnedecor:mode()
    local m = (self.df1 - 2) / self.df1 * self.df2 / (self.df2 + 2)
    return core.where(self.df1:detach():le(2), NAN, m)
end

function FisherSnedecor:variance()
    local df1 = self.df1
    local df2 = core.where(self.df2:detach():le(4), NAN, self.df2)
    return df2:pow(2) * 2 * (df1 + df2 - 2) / (df1 * (df2 - 2):pow(2) * (df2 - 4))
end

function FisherSnedecor:stddev()
    return self:variance():sqrt()
end

function FisherSnedecor:rsample(shape)
    local s = self:extended_shape(shape, "FisherSnedecor.rsample")
    local tiny = X.TINY[self.df1.dtype]
    local function draw(df) -- Gamma(df / 2, df)
        return gamma_rsample.sample((df * 0.5):expand(s):contiguous()) / df
    end
    local x1 = draw(self.df1)
    local x2 = draw(self.df2):clamp(tiny, nil)
    return (x1 / x2):clamp(tiny, nil)
end

function FisherSnedecor:log_prob(value)
    local who = "FisherSnedecor.log_prob"
    value = self:value_tensor(value, who, self.df1)
    if self._validate then
        Distribution.require(value:detach():gt(0), who, "the values must be positive")
    end
    local ct1, ct2 = self.df1 * 0.5, self.df2 * 0.5
    local ct3 = self.df1 / self.df2
    local t1 = (ct1 + ct2):lgamma() - ct1:lgamma() - ct2:lgamma()
    local t2 = ct1 * ct3:log() + (ct1 - 1) * value:log()
    local t3 = (ct1 + ct2) * (ct3 * value):log1p()
    return t1 + t2 - t3
end

return FisherSnedecor
