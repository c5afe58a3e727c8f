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
    -- transforms and the distributions built on them (spec/transforms_spec.lua)
    TransformedDistribution = "tide.distributions.TransformedDistribution",
    LogisticNormal = "tide.distributions.LogisticNormal",
    Pareto = "tide.distributions.Pareto",
    Kumaraswamy = "tide.distributions.Kumaraswamy",
    LogitRelaxedBernoulli = "tide.distributions.LogitRelaxedBernoulli",
    RelaxedBernoulli = "tide.distributions.RelaxedBernoulli",
    ExpRelaxedCategorical = "tide.distributions.ExpRelaxedCategorical",
    RelaxedOneHotCategorical = "tide.distributions.RelaxedOneHotCategorical",
    transforms = "tide.distributions.transforms",
    constraints = "tide.distributions.constraints",
    constraint_registry = "tide.distributions.constraint_registry",
    -- the third batch (spec/distributions3_spec.lua)
    ExponentialFamily = "tide.distributions.ExponentialFamily",
    FisherSnedecor = "tide.distributions.FisherSnedecor",
    LKJCholesky = "tide.distributions.LKJCholesky",
    MixtureSameFamily = "tide.distributions.MixtureSameFamily",
    Multinomial = "tide.distributions.Multinomial",
    NegativeBinomial = "tide.distributions.NegativeBinomial",
    OneHotCategoricalStraightThrough = "tide.distributions.OneHotCategoricalStraightThrough",
    VonMises = "tide.distributions.VonMises",
    Wishart = "tide.distributions.Wishart",
    LowRankMultivariateNormal = "tide.distributions.LowRankMultivariateNormal",
}

-- kl_divergence(p, q): KL(p || q) for two distributions of one family (tide.distributions.kl)
-- (p and q by name too, PyTorch's keywords: kl_divergence(p, {q = q}), kl_divergence({p =, q =}))
function M.kl_divergence(p, q, ...)
    local P = require("tide.pytorch_args")
    local n = select("#", ...)
    local opts = n == 0 and (q == nil and P.is_options(p) and p or P.is_options(q) and q)
    if opts then
        if opts == p then
            p = nil
        end
        q = nil
        for key, v in pairs(opts) do
            if key == "p" and p ~= nil then
                P.twice("kl_divergence", "p", 1)
            elseif key ~= "p" and key ~= "q" then
                require("tide.autograd").raise(("tide: kl_divergence: unknown option %s; it " ..
                    "takes p and q"):format(key))
            end
            if key == "p" then
                p = v
            else
                q = v
            end
        end
    end
    return require("tide.distributions.kl")(p, q, ...)
end

-- register_kl(P, Q)(fn): fn(p, q) becomes kl_divergence's closed form for classes P and Q
-- (and their subclasses; the most specific pair wins), PyTorch's decorator
function M.register_kl(P, Q, ...)
    return require("tide.distributions._kl_registry").register_kl(P, Q, ...)
end

-- the transforms at tide.distributions.X too (PyTorch's `from .transforms import *`), and
-- identity_transform, biject_to and transform_to
for _, name in ipairs({ "Transform", "ComposeTransform", "ExpTransform", "PowerTransform",
    "SigmoidTransform", "TanhTransform", "SoftplusTransform", "AbsTransform", "AffineTransform",
    "SoftmaxTransform", "StickBreakingTransform", "LowerCholeskyTransform",
    "CorrCholeskyTransform", "IndependentTransform", "ReshapeTransform", "CatTransform",
    "StackTransform", "CumulativeDistributionTransform" }) do
    lazy[name] = "tide.distributions.transforms." .. name
end
for _, name in ipairs({ "identity_transform", "biject_to", "transform_to" }) do
    lazy[name] = function()
        local from = name == "identity_transform" and "tide.distributions.transforms" or
            "tide.distributions.constraint_registry"
        rawset(M, name, require(from)[name])
    end
end

-- PyTorch's submodules, for `from torch.distributions.normal import Normal`:
-- tide.distributions.normal.Normal is tide.distributions.Normal (each submodule holds its file's
-- classes; another name there raises, naming what it holds)
local SUBMODULES = {
    distribution = { "Distribution" }, normal = { "Normal" }, categorical = { "Categorical" },
    bernoulli = { "Bernoulli" }, uniform = { "Uniform" }, exponential = { "Exponential" },
    laplace = { "Laplace" }, independent = { "Independent" },
    multivariate_normal = { "MultivariateNormal" }, gamma = { "Gamma" }, beta = { "Beta" },
    dirichlet = { "Dirichlet" }, cauchy = { "Cauchy" }, half_cauchy = { "HalfCauchy" },
    half_normal = { "HalfNormal" }, log_normal = { "LogNormal" }, gumbel = { "Gumbel" },
    weibull = { "Weibull" }, chi2 = { "Chi2" }, studentT = { "StudentT" },
    poisson = { "Poisson" }, geometric = { "Geometric" }, binomial = { "Binomial" },
    one_hot_categorical = { "OneHotCategorical", "OneHotCategoricalStraightThrough" },
    continuous_bernoulli = { "ContinuousBernoulli" },
    transformed_distribution = { "TransformedDistribution" },
    logistic_normal = { "LogisticNormal" }, pareto = { "Pareto" }, kumaraswamy = { "Kumaraswamy" },
    relaxed_bernoulli = { "LogitRelaxedBernoulli", "RelaxedBernoulli" },
    relaxed_categorical = { "ExpRelaxedCategorical", "RelaxedOneHotCategorical" },
    exp_family = { "ExponentialFamily" }, fishersnedecor = { "FisherSnedecor" },
    lkj_cholesky = { "LKJCholesky" }, mixture_same_family = { "MixtureSameFamily" },
    multinomial = { "Multinomial" }, negative_binomial = { "NegativeBinomial" },
    von_mises = { "VonMises" }, wishart = { "Wishart" },
    lowrank_multivariate_normal = { "LowRankMultivariateNormal" },
}
for sub, classes in pairs(SUBMODULES) do
    lazy[sub] = function()
        local holds = {}
        for _, name in ipairs(classes) do
            holds[name] = true
        end
        rawset(M, sub, setmetatable({}, {
            __index = function(self, k)
                if holds[k] then
                    local cls = M[k]
                    rawset(self, k, cls)
                    return cls
                end
                error(("tide: tide.distributions.%s has no %s; it holds %s, as " ..
                    "tide.distributions does"):format(sub, tostring(k),
                    table.concat(classes, ", ")), 2)
            end,
        }))
    end
end

return require("tide._lazy")(M, lazy)
