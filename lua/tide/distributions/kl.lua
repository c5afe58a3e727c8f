-- tide.distributions.kl: kl_divergence(p, q) = KL(p || q) for two distributions of one family
-- (Normal, Categorical, Bernoulli, Uniform, Exponential, Laplace, MultivariateNormal, Gamma,
-- Beta, Dirichlet, Independent), PyTorch 1.13's closed forms, with its infinities (q giving 0
-- where p does not) and zeros (p giving 0).
local core = require("tide.core")
local autograd = require("tide.autograd")
local raise = autograd.raise

local function softplus(x) -- the op table's (PyTorch's F.softplus, its threshold included)
    return x:softplus()
end

local KL = {}

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

kl = function(p, q)
    local function family(d)
        return type(d) == "table" and rawget(getmetatable(d) or {}, "__name")
    end
    local fp, fq = family(p), family(q)
    if not fp or not fq then
        raise("tide: kl_divergence: expected two distributions, got " .. type(p) .. " and " ..
            type(q))
    end
    if fp ~= fq or not KL[fp] then
        raise(("tide: kl_divergence: no closed form for %s and %s; tide has those between " ..
            "two of Normal, Categorical, Bernoulli, Uniform, Exponential, Laplace, " ..
            "MultivariateNormal, Gamma, Beta, Dirichlet or Independent"):format(fp, fq))
    end
    return KL[fp](p, q)
end

return kl
