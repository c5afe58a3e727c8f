-- tide.distributions._support: Distribution:support() for the families that do not define
-- their own: PyTorch 1.13's support constraints, by class (a subclass takes its base's, as
-- Chi2 Gamma's); Categorical's classes 1-based, as every index in tide.
local autograd = require("tide.autograd")
local C = require("tide.distributions.constraints")

local BY_NAME = {
    Normal = C.real, Cauchy = C.real, Laplace = C.real, Gumbel = C.real, StudentT = C.real,
    Exponential = C.nonnegative, Gamma = C.nonnegative, HalfCauchy = C.nonnegative,
    HalfNormal = C.nonnegative, LogNormal = C.positive, Weibull = C.positive,
    Beta = C.unit_interval, ContinuousBernoulli = C.unit_interval, Dirichlet = C.simplex,
    Poisson = C.nonnegative_integer, Geometric = C.nonnegative_integer, Bernoulli = C.boolean,
    OneHotCategorical = C.one_hot, MultivariateNormal = C.real_vector,
    Uniform = function(d)
        return C.interval(d.low, d.high)
    end,
    Binomial = function(d)
        return C.integer_interval(0, d.total_count)
    end,
    Categorical = function(d)
        return C.integer_interval(1, d.num_events)
    end,
    Independent = function(d)
        return C.independent(d.base_dist:support(), d.reinterpreted_batch_ndims)
    end,
}

return function(d)
    local cls = getmetatable(d)
    while type(cls) == "table" do
        local s = BY_NAME[rawget(cls, "__name")]
        if s then
            return type(s) == "function" and s(d) or s
        end
        local mt = getmetatable(cls)
        cls = mt and rawget(mt, "__index")
    end
    autograd.raise(("tide: %s: support is not defined for this distribution"):format(
        tostring(d.__name)))
end
