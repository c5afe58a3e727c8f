-- tide.distributions.kl: kl_divergence(p, q) = KL(p || q) for two distributions of one family
-- (Normal, Categorical, Bernoulli, Uniform, Exponential, Laplace, MultivariateNormal, Gamma,
-- Beta, Dirichlet, Independent, Poisson, Geometric, Binomial, HalfNormal, Gumbel, Cauchy,
-- HalfCauchy, LogNormal, OneHotCategorical, ContinuousBernoulli; Chi2 as a Gamma), and the
-- pairs across families that PyTorch 1.13 writes in closed form (CROSS below), its formulas,
-- with its infinities (q giving 0 where p does not) and zeros (p giving 0).
-- LowRankMultivariateNormal with itself and with MultivariateNormal (both ways) as PyTorch's;
-- two of one ExponentialFamily without a closed form (Wishart) by its Bregman divergence.
-- Pareto with itself, Exponential, Gamma, Normal and Uniform; two TransformedDistribution
-- through the same transforms by their bases; the pairs of register_kl (dispatch below).
local core = require("tide.core")
local autograd = require("tide.autograd")
local raise = autograd.raise

local function softplus(x) -- the op table's (PyTorch's F.softplus, its threshold included)
    return x:softplus()
end

local KL = {}

local EULER = 0.57721566490153286061

function KL.Normal(p, q)
    local var_ratio = (p.scale / q.scale):pow(2)
    local t1 = ((p.loc - q.loc) / q.scale):pow(2)
    return (var_ratio + t1 - 1 - var_ratio:log()) * 0.5
end

function KL.Categorical(p, q)
    local t = p.probs * (p.logits - q.logits)
    t = core.where(q.probs:eq(0):expand(t:size()), math.huge, t)
    t = core.where(p.probs:eq(0):expand(t:size()), 0, t)
    return t:sum(-1)
end

function KL.Bernoulli(p, q)
    local t1 = p.probs * (softplus(-q.logits) - softplus(-p.logits))
    t1 = core.where(q.probs:eq(0), math.huge, t1)
    t1 = core.where(p.probs:eq(0), 0, t1)
    local t2 = (-p.probs + 1) * (softplus(q.logits) - softplus(p.logits))
    t2 = core.where(q.probs:eq(1), math.huge, t2)
    t2 = core.where(p.probs:eq(1), 0, t2)
    return t1 + t2
end

-- log((q.high - q.low) / (p.high - p.low)) where p's support lies in q's, else inf
function KL.Uniform(p, q)
    local r = ((q.high - q.low) / (p.high - p.low)):log()
    local outside = q.low:gt(p.low):logical_or(q.high:lt(p.high))
    return core.where(outside, math.huge, r)
end

function KL.Exponential(p, q)
    local rate_ratio = q.rate / p.rate
    return -rate_ratio:log() + rate_ratio - 1
end

function KL.Laplace(p, q)
    local scale_ratio = p.scale / q.scale
    local loc_abs_diff = (p.loc - q.loc):abs()
    return -scale_ratio:log() + loc_abs_diff / q.scale +
        scale_ratio * (-loc_abs_diff / p.scale):exp() - 1
end

