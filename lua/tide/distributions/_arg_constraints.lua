-- tide.distributions._arg_constraints: PyTorch 1.13's arg_constraints of each family, by class
-- name: the constraint each parameter satisfies (tide.distributions.constraints objects; the
-- keys PyTorch's, both probs and logits where either may be given). Each class file sets
-- Cls.arg_constraints = this[name]; the wrappers (Independent, MixtureSameFamily,
-- TransformedDistribution) have {} as PyTorch's.
local C = require("tide.distributions.constraints")

local pos, real = C.positive, C.real
local real1 = C.independent(C.real, 1)
local loc_scale = { loc = real, scale = pos }
local bern = { probs = C.unit_interval, logits = real }
local cat = { probs = C.simplex, logits = real1 }
local mvn = { loc = real1, covariance_matrix = C.positive_definite,
    precision_matrix = C.positive_definite, scale_tril = C.lower_cholesky }

return {
    Normal = loc_scale, Laplace = loc_scale, Cauchy = loc_scale, Gumbel = loc_scale,
    LogNormal = loc_scale, LogisticNormal = loc_scale,
    Bernoulli = bern, ContinuousBernoulli = bern, Geometric = bern, RelaxedBernoulli = bern,
    LogitRelaxedBernoulli = bern,
    Categorical = cat, OneHotCategorical = cat, Multinomial = cat, RelaxedOneHotCategorical = cat,
    ExpRelaxedCategorical = cat,
    Beta = { concentration1 = pos, concentration0 = pos },
    Kumaraswamy = { concentration1 = pos, concentration0 = pos },
    Binomial = { total_count = C.nonnegative_integer, probs = C.unit_interval, logits = real },
    NegativeBinomial = { total_count = C.greater_than_eq(0), probs = C.half_open_interval(0, 1),
        logits = real },
    Chi2 = { df = pos },
    Dirichlet = { concentration = C.independent(pos, 1) },
    Exponential = { rate = pos },
    FisherSnedecor = { df1 = pos, df2 = pos },
    Gamma = { concentration = pos, rate = pos },
    HalfCauchy = { scale = pos }, HalfNormal = { scale = pos },
    LKJCholesky = { concentration = pos },
    LowRankMultivariateNormal = { loc = real1, cov_factor = C.independent(real, 2),
        cov_diag = C.independent(pos, 1) },
    MultivariateNormal = mvn,
    Pareto = { alpha = pos, scale = pos },
    Poisson = { rate = C.nonnegative },
    StudentT = { df = pos, loc = real, scale = pos },
    Uniform = { low = C.dependent, high = C.dependent },
    VonMises = { loc = real, concentration = pos },
    Weibull = { scale = pos, concentration = pos },
    Wishart = { covariance_matrix = C.positive_definite, precision_matrix = C.positive_definite,
        scale_tril = C.lower_cholesky, df = C.greater_than(0) },
    Independent = {}, MixtureSameFamily = {}, TransformedDistribution = {},
}
