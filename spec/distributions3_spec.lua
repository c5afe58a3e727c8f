-- distributions3_spec.lua — tide.distributions' third batch against PyTorch 1.13's
-- torch.distributions (spec/fixtures/distributions3_torch.lua, written by
-- spec/fixtures/make_distributions3.py): FisherSnedecor, LKJCholesky, MixtureSameFamily,
-- Multinomial, NegativeBinomial, OneHotCategoricalStraightThrough, VonMises, Wishart,
-- LowRankMultivariateNormal and their kl_divergence pairs, values and gradients, on the device
-- under test; ExponentialFamily's Bregman entropy and KL against the closed forms; the
-- samplers on PyTorch's own draws (VonMises's rejection, LKJCholesky's onion, Wishart's
-- Bartlett) and samples by their statistics; expand, support; the checks.
local tide = require("tide")
local D = require("spec.support.device")
local P = require("spec.support.porting")

local T = dofile("spec/fixtures/distributions3_torch.lua")
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

local function moments(d, mode)
    local parts = { d:mean(), d:stddev(), d:variance() }
    if mode then
        parts[4] = d:mode()
    end
    return tide.stack(parts)
end

local function sym(m)
    return (m + m:transpose(-2, -1)) / 2
end

local kl = dist.kl_divergence

local function lowrank(m, w, d)
    return dist.LowRankMultivariateNormal(m, w, d)
end

local function mixture(l, m, s)
    return dist.MixtureSameFamily(dist.Categorical({ logits = l }), dist.Normal(m, s))
end

local function ind_mixture(p, m, s)
    return dist.MixtureSameFamily(dist.Categorical({ probs = p }),
        dist.Independent(dist.Normal(m, s), 1))
end

-- ExponentialFamily's Bregman forms, called as PyTorch's base class computes them
local EF = dist.ExponentialFamily