-- PyTorch's: log det ratio, the trace of (Lq^-1 Lp)(Lq^-1 Lp)^T and q's Mahalanobis distance
-- of p's mean
function KL.MultivariateNormal(p, q)
    local MVN = require("tide.distributions.MultivariateNormal")
    local n = p.event_shape[1]
    if q.event_shape[1] ~= n then
        raise(("tide: kl_divergence: MultivariateNormal of %d and of %d dims"):format(n,
            q.event_shape[1]))
    end
    local Lp, Lq = p._unbroadcasted_scale_tril, q._unbroadcasted_scale_tril
    local half_term1 = MVN.half_log_det(Lq) - MVN.half_log_det(Lp)
    local bs = (Lp:detach():sum(-1, true) + Lq:detach():sum(-1, true)):size()
    bs[#bs] = n
    local X = require("tide.linalg").solve_triangular(Lq:expand(bs), Lp:expand(bs),
        { upper = false })
    local term2 = X:pow(2):sum(-1):sum(-1)
    local term3 = MVN.mahalanobis(Lq, q.loc - p.loc)
    return half_term1 + (term2 + term3 - n) * 0.5
end

function KL.Gamma(p, q)
    local t1 = q.concentration * (p.rate / q.rate):log()
    local t2 = q.concentration:lgamma() - p.concentration:lgamma()
    local t3 = (p.concentration - q.concentration) * p.concentration:digamma()
    local t4 = (q.rate - p.rate) * (p.concentration / p.rate)
    return t1 + t2 + t3 + t4
end

function KL.Beta(p, q)
    local sp = p.concentration1 + p.concentration0
    local sq = q.concentration1 + q.concentration0
    local t1 = q.concentration1:lgamma() + q.concentration0:lgamma() + sp:lgamma()
    local t2 = p.concentration1:lgamma() + p.concentration0:lgamma() + sq:lgamma()
    local t3 = (p.concentration1 - q.concentration1) * p.concentration1:digamma()
    local t4 = (p.concentration0 - q.concentration0) * p.concentration0:digamma()
    local t5 = (sq - sp) * sp:digamma()
    return t1 - t2 + t3 + t4 + t5
end

function KL.Dirichlet(p, q)
    local sp, sq = p.concentration:sum(-1), q.concentration:sum(-1)
    local t1 = sp:lgamma() - sq:lgamma()
    local t2 = (p.concentration:lgamma() - q.concentration:lgamma()):sum(-1)
    local t3 = p.concentration - q.concentration
    local t4 = p.concentration:digamma() - sp:digamma():unsqueeze(-1)
    return t1 - t2 + (t3 * t4):sum(-1)
end

local kl

-- the bases' divergence summed over the reinterpreted dims (the same number on both sides)
function KL.Independent(p, q)
    if p.reinterpreted_batch_ndims ~= q.reinterpreted_batch_ndims then
        raise(("tide: kl_divergence: Independent over %d and %d dims; reinterpret as many on " ..
            "both sides"):format(p.reinterpreted_batch_ndims, q.reinterpreted_batch_ndims))
    end
    return require("tide.distributions.Independent").sum_rightmost(kl(p.base_dist,
        q.base_dist), p.reinterpreted_batch_ndims)
end

-- ---- the second batch's families (PyTorch 1.13's kl.py) ----

function KL.Poisson(p, q)
    return p.rate * (p.rate:log() - q.rate:log()) - (p.rate - q.rate)
end

function KL.Geometric(p, q)
    return -p:entropy() - (-q.probs):log1p() / p.probs - q.logits
end

-- PyTorch's: q's total_count above p's is refused, below it gives inf
function KL.Binomial(p, q)
    local np, nq = p.total_count, q.total_count
    if np:detach():lt(nq:detach()):any():item() then
        raise("tide: kl_divergence: Binomial with q's total_count above p's has no closed " ..
            "form here (PyTorch: not implemented); give q a total_count <= p's")
    end
    local r = np * (p.probs * (p.logits - q.logits) + (-p.probs):log1p() - (-q.probs):log1p())
    return core.where(np:detach():gt(nq:detach()), math.huge, r)
end

function KL.HalfNormal(p, q)
    return KL.Normal(p.base_dist, q.base_dist)
end

