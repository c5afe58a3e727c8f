-- tide.distributions: probability distributions as PyTorch 1.13's torch.distributions, for the
-- scripts that sample and score (policy gradients, VAEs): Normal, Categorical, Bernoulli,
-- Uniform, Exponential, Laplace, MultivariateNormal, Gamma, Beta, Dirichlet, Independent,
-- Cauchy, HalfCauchy, HalfNormal, LogNormal, Gumbel, Weibull, Chi2, StudentT, Poisson,
-- Geometric, Binomial, OneHotCategorical and ContinuousBernoulli, each with sample, log_prob,
-- entropy and its moments (rsample where the draw is differentiable), and kl_divergence
-- between two of one family (and PyTorch's closed forms across). Parameters and values are
-- tensors on one device (numbers are taken as tensors of the parameters' dtype); Categorical's
-- classes are 1-based, as every index in tide. One class per file, loaded on first use.
--
--     local dist = tide.distributions.Categorical({logits = policy(state)})
--     local action = dist:sample()                   -- 1-based
--     local loss = -(dist:log_prob(action) * advantage):mean()
local M = {}

local lazy = {
    Distribution = "tide.distributions.Distribution",
    Normal = "tide.distributions.Normal",
    Categorical = "tide.distributions.Categorical",
    Bernoulli = "tide.distributions.Bernoulli",
    Uniform = "tide.distributions.Uniform",
    Exponential = "tide.distributions.Exponential",
    Laplace = "tide.distributions.Laplace",
    Independent = "tide.distributions.Independent",
    MultivariateNormal = "tide.distributions.MultivariateNormal",
    Gamma = "tide.distributions.Gamma",
    Beta = "tide.distributions.Beta",
    Dirichlet = "tide.distributions.Dirichlet",
    Cauchy = "tide.distributions.Cauchy",
    HalfCauchy = "tide.distributions.HalfCauchy",
    HalfNormal = "tide.distributions.HalfNormal",
    LogNormal = "tide.distributions.LogNormal",
    Gumbel = "tide.distributions.Gumbel",
    Weibull = "tide.distributions.Weibull",
    Chi2 = "tide.distributions.Chi2",
    StudentT = "tide.distributions.StudentT",
    Poisson = "tide.distributions.Poisson",
    Geometric = "tide.distributions.Geometric",
    Binomial = "tide.distributions.Binomial",
    OneHotCategorical = "tide.distributions.OneHotCategorical",
    ContinuousBernoulli = "tide.distributions.ContinuousBernoulli",
}

-- kl_divergence(p, q): KL(p || q) for two distributions of one family (tide.distributions.kl)
function M.kl_divergence(p, q)
    return require("tide.distributions.kl")(p, q)
end

return require("tide._lazy")(M, lazy)