describe("distributions3, PyTorch's values (" .. DEV .. ")", function()
    local CASES = {
        fs_log_prob = { function(a, b, x) return dist.FisherSnedecor(a, b):log_prob(x) end,
            T.DF1, T.DF2, T.XP },
        fs_moments = { function(a, b) return moments(dist.FisherSnedecor(a, b), true) end,
            T.DF1, T.DF2M },
        fs_moments_finite = { function(a, b)
            return moments(dist.FisherSnedecor(a, b), true)
        end, { 3, 8 }, { 5, 12 } },
        vm_log_prob = { function(m, k, x) return dist.VonMises(m, k):log_prob(x) end, T.LOC,
            T.VMC, T.X },
        vm_moments = { function(m, k) return moments(dist.VonMises(m, k), true) end, T.LOC,
            T.VMC },
        nb_log_prob = { function(n, p, x)
            return dist.NegativeBinomial(n, { probs = p }):log_prob(x)
        end, T.NBN, T.P, T.NBK },
        nb_logits_log_prob = { function(n, l, x)
            return dist.NegativeBinomial(n, { logits = l }):log_prob(x)
        end, T.NBN, T.LOC, T.NBK },
        nb_zero = { function(n, p, x)
            return dist.NegativeBinomial(n, { probs = p }):log_prob(x)
        end, { 0, 0, 2 }, { 0.5, 0, 0 }, { 0, 1, 0 } },
        nb_moments = { function(n, p)
            return moments(dist.NegativeBinomial(n, { probs = p }), true)
        end, T.NBN, T.P },
        mn_log_prob = { function(p, x)
            return dist.Multinomial(5, { probs = p }):log_prob(x)
        end, T.PROBS, T.MNX },
        mn_logits_log_prob = { function(l, x)
            return dist.Multinomial(5, { logits = l }):log_prob(x)
        end, T.LOGITS, T.MNX },
        mn_neg_inf = { function(l, x)
            return dist.Multinomial(5, { logits = l }):log_prob(x)
        end, { -math.huge, 0, 1, 0.5 }, { 0, 2, 2, 1 } },
        mn_entropy = { function(p) return dist.Multinomial(5, { probs = p }):entropy() end,
            T.PROBS },
        mn_logits_entropy = { function(l)
            return dist.Multinomial(3, { logits = l }):entropy()
        end, T.LOGITS },
        mn_moments = { function(p) return moments(dist.Multinomial(5, { probs = p })) end,
            T.PROBS },
        st_log_prob = { function(l, x)
            return dist.OneHotCategoricalStraightThrough({ logits = l }):log_prob(x)
        end, T.LOGITS, T.ONEHOT },
        st_entropy = { function(p)
            return dist.OneHotCategoricalStraightThrough({ probs = p }):entropy()
        end, T.PROBS },
        st_moments = { function(l)
            return moments(dist.OneHotCategoricalStraightThrough({ logits = l }), true)
        end, T.LOGITS },
        onehot_mode = { function(p) return dist.OneHotCategorical({ probs = p }):mode() end,
            T.PROBS },
        lkj_log_prob = { function(c, x) return dist.LKJCholesky(3, c):log_prob(x) end, T.LKJC,
            T.LKJX },
        lkj_dim4_log_prob = { function(c, x) return dist.LKJCholesky(4, c):log_prob(x) end, 1.5,
            T.LKJX4 },
        lkj_dim2_log_prob = { function(c, x) return dist.LKJCholesky(2, c):log_prob(x) end,
            { 0.3, 4 }, T.LKJX2 },
        wishart_log_prob = { function(df, c, x)
            return dist.Wishart(df, { covariance_matrix = sym(c) }):log_prob(x)
        end, T.DFW, T.COVS, T.WX },
        wishart_tril_log_prob = { function(df, l, x)
            return dist.Wishart(df, { scale_tril = l:tril() }):log_prob(x)
        end, 4, T.TRIL, T.WX },
        wishart_precision_log_prob = { function(df, p, x)
            return dist.Wishart(df, { precision_matrix = sym(p) }):log_prob(x)
        end, T.DFW, T.COVS, T.WX },
        wishart_entropy = { function(df, c)
            return dist.Wishart(df, { covariance_matrix = sym(c) }):entropy()
        end, T.DFW, T.COVS },
        wishart_moments = { function(df, c)
            return moments(dist.Wishart(df, { covariance_matrix = sym(c) }), true)
        end, T.DFW, T.COVS },
        wishart_precision = { function(l)
            return dist.Wishart(4, { scale_tril = l:tril() }):precision_matrix()
        end, T.TRIL },
        -- batched, member by member (see the fixture script)
        kl_wishart = { function(df, c, df2, c2)
            return kl(dist.Wishart(df, { covariance_matrix = sym(c) }),
                dist.Wishart(df2, { covariance_matrix = sym(c2) }))
        end, T.DFW, T.COVS, { 5, 3.5 }, { T.COVB, T.COV } },
        lr_log_prob = { function(m, w, d, x) return lowrank(m, w, d):log_prob(x) end, T.LRLOC,
            T.LRW, T.LRD, T.LRX },
        lr_entropy = { function(m, w, d) return lowrank(m, w, d):entropy() end, T.LRLOC, T.LRW,
            T.LRD },
        lr_moments = { function(m, w, d) return moments(lowrank(m, w, d), true) end, T.LRLOC,
            T.LRW, T.LRD },
        lr_matrices = { function(w, d)
            local l = lowrank(tide.zeros({ 3 }, { dtype = "float64", device = DEV }), w, d)
            return tide.stack({ l:scale_tril(), l:covariance_matrix(), l:precision_matrix() })
        end, T.LRW2, T.LRD2 },
        kl_lr_lr = { function(m, w, d, m2, w2, d2)
            return kl(lowrank(m, w, d), lowrank(m2, w2, d2))
        end, T.LRLOC, T.LRW, T.LRD, T.LOC, T.LRW2, T.LRD2 },
        kl_mvn_lr = { function(m, c, m2, w2, d2)
            return kl(dist.MultivariateNormal(m, { covariance_matrix = sym(c) }),
                lowrank(m2, w2, d2))
        end, T.LRLOC, T.COV, T.LOC, T.LRW2, T.LRD2 },
        kl_lr_mvn = { function(m, w, d, m2, c)
            return kl(lowrank(m, w, d),
                dist.MultivariateNormal(m2, { covariance_matrix = sym(c) }))
        end, T.LRLOC, T.LRW, T.LRD, T.LOC, T.COVS },
        msf_log_prob = { function(l, m, s, x) return mixture(l, m, s):log_prob(x) end, T.MIXL,
            T.CLOC, T.CSCALE, T.MX },
        msf_cdf = { function(l, m, s, x) return mixture(l, m, s):cdf(x) end, T.MIXL, T.CLOC,
            T.CSCALE, T.MX },
        msf_moments = { function(l, m, s) return moments(mixture(l, m, s)) end, T.MIXL, T.CLOC,
            T.CSCALE },
        msf_ind_log_prob = { function(p, m, s, x) return ind_mixture(p, m, s):log_prob(x) end,
            { 0.2, 0.5, 0.3 }, T.ILOC, T.ISCALE, T.IX },
        msf_ind_moments = { function(p, m, s) return moments(ind_mixture(p, m, s)) end,
            { 0.2, 0.5, 0.3 }, T.ILOC, T.ISCALE },
        -- ExponentialFamily's Bregman entropy and KL, against PyTorch's closed forms (values
        -- and gradients: tide's Bregman forms keep p's parameters attached)
        ef_normal_entropy = { function(m, s) return EF.entropy(dist.Normal(m, s)) end, T.LOC,
            T.SCALE },
        ef_exponential_entropy = { function(r) return EF.entropy(dist.Exponential(r)) end,
            T.SCALE },
        ef_gamma_entropy = { function(a, b) return EF.entropy(dist.Gamma(a, b)) end, T.SCALE,
            T.DF1 },
        ef_bernoulli_entropy = { function(p)
            return EF.entropy(dist.Bernoulli({ probs = p }))
        end, T.P },
        ef_cb_entropy = { function(p)
            return EF.entropy(dist.ContinuousBernoulli({ probs = p }))
        end, { 0.2, 0.4995, 0.9 } },
        ef_kl_normal = { function(m, s, m2, s2)
            return EF._kl(dist.Normal(m, s), dist.Normal(m2, s2))
        end, T.LOC, T.SCALE, T.SCALE, T.DF1 },
        ef_kl_gamma = { function(a, b, a2, b2)
            return EF._kl(dist.Gamma(a, b), dist.Gamma(a2, b2))
        end, T.SCALE, T.DF1, T.DF2, T.SCALE },
        ef_kl_poisson = { function(a, b) return EF._kl(dist.Poisson(a), dist.Poisson(b)) end,
            T.SCALE, T.DF1 },
        ef_kl_bernoulli = { function(a, b)
            return EF._kl(dist.Bernoulli({ probs = a }), dist.Bernoulli({ probs = b }))
        end, T.P, { 0.5, 0.9, 0.3 } },
        ef_kl_beta = { function(a, b, a2, b2)
            return EF._kl(dist.Beta(a, b), dist.Beta(a2, b2))
        end, T.SCALE, T.DF1, T.DF2, T.SCALE },
        ef_kl_exponential = { function(a, b)
            return EF._kl(dist.Exponential(a), dist.Exponential(b))
        end, T.SCALE, T.DF1 },
        ef_kl_dirichlet = { function(a, b)
            return EF._kl(dist.Dirichlet(a), dist.Dirichlet(b))
        end, { { 0.6, 0.7, 0.8, 0.9 }, { 1, 0.5, 0.75, 2 } },
            { { 1, 2, 0.5, 0.5 }, { 3, 0.4, 0.4, 1 } } },
        ef_kl_cb = { function(a, b)
            return EF._kl(dist.ContinuousBernoulli({ probs = a }),
                dist.ContinuousBernoulli({ probs = b }))
        end, { 0.2, 0.4995, 0.9 }, { 0.3, 0.5, 0.7 } },
    }
    -- gradients through trigamma (PyTorch's is good to about 1e-10, tide's to 1e-15:
    -- spec/special_spec.lua); ContinuousBernoulli's Bregman forms in its Taylor region (the
    -- log normalizer's expansion, not the entropy's)
    local LOOSE = { wishart_entropy = true, kl_wishart = true, ef_gamma_entropy = true,
        ef_kl_gamma = true, ef_kl_beta = true, ef_kl_dirichlet = true, ef_cb_entropy = true,
        ef_kl_cb = true }
    P.run_cases(it, T, CASES, function(name, fn, ...)
        P.check_case(T.cases[name], name, DEV, { out = 1e-12,
            grad = LOOSE[name] and 1e-8 or 1e-10 }, fn, ...)
    end)
end)