function KL.LogNormal(p, q) -- (PyTorch's: the two transforms are the same exp)
    return KL.Normal(p.base_dist, q.base_dist)
end

function KL.Gumbel(p, q)
    local ct1 = p.scale / q.scale
    local ct2 = q.loc / q.scale
    local ct3 = p.loc / q.scale
    local t1 = -ct1:log() - ct2 + ct3
    local t2 = ct1 * EULER
    local t3 = (ct2 + (ct1 + 1):lgamma() - ct3):exp()
    return t1 + t2 + t3 - (1 + EULER)
end

function KL.OneHotCategorical(p, q)
    return KL.Categorical(p._categorical, q._categorical)
end

function KL.Cauchy(p, q)
    local t1 = ((p.scale + q.scale):pow(2) + (p.loc - q.loc):pow(2)):log()
    local t2 = (p.scale * q.scale * 4):log()
    return t1 - t2
end

function KL.HalfCauchy(p, q)
    return KL.Cauchy(p.base_dist, q.base_dist)
end

function KL.ContinuousBernoulli(p, q)
    local t1 = p:mean() * (p.logits - q.logits)
    local t2 = p:_cont_bern_log_norm() + (-p.probs):log1p()
    local t3 = -q:_cont_bern_log_norm() - (-q.probs):log1p()
    return t1 + t2 + t3
end

-- ---- pairs across families, PyTorch's closed forms (keyed "P|Q") ----

local LOG_2PI = math.log(2 * math.pi)
local CROSS = {}

CROSS["Bernoulli|Poisson"] = function(p, q)
    return -p:entropy() - (p.probs * q.rate:log() - q.rate)
end

CROSS["Exponential|Gamma"] = function(p, q)
    local ratio = q.rate / p.rate
    local t1 = -q.concentration * ratio:log()
    return t1 + ratio + q.concentration:lgamma() + q.concentration * EULER - (1 + EULER)
end

CROSS["Exponential|Gumbel"] = function(p, q)
    local prod = p.rate * q.scale
    local lsr = q.loc / q.scale
    local t1 = prod:log() - 1
    local t2 = lsr:exp() * prod / (prod + 1)
    local t3 = prod:reciprocal()
    return t1 - lsr + t2 + t3
end

CROSS["Exponential|Normal"] = function(p, q)
    local var_normal = q.scale:pow(2)
    local rate_sqr = p.rate:pow(2)
    local t1 = (rate_sqr * var_normal):log() * 0.5 + 0.5 * LOG_2PI
    local t2 = rate_sqr:reciprocal()
    local t3 = q.loc / p.rate
    local t4 = q.loc:pow(2) * 0.5
    return t1 - 1 + (t2 - t3 + t4) / var_normal
end

CROSS["Gamma|Exponential"] = function(p, q)
    return -p:entropy() - q.rate:log() + q.rate * p.concentration / p.rate
end

CROSS["Gamma|Gumbel"] = function(p, q)
    local a = p.concentration
    local prod = p.rate * q.scale
    local lsr = q.loc / q.scale
    local t1 = (a - 1) * a:digamma() - a:lgamma() - a
    local t2 = prod:log() + a / prod
    local t3 = lsr:exp() * (prod:reciprocal() + 1):pow(-a) - lsr
    return t1 + t2 + t3
end

CROSS["Gamma|Normal"] = function(p, q)
    local a = p.concentration
    local var_normal = q.scale:pow(2)
    local beta_sqr = p.rate:pow(2)
    local t1 = (beta_sqr * var_normal):log() * 0.5 + 0.5 * LOG_2PI - a - a:lgamma()
    local t2 = (a:pow(2) + a) * 0.5 / beta_sqr
    local t3 = q.loc * a / p.rate
    local t4 = q.loc:pow(2) * 0.5
    return t1 + (a - 1) * a:digamma() + (t2 - t3 + t4) / var_normal
end

CROSS["Gumbel|Normal"] = function(p, q)
    local ratio = p.scale / q.scale
    local t1 = (ratio / math.sqrt(2 * math.pi)):log()
    local t2 = (ratio * (math.pi * 0.5)):pow(2) / 3
    local t3 = ((p.loc + p.scale * EULER - q.loc) / q.scale):pow(2) * 0.5
    return -t1 + t2 + t3 - (EULER + 1)
end

CROSS["Laplace|Normal"] = function(p, q)
    local var_normal = q.scale:pow(2)
    local r = p.scale:pow(2) / var_normal
    local t1 = (r * (2 / math.pi)):log() * 0.5
    local t2 = p.loc:pow(2) * 0.5
    local t3 = p.loc * q.loc
    local t4 = q.loc:pow(2) * 0.5
    return -t1 + r + (t2 - t3 + t4) / var_normal - 1
end

CROSS["Normal|Gumbel"] = function(p, q)
    local msr = p.loc / q.scale
    local vsr = (p.scale / q.scale):pow(2)
    local lsr = q.loc / q.scale
    local t1 = vsr:log() * 0.5
    local t2 = msr - lsr
    local t3 = (-msr + vsr * 0.5 + lsr):exp()
    return -t1 + t2 + t3 - (0.5 * (1 + LOG_2PI))
end

CROSS["Normal|Laplace"] = function(p, q)
    local d = p.loc - q.loc
    local ratio = p.scale / q.scale
    local dr = d / p.scale
    local t1 = ratio:log()
    local t2 = p.scale * (dr:pow(2) * -0.5):exp() * math.sqrt(2 / math.pi)
    local t3 = d * (dr * math.sqrt(0.5)):erf()
    return -t1 + (t2 + t3) / q.scale - (0.5 * (1 + math.log(0.5 * math.pi)))
end

CROSS["Uniform|Exponential"] = function(p, q)
    local r = q.rate * (p.high + p.low) / 2 - ((p.high - p.low) * q.rate):log()
    return core.where(p.low:detach():lt(0), math.huge, r)
end

local function x_log_x(x)
    return x * x:log()
end

CROSS["Uniform|Gamma"] = function(p, q)
    local w = p.high - p.low
    local t1 = w:log()
    local t2 = q.concentration:lgamma() - q.concentration * q.rate:log()
    local t3 = (-q.concentration + 1) * (x_log_x(p.high) - x_log_x(p.low) - w) / w
    local t4 = q.rate * (p.high + p.low) / 2
    local r = -t1 + t2 + t3 + t4
    return core.where(p.low:detach():lt(0), math.huge, r)
end

CROSS["Uniform|Gumbel"] = function(p, q)
    local c = q.scale / (p.high - p.low)
    local hd = (p.high - q.loc) / q.scale
    local ld = (p.low - q.loc) / q.scale
    local t1 = c:log() + (hd + ld) * 0.5
    local t2 = c * ((-hd):exp() - (-ld):exp())
    return t1 - t2
end

CROSS["Uniform|Normal"] = function(p, q)
    local w = p.high - p.low
    local t1 = (q.scale * math.sqrt(math.pi * 2) / w):log()
    local t2 = w:pow(2) / 12
    local t3 = ((p.high + p.low - q.loc * 2) / 2):pow(2)
    return t1 + (t2 + t3) * 0.5 / q.scale:pow(2)
end

local function beta_mean(p)
    return p.concentration1 / (p.concentration1 + p.concentration0)
end

CROSS["Beta|ContinuousBernoulli"] = function(p, q)
    return -p:entropy() - beta_mean(p) * q.logits - (-q.probs):log1p() -
        q:_cont_bern_log_norm()
end

CROSS["Beta|Exponential"] = function(p, q)
    return -p:entropy() - q.rate:log() + q.rate * beta_mean(p)
end

CROSS["Beta|Gamma"] = function(p, q)
    local t1 = -p:entropy()
    local t2 = q.concentration:lgamma() - q.concentration * q.rate:log()
    local t3 = (q.concentration - 1) * (p.concentration1:digamma() -
        (p.concentration1 + p.concentration0):digamma())
    local t4 = q.rate * beta_mean(p)
    return t1 + t2 - t3 + t4
end

CROSS["Beta|Normal"] = function(p, q)
    local e = beta_mean(p)
    local var_normal = q.scale:pow(2)
    local t1 = -p:entropy()
    local t2 = (var_normal * (2 * math.pi)):log() * 0.5
    local t3 = (e * (-e + 1) / (p.concentration1 + p.concentration0 + 1) + e:pow(2)) * 0.5
    local t4 = q.loc * e
    local t5 = q.loc:pow(2) * 0.5
    return t1 + t2 + (t3 - t4 + t5) / var_normal
end

CROSS["Beta|Uniform"] = function(p, q)
    local r = -p:entropy() + (q.high - q.low):log()
    return core.where(q.low:detach():gt(0):logical_or(q.high:detach():lt(1)), math.huge, r)
end

CROSS["ContinuousBernoulli|Exponential"] = function(p, q)
    return -p:entropy() - q.rate:log() + q.rate * p:mean()
end

CROSS["ContinuousBernoulli|Normal"] = function(p, q)
    local t1 = -p:entropy()
    local t2 = ((q.loc / q.scale):pow(2) + LOG_2PI) * 0.5 + q.scale:log()
    local m = p:mean()
    local t3 = (p:variance() + m:pow(2) - q.loc * m * 2) / (q.scale:pow(2) * 2)
    return t1 + t2 + t3
end

-- (PyTorch's test, kept: inf where q.low >= 0 or q.high <= 1)
CROSS["ContinuousBernoulli|Uniform"] = function(p, q)
    local r = -p:entropy() + (q.high - q.low):log()
    return core.where(q.low:detach():ge(0):logical_or(q.high:detach():le(1)), math.huge, r)
end

CROSS["Uniform|Beta"] = function(p, q)
    local w = p.high - p.low
    local t1 = w:log()
    local t2 = (q.concentration1 - 1) * (x_log_x(p.high) - x_log_x(p.low) - w) / w
    local t3 = (q.concentration0 - 1) * (x_log_x(-p.high + 1) - x_log_x(-p.low + 1) + w) / w
    local t4 = q.concentration1:lgamma() + q.concentration0:lgamma() -
        (q.concentration1 + q.concentration0):lgamma()
    local r = t3 + t4 - t1 - t2
    return core.where(p.high:detach():gt(1):logical_or(p.low:detach():lt(0)), math.huge, r)
end

-- (PyTorch's test, kept: inf where p.high >= 1 or p.low <= 0)
CROSS["Uniform|ContinuousBernoulli"] = function(p, q)
    local r = -p:entropy() - p:mean() * q.logits - (-q.probs):log1p() - q:_cont_bern_log_norm()
    return core.where(p.high:detach():ge(1):logical_or(p.low:detach():le(0)), math.huge, r)
end

-- p's support not inside q's: inf everywhere, of p's batch shape (PyTorch's _infinite_like of
-- the parameter PyTorch names)
local LIKE = { Beta = "concentration1", ContinuousBernoulli = "probs", Exponential = "rate",
    Gamma = "concentration", Gumbel = "loc", Laplace = "loc", Normal = "loc", Pareto = "scale",
    Poisson = "rate" }
local function infinite(p)
    local like = p[LIKE[rawget(getmetatable(p), "__name")] or "loc"]
    if like == nil then -- a subclass (Chi2 of Gamma): its base's parameter
        for _, k in pairs(LIKE) do
            like = like or p[k]
        end
    end
    return core.full(like:size(), math.huge, { dtype = like.dtype, device = like.device })
end
CROSS["Poisson|Bernoulli"] = infinite
CROSS["Poisson|Binomial"] = infinite
-- PyTorch 1.13's pairs whose q cannot cover p's support (an unbounded or wider p against a
-- bounded or half-line q)
for p, qs in pairs({
    Beta = { "Pareto" }, ContinuousBernoulli = { "Pareto" },
    Exponential = { "Beta", "ContinuousBernoulli", "Pareto", "Uniform" },
    Gamma = { "Beta", "ContinuousBernoulli", "Pareto", "Uniform" },
    Gumbel = { "Beta", "ContinuousBernoulli", "Exponential", "Gamma", "Pareto", "Uniform" },
    Laplace = { "Beta", "ContinuousBernoulli", "Exponential", "Gamma", "Pareto", "Uniform" },
    Normal = { "Beta", "ContinuousBernoulli", "Exponential", "Gamma", "Pareto", "Uniform" },
    Pareto = { "Beta", "ContinuousBernoulli", "Uniform" },
}) do
    for _, q in ipairs(qs) do
        CROSS[p .. "|" .. q] = infinite
    end
end

-- LowRankMultivariateNormal's (PyTorch's, in its file)
local function lowrank(name)
    return function(p, q)
        return require("tide.distributions.LowRankMultivariateNormal")._kl[name](p, q)
    end
end
KL.LowRankMultivariateNormal = lowrank("lowrank_lowrank")
CROSS["MultivariateNormal|LowRankMultivariateNormal"] = lowrank("mvn_lowrank")
CROSS["LowRankMultivariateNormal|MultivariateNormal"] = lowrank("lowrank_mvn")

-- ---- TransformedDistribution and Pareto (PyTorch 1.13's kl.py) ----

-- the bases' divergence, for the same transforms and event shape (PyTorch raises otherwise)
function KL.TransformedDistribution(p, q)
    local same = #p.transforms == #q.transforms
    for i = 1, #p.transforms do
        same = same and p.transforms[i] == q.transforms[i]
    end
    if not same then
        raise(("tide: kl_divergence: %s and %s through different transforms have no closed " ..
            "form (PyTorch: not implemented); give both the same transforms")
            :format(p.__name, q.__name))
    end
    local ep, eq = p.event_shape, q.event_shape
    same = #ep == #eq
    for i = 1, #ep do
        same = same and ep[i] == eq[i]
    end
    if not same then
        raise(("tide: kl_divergence: %s and %s have different event shapes {%s} and {%s}")
            :format(p.__name, q.__name, table.concat(ep, ", "), table.concat(eq, ", ")))
    end
    return kl(p.base_dist, q.base_dist)
end

function KL.Pareto(p, q)
    local scale_ratio = p.scale / q.scale
    local alpha_ratio = q.alpha / p.alpha
    local r = q.alpha * scale_ratio:log() - alpha_ratio:log() + alpha_ratio - 1
    return core.where(p.scale:detach():lt(q.scale:detach()), math.huge, r)
end

CROSS["Pareto|Exponential"] = function(p, q)
    local prod = p.scale * q.rate
    local t1 = (p.alpha / prod):log()
    local t3 = p.alpha * prod / (p.alpha - 1)
    local r = t1 - p.alpha:reciprocal() + t3 - 1
    return core.where(p.alpha:detach():le(1), math.huge, r)
end

CROSS["Pareto|Gamma"] = function(p, q)
    local common = p.scale:log() + p.alpha:reciprocal()
    local t1 = p.alpha:log() - common
    local t2 = q.concentration:lgamma() - q.concentration * q.rate:log()
    local t3 = (-q.concentration + 1) * common
    local t4 = q.rate * p.alpha * p.scale / (p.alpha - 1)
    local r = t1 + t2 + t3 + t4 - 1
    return core.where(p.alpha:detach():le(1), math.huge, r)
end

CROSS["Pareto|Normal"] = function(p, q)
    local var_normal = q.scale:pow(2) * 2
    local common = p.scale / (p.alpha - 1)
    local t1 = (q.scale * math.sqrt(2 * math.pi) * p.alpha / p.scale):log()
    local t3 = p.alpha * common:pow(2) / (p.alpha - 2)
    local t4 = (p.alpha * common - q.loc):pow(2)
    local r = t1 - p.alpha:reciprocal() + (t3 + t4) / var_normal - 1
    return core.where(p.alpha:detach():le(2), math.huge, r)
end

CROSS["Uniform|Pareto"] = function(p, q)
    local w = p.high - p.low
    local t1 = (q.alpha * q.scale:pow(q.alpha) * w):log()
    local t2 = (x_log_x(p.high) - x_log_x(p.low) - w) / w
    local r = t2 * (q.alpha + 1) - t1
    return core.where(p.low:detach():lt(q.scale:detach()), math.huge, r)
end

-- a subclass falls back on its base's closed forms, as PyTorch's registry looks them up
local PARENT = { Chi2 = "Gamma", OneHotCategoricalStraightThrough = "OneHotCategorical" }

-- two of one exponential family (ExponentialFamily's subclasses): the Bregman divergence
local function expfamily(p, q, fp, fq)
    local EF = require("tide.distributions.ExponentialFamily")
    if fp == fq and EF.is_instance(p, EF) and EF.is_instance(q, EF) then
        return EF._kl
    end
end

local function lookup(fp, fq)
    for _, a in ipairs({ fp, PARENT[fp] }) do
        for _, b in ipairs({ fq, PARENT[fq] }) do
            if a == b and KL[a] then
                return KL[a]
            elseif CROSS[a .. "|" .. b] then
                return CROSS[a .. "|" .. b]
            end
        end
    end
end

-- the closed form for p and q: the most specific pair of their classes and bases, p's first
-- (PyTorch's lookup), one of register_kl before a built-in one of the same pair
local function dispatch(p, q, fp, fq)
    local R = require("tide.distributions._kl_registry")
    local cq = R.classes(q)
    for _, a in ipairs(R.classes(p)) do
        for _, b in ipairs(cq) do
            local f = R.find(a, b) or lookup(rawget(a, "__name"), rawget(b, "__name"))
            if f then
                return f
            end
        end
    end
    return lookup(fp, fq)
end

kl = function(p, q)
    local function family(d)
        return type(d) == "table" and rawget(getmetatable(d) or {}, "__name")
    end
    local fp, fq = family(p), family(q)
    if not fp or not fq then
        raise("tide: kl_divergence: expected two distributions, got " .. type(p) .. " and " ..
            type(q))
    end
    local f = dispatch(p, q, fp, fq) or expfamily(p, q, fp, fq)
    if not f then
        raise(("tide: kl_divergence: no closed form for %s and %s; tide has those between " ..
            "two of one family (but Weibull and StudentT) and PyTorch's closed forms across " ..
            "Beta, ContinuousBernoulli, Exponential, Gamma, Gumbel, Laplace, Normal, Pareto " ..
            "and Uniform, and Bernoulli-Poisson; give one with " ..
            "tide.distributions.register_kl(P, Q)(fn)")
            :format(fp, fq))
    end
    return f(p, q)
end

return kl
