-- tide.distributions.StudentT(df[, loc, scale]): Student's t distribution (loc 0 and scale 1
-- by default), PyTorch's formulas; rsample(shape) is loc + scale X / sqrt(Z / df) with
-- X ~ N(0, 1) and Z ~ Chi2(df) (Chi2's rsample: gradients reach df, loc and scale). The mean
-- is NaN for df <= 1, the variance infinite for 1 < df <= 2 and NaN for df <= 1, as PyTorch's.
-- df and scale must be positive.
local core = require("tide.core")
local Distribution = require("tide.distributions.Distribution")
local Chi2 = require("tide.distributions.Chi2")

local StudentT = Distribution:extend("StudentT")
StudentT.arg_constraints = require("tide.distributions._arg_constraints").StudentT
StudentT.has_rsample = true -- (PyTorch's class field)
StudentT.arg_names = { "df", "loc", "scale" } -- (PyTorch's, by name too)

local HALF_LOG_PI = 0.5 * math.log(math.pi)

function StudentT:init(df, loc, scale, ...)
    require("tide.op_args").no_extra("StudentT", 4, ...)
    if loc == nil then
        loc = 0
    end
    if scale == nil then
        scale = 1
    end
    local p, shape = Distribution.broadcast_params("StudentT", { "df", "loc", "scale" },
        { df, loc, scale })
    self.df, self.loc, self.scale = p[1], p[2], p[3]
    Distribution.require(self.df:detach():gt(0), "StudentT", "df must be positive")
    Distribution.require(self.scale:detach():gt(0), "StudentT", "scale must be positive")
    self.batch_shape, self.event_shape = shape, {}
    self._params = { "df", "loc", "scale" }
end

-- masked_fill as PyTorch's index assignment: the filled elements pass no gradient (a NaN one
-- included, which where's would pass on)
function StudentT:mean()
    return self.loc:masked_fill(self.df:detach():le(1), 0 / 0)
end

function StudentT:variance()
    local df = self.df
    local d = df:detach()
    local safe = core.where(d:gt(2), df, 3) -- (no inf in the gradient of the filled ones)
    return (self.scale:pow(2) * safe / (safe - 2))
        :masked_fill(d:le(2):logical_and(d:gt(1)), math.huge):masked_fill(d:le(1), 0 / 0)
end

function StudentT:stddev()
    return self:variance():sqrt()
end

function StudentT:rsample(shape)
    local s = self:extended_shape(shape, "StudentT.rsample")
    local x = core.randn(s, { dtype = self.df.dtype, device = self.df.device })
    local z = Chi2(self.df):rsample(shape)
    return self.loc + self.scale * x * (z / self.df):rsqrt()
end

function StudentT:log_prob(value)
    value = self:value_tensor(value, "StudentT.log_prob", self.loc)
    local df = self.df
    local y = (value - self.loc) / self.scale
    local z = self.scale:log() + df:log() * 0.5 + HALF_LOG_PI + (df * 0.5):lgamma() -
        ((df + 1) * 0.5):lgamma()
    return (df + 1) * -0.5 * (y:pow(2) / df):log1p() - z
end

function StudentT:entropy()
    local df = self.df
    local lbeta = (df * 0.5):lgamma() + HALF_LOG_PI - ((df + 1) * 0.5):lgamma()
    return self.scale:log() + (df + 1) * 0.5 * (((df + 1) * 0.5):digamma() -
        (df * 0.5):digamma()) + df:log() * 0.5 + lbeta
end

-- PyTorch 1.13's mode: loc
function StudentT:mode()
    return self.loc
end

return StudentT