describe("distributions3: the samplers on PyTorch's draws (" .. DEV .. ")", function()
    it("VonMises's rejection rounds give PyTorch's angles", function()
        for _, key in ipairs({ "vm_rounds", "vm_rounds_small" }) do
            local V = T.values[key]
            local d = dist.VonMises(t64(V.loc), t64(V.concentration))
            local shape = { V.shape[1], #V.loc }
            local used = 0
            local x = dist.VonMises._rejection(d.loc, d.concentration, d._proposal_r, shape,
                function()
                    used = used + 1
                    return t64(V.rounds[used])
                end)
            assert.are.equal(#V.rounds, used)
            P.close(V.out, x, 1e-12, key)
        end
    end)

    it("LKJCholesky's onion method gives PyTorch's factors", function()
        for _, key in ipairs({ "lkj_onion", "lkj_onion4" }) do
            local V = T.values[key]
            P.close(V.out, dist.LKJCholesky._onion(t64(V.y), t64(V.u)), 1e-12, key)
        end
    end)

    it("Wishart's Bartlett decomposition gives PyTorch's matrices", function()
        for _, key in ipairs({ "bartlett", "bartlett_one" }) do
            local V = T.values[key]
            local d = dist.Wishart(t64(V.df), { covariance_matrix = t64(V.cov) })
            local w = dist.Wishart._bartlett(d._unbroadcasted_scale_tril, t64(V.chi2),
                t64(V.normals))
            P.close(V.out, w, 1e-12, key)
        end
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

-- x's mean within 5 standard errors of mu (its standard deviation sd)
local function near_mean(x, mu, sd, what)
    local m = x:double():mean():item()
    assert(math.abs(m - mu) <= 5 * sd / math.sqrt(x:numel()),
        ("%s: mean %.6g, expected %.6g"):format(what, m, mu))
end

describe("distributions3: samples (" .. DEV .. ")", function()
    local N = 20000

    it("FisherSnedecor draws with its moments, reparametrized in both df", function()
        tide.manual_seed(31)
        local d = dist.FisherSnedecor(t64({ 5 }), t64({ 12 }))
        local x = d:rsample({ N })
        assert.are.same({ N, 1 }, x.shape)
        assert.are.equal(tide.device(DEV), x.device)
        assert.is_true(x:gt(0):all():item())
        near_moments(x, 1.2, 1.08, "F(5, 12)", 24.4)
        -- E[x] = df2 / (df2 - 2): its derivatives 0 in df1 and -2 / (df2 - 2)^2 in df2
        local df1 = t64({ 5 }):expand(N):contiguous():requires_grad_(true)
        local df2 = t64({ 12 }):expand(N):contiguous():requires_grad_(true)
        dist.FisherSnedecor(df1, df2):rsample():sum():backward()
        near_mean(df1.grad, 0, df1.grad:std():item(), "d F / d df1")
        near_mean(df2.grad, -0.02, df2.grad:std():item(), "d F / d df2")
        assert.is_false(d:sample({ 2 }).requires_grad)
        assert.are.equal("float32", dist.FisherSnedecor(2, 3):sample({ 2 }).dtype)
    end)

    it("VonMises draws angles in [-pi, pi) with its circular moments", function()
        tide.manual_seed(32)
        local d = dist.VonMises(t64({ 1, -3, 0 }), t64({ 2, 0.3, 50 }))
        local x = d:sample({ N })
        assert.are.same({ N, 3 }, x.shape)
        assert.is_true(x:ge(-math.pi):logical_and(x:le(math.pi)):all():item())
        local var = d:variance():to("cpu"):totable()
        local loc = { 1, -3, 0 }
        for i = 1, 3 do
            local c = (x:select(2, i) - loc[i]):cos()
            local s = (x:select(2, i) - loc[i]):sin()
            -- E[cos(x - loc)] = I1 / I0 = 1 - the circular variance; E[sin(x - loc)] = 0
            near_mean(c, 1 - var[i], c:std():item(), "cos, concentration " .. i)
            near_mean(s, 0, s:std():item(), "sin, concentration " .. i)
        end
        assert.are.equal("float32", dist.VonMises(0, 1):sample({ 3 }).dtype)
        -- a tiny concentration: nearly uniform (PyTorch 1.13's proposal is 0 / 0 there)
        for _, dt in ipairs({ "float32", "float64" }) do
            local u = dist.VonMises(0, tide.tensor({ 1e-9 }, { dtype = dt, device = DEV }))
                :sample({ N })
            near_mean(u:cos(), 0, math.sqrt(0.5), "cos of a uniform angle, " .. dt)
            near_moments(u, 0, math.pi ^ 2 / 3, "a uniform angle, " .. dt, -1.2)
        end
    end)

    it("NegativeBinomial draws counts with its mean and variance", function()
        tide.manual_seed(33)
        local d = dist.NegativeBinomial(t64({ 3, 0.5 }), { probs = t64({ 0.4, 0.8 }) })
        local x = d:sample({ N })
        assert.are.same({ N, 2 }, x.shape)
        assert.are.equal("float64", x.dtype)
        assert.is_true(x:eq(x:floor()):logical_and(x:ge(0)):all():item())
        near_moments(x:select(2, 1), 2, 2 / 0.6, "NB(3, 0.4)", 2 + 0.36 / 1.2)
        near_moments(x:select(2, 2), 2, 10, "NB(0.5, 0.8)", 12 + 0.04 / 0.4)
        assert.is_true(dist.NegativeBinomial(0, { probs = t64({ 0.5 }) }):sample({ 5 }):eq(0)
            :all():item())
    end)

    it("Multinomial draws counts summing to total_count, with its moments", function()
        tide.manual_seed(34)
        local p = { 0.2, 0.3, 0.5 }
        local d = dist.Multinomial(10, { probs = t64({ p, { 0, 1, 0 } }) })
        local x = d:sample({ N })
        assert.are.same({ N, 2, 3 }, x.shape)
        assert.are.equal("float64", x.dtype)
        assert.is_true(x:sum(-1):eq(10):all():item())
        for k = 1, 3 do
            local var = 10 * p[k] * (1 - p[k])
            near_moments(x:select(2, 1):select(2, k), 10 * p[k], var, "count " .. k,
                (1 - 6 * p[k] * (1 - p[k])) / var)
        end
        assert.is_true(x:select(2, 2):select(2, 2):eq(10):all():item())
        assert.is_true(dist.Multinomial(0, { probs = t64({ 0.5, 0.5 }) }):sample({ 3 }):eq(0)
            :all():item())
        assert.are.same({ 2 }, dist.Multinomial(nil, { logits = t64({ 0, 0 }) }):sample().shape)
    end)

    it("OneHotCategoricalStraightThrough's rsample is one-hot, with probs' gradient", function()
        tide.manual_seed(35)
        local l = t64(T.LOGITS):requires_grad_(true)
        local d = dist.OneHotCategoricalStraightThrough({ logits = l })
        local x = d:rsample({ 6 })
        assert.are.same({ 6, 2, 4 }, x.shape)
        assert.is_true(x.requires_grad)
        P.close({ { 1, 1 }, { 1, 1 }, { 1, 1 }, { 1, 1 }, { 1, 1 }, { 1, 1 } },
            x:detach():sum(-1), 0, "one 1 a row")
        assert.is_true(x:detach():eq(0):logical_or(x:detach():eq(1)):all():item())
        local w = tide.arange(1, 49, { dtype = "float64", device = DEV }):reshape(6, 2, 4)
        local loss = (x * w):sum()
        loss:backward()
        local l2 = t64(T.LOGITS):requires_grad_(true)
        local probs = dist.OneHotCategoricalStraightThrough({ logits = l2 }).probs
        loss = (probs * w:sum(1)):sum()
        loss:backward()
        P.close(l2.grad:to("cpu"):totable(), l.grad, 1e-12, "the straight-through gradient")
        assert.is_false(d:sample().requires_grad)
        assert.is_true(d.has_rsample)
    end)

    it("MixtureSameFamily draws with its mean and variance", function()
        tide.manual_seed(36)
        local d = mixture(t64(T.MIXL), t64(T.CLOC), t64(T.CSCALE))
        local x = d:sample({ N })
        assert.are.same({ N, 2 }, x.shape)
        local mean, var = d:mean():to("cpu"):totable(), d:variance():to("cpu"):totable()
        for i = 1, 2 do
            near_moments(x:select(2, i), mean[i], var[i], "mixture " .. i, 6)
        end
        -- vector events, one mixture for a batch of components
        local m = ind_mixture(t64({ 0.2, 0.5, 0.3 }), t64(T.ILOC), t64(T.ISCALE))
        local y = m:sample({ N })
        assert.are.same({ N, 2, 2 }, y.shape)
        local mm, mv = m:mean():to("cpu"):totable(), m:variance():to("cpu"):totable()
        for i = 1, 2 do
            for j = 1, 2 do
                near_moments(y:select(2, i):select(2, j), mm[i][j], mv[i][j], "vector mixture",
                    6)
            end
        end
        assert.is_false(d:sample().requires_grad)
        assert.are.same({ 2 }, d:sample().shape)
    end)

    it("LKJCholesky draws Cholesky factors of correlation matrices, Beta marginals", function()
        tide.manual_seed(37)
        local d = dist.LKJCholesky(3, t64({ 2, 0.5 }))
        local L = d:sample({ N })
        assert.are.same({ N, 2, 3, 3 }, L.shape)
        assert.is_true(L:tril():eq(L):all():item())
        assert.is_true(L:diagonal(0, -2, -1):gt(0):all():item())
        local C = L:matmul(L:transpose(-2, -1))
        P.close(0, (C:diagonal(0, -2, -1) - 1):abs():max(), 1e-12, "unit diagonal")
        -- an off-diagonal correlation is 2 B - 1, B ~ Beta(a, a), a = eta - 1 + dim / 2
        for i, eta in ipairs({ 2, 0.5 }) do
            local a = eta - 1 + 1.5
            for _, ij in ipairs({ { 2, 1 }, { 3, 1 }, { 3, 2 } }) do
                local r = C:select(2, i):select(2, ij[1]):select(2, ij[2])
                near_moments(r, 0, 1 / (2 * a + 1), "correlation, eta " .. eta, -6 / (2 * a + 3))
            end
        end
        -- every pair alike (PyTorch 1.13's draws are not: see LKJCholesky.lua)
        local u = dist.LKJCholesky(4):sample({ N })
        assert.are.equal("float32", u.dtype)
        local cu = u:double():matmul(u:double():transpose(-2, -1))
        for i = 2, 4 do
            for j = 1, i - 1 do
                near_moments(cu:select(2, i):select(2, j), 0, 1 / 5,
                    ("uniform correlation %d %d, dim 4"):format(i, j), -6 / 7)
            end
        end
    end)

    it("Wishart draws positive-definite matrices with its moments, reparametrized", function()
        tide.manual_seed(38)
        local V = t64(T.COV)
        local d = dist.Wishart(t64({ 5 }), { covariance_matrix = V })
        local w = d:rsample({ N })
        assert.are.same({ N, 1, 3, 3 }, w.shape)
        P.close(0, (w - w:transpose(-2, -1)):abs():max(), 1e-12, "symmetric")
        local _, info = tide.linalg.cholesky_ex(w)
        assert.is_true(info:eq(0):all():item())
        local mean, var = d:mean():to("cpu"):totable()[1], d:variance():to("cpu"):totable()[1]
        for _, ij in ipairs({ { 1, 1 }, { 2, 1 }, { 3, 3 }, { 3, 2 } }) do
            local x = w:select(2, 1):select(2, ij[1]):select(2, ij[2])
            near_moments(x, mean[ij[1]][ij[2]], var[ij[1]][ij[2]], "wishart", 6)
        end
        -- E[W] = df V: d E[W_11] / d df = V_11, d E[sum W] / d V = df (each element)
        local df = t64({ 5 }):expand(N):contiguous():requires_grad_(true)
        local c = t64(T.COV):requires_grad_(true)
        local x = dist.Wishart(df, { covariance_matrix = c }):rsample()
        x:select(-1, 1):select(-1, 1):sum():backward()
        near_mean(df.grad, 2, df.grad:std():item(), "d W_11 / d df")
        assert(math.abs(c.grad:select(1, 1):select(1, 1):item() / N - 5) < 0.25,
            "d W_11 / d V_11")
        assert.is_false(d:sample({ 2 }).requires_grad)
        assert.are.same({ 2, 1, 3, 3 }, d:rsample({ 2 }, { max_try_correction = 0 }).shape)
    end)

    it("LowRankMultivariateNormal draws with its covariance, reparametrized", function()
        tide.manual_seed(39)
        local loc = t64({ 0.5, -1, 2 }):requires_grad_(true)
        local w = t64(T.LRW2)
        local d = lowrank(loc, w, t64(T.LRD2))
        local x = d:rsample({ N })
        assert.are.same({ N, 3 }, x.shape)
        local cov = d:covariance_matrix():to("cpu"):totable()
        local xc = x:detach() - x:detach():mean(1, true)
        local sample_cov = (xc:t():matmul(xc) / (N - 1)):to("cpu"):totable()
        for i = 1, 3 do
            near_moments(x:detach():select(2, i), loc:detach()[i]:item(), cov[i][i], "lowrank")
            for j = 1, i - 1 do
                local se = math.sqrt((cov[i][i] * cov[j][j] + cov[i][j] ^ 2) / N)
                assert(math.abs(sample_cov[i][j] - cov[i][j]) < 5 * se, "covariance")
            end
        end
        x:sum():backward()
        P.close({ N, N, N }, loc.grad, 1e-12, "d x / d loc")
    end)
end)

describe("distributions3: expand, support, ExponentialFamily (" .. DEV .. ")", function()
    it("expand broadcasts the batch: the same scores, draws of the new shape", function()
        local x = t64({ 0.3, 1.5 })
        local cases = {
            { dist.VonMises(t64({ 0, 1 }), 2), x },
            { dist.FisherSnedecor(t64({ 3, 5 }), 4), x },
            { dist.NegativeBinomial(t64({ 2, 3 }), { probs = 0.4 }), t64({ 1, 4 }) },
            { dist.Multinomial(3, { probs = t64({ { 0.2, 0.8 }, { 0.5, 0.5 } }) }),
                t64({ { 1, 2 }, { 3, 0 } }) },
            { dist.OneHotCategoricalStraightThrough({ logits = t64({ { 0, 1 }, { 2, 0 } }) }),
                t64({ { 1, 0 }, { 0, 1 } }) },
            { dist.LKJCholesky(2, t64({ 0.5, 2 })), t64({ { 1, 0 }, { 0.6, 0.8 } }) },
            { dist.Wishart(t64({ 3, 4 }), { covariance_matrix = t64(T.COV):narrow(1, 1, 2)
                :narrow(2, 1, 2) }), t64({ { 2, 0.5 }, { 0.5, 1 } }) },
            { lowrank(t64({ { 0, 1 }, { 1, 0 } }), t64({ { 1 }, { 0.5 } }), t64({ 1, 2 })),
                t64({ 0.2, -0.3 }) },
            { dist.MixtureSameFamily(dist.Categorical({ probs = t64({ 0.3, 0.7 }) }),
                dist.VonMises(t64({ { 0, 1 }, { 2, 3 } }), 1)), x },
        }
        for _, c in ipairs(cases) do
            local d, v = c[1], c[2]
            local e = d:expand({ 3, 2 })
            local name = d.__name
            assert.are.same({ 3, 2 }, e.batch_shape, name)
            assert.are.same(d.event_shape, e.event_shape, name)
            assert.are.equal(getmetatable(d), getmetatable(e), name)
            local want = d:log_prob(v):expand({ 3, 2 }):contiguous():to("cpu"):totable()
            P.close(want, e:log_prob(v), 1e-12, name .. " expanded log_prob")
            local s = e:sample({ 4 }).shape
            assert.are.same(4, s[1], name)
            assert.are.same({ 3, 2 }, { s[2], s[3] }, name)
            assert.are.same(d:extended_shape(), d:sample().shape, name .. " left alone")
        end
        assert.matches("tide: VonMises.expand: the batch shape {2} cannot expand to {3}; " ..
            "each size must be 1 or the new one", catch(function()
                dist.VonMises(t64({ 0, 1 }), 1):expand({ 3 })
            end), 1, true)
        assert.matches("tide: Wishart.expand: the batch shape must be a list of sizes",
            catch(function() dist.Wishart(3, { scale_tril = t64(T.TRIL) }):expand(2) end), 1,
            true)
        -- a component family without an expand of its own expands through the generic one
        local mx = mixture(t64(T.MIXL), t64(T.CLOC), t64(T.CSCALE))
        local mxe = mx:expand({ 4, mx.batch_shape[1] })
        assert.are.same({ 4, mx.batch_shape[1] }, mxe.batch_shape)
        local c = dist.Categorical({ logits = t64({ 0, 1, 2 }) }):expand({ 5 })
        assert.are.same({ 5 }, c.batch_shape)
        assert.are.same({ 5, 3 }, c.probs.shape)
    end)

    it("support is PyTorch's constraint, checking values", function()
        local function check(d, v)
            return d:support():check(v):to("cpu"):totable()
        end
        assert.are.same({ true, false }, check(dist.FisherSnedecor(1, 2), t64({ 1, 0 })))
        assert.are.same({ true, true }, check(dist.VonMises(0, 1), t64({ 7, -9 })))
        assert.are.same({ true, false }, check(dist.NegativeBinomial(2, { probs = 0.5 }),
            t64({ 3, 1.5 })))
        assert.are.same({ true, false }, check(dist.Multinomial(3, { probs = t64({ 0.5, 0.5 }) }),
            t64({ { 1, 2 }, { 3, 1 } })))
        assert.are.same({ true, false }, check(dist.LKJCholesky(2), t64({ { { 1, 0 },
            { 0.6, 0.8 } }, { { 1, 0 }, { 0.6, 0.9 } } })))
        assert.are.same({ true, false }, check(dist.Wishart(3, { scale_tril = t64(T.TRIL) }),
            t64({ T.COV, { { 1, 2, 0 }, { 2, 1, 0 }, { 0, 0, 1 } } })))
        assert.are.same({ true }, check(lowrank(t64({ 0, 0 }), t64({ { 1 }, { 1 } }),
            t64({ 1, 1 })), t64({ { 3, -4 } })))
        assert.are.same({ false, true }, check(dist.OneHotCategoricalStraightThrough({
            probs = t64({ 0.5, 0.5 }) }), t64({ { 1, 1 }, { 0, 1 } })))
        assert.are.same({ true, false }, check(dist.MixtureSameFamily(dist.Categorical({
            probs = t64({ 0.5, 0.5 }) }), dist.Gamma(t64({ 1, 2 }), 1)), t64({ 1, -1 })))
        assert.is_true(dist.NegativeBinomial(2, { probs = 0.5 }):support().is_discrete)
        assert.are.equal(2, dist.Wishart(3, { scale_tril = t64(T.TRIL) }):support().event_dim)
    end)

    it("ExponentialFamily: Bregman entropy and KL for a family of one's own", function()
        -- the exponential distribution written as an exponential family only
        local MyExp = EF:extend("MyExp")
        function MyExp:init(rate)
            self.rate = rate
            self.batch_shape, self.event_shape = rate:size(), {}
        end
        MyExp._mean_carrier_measure = 0
        function MyExp:_natural_params()
            return { -self.rate }
        end
        function MyExp:_log_normalizer(x)
            return -(-x):log()
        end
        local r = t64(T.SCALE):requires_grad_(true)
        local h = MyExp(r):entropy()
        P.close(T.cases.ef_exponential_entropy.out, h, 1e-13, "entropy")
        h:sum():backward()
        local r2 = t64(T.SCALE):requires_grad_(true)
        dist.Exponential(r2):entropy():sum():backward()
        P.close(r2.grad:to("cpu"):totable(), r.grad, 1e-12, "entropy's gradient")
        -- kl_divergence takes the Bregman form for two of one family without a closed form
        local k = kl(MyExp(t64(T.SCALE)), MyExp(t64(T.DF1)))
        P.close(T.cases.ef_kl_exponential.out, k, 1e-12, "kl")
        assert.is_true(EF.is_instance(MyExp(r), EF))
        assert.is_true(EF.is_instance(dist.Chi2(t64({ 1 })), EF))
        assert.is_true(EF.is_instance(dist.Wishart(3, { scale_tril = t64(T.TRIL) }), EF))
        assert.is_false(EF.is_instance(dist.Cauchy(0, 1), EF))
        -- no carrier measure: no Bregman entropy
        local NoCarrier = EF:extend("NoCarrier")
        function NoCarrier:init() self.batch_shape, self.event_shape = {}, {} end
        assert.matches("tide: NoCarrier: entropy is not defined for this distribution",
            catch(function() NoCarrier():entropy() end), 1, true)
        assert.matches("tide: Beta: the Bregman entropy needs _mean_carrier_measure",
            catch(function() EF.entropy(dist.Beta(1, 2)) end), 1, true)
        assert.matches("tide: NoCarrier: _natural_params is not defined",
            catch(function() kl(NoCarrier(), NoCarrier()) end), 1, true)
    end)
end)

describe("distributions3: checks (" .. DEV .. ")", function()
    it("refuse bad parameters, naming them", function()
        local cases = {
            { "tide: FisherSnedecor: df1 must be positive",
                function() dist.FisherSnedecor(t64({ 0 }), 1) end },
            { "tide: FisherSnedecor: df2 must be positive",
                function() dist.FisherSnedecor(1, t64({ -1 })) end },
            { "tide: FisherSnedecor: expected an options table such as {validate_args = " ..
                "false} after the 2 parameters, got number",
                function() dist.FisherSnedecor(1, 2, 3) end },
            { 'tide: FisherSnedecor: unknown option "validate"',
                function() dist.FisherSnedecor(1, 2, { validate = false }) end },
            { "tide: FisherSnedecor: validate_args must be true or false, got number",
                function() dist.FisherSnedecor(1, 2, { validate_args = 0 }) end },
            { "tide: FisherSnedecor: expected at most 3 arguments",
                function() dist.FisherSnedecor(1, 2, {}, 4) end },
            { "tide: VonMises: concentration must be positive",
                function() dist.VonMises(0, t64({ 0 })) end },
            { "tide: VonMises: loc must be a tensor or a number, got string",
                function() dist.VonMises("0", 1) end },
            { "tide: NegativeBinomial: probs must lie in [0, 1)",
                function() dist.NegativeBinomial(2, { probs = t64({ 1 }) }) end },
            { "tide: NegativeBinomial: total_count must be >= 0",
                function() dist.NegativeBinomial(t64({ -1 }), { probs = 0.5 }) end },
            { "tide: NegativeBinomial: give exactly one of probs and logits",
                function() dist.NegativeBinomial(2, {}) end },
            { "tide: NegativeBinomial: total_count comes first",
                function() dist.NegativeBinomial({ probs = 0.5 }) end },
            { "tide: NegativeBinomial: total_count is required",
                function() dist.NegativeBinomial(nil, { probs = 0.5 }) end },
            { "tide: Multinomial: total_count must be a whole number >= 0 (one for the whole " ..
                "batch, as PyTorch's), got a tensor",
                function() dist.Multinomial(t64({ 2 }), { probs = t64({ 0.5, 0.5 }) }) end },
            { "tide: Multinomial: total_count must be a whole number >= 0 (one for the whole " ..
                "batch, as PyTorch's), got 2.5",
                function() dist.Multinomial(2.5, { probs = t64({ 0.5, 0.5 }) }) end },
            { "tide: Multinomial: probs must be >= 0",
                function() dist.Multinomial(2, { probs = t64({ -0.5, 0.5 }) }) end },
            { 'tide: Multinomial: unknown option "prob"',
                function() dist.Multinomial(2, { prob = t64({ 0.5, 0.5 }) }) end },
            { "tide: Multinomial: total_count comes first",
                function() dist.Multinomial({ probs = t64({ 0.5, 0.5 }) }) end },
            { "tide: OneHotCategoricalStraightThrough: probs must be >= 0",
                function() dist.OneHotCategoricalStraightThrough({ probs = t64({ -1, 2 }) }) end },
            { 'tide: OneHotCategoricalStraightThrough: unknown option "logit"',
                function() dist.OneHotCategoricalStraightThrough({ logit = t64({ 1 }) }) end },
            { "tide: LKJCholesky: dim must be an integer >= 2 (the matrices' size), got 1",
                function() dist.LKJCholesky(1) end },
            { "tide: LKJCholesky: dim must be an integer >= 2 (the matrices' size), got 2.5",
                function() dist.LKJCholesky(2.5) end },
            { "tide: LKJCholesky: concentration must be positive",
                function() dist.LKJCholesky(3, t64({ 0 })) end },
            { "tide: MixtureSameFamily: mixture_distribution must be a Categorical, got a Normal",
                function() dist.MixtureSameFamily(dist.Normal(0, 1), dist.Normal(0, 1)) end },
            { "tide: MixtureSameFamily: component_distribution must be a distribution, got " ..
                "a tensor", function()
                    dist.MixtureSameFamily(dist.Categorical({ probs = t64({ 1, 1 }) }),
                        t64({ 1, 2 }))
                end },
            { "tide: MixtureSameFamily: the mixture has 2 components and " ..
                "component_distribution's last batch dim is 3; make them equal", function()
                    dist.MixtureSameFamily(dist.Categorical({ probs = t64({ 1, 1 }) }),
                        dist.Normal(t64({ 0, 1, 2 }), 1))
                end },
            { "tide: MixtureSameFamily: mixture_distribution's batch shape {4} does not " ..
                "broadcast with component_distribution's {2}", function()
                    dist.MixtureSameFamily(dist.Categorical({ probs = t64({ 1, 1 })
                        :expand(4, 2) }), dist.Normal(t64({ { 0, 1 }, { 2, 3 } }), 1))
                end },
            { "tide: MixtureSameFamily: component_distribution needs a batch dim", function()
                dist.MixtureSameFamily(dist.Categorical({ probs = t64({ 1 }) }),
                    dist.Normal(0, 1))
            end },
            { "tide: Wishart: give exactly one of covariance_matrix, precision_matrix and " ..
                "scale_tril", function()
                    dist.Wishart(3, { covariance_matrix = t64(T.COV), scale_tril = t64(T.TRIL) })
                end },
            { "tide: Wishart: df must be > p - 1 = 2 for 3 x 3 matrices, got 2",
                function() dist.Wishart(2, { covariance_matrix = t64(T.COV) }) end },
            { "tide: Wishart: covariance_matrix must be symmetric positive-definite",
                function()
                    dist.Wishart(3, { covariance_matrix = t64({ { 1, 2 }, { 2, 1 } }) })
                end },
            { "tide: Wishart: precision_matrix must be symmetric positive-definite",
                function()
                    dist.Wishart(3, { precision_matrix = t64({ { 1, 0.5 }, { 0, 1 } }) })
                end },
            { "tide: Wishart: scale_tril must be lower-triangular with a positive diagonal",
                function() dist.Wishart(3, { scale_tril = t64({ { 1, 0 }, { 1, -1 } }) }) end },
            { "tide: Wishart: scale_tril must be a floating-point tensor of square matrices " ..
                "[..., p, p], got float64 {3}",
                function() dist.Wishart(3, { scale_tril = t64({ 1, 2, 3 }) }) end },
            { "tide: Wishart: df {3} does not broadcast with the batch of covariance_matrix " ..
                "{2, 3, 3}",
                function()
                    dist.Wishart(t64({ 4, 5, 6 }), { covariance_matrix = t64(T.COVS) })
                end },
            { "tide: Wishart: expected {covariance_matrix =}, {precision_matrix =} or " ..
                "{scale_tril =} after df, got nil", function() dist.Wishart(3) end },
            { 'tide: Wishart: unknown option "covariance"',
                function() dist.Wishart(3, { covariance = t64(T.COV) }) end },
            { "tide: LowRankMultivariateNormal: cov_diag must be positive",
                function() lowrank(t64({ 0, 0 }), t64({ { 1 }, { 1 } }), t64({ 1, 0 })) end },
            { "tide: LowRankMultivariateNormal: cov_factor must be [..., 3, m] for loc {3}, " ..
                "got float64 {2, 2}",
                function() lowrank(t64(T.LOC), t64({ { 1, 0 }, { 0, 1 } }), t64(T.LRD)) end },
            { "tide: LowRankMultivariateNormal: cov_diag must be [..., 3] for loc {3}, got " ..
                "float64 {2}", function() lowrank(t64(T.LOC), t64(T.LRW2), t64({ 1, 2 })) end },
            { "tide: LowRankMultivariateNormal: incompatible batch shapes: loc {2, 3}, " ..
                "cov_factor {4, 3, 2}, cov_diag {3}", function()
                    lowrank(t64(T.LRLOC), t64(T.LRW2):expand(4, 3, 2), t64(T.LRD))
                end },
            { "tide: LowRankMultivariateNormal: loc must be a floating-point tensor with at " ..
                "least one dim (the vector's), got number",
                function() lowrank(1, t64(T.LRW2), t64(T.LRD)) end },
            { "tide: LowRankMultivariateNormal: loc is on " .. DEV .. " and cov_diag on " ..
                D.other, function()
                    lowrank(t64(T.LOC), t64(T.LRW2), tide.tensor(T.LRD, { dtype = "float64",
                        device = D.other }))
                end },
        }
        for _, c in ipairs(cases) do
            assert.matches(c[1], catch(c[2]), 1, true)
        end
    end)

    it("refuse values outside the support, naming the call", function()
        local cases = {
            { "tide: FisherSnedecor.log_prob: the values must be positive",
                function() dist.FisherSnedecor(1, t64({ 2 })):log_prob(t64({ 0 })) end },
            { "tide: NegativeBinomial.log_prob: the values must be integers >= 0",
                function()
                    dist.NegativeBinomial(2, { probs = t64({ 0.5 }) }):log_prob(t64({ 1.5 }))
                end },
            { "tide: Multinomial.log_prob: the values must be counts >= 0 summing to at most " ..
                "total_count (5)", function()
                    dist.Multinomial(5, { probs = t64({ 0.5, 0.5 }) }):log_prob(t64({ 3, 3 }))
                end },
            { "tide: Multinomial.log_prob: the values must be count vectors of 2 classes",
                function()
                    dist.Multinomial(5, { probs = t64({ 0.5, 0.5 }) }):log_prob(t64({ 3 }))
                end },
            { "tide: OneHotCategoricalStraightThrough.log_prob: the values must be one-hot",
                function()
                    dist.OneHotCategoricalStraightThrough({ probs = t64({ 0.5, 0.5 }) })
                        :log_prob(t64({ 1, 1 }))
                end },
            { "tide: LKJCholesky.log_prob: the values must be Cholesky factors of correlation " ..
                "matrices", function()
                    dist.LKJCholesky(2, t64({ 1 })):log_prob(t64({ { 1, 0 }, { 0.5, 0.5 } }))
                end },
            { "tide: LKJCholesky.log_prob: the values must be 3 x 3 matrices (the last two " ..
                "dims), got {2, 2}", function()
                    dist.LKJCholesky(3, t64({ 1 })):log_prob(t64({ { 1, 0 }, { 0, 1 } }))
                end },
            { "tide: Wishart.log_prob: the values must be symmetric positive-definite",
                function()
                    dist.Wishart(3, { scale_tril = t64(T.TRIL) }):log_prob(t64({ { 1, 0, 0 },
                        { 0, -1, 0 }, { 0, 0, 1 } }))
                end },
            { "tide: Wishart.log_prob: the values must be 3 x 3 matrices",
                function()
                    dist.Wishart(3, { scale_tril = t64(T.TRIL) }):log_prob(t64({ 1 }))
                end },
            { "tide: LowRankMultivariateNormal.log_prob: the values must be vectors of 3, got {2}",
                function()
                    lowrank(t64(T.LOC), t64(T.LRW2), t64(T.LRD2)):log_prob(t64({ 1, 2 }))
                end },
            { "tide: MixtureSameFamily.log_prob: the values must be positive (from the Gamma " ..
                "components)", function()
                    dist.MixtureSameFamily(dist.Categorical({ probs = t64({ 1, 1 }) }),
                        dist.Gamma(t64({ 1, 2 }), 1)):log_prob(t64({ -1 }))
                end },
            { "tide: MixtureSameFamily.log_prob: the values must end with the event shape {2}",
                function() ind_mixture(t64({ 0.2, 0.5, 0.3 }), t64(T.ILOC), t64(T.ISCALE))
                    :log_prob(t64({ 1, 2, 3 }))
                end },
            { "tide: VonMises.log_prob: the value is on ", function()
                dist.VonMises(t64({ 0 }), 1):log_prob(tide.tensor({ 1.0 }, { dtype = "float64",
                    device = D.other }))
            end },
        }
        for _, c in ipairs(cases) do
            assert.matches(c[1], catch(c[2]), 1, true)
        end
    end)

    it("say what they cannot do", function()
        local cases = {
            { "tide: FisherSnedecor: entropy is not defined for this distribution",
                function() dist.FisherSnedecor(1, 2):entropy() end },
            { "tide: VonMises: rsample (the draw is not differentiable; use sample)",
                function() dist.VonMises(0, 1):rsample() end },
            { "tide: VonMises: entropy is not defined for this distribution",
                function() dist.VonMises(0, 1):entropy() end },
            { "tide: NegativeBinomial: rsample (the draw is not differentiable",
                function() dist.NegativeBinomial(2, { probs = 0.5 }):rsample() end },
            { "tide: Multinomial: rsample (the draw is not differentiable",
                function() dist.Multinomial(2, { probs = t64({ 0.5, 0.5 }) }):rsample() end },
            { "tide: MixtureSameFamily: rsample (the draw is not differentiable",
                function() mixture(t64(T.MIXL), t64(T.CLOC), t64(T.CSCALE)):rsample() end },
            { "tide: LKJCholesky: mean is not defined for this distribution (PyTorch's has none)",
                function() dist.LKJCholesky(3):mean() end },
            { "tide: LKJCholesky: entropy is not defined for this distribution",
                function() dist.LKJCholesky(3):entropy() end },
            { "tide: MixtureSameFamily.cdf: cdf needs components with scalar events, got " ..
                "event shape {2}", function()
                    ind_mixture(t64({ 0.2, 0.5, 0.3 }), t64(T.ILOC), t64(T.ISCALE))
                        :cdf(t64({ 1, 2 }))
                end },
            { 'tide: Wishart.rsample: unknown option "max_tries"', function()
                dist.Wishart(3, { scale_tril = t64(T.TRIL) }):rsample({ 2 }, { max_tries = 1 })
            end },
            { "tide: Wishart.rsample: the sample shape must be a list of sizes",
                function() dist.Wishart(3, { scale_tril = t64(T.TRIL) }):rsample(2) end },
            { "tide: kl_divergence: LowRankMultivariateNormal of 3 and MultivariateNormal of " ..
                "2 dims", function()
                    kl(lowrank(t64(T.LOC), t64(T.LRW2), t64(T.LRD2)),
                        dist.MultivariateNormal(t64({ 0, 0 }), { scale_tril = t64({ { 1, 0 },
                            { 0, 1 } }) }))
                end },
            { "tide: kl_divergence: no closed form for Wishart and Normal",
                function()
                    kl(dist.Wishart(3, { scale_tril = t64(T.TRIL) }), dist.Normal(0, 1))
                end },
            { "tide: kl_divergence: Wishart of event shape {3, 3} and of {2, 2}; give both one",
                function()
                    kl(dist.Wishart(3, { scale_tril = t64(T.TRIL) }),
                        dist.Wishart(3, { scale_tril = t64({ { 1, 0 }, { 0, 1 } }) }))
                end },
            { "tide: kl_divergence: no closed form for VonMises and VonMises",
                function() kl(dist.VonMises(0, 1), dist.VonMises(1, 1)) end },
            { "tide: ExponentialFamily: the base class has no parameters",
                function() EF() end },
        }
        for _, c in ipairs(cases) do
            assert.matches(c[1], catch(c[2]), 1, true)
        end
    end)

    it("validate_args = false skips the checks, as PyTorch's", function()
        local vm = dist.VonMises(0, t64({ -1 }), { validate_args = false })
        assert.are.equal("float64", vm:log_prob(t64({ 0 })).dtype)
        local fs = dist.FisherSnedecor(1, t64({ 2 }), { validate_args = false })
        assert.is_true(fs:log_prob(t64({ -1 })):isnan():item())
        local mn = dist.Multinomial(2, { probs = t64({ 0.5, 0.5 }), validate_args = false })
        P.close(math.log(20) + 6 * math.log(0.5), mn:log_prob(t64({ 3, 3 })), 1e-12,
            "counts past total_count")
        local nb = dist.NegativeBinomial(2, { probs = t64({ 1 }), validate_args = false })
        assert.are.same({ 1 }, nb.batch_shape)
        assert.are.equal("float64", dist.Categorical({ probs = t64({ -1, 2 }),
            validate_args = false }).probs.dtype)
        local st = dist.OneHotCategoricalStraightThrough({ probs = t64({ 0.5, 0.5 }),
            validate_args = false })
        assert.are.equal("float64", st:log_prob(t64({ 1, 1 })).dtype)
        local lkj = dist.LKJCholesky(2, t64({ 1 }), { validate_args = false })
        assert.are.equal("float64", lkj:log_prob(t64({ { 1, 0 }, { 0.5, 0.5 } })).dtype)
        local w = dist.Wishart(3, { scale_tril = t64({ { 1, 0 }, { 1, -1 } }),
            validate_args = false })
        assert.are.same({ 2, 2 }, w.event_shape)
        local lr = dist.LowRankMultivariateNormal(t64({ 0, 0 }), t64({ { 1 }, { 0 } }),
            t64({ 1, -0.5 }), { validate_args = false })
        assert.are.same({ 2 }, lr.event_shape)
    end)

    it("Wishart checks symmetry with PyTorch's tolerance (rtol 1e-5, atol 1e-6)", function()
        -- float32 entries near 1000 off by 1e-4: symmetric for PyTorch (and constraints)
        local f32 = { dtype = "float32", device = DEV }
        local cov = tide.tensor({ { 1000, 300, 0 }, { 300, 1000, 0 }, { 0, 0, 1000 } }, f32)
        local v = cov + tide.tensor({ { 0, 1e-4, 0 }, { 0, 0, 0 }, { 0, 0, 0 } }, f32)
        assert.is_true(dist.constraints.positive_definite:check(v):item())
        local w = dist.Wishart(6, { covariance_matrix = v })
        assert.are.same({ 3, 3 }, w.event_shape)
        assert.is_true(dist.Wishart(6, { precision_matrix = v }):log_prob(v):isfinite():item())
        assert.is_true(dist.Wishart(6, { covariance_matrix = cov }):log_prob(v):isfinite()
            :item())
    end)

    it("a failed call draws nothing and changes nothing", function()
        local d = dist.Wishart(t64({ 4 }), { scale_tril = t64(T.TRIL) })
        local v = dist.VonMises(t64({ 0, 1 }), 2)
        tide.manual_seed(40)
        local want_w, want_v = d:rsample({ 2 }), v:sample({ 3 })
        tide.manual_seed(40)
        catch(function() d:rsample({ 2 }, { max_tries = 1 }) end)
        catch(function() d:rsample({ 2.5 }) end)
        catch(function() v:sample({ -1, "a" }) end)
        catch(function() v:expand({ 3 }) end)
        P.close(want_w:to("cpu"):totable(), d:rsample({ 2 }), 0, "the same draws")
        P.close(want_v:to("cpu"):totable(), v:sample({ 3 }), 0, "the same draws")
        assert.are.same({ 2 }, v.batch_shape)
        assert.are.same({ 1 }, d.batch_shape)
    end)

    it("print their parameters and flag rsample", function()
        assert.are.equal("VonMises(loc: {3}, concentration: {3})",
            tostring(dist.VonMises(t64(T.LOC), 1)))
        assert.are.equal("Multinomial(probs: {2, 4})",
            tostring(dist.Multinomial(5, { probs = t64(T.PROBS) })))
        assert.are.equal("LowRankMultivariateNormal(loc: {2, 3}, cov_factor: {2, 3, 2}, " ..
            "cov_diag: {2, 3})", tostring(lowrank(t64(T.LRLOC), t64(T.LRW), t64(T.LRD))))
        assert.are.equal("MixtureSameFamily(Categorical(logits: {2, 3}), Normal(loc: {2, 3}, " ..
            "scale: {2, 3}))", tostring(mixture(t64(T.MIXL), t64(T.CLOC), t64(T.CSCALE))))
        assert.are.equal("Wishart(df: {2})",
            tostring(dist.Wishart(t64(T.DFW), { covariance_matrix = t64(T.COVS) })))
        for name, has in pairs({ FisherSnedecor = true, LowRankMultivariateNormal = true,
            Wishart = true, OneHotCategoricalStraightThrough = true, VonMises = false,
            NegativeBinomial = false, Multinomial = false, MixtureSameFamily = false,
            LKJCholesky = false }) do
            assert.are.equal(has, dist[name].has_rsample, name)
        end
        -- the straight-through class is a OneHotCategorical for kl_divergence
        local a = dist.OneHotCategoricalStraightThrough({ logits = t64(T.LOGITS) })
        local b = dist.OneHotCategorical({ logits = t64(T.LOGITS):flip(1) })
        P.close(kl(a._categorical, b._categorical):to("cpu"):totable(), kl(a, b), 1e-14, "kl")
    end)
end)
