-- distributions2_spec.lua — tide.distributions' second batch against PyTorch 1.13's
-- torch.distributions (spec/fixtures/distributions2_torch.lua, written by
-- spec/fixtures/make_distributions2.py): Cauchy, HalfCauchy, HalfNormal, LogNormal, Gumbel,
-- Weibull, Chi2, StudentT, Poisson, Geometric, Binomial, OneHotCategorical,
-- ContinuousBernoulli, Gamma's cdf and kl_divergence (one family and across), values and
-- gradients, on the device under test; samples by their statistics and rsample's gradients
-- (Chi2's implicit one against mpmath); the parameter and value checks.
local tide = require("tide")
local D = require("spec.support.device")
local P = require("spec.support.porting")

local T = dofile("spec/fixtures/distributions2_torch.lua")
local DEV = D.name
local dist = tide.distributions

local function t64(v)
    return P.t64(v, DEV)
end

local function catch(f)
    local ok, err = pcall(f)
    assert.is_false(ok, "expected an error")
    return tostring(err)
end

local function moments(d)
    return tide.stack({ d:mean(), d:stddev(), d:variance() })
end

local kl = dist.kl_divergence

describe("distributions2, PyTorch's values (" .. DEV .. ")", function()
    local CASES = {
        cauchy_log_prob = { function(m, s, x) return dist.Cauchy(m, s):log_prob(x) end,
            T.LOC, T.SCALE, T.X },
        cauchy_cdf = { function(m, s, x) return dist.Cauchy(m, s):cdf(x) end, T.LOC, T.SCALE,
            T.X },
        cauchy_icdf = { function(m, s, q) return dist.Cauchy(m, s):icdf(q) end, T.LOC, T.SCALE,
            T.Q },
        cauchy_entropy = { function(m, s) return dist.Cauchy(m, s):entropy() end, T.LOC,
            T.SCALE },
        halfcauchy_log_prob = { function(s, x) return dist.HalfCauchy(s):log_prob(x) end,
            T.SCALE, T.XP },
        halfcauchy_cdf = { function(s, x) return dist.HalfCauchy(s):cdf(x) end, T.SCALE, T.XP },
        halfcauchy_icdf = { function(s, q) return dist.HalfCauchy(s):icdf(q) end, T.SCALE, T.Q },
        halfcauchy_entropy = { function(s) return dist.HalfCauchy(s):entropy() end, T.SCALE },
        halfnormal_log_prob = { function(s, x) return dist.HalfNormal(s):log_prob(x) end,
            T.SCALE, T.XP },
        halfnormal_cdf = { function(s, x) return dist.HalfNormal(s):cdf(x) end, T.SCALE, T.XP },
        halfnormal_icdf = { function(s, q) return dist.HalfNormal(s):icdf(q) end, T.SCALE, T.Q },
        halfnormal_entropy = { function(s) return dist.HalfNormal(s):entropy() end, T.SCALE },
        halfnormal_moments = { function(s) return moments(dist.HalfNormal(s)) end, T.SCALE },
        lognormal_log_prob = { function(m, s, x) return dist.LogNormal(m, s):log_prob(x) end,
            T.LOC, T.SCALE, T.XP },
        lognormal_cdf = { function(m, s, x) return dist.LogNormal(m, s):cdf(x) end, T.LOC,
            T.SCALE, T.XP },
        lognormal_icdf = { function(m, s, q) return dist.LogNormal(m, s):icdf(q) end, T.LOC,
            T.SCALE, T.Q },
        lognormal_entropy = { function(m, s) return dist.LogNormal(m, s):entropy() end, T.LOC,
            T.SCALE },
        lognormal_moments = { function(m, s) return moments(dist.LogNormal(m, s)) end, T.LOC,
            T.SCALE },
        gumbel_log_prob = { function(m, s, x) return dist.Gumbel(m, s):log_prob(x) end, T.LOC,
            T.SCALE, T.X },
        gumbel_cdf = { function(m, s, x) return dist.Gumbel(m, s):cdf(x) end, T.LOC, T.SCALE,
            T.X },
        gumbel_icdf = { function(m, s, q) return dist.Gumbel(m, s):icdf(q) end, T.LOC, T.SCALE,
            T.Q },
        gumbel_entropy = { function(m, s) return dist.Gumbel(m, s):entropy() end, T.LOC,
            T.SCALE },
        gumbel_moments = { function(m, s) return moments(dist.Gumbel(m, s)) end, T.LOC,
            T.SCALE },
        weibull_log_prob = { function(s, k, x) return dist.Weibull(s, k):log_prob(x) end,
            T.SCALE, T.CONC, T.XP },
        weibull_cdf = { function(s, k, x) return dist.Weibull(s, k):cdf(x) end, T.SCALE,
            T.CONC, T.XP },
        weibull_icdf = { function(s, k, q) return dist.Weibull(s, k):icdf(q) end, T.SCALE,
            T.CONC, T.Q },
        weibull_entropy = { function(s, k) return dist.Weibull(s, k):entropy() end, T.SCALE,
            T.CONC },
        weibull_moments = { function(s, k) return moments(dist.Weibull(s, k)) end, T.SCALE,
            T.CONC },
        chi2_log_prob = { function(df, x) return dist.Chi2(df):log_prob(x) end, T.DF2, T.XP },
        chi2_entropy = { function(df) return dist.Chi2(df):entropy() end, T.DF2 },
        chi2_moments = { function(df) return moments(dist.Chi2(df)) end, T.DF2 },
        chi2_cdf = { function(x) return dist.Chi2(t64(T.DF2)):cdf(x) end, T.XP },
        gamma_cdf = { function(b, x) return dist.Gamma(t64(T.CONC), b):cdf(x) end, T.RATE,
            T.XP },
        studentt_log_prob = { function(df, m, s, x)
            return dist.StudentT(df, m, s):log_prob(x)
        end, T.DF2, T.LOC, T.SCALE, T.X },
        studentt_entropy = { function(df, m, s) return dist.StudentT(df, m, s):entropy() end,
            T.DF2, T.LOC, T.SCALE },
        studentt_moments = { function(df, m, s) return moments(dist.StudentT(df, m, s)) end,
            T.DF, T.LOC, T.SCALE },
        studentt_default_log_prob = { function(df, x) return dist.StudentT(df):log_prob(x) end,
            T.DF2, T.X },
        poisson_log_prob = { function(r, x) return dist.Poisson(r):log_prob(x) end, T.RATE,
            T.COUNTS },
        poisson_zero = { function(r, x) return dist.Poisson(r):log_prob(x) end, { 0, 1 },
            { 0, 0 } },
        poisson_moments = { function(r) return moments(dist.Poisson(r)) end, T.RATE },
        geometric_log_prob = { function(p, x)
            return dist.Geometric({ probs = p }):log_prob(x)
        end, T.P, T.COUNTS },
        geometric_one = { function(p, x) return dist.Geometric({ probs = p }):log_prob(x) end,
            { 0.5, 1 }, { 2, 0 } },
        geometric_logits_log_prob = { function(l, x)
            return dist.Geometric({ logits = l }):log_prob(x)
        end, T.LOC, T.FEW },
        geometric_entropy = { function(p) return dist.Geometric({ probs = p }):entropy() end,
            T.P },
        geometric_logits_entropy = { function(l)
            return dist.Geometric({ logits = l }):entropy()
        end, T.LOC },
        geometric_moments = { function(p) return moments(dist.Geometric({ probs = p })) end,
            T.P },
        binomial_log_prob = { function(n, p, x)
            return dist.Binomial(n, { probs = p }):log_prob(x)
        end, T.N, T.P, T.K },
        binomial_logits_log_prob = { function(n, l, x)
            return dist.Binomial(n, { logits = l }):log_prob(x)
        end, T.N, T.LOC, T.K },
        binomial_entropy = { function(p) return dist.Binomial(6, { probs = p }):entropy() end,
            T.P },
        binomial_logits_entropy = { function(l)
            return dist.Binomial(6, { logits = l }):entropy()
        end, T.LOC },
        binomial_moments = { function(n, p) return moments(dist.Binomial(n, { probs = p })) end,
            T.N, T.P },
        onehot_log_prob = { function(l, x)
            return dist.OneHotCategorical({ logits = l }):log_prob(x)
        end, T.LOGITS, T.ONEHOT },
        onehot_probs_log_prob = { function(p, x)
            return dist.OneHotCategorical({ probs = p }):log_prob(x)
        end, T.PROBS, T.ONEHOT },
        onehot_entropy = { function(l)
            return dist.OneHotCategorical({ logits = l }):entropy()
        end, T.LOGITS },
        onehot_moments = { function(p) return moments(dist.OneHotCategorical({ probs = p })) end,
            T.PROBS },
        kl_poisson = { function(a, b) return kl(dist.Poisson(a), dist.Poisson(b)) end, T.RATE,
            { 1, 2, 20 } },
        kl_geometric = { function(a, b)
            return kl(dist.Geometric({ probs = a }), dist.Geometric({ probs = b }))
        end, T.P, { 0.5, 0.1, 0.7 } },
        kl_binomial = { function(n, a, b)
            return kl(dist.Binomial(n, { probs = a }), dist.Binomial(n, { probs = b }))
        end, T.N, T.P, { 0.5, 0.1, 0.7 } },
        kl_binomial_inf = { function(a, b)
            return kl(dist.Binomial(t64({ 5, 4 }), { probs = a }),
                dist.Binomial(t64({ 5, 3 }), { probs = b }))
        end, { 0.2, 0.3 }, { 0.5, 0.5 } },
        kl_halfnormal = { function(a, b) return kl(dist.HalfNormal(a), dist.HalfNormal(b)) end,
            T.SCALE, { 1, 0.5, 3 } },
        kl_gumbel = { function(m, s, m2, s2)
            return kl(dist.Gumbel(m, s), dist.Gumbel(m2, s2))
        end, T.LOC, T.SCALE, { 0, 0, 1 }, { 1, 0.5, 3 } },
        kl_onehot = { function(a, b)
            return kl(dist.OneHotCategorical({ logits = a }),
                dist.OneHotCategorical({ logits = b }))
        end, T.LOGITS, T.LOGITS2 },
        kl_cauchy = { function(m, s, m2, s2)
            return kl(dist.Cauchy(m, s), dist.Cauchy(m2, s2))
        end, T.LOC, T.SCALE, { 0, 0, 1 }, { 1, 0.5, 3 } },
        kl_halfcauchy = { function(a, b) return kl(dist.HalfCauchy(a), dist.HalfCauchy(b)) end,
            T.SCALE, { 1, 0.5, 3 } },
        kl_lognormal = { function(m, s, m2, s2)
            return kl(dist.LogNormal(m, s), dist.LogNormal(m2, s2))
        end, T.LOC, T.SCALE, { 0, 0, 1 }, { 1, 0.5, 3 } },
        kl_chi2 = { function(a, b) return kl(dist.Chi2(a), dist.Chi2(b)) end, T.DF2, { 2, 1, 4 } },
        kl_chi2_gamma = { function(a, c, r) return kl(dist.Chi2(a), dist.Gamma(c, r)) end, T.DF2,
            T.CONC, T.RATE },
        kl_bernoulli_poisson = { function(p, r)
            return kl(dist.Bernoulli({ probs = p }), dist.Poisson(r))
        end, T.P, T.RATE },
        kl_exponential_gamma = { function(a, c, r)
            return kl(dist.Exponential(a), dist.Gamma(c, r))
        end, T.SCALE, T.CONC, T.RATE },
        kl_exponential_gumbel = { function(a, m, s)
            return kl(dist.Exponential(a), dist.Gumbel(m, s))
        end, T.SCALE, T.LOC, T.SCALE },
        kl_exponential_normal = { function(a, m, s)
            return kl(dist.Exponential(a), dist.Normal(m, s))
        end, T.SCALE, T.LOC, T.SCALE },
        kl_gamma_exponential = { function(c, r, a)
            return kl(dist.Gamma(c, r), dist.Exponential(a))
        end, T.CONC, T.RATE, T.SCALE },
        kl_gamma_gumbel = { function(c, r, m, s)
            return kl(dist.Gamma(c, r), dist.Gumbel(m, s))
        end, T.CONC, T.RATE, T.LOC, T.SCALE },
        kl_gamma_normal = { function(c, r, m, s)
            return kl(dist.Gamma(c, r), dist.Normal(m, s))
        end, T.CONC, T.RATE, T.LOC, T.SCALE },
        kl_gumbel_normal = { function(m, s, m2, s2)
            return kl(dist.Gumbel(m, s), dist.Normal(m2, s2))
        end, T.LOC, T.SCALE, { 0, 0, 1 }, { 1, 0.5, 3 } },
        kl_laplace_normal = { function(m, s, m2, s2)
            return kl(dist.Laplace(m, s), dist.Normal(m2, s2))
        end, T.LOC, T.SCALE, { 0, 0, 1 }, { 1, 0.5, 3 } },
        kl_normal_gumbel = { function(m, s, m2, s2)
            return kl(dist.Normal(m, s), dist.Gumbel(m2, s2))
        end, T.LOC, T.SCALE, { 0, 0, 1 }, { 1, 0.5, 3 } },
        kl_normal_laplace = { function(m, s, m2, s2)
            return kl(dist.Normal(m, s), dist.Laplace(m2, s2))
        end, T.LOC, T.SCALE, { 0, 0, 1 }, { 1, 0.5, 3 } },
        kl_uniform_exponential = { function(lo, hi, r)
            return kl(dist.Uniform(lo, hi), dist.Exponential(r))
        end, T.LOW, T.HIGH, T.SCALE },
        kl_uniform_gamma = { function(lo, hi, c, r)
            return kl(dist.Uniform(lo, hi), dist.Gamma(c, r))
        end, { 0.5, 0.25, 1 }, T.HIGH, T.CONC, T.RATE },
        kl_uniform_gumbel = { function(lo, hi, m, s)
            return kl(dist.Uniform(lo, hi), dist.Gumbel(m, s))
        end, T.LOW, T.HIGH, T.LOC, T.SCALE },
        kl_uniform_normal = { function(lo, hi, m, s)
            return kl(dist.Uniform(lo, hi), dist.Normal(m, s))
        end, T.LOW, T.HIGH, T.LOC, T.SCALE },
        cb_log_prob = { function(p, x)
            return dist.ContinuousBernoulli({ probs = p }):log_prob(x)
        end, T.PB, T.UX },
        cb_logits_log_prob = { function(l, x)
            return dist.ContinuousBernoulli({ logits = l }):log_prob(x)
        end, T.LOC, T.UX },
        cb_cdf = { function(p, x) return dist.ContinuousBernoulli({ probs = p }):cdf(x) end,
            T.PB, T.UX },
        cb_icdf = { function(p, q) return dist.ContinuousBernoulli({ probs = p }):icdf(q) end,
            T.PB, T.Q },
        cb_entropy = { function(p) return dist.ContinuousBernoulli({ probs = p }):entropy() end,
            T.PB },
        cb_moments = { function(p) return moments(dist.ContinuousBernoulli({ probs = p })) end,
            T.PB },
        cb_lims_log_prob = { function(p, x)
            return dist.ContinuousBernoulli({ probs = p, lims = { 0.2, 0.8 } }):log_prob(x)
        end, T.PB, T.UX },
        kl_cb = { function(a, b)
            return kl(dist.ContinuousBernoulli({ probs = a }),
                dist.ContinuousBernoulli({ probs = b }))
        end, T.PB, { 0.3, 0.5, 0.9 } },
        kl_beta_cb = { function(a, b, p)
            return kl(dist.Beta(a, b), dist.ContinuousBernoulli({ probs = p }))
        end, T.SCALE, T.CONC, T.PB },
        kl_beta_exponential = { function(a, b, r)
            return kl(dist.Beta(a, b), dist.Exponential(r))
        end, T.SCALE, T.CONC, T.RATE },
        kl_beta_gamma = { function(a, b, c, r) return kl(dist.Beta(a, b), dist.Gamma(c, r)) end,
            T.SCALE, T.CONC, T.CONC, T.RATE },
        kl_beta_normal = { function(a, b, m, s) return kl(dist.Beta(a, b), dist.Normal(m, s)) end,
            T.SCALE, T.CONC, T.LOC, T.SCALE },
        kl_beta_uniform = { function(a, b, lo, hi)
            return kl(dist.Beta(a, b), dist.Uniform(lo, hi))
        end, T.SCALE, T.CONC, { -1, 0, 0.5 }, { 1, 2, 3 } },
        kl_cb_exponential = { function(p, r)
            return kl(dist.ContinuousBernoulli({ probs = p }), dist.Exponential(r))
        end, T.PB, T.RATE },
        kl_cb_normal = { function(p, m, s)
            return kl(dist.ContinuousBernoulli({ probs = p }), dist.Normal(m, s))
        end, T.PB, T.LOC, T.SCALE },
        kl_cb_uniform = { function(p, lo, hi)
            return kl(dist.ContinuousBernoulli({ probs = p }), dist.Uniform(lo, hi))
        end, T.PB, { -1, 0, -0.5 }, { 2, 2, 1 } },
        kl_uniform_beta = { function(lo, hi, a, b)
            return kl(dist.Uniform(lo, hi), dist.Beta(a, b))
        end, { 0.1, 0.25, 0.3 }, { 0.9, 0.5, 0.6 }, T.SCALE, T.CONC },
        kl_uniform_cb = { function(lo, hi, p)
            return kl(dist.Uniform(lo, hi), dist.ContinuousBernoulli({ probs = p }))
        end, { 0.1, 0.25, 0 }, { 0.9, 0.5, 0.5 }, T.PB },
        kl_poisson_binomial = { function(r, p)
            return kl(dist.Poisson(r), dist.Binomial(5, { probs = p }))
        end, T.RATE, T.P },
    }
    -- gradients through digamma's derivative: PyTorch's trigamma is good to about 1e-10,
    -- tide's (the Hurwitz zeta) to 1e-15 (spec/special_spec.lua); igamma's x-derivative
    local LOOSE = { chi2_entropy = true, studentt_entropy = true, kl_chi2 = true,
        kl_chi2_gamma = true, kl_gamma_gumbel = true, kl_gamma_normal = true,
        kl_gamma_exponential = true, chi2_cdf = true, gamma_cdf = true, kl_beta_cb = true,
        kl_beta_exponential = true, kl_beta_gamma = true, kl_beta_normal = true,
        kl_beta_uniform = true }
    P.run_cases(it, T, CASES, function(name, fn, ...)
        P.check_case(T.cases[name], name, DEV, { out = 1e-12,
            grad = LOOSE[name] and 1e-8 or 1e-10 }, fn, ...)
    end)
end)

-- the draws' mean and variance within z standard errors of mu and var (kurt: the excess
-- kurtosis, for the variance's standard error)
local function near_moments(x, mu, var, what, kurt)
    local n = x:numel()
    local m, v = x:double():mean():item(), x:double():var():item()
    local z = 5
    assert(math.abs(m - mu) <= z * math.sqrt(var / n),
        ("%s: mean %.6g, expected %.6g"):format(what, m, mu))
    local se = var * math.sqrt((2 + (kurt or 0)) / n)
    assert(math.abs(v - var) <= z * se, ("%s: variance %.6g, expected %.6g"):format(what, v, var))
end

local function share(mask)
    return mask:double():mean():item()
end

describe("distributions2: samples (" .. DEV .. ")", function()
    local N = 20000

    it("Cauchy and HalfCauchy draw at their quartiles, reparametrized", function()
        tide.manual_seed(21)
        local loc = t64({ 1 }):requires_grad_(true)
        local scale = t64({ 2 }):requires_grad_(true)
        local x = dist.Cauchy(loc, scale):rsample({ N })
        assert.are.same({ N, 1 }, x.shape)
        assert.are.equal(tide.device(DEV), x.device)
        -- half the mass within loc -+ scale; a share's standard error is 0.0035
        assert.is_true(math.abs(share((x - 1):abs():le(2)) - 0.5) < 0.02)
        assert.is_true(math.abs(share(x:le(1)) - 0.5) < 0.02)
        x:sum():backward()
        P.close({ N }, loc.grad, 1e-12, "d x / d loc")
        P.close({ ((x:detach() - 1) / 2):sum():item() }, scale.grad, 1e-9, "d x / d scale")
        local s = t64({ 2 }):requires_grad_(true)
        local h = dist.HalfCauchy(s):rsample({ N })
        assert.is_true(h:ge(0):all():item())
        assert.is_true(math.abs(share(h:le(2)) - 0.5) < 0.02)
        h:sum():backward()
        P.close({ (h:detach() / 2):sum():item() }, s.grad, 1e-9, "d |x| / d scale")
        assert.is_false(dist.Cauchy(t64({ 0 }), t64({ 1 })):sample({ 2 }).requires_grad)
    end)

    it("HalfNormal, LogNormal and Gumbel draw with their moments, reparametrized", function()
        tide.manual_seed(22)
        local s = t64({ 1.5 }):requires_grad_(true)
        local h = dist.HalfNormal(s):rsample({ N })
        assert.is_true(h:ge(0):all():item())
        near_moments(h, 1.5 * math.sqrt(2 / math.pi), 2.25 * (1 - 2 / math.pi), "halfnormal",
            0.869)
        h:sum():backward()
        P.close({ (h:detach() / 1.5):sum():item() }, s.grad, 1e-9, "halfnormal d / d scale")

        local loc = t64({ 0.5 }):requires_grad_(true)
        local sc = t64({ 0.25 }):requires_grad_(true)
        local y = dist.LogNormal(loc, sc):rsample({ N })
        assert.is_true(y:gt(0):all():item())
        near_moments(y:log(), 0.5, 0.0625, "log of lognormal")
        y:sum():backward()
        local yd = y:detach()
        P.close({ yd:sum():item() }, loc.grad, 1e-9, "lognormal d / d loc")
        P.close({ (yd * (yd:log() - 0.5) / 0.25):sum():item() }, sc.grad, 1e-9,
            "lognormal d / d scale")

        local gl = t64({ 1 }):requires_grad_(true)
        local gs = t64({ 2 }):requires_grad_(true)
        local g = dist.Gumbel(gl, gs):rsample({ N })
        near_moments(g, 1 + 2 * 0.57721566490153286, math.pi ^ 2 * 4 / 6, "gumbel", 2.4)
        g:sum():backward()
        P.close({ N }, gl.grad, 1e-12, "gumbel d / d loc")
        P.close({ ((g:detach() - 1) / 2):sum():item() }, gs.grad, 1e-9, "gumbel d / d scale")
    end)

    it("Weibull draws with its moments, reparametrized in both parameters", function()
        tide.manual_seed(23)
        local s = t64({ 2 }):requires_grad_(true)
        local k = t64({ 1.5 }):requires_grad_(true)
        local d = dist.Weibull(s, k)
        local x = d:rsample({ N })
        assert.is_true(x:gt(0):all():item())
        near_moments(x, d:mean():item(), d:variance():item(), "weibull", 1)
        x:sum():backward()
        local xd = x:detach()
        P.close({ (xd / 2):sum():item() }, s.grad, 1e-9, "weibull d / d scale")
        -- x = scale e^(1/k): d x / d k = -x log(e) / k^2 = -x log(x / scale) / k
        P.close({ (-xd * (xd / 2):log() / 1.5):sum():item() }, k.grad, 1e-9,
            "weibull d / d concentration")
    end)

    it("Chi2 and StudentT draw with their moments; StudentT reparametrized in loc and scale",
        function()
            tide.manual_seed(24)
            local c = dist.Chi2(t64({ 3, 0.5 })):sample({ N })
            assert.are.same({ N, 2 }, c.shape)
            assert.are.equal("float64", c.dtype)
            near_moments(c:select(2, 1), 3, 6, "chi2(3)", 4)
            near_moments(c:select(2, 2), 0.5, 1, "chi2(0.5)", 24)
            local loc = t64({ 1 }):requires_grad_(true)
            local scale = t64({ 2 }):requires_grad_(true)
            local x = dist.StudentT(10, loc, scale):rsample({ N })
            near_moments(x, 1, 4 * 10 / 8, "studentt(10)", 1)
            x:sum():backward()
            P.close({ N }, loc.grad, 1e-12, "studentt d / d loc")
            P.close({ ((x:detach() - 1) / 2):sum():item() }, scale.grad, 1e-9,
                "studentt d / d scale")
            assert.are.equal("float32", dist.StudentT(3):sample({ 2 }).dtype)
        end)

    it("Chi2 and StudentT are reparametrized in df (implicit gradients of the gamma draw)",
        function()
            -- dz / dalpha at fixed draws, against mpmath
            local V = T.values.gamma_dz
            local g = require("tide.distributions.gamma_rsample").grad(t64(V.alpha), t64(V.x))
            P.close(V.dz, g, 1e-8, "gamma dz / dalpha")
            tide.manual_seed(30)
            -- E[x] = df: the draws' gradients to df average 1 (one df per draw)
            local df = t64({ 3 }):expand(N):contiguous():requires_grad_(true)
            local x = dist.Chi2(df):rsample()
            assert.are.same({ N }, x.shape)
            x:sum():backward()
            near_moments(df.grad, 1, df.grad:var():item(), "d chi2 / d df")
            -- StudentT(df): E[y^2] = df / (df - 2), its derivative -2 / (df - 2)^2
            local tdf = t64({ 12 }):expand(N):contiguous():requires_grad_(true)
            local y = dist.StudentT(tdf):rsample()
            y:pow(2):sum():backward()
            near_moments(tdf.grad, -2 / 100, tdf.grad:var():item(), "d studentt^2 / d df")
            assert.is_false(dist.Chi2(t64({ 2 })):sample({ 3 }).requires_grad)
        end)

    it("Poisson draws integers with its mean and variance, small and large rates", function()
        tide.manual_seed(25)
        local rates = { 0.5, 4, 30, 200 }
        local x = dist.Poisson(t64(rates)):sample({ N })
        assert.are.same({ N, 4 }, x.shape)
        assert.are.equal("float64", x.dtype)
        assert.are.equal(tide.device(DEV), x.device)
        assert.is_true(x:eq(x:floor()):logical_and(x:ge(0)):all():item())
        for i, r in ipairs(rates) do
            near_moments(x:select(2, i), r, r, "poisson(" .. r .. ")", 1 / r)
        end
        assert.is_true(dist.Poisson(t64({ 0 })):sample({ 10 }):eq(0):all():item())
    end)

    it("Geometric draws failures before the first success", function()
        tide.manual_seed(26)
        local x = dist.Geometric({ probs = t64({ 0.3, 1 }) }):sample({ N })
        assert.are.same({ N, 2 }, x.shape)
        assert.is_true(x:eq(x:floor()):logical_and(x:ge(0)):all():item())
        near_moments(x:select(2, 1), 0.7 / 0.3, 0.7 / 0.09, "geometric(0.3)", 6.05)
        assert.is_true(x:select(2, 2):eq(0):all():item())
        local l = dist.Geometric({ logits = t64({ 0 }) }):sample({ N })
        near_moments(l, 1, 2, "geometric(logits 0)", 6.5)
    end)

    it("Binomial draws exactly, by inversion and by BTRS, either side of 1/2", function()
        tide.manual_seed(27)
        local n = { 5, 20, 100, 1000, 0, 7 }
        local p = { 0.3, 0.7, 0.05, 0.4, 0.5, 1 }
        local x = dist.Binomial(t64(n), { probs = t64(p) }):sample({ N })
        assert.are.same({ N, 6 }, x.shape)
        assert.is_true(x:eq(x:floor()):logical_and(x:ge(0)):logical_and(x:le(t64(n))):all()
            :item())
        for i = 1, 4 do
            local var = n[i] * p[i] * (1 - p[i])
            near_moments(x:select(2, i), n[i] * p[i], var, "binomial " .. n[i],
                (1 - 6 * p[i] * (1 - p[i])) / var)
        end
        assert.is_true(x:select(2, 5):eq(0):all():item())
        assert.is_true(x:select(2, 6):eq(7):all():item())
        -- BTRS's draws against the pmf, value by value (n 60, p 0.4: n p 24)
        local b = dist.Binomial(60, { probs = t64({ 0.4 }) })
        local y = b:sample({ N }):view(-1)
        for k = 14, 34 do
            local want = b:log_prob(t64({ k })):exp():item()
            local got = share(y:eq(k))
            assert(math.abs(got - want) < 5 * math.sqrt(want / N) + 1e-3,
                ("binomial(60, 0.4) at %d: %.4f, pmf %.4f"):format(k, got, want))
        end
        assert.are.equal("float32", dist.Binomial(3, { logits = 0 }):sample().dtype)
        assert.are.same({}, dist.Binomial(3, { logits = 0 }):sample().shape)
    end)

    it("OneHotCategorical draws one-hot rows at the class probabilities", function()
        tide.manual_seed(28)
        local d = dist.OneHotCategorical({ probs = t64({ { 0.1, 0.6, 0.3 }, { 1, 0, 0 } }) })
        assert.are.same({ 2 }, d.batch_shape)
        assert.are.same({ 3 }, d.event_shape)
        local x = d:sample({ 5000 })
        assert.are.same({ 5000, 2, 3 }, x.shape)
        assert.are.equal("float64", x.dtype)
        P.close({ 5000, 5000 }, x:sum(3):sum(1), 0, "one 1 a row")
        local first = x:select(2, 1):mean(1)
        P.close({ 0.1, 0.6, 0.3 }, first, 0.03, "class shares")
        P.close({ 0, 0 }, x:select(2, 2):select(2, 1):sum(1):sub(5000):view(1):expand(2), 0,
            "the sure class")
        assert.are.same({ 2, 3 }, d:sample().shape)
    end)
end)

describe("distributions2: ContinuousBernoulli's draws (" .. DEV .. ")", function()
    it("lie in [0, 1] with its moments; rsample's gradient is icdf's at the same u", function()
        tide.manual_seed(29)
        for _, pv in ipairs({ 0.2, 0.4995 }) do -- (the closed form, and the Taylor region)
            local p = t64({ pv }):requires_grad_(true)
            local d = dist.ContinuousBernoulli({ probs = p })
            local x = d:rsample({ 20000 })
            assert.is_true(x:ge(0):logical_and(x:le(1)):all():item())
            near_moments(x, d:mean():item(), d:variance():item(), "continuous bernoulli " .. pv,
                -1.2)
            x:sum():backward()
            local u = d:cdf(x:detach()):detach()
            local p2 = t64({ pv }):requires_grad_(true)
            dist.ContinuousBernoulli({ probs = p2 }):icdf(u):sum():backward()
            P.close(p2.grad:to("cpu"):totable(), p.grad, 1e-6, "d x / d probs")
        end
        assert.is_false(dist.ContinuousBernoulli({ logits = t64({ 1 }) }):sample({ 2 })
            .requires_grad)
    end)
end)

describe("distributions2: checks (" .. DEV .. ")", function()
    it("refuse bad parameters, naming them", function()
        local cases = {
            { "tide: Cauchy: scale must be positive", function() dist.Cauchy(0, t64({ 0 })) end },
            { "tide: HalfCauchy: scale must be positive",
                function() dist.HalfCauchy(t64({ -1 })) end },
            { "tide: HalfNormal: scale must be positive",
                function() dist.HalfNormal(t64({ 0 })) end },
            { "tide: LogNormal: scale must be positive",
                function() dist.LogNormal(0, t64({ -2 })) end },
            { "tide: Gumbel: scale must be positive", function() dist.Gumbel(0, t64({ 0 })) end },
            { "tide: Weibull: concentration must be positive",
                function() dist.Weibull(1, t64({ 0 })) end },
            { "tide: Weibull: scale must be positive",
                function() dist.Weibull(t64({ -1 }), 1) end },
            { "tide: Chi2: df must be positive", function() dist.Chi2(t64({ 0 })) end },
            { "tide: StudentT: df must be positive", function() dist.StudentT(t64({ -1 })) end },
            { "tide: StudentT: scale must be positive",
                function() dist.StudentT(1, 0, t64({ 0 })) end },
            { "tide: Poisson: rate must be >= 0", function() dist.Poisson(t64({ -0.5 })) end },
            { "tide: Geometric: probs must lie in (0, 1]",
                function() dist.Geometric({ probs = t64({ 0 }) }) end },
            { "tide: Geometric: give exactly one of probs and logits",
                function() dist.Geometric({}) end },
            { 'tide: Geometric: unknown option "prob"',
                function() dist.Geometric({ prob = 0.5 }) end },
            { "tide: Binomial: total_count must hold integers >= 0",
                function() dist.Binomial(t64({ 2.5 }), { probs = 0.5 }) end },
            { "tide: Binomial: probs must lie in [0, 1]",
                function() dist.Binomial(3, { probs = t64({ 1.5 }) }) end },
            { "tide: Binomial: total_count comes first",
                function() dist.Binomial({ probs = 0.5 }) end },
            { 'tide: Binomial: unknown option "total_count"',
                function() dist.Binomial(3, { total_count = 3, probs = 0.5 }) end },
            { "tide: OneHotCategorical: give exactly one of probs and logits",
                function() dist.OneHotCategorical({}) end },
            { 'tide: OneHotCategorical: unknown option "logit"',
                function() dist.OneHotCategorical({ logit = t64({ 1 }) }) end },
            { "tide: OneHotCategorical: probs must be >= 0",
                function() dist.OneHotCategorical({ probs = t64({ 1, -1 }) }) end },
            { "tide: ContinuousBernoulli: probs must lie in [0, 1]",
                function() dist.ContinuousBernoulli({ probs = t64({ 2 }) }) end },
            { "tide: ContinuousBernoulli: lims must be two numbers {low, high} with low < high",
                function() dist.ContinuousBernoulli({ probs = 0.3, lims = { 0.6, 0.4 } }) end },
            { 'tide: ContinuousBernoulli: unknown option "lim"',
                function() dist.ContinuousBernoulli({ probs = 0.3, lim = { 0.4, 0.6 } }) end },
            { "tide: Cauchy: expected at most 3 arguments",
                function() dist.Cauchy(0, 1, 2) end },
        }
        for _, c in ipairs(cases) do
            assert.matches(c[1], catch(c[2]), 1, true)
        end
    end)

    it("refuse values outside the support, naming the call", function()
        local cases = {
            { "tide: HalfNormal.log_prob: the values must be >= 0",
                function() dist.HalfNormal(t64({ 1 })):log_prob(t64({ -1 })) end },
            { "tide: HalfCauchy.cdf: the values must be >= 0",
                function() dist.HalfCauchy(t64({ 1 })):cdf(t64({ -1 })) end },
            { "tide: LogNormal.log_prob: the values must be positive",
                function() dist.LogNormal(t64({ 0 }), 1):log_prob(t64({ 0 })) end },
            { "tide: Weibull.log_prob: the values must be positive",
                function() dist.Weibull(t64({ 1 }), 1):log_prob(t64({ 0 })) end },
            { "tide: Chi2.log_prob: the values must be positive",
                function() dist.Chi2(t64({ 1 })):log_prob(t64({ -1 })) end },
            { "tide: Gamma.cdf: the values must be positive",
                function() dist.Gamma(t64({ 1 }), 1):cdf(t64({ 0 })) end },
            { "tide: Poisson.log_prob: the values must be integers >= 0",
                function() dist.Poisson(t64({ 1 })):log_prob(t64({ 1.5 })) end },
            { "tide: Geometric.log_prob: the values must be integers >= 0",
                function() dist.Geometric({ probs = t64({ 0.5 }) }):log_prob(t64({ -1 })) end },
            { "tide: Binomial.log_prob: the values must be integers in [0, total_count]",
                function() dist.Binomial(3, { probs = t64({ 0.5 }) }):log_prob(t64({ 4 })) end },
            { "tide: OneHotCategorical.log_prob: the values must be one-hot",
                function()
                    dist.OneHotCategorical({ probs = t64({ 0.5, 0.5 }) }):log_prob(t64({ 1, 1 }))
                end },
            { "tide: OneHotCategorical.log_prob: the values must be one-hot vectors of 2",
                function()
                    dist.OneHotCategorical({ probs = t64({ 0.5, 0.5 }) }):log_prob(t64({ 1 }))
                end },
            { "tide: ContinuousBernoulli.log_prob: the values must lie in [0, 1]",
                function()
                    dist.ContinuousBernoulli({ probs = t64({ 0.3 }) }):log_prob(t64({ 1.5 }))
                end },
            { "tide: Cauchy.log_prob: the value is on ",
                function()
                    dist.Cauchy(t64({ 0 }), 1):log_prob(tide.tensor({ 1.0 }, { dtype = "float64",
                        device = D.other }))
                end },
        }
        for _, c in ipairs(cases) do
            assert.matches(c[1], catch(c[2]), 1, true)
        end
    end)

    it("say what they cannot do", function()
        local cases = {
            { "tide: Gamma.cdf: no gradient to concentration",
                function()
                    dist.Gamma(t64({ 1 }):requires_grad_(true), 1):cdf(t64({ 1 }))
                end },
            { "tide: Chi2.cdf: no gradient to df",
                function() dist.Chi2(t64({ 1 }):requires_grad_(true)):cdf(t64({ 1 })) end },
            { "tide: Poisson: entropy is not defined for this distribution",
                function() dist.Poisson(t64({ 1 })):entropy() end },
            { "tide: Binomial: rsample (the draw is not differentiable; use sample)",
                function() dist.Binomial(3, { probs = 0.5 }):rsample() end },
            { "tide: Binomial.entropy: total_count ranges over 2..3",
                function() dist.Binomial(t64({ 2, 3 }), { probs = 0.5 }):entropy() end },
            { "tide: kl_divergence: Binomial with q's total_count above p's",
                function()
                    kl(dist.Binomial(2, { probs = t64({ 0.5 }) }),
                        dist.Binomial(3, { probs = t64({ 0.5 }) }))
                end },
            { "tide: kl_divergence: no closed form for Weibull and Weibull",
                function() kl(dist.Weibull(1, 1), dist.Weibull(1, 2)) end },
            { "tide: kl_divergence: no closed form for Cauchy and Normal",
                function() kl(dist.Cauchy(0, 1), dist.Normal(0, 1)) end },
            { "tide: Gumbel.sample: the sample shape must be a list of sizes",
                function() dist.Gumbel(0, 1):sample(3) end },
        }
        for _, c in ipairs(cases) do
            assert.matches(c[1], catch(c[2]), 1, true)
        end
        assert.are.equal("Binomial(total_count: {3}, probs: {3})",
            tostring(dist.Binomial(t64(T.N), { probs = t64(T.P) })))
        assert.are.equal("Chi2(df: {2})", tostring(dist.Chi2(t64({ 1, 2 }))))
        -- Chi2's kl with a Gamma, and the reverse, through Gamma's closed form
        local g = dist.Gamma(t64({ 1.5 }), t64({ 0.5 }))
        P.close({ 0 }, kl(dist.Chi2(t64({ 3 })), g), 1e-15, "Chi2(3) is Gamma(1.5, 0.5)")
        P.close({ 0 }, kl(g, dist.Chi2(t64({ 3 }))), 1e-15, "and back")
    end)
end)
