-- distributions_spec.lua — tide.distributions against PyTorch 1.13's torch.distributions
-- (spec/fixtures/distributions_torch.lua, written by spec/fixtures/make_distributions.py):
-- Normal, Categorical (logits and probs, a zero probability), Bernoulli (probs and logits),
-- Uniform, Exponential, Laplace, Independent and kl_divergence, values and gradients, on the
-- device under test; samples by their statistics; the parameter and value checks.
local tide = require("tide")
local D = require("spec.support.device")
local P = require("spec.support.porting")

local T = dofile("spec/fixtures/distributions_torch.lua")
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

-- PyTorch's 0-based classes, plus one
local function classes()
    return t64(T.CLASSES):long() + 1
end

describe("distributions, PyTorch's values (" .. DEV .. ")", function()
    local CASES = {
        normal_log_prob = { function(m, s, x) return dist.Normal(m, s):log_prob(x) end,
            T.LOC, T.SCALE, T.X },
        normal_entropy = { function(m, s) return dist.Normal(m, s):entropy() end, T.LOC, T.SCALE },
        normal_cdf = { function(m, s, x) return dist.Normal(m, s):cdf(x) end, T.LOC, T.SCALE, T.X },
        normal_icdf = { function(m, s, q) return dist.Normal(m, s):icdf(q) end, T.LOC, T.SCALE,
            T.Q },
        categorical_log_prob = { function(l)
            return dist.Categorical({ logits = l }):log_prob(classes())
        end, T.LOGITS },
        categorical_entropy = { function(l)
            return dist.Categorical({ logits = l }):entropy()
        end, T.LOGITS },
        categorical_probs_log_prob = { function(p)
            return dist.Categorical({ probs = p }):log_prob(classes())
        end, T.PROBS },
        categorical_probs_entropy = { function(p)
            return dist.Categorical({ probs = p }):entropy()
        end, T.PROBS },
        categorical_probs = { function(l) return dist.Categorical({ logits = l }).probs end,
            T.LOGITS },
        bernoulli_log_prob = { function(p, x)
            return dist.Bernoulli({ probs = p }):log_prob(x)
        end, T.P, T.BITS },
        bernoulli_logits_log_prob = { function(l, x)
            return dist.Bernoulli({ logits = l }):log_prob(x)
        end, T.LOC, T.BITS },
        bernoulli_entropy = { function(p) return dist.Bernoulli({ probs = p }):entropy() end, T.P },
        -- logits 0 (probs 1/2): the gradient at the kink of max(x, 0); 30: e^30 overflows nothing
        bernoulli_half = { function(l, x)
            local b = dist.Bernoulli({ logits = l })
            return b:log_prob(x) + b:entropy()
        end, { 0, 0, 30 }, T.BITS },
        uniform_log_prob = { function(lo, hi, x) return dist.Uniform(lo, hi):log_prob(x) end,
            T.LOW, T.HIGH, T.U },
        uniform_entropy = { function(lo, hi) return dist.Uniform(lo, hi):entropy() end, T.LOW,
            T.HIGH },
        uniform_cdf = { function(lo, hi, x) return dist.Uniform(lo, hi):cdf(x) end, T.LOW, T.HIGH,
            T.U },
        kl_normal = { function(m, s, m2, s2)
            return dist.kl_divergence(dist.Normal(m, s), dist.Normal(m2, s2))
        end, T.LOC, T.SCALE, { 0, 0, 1 }, { 1, 0.5, 3 } },
        kl_categorical = { function(a, b)
            return dist.kl_divergence(dist.Categorical({ logits = a }),
                dist.Categorical({ logits = b }))
        end, T.LOGITS, T.LOGITS2 },
        kl_bernoulli = { function(a, b)
            return dist.kl_divergence(dist.Bernoulli({ probs = a }), dist.Bernoulli({ probs = b }))
        end, T.P, { 0.5, 0.5, 0.1 } },
        exponential_log_prob = { function(r, x) return dist.Exponential(r):log_prob(x:abs()) end,
            T.SCALE, T.X },
        exponential_entropy = { function(r) return dist.Exponential(r):entropy() end, T.SCALE },
        exponential_cdf = { function(r, x) return dist.Exponential(r):cdf(x:abs()) end, T.SCALE,
            T.X },
        exponential_icdf = { function(r, q) return dist.Exponential(r):icdf(q) end, T.SCALE, T.Q },
        laplace_log_prob = { function(m, s, x) return dist.Laplace(m, s):log_prob(x) end, T.LOC,
            T.SCALE, T.X },
        laplace_entropy = { function(m, s) return dist.Laplace(m, s):entropy() end, T.LOC,
            T.SCALE },
        laplace_cdf = { function(m, s, x) return dist.Laplace(m, s):cdf(x) end, T.LOC, T.SCALE,
            T.X },
        laplace_icdf = { function(m, s, q) return dist.Laplace(m, s):icdf(q) end, T.LOC, T.SCALE,
            T.Q },
        independent_log_prob = { function(m, s, x)
            return dist.Independent(dist.Normal(m, s), 1):log_prob(x)
        end, T.LOC, T.SCALE, T.X },
        independent_entropy = { function(m, s)
            return dist.Independent(dist.Normal(m, s), 1):entropy()
        end, T.LOC, T.SCALE },
        kl_exponential = { function(a, b)
            return dist.kl_divergence(dist.Exponential(a), dist.Exponential(b))
        end, T.SCALE, { 1, 0.5, 3 } },
        kl_laplace = { function(m, s, m2, s2)
            return dist.kl_divergence(dist.Laplace(m, s), dist.Laplace(m2, s2))
        end, T.LOC, T.SCALE, { 0, 0, 1 }, { 1, 0.5, 3 } },
        mvn_log_prob = { function(m, c, x)
            return dist.MultivariateNormal(m, { covariance_matrix = c }):log_prob(x)
        end, T.LOC, T.COV, T.X },
        mvn_tril_log_prob = { function(m, l, x)
            return dist.MultivariateNormal(m, { scale_tril = l:tril() }):log_prob(x)
        end, T.LOC, T.TRIL, T.X },
        mvn_precision_log_prob = { function(m, p, x)
            return dist.MultivariateNormal(m, { precision_matrix = p }):log_prob(x)
        end, T.LOC, T.COV, T.X },
        mvn_entropy = { function(m, c)
            return dist.MultivariateNormal(m, { covariance_matrix = c }):entropy()
        end, T.LOC, T.COV },
        mvn_batch_log_prob = { function(m, c, x)
            return dist.MultivariateNormal(m, { covariance_matrix = c }):log_prob(x)
        end, T.X, T.COV, T.X },
        mvn_variance = { function(m, l)
            return dist.MultivariateNormal(m, { scale_tril = l:tril() }):variance()
        end, T.LOC, T.TRIL },
        kl_mvn = { function(m, c, m2, l2)
            return dist.kl_divergence(dist.MultivariateNormal(m, { covariance_matrix = c }),
                dist.MultivariateNormal(m2, { scale_tril = l2:tril() }))
        end, T.LOC, T.COV, { 0, 0, 1 }, T.TRIL },
        gamma_log_prob = { function(a, b, x)
            return dist.Gamma(a, b):log_prob(x:abs() + 0.1)
        end, T.SCALE, T.LOC2, T.X },
        gamma_entropy = { function(a, b) return dist.Gamma(a, b):entropy() end, T.SCALE, T.LOC2 },
        beta_log_prob = { function(a, b, x) return dist.Beta(a, b):log_prob(x) end, T.SCALE,
            T.LOC2, T.BX },
        beta_entropy = { function(a, b) return dist.Beta(a, b):entropy() end, T.SCALE, T.LOC2 },
        dirichlet_log_prob = { function(c, x) return dist.Dirichlet(c):log_prob(x) end, T.CONC,
            T.SIMPLEX },
        dirichlet_entropy = { function(c) return dist.Dirichlet(c):entropy() end, T.CONC },
        kl_gamma = { function(a, b, a2, b2)
            return dist.kl_divergence(dist.Gamma(a, b), dist.Gamma(a2, b2))
        end, T.SCALE, T.LOC2, { 1, 0.5, 3 }, { 2, 1, 0.5 } },
        kl_beta = { function(a, b, a2, b2)
            return dist.kl_divergence(dist.Beta(a, b), dist.Beta(a2, b2))
        end, T.SCALE, T.LOC2, { 1, 0.5, 3 }, { 2, 1, 0.5 } },
        kl_dirichlet = { function(c, c2)
            return dist.kl_divergence(dist.Dirichlet(c), dist.Dirichlet(c2))
        end, T.CONC, { { 1, 2, 0.5 }, { 3, 0.25, 1 } } },
        kl_independent = { function(m, s, m2, s2)
            return dist.kl_divergence(dist.Independent(dist.Normal(m, s), 1),
                dist.Independent(dist.Normal(m2, s2), 1))
        end, T.LOC, T.SCALE, { 0, 0, 1 }, { 1, 0.5, 3 } },
    }
    -- gradients through digamma's derivative: PyTorch's trigamma is good to about 1e-10,
    -- tide's (the Hurwitz zeta) to 1e-15 (spec/special_spec.lua)
    local TRIGAMMA = { gamma_entropy = true, beta_entropy = true, dirichlet_entropy = true,
        kl_gamma = true, kl_beta = true, kl_dirichlet = true }
    P.run_cases(it, T, CASES, function(name, fn, ...)
        P.check_case(T.cases[name], name, DEV, { out = 1e-12,
            grad = TRIGAMMA[name] and 1e-8 or 1e-10 }, fn, ...)
    end)

    it("give PyTorch's moments", function()
        local V = T.values
        local n = dist.Normal(t64(T.LOC), t64(T.SCALE))
        P.close(V.normal_stats.mean, n:mean(), 1e-15, "normal mean")
        P.close(V.normal_stats.stddev, n:stddev(), 1e-15, "normal stddev")
        P.close(V.normal_stats.variance, n:variance(), 1e-15, "normal variance")
        local u = dist.Uniform(t64(T.LOW), t64(T.HIGH))
        P.close(V.uniform_stats.mean, u:mean(), 1e-15, "uniform mean")
        P.close(V.uniform_stats.stddev, u:stddev(), 1e-15, "uniform stddev")
        P.close(V.uniform_stats.variance, u:variance(), 1e-15, "uniform variance")
        local b = dist.Bernoulli({ probs = t64(T.P) })
        P.close(V.bernoulli_stats.mean, b:mean(), 1e-15, "bernoulli mean")
        P.close(V.bernoulli_stats.variance, b:variance(), 1e-15, "bernoulli variance")
        P.close(V.bernoulli_stats.logits, b.logits, 1e-14, "bernoulli logits")
        for _, fam in ipairs({ { "gamma", dist.Gamma(t64(T.SCALE), t64(T.LOC2)) },
            { "beta", dist.Beta(t64(T.SCALE), t64(T.LOC2)) },
            { "dirichlet", dist.Dirichlet(t64(T.CONC)) } }) do
            P.close(V[fam[1] .. "_stats"].mean, fam[2]:mean(), 1e-14, fam[1] .. " mean")
            P.close(V[fam[1] .. "_stats"].variance, fam[2]:variance(), 1e-14,
                fam[1] .. " variance")
        end
        local e = dist.Exponential(t64(T.SCALE))
        P.close(V.exponential_stats.mean, e:mean(), 1e-15, "exponential mean")
        P.close(V.exponential_stats.variance, e:variance(), 1e-15, "exponential variance")
        local l = dist.Laplace(t64(T.LOC), t64(T.SCALE))
        P.close(V.laplace_stats.mean, l:mean(), 1e-15, "laplace mean")
        P.close(V.laplace_stats.stddev, l:stddev(), 1e-15, "laplace stddev")
        local ind = dist.Independent(dist.Normal(t64({ { 0, 1 }, { 2, 3 } }), 1), 1)
        assert.are.same({ 2 }, ind.batch_shape)
        assert.are.same({ 2 }, ind.event_shape)
        assert.are.same({ 5, 2, 2 }, ind:sample({ 5 }).shape)
    end)
end)

describe("distributions: samples (" .. DEV .. ")", function()
    it("Normal's rsample has the moments and the reparametrized gradient", function()
        tide.manual_seed(11)
        local loc = t64({ 2, -1 }):requires_grad_(true)
        local scale = t64({ 0.5, 3 }):requires_grad_(true)
        local n = dist.Normal(loc, scale)
        local x = n:rsample({ 20000 })
        assert.are.same({ 20000, 2 }, x.shape)
        local m, s = x:mean(1):to("cpu"):totable(), x:std(1):to("cpu"):totable()
        assert.is_true(math.abs(m[1] - 2) < 0.02 and math.abs(m[2] + 1) < 0.1)
        assert.is_true(math.abs(s[1] - 0.5) < 0.02 and math.abs(s[2] - 3) < 0.1)
        local loss = x:sum()
        loss:backward()
        assert.are.same({ 20000, 20000 }, loc.grad:to("cpu"):totable()) -- d x / d loc = 1
        -- d x / d scale = eps = (x - loc) / scale
        local eps = ((x:detach() - loc:detach()) / scale:detach()):sum(1)
        P.close(eps:to("cpu"):totable(), scale.grad, 1e-9, "scale grad")
        assert.is_false(n:sample({ 3 }).requires_grad)
    end)

    it("Categorical samples 1-based classes at their probabilities", function()
        tide.manual_seed(12)
        local c = dist.Categorical({ probs = t64({ { 0.1, 0.6, 0.3 }, { 1, 0, 0 } }) })
        local s = c:sample({ 5000 })
        assert.are.same({ 5000, 2 }, s.shape)
        assert.are.equal("int64", s.dtype)
        local first = s:select(2, 1)
        local share = first:eq(2):double():mean():item()
        assert.is_true(math.abs(share - 0.6) < 0.03, "class 2 drawn " .. share)
        assert.is_true(first:ge(1):logical_and(first:le(3)):all():item())
        assert.is_true(s:select(2, 2):eq(1):all():item())
        assert.are.same({ 2 }, c:sample().shape)
    end)

    it("Exponential and Laplace draw at their means, reparametrized", function()
        tide.manual_seed(14)
        local rate = t64({ 2 }):requires_grad_(true)
        local e = dist.Exponential(rate):rsample({ 20000 })
        assert.is_true(e:ge(0):all():item())
        assert.is_true(math.abs(e:mean():item() - 0.5) < 0.02)
        e:sum():backward()
        assert.is_true(rate.grad:item() < 0) -- a larger rate, smaller draws
        local l = dist.Laplace(t64({ 1 }), t64({ 2 })):sample({ 20000 })
        assert.is_true(math.abs(l:mean():item() - 1) < 0.1)
        assert.is_true(math.abs(l:var():item() - 8) < 0.5)
    end)

    it("MultivariateNormal draws with its covariance, reparametrized", function()
        tide.manual_seed(15)
        local loc = t64({ 1, -2, 0.5 }):requires_grad_(true)
        local d = dist.MultivariateNormal(loc, { covariance_matrix = t64(T.COV) })
        local x = d:rsample({ 20000 })
        assert.are.same({ 20000, 3 }, x.shape)
        local c = x - x:mean(1, true)
        local cov = c:t():matmul(c) / 19999
        P.close(T.COV, cov, 0.1, "sample covariance")
        P.close(d:covariance_matrix():to("cpu"):totable(), t64(T.COV), 1e-12, "covariance_matrix")
        local loss = x:sum()
        loss:backward()
        assert.are.same({ 20000, 20000, 20000 }, loc.grad:to("cpu"):totable())
        assert.are.same({ 3 }, d.event_shape)
        assert.are.same({}, d.batch_shape)
    end)

    it("Gamma, Beta and Dirichlet draw with their means and variances", function()
        tide.manual_seed(16)
        for _, a in ipairs({ 0.3, 2.5 }) do -- below 1: the boost
            local g = dist.Gamma(t64({ a }), t64({ 2 })):sample({ 40000 })
            assert.is_true(g:gt(0):all():item())
            assert.is_true(math.abs(g:mean():item() - a / 2) < 0.02 * (1 + a))
            assert.is_true(math.abs(g:var():item() - a / 4) < 0.05 * (1 + a))
        end
        local b = dist.Beta(t64({ 2 }), t64({ 5 })):sample({ 40000 })
        assert.is_true(math.abs(b:mean():item() - 2 / 7) < 0.01)
        local d = dist.Dirichlet(t64({ 1, 2, 3 })):sample({ 20000 })
        P.close({ 1 / 6, 2 / 6, 3 / 6 }, d:mean(1), 0.02, "dirichlet mean")
        P.close({ 1, 1, 1 }, d:sum(2):narrow(1, 1, 3):view(-1), 1e-12, "on the simplex")
        assert.is_false(d.requires_grad)
    end)

    it("Gamma, Beta and Dirichlet rsample carry the gradient to their parameters", function()
        -- the gradients of the sample mean, near the gradients of the mean itself (PyTorch's
        -- implicit reparametrization): d/da of a / b is 1 / b, d/db -a / b^2; Beta's d/da
        -- a / (a + b) is b / (a + b)^2; Dirichlet's d x1 / d c1 is (c0 - c1) / c0^2
        tide.manual_seed(21)
        local a, b = t64({ 2.5 }):requires_grad_(true), t64({ 1.5 }):requires_grad_(true)
        dist.Gamma(a, b):rsample({ 40000 }):mean():backward()
        assert.is_true(math.abs(a.grad:item() - 1 / 1.5) < 0.02, "d/da " .. a.grad:item())
        assert.is_true(math.abs(b.grad:item() + 2.5 / 1.5 ^ 2) < 0.05, "d/db " .. b.grad:item())
        a.grad, b.grad = nil, nil
        dist.Beta(a, b):rsample({ 40000 }):mean():backward()
        assert.is_true(math.abs(a.grad:item() - 1.5 / 16) < 0.01, "Beta d/da " .. a.grad:item())
        assert.is_true(math.abs(b.grad:item() + 2.5 / 16) < 0.01, "Beta d/db " .. b.grad:item())
        local c = t64({ 1, 2, 3 }):requires_grad_(true)
        dist.Dirichlet(c):rsample({ 40000 }):select(2, 1):mean():backward()
        assert.is_true(math.abs(c.grad:to("cpu"):totable()[1] - 5 / 36) < 0.01,
            "Dirichlet d/dc1 " .. c.grad:to("cpu"):totable()[1])
        assert.is_false(dist.Gamma(a, b):sample({ 3 }).requires_grad)
    end)

    it("Bernoulli and Uniform draw in their supports at their means", function()
        tide.manual_seed(13)
        local b = dist.Bernoulli({ probs = t64({ 0.2, 0.9 }) }):sample({ 4000 })
        local bm = b:mean(1):to("cpu"):totable()
        assert.is_true(math.abs(bm[1] - 0.2) < 0.03 and math.abs(bm[2] - 0.9) < 0.03)
        local u = dist.Uniform(t64({ -1 }), t64({ 3 })):rsample({ 4000 })
        assert.is_true(u:ge(-1):logical_and(u:lt(3)):all():item())
        assert.is_true(math.abs(u:mean():item() - 1) < 0.1)
        -- numbers as parameters: float32 on the cpu
        assert.are.equal("float32", dist.Uniform(0, 1):sample({ 2 }).dtype)
    end)
end)

describe("distributions: checks (" .. DEV .. ")", function()
    it("refuse bad parameters and values, naming them", function()
        assert.matches("tide: Normal: scale must be positive",
            catch(function() return dist.Normal(t64({ 0 }), t64({ -1 })) end), 1, true)
        assert.matches("tide: Categorical: give exactly one of probs and logits",
            catch(function() return dist.Categorical({}) end), 1, true)
        assert.matches('tide: Categorical: unknown option "logit"',
            catch(function() return dist.Categorical({ logit = t64({ 1 }) }) end), 1, true)
        assert.matches("tide: Bernoulli: probs must lie in [0, 1]",
            catch(function() return dist.Bernoulli({ probs = t64({ 1.5 }) }) end), 1, true)
        assert.matches("tide: Uniform: low must be below high",
            catch(function() return dist.Uniform(t64({ 1 }), t64({ 1 })) end), 1, true)
        local c = dist.Categorical({ logits = t64({ 0, 0, 0 }) })
        assert.matches("tide: Categorical.log_prob: the classes must be in 1..3",
            catch(function() return c:log_prob(tide.tensor({ 0 }, { device = DEV })) end), 1, true)
        assert.matches("tide: Uniform.log_prob: the values must lie in [low, high)",
            catch(function() return dist.Uniform(t64({ 0 }), t64({ 1 })):log_prob(t64({ 1 })) end),
            1, true)
        assert.matches("tide: Bernoulli.log_prob: the values must be 0 or 1",
            catch(function() return dist.Bernoulli({ probs = t64({ 0.5 }) }):log_prob(t64({ 2 })) end),
            1, true)
        assert.matches("tide: MultivariateNormal: covariance_matrix must be symmetric positive-" ..
            "definite", catch(function()
                return dist.MultivariateNormal(t64({ 0, 0 }), { covariance_matrix =
                    t64({ { 1, 2 }, { 2, 1 } }) })
            end), 1, true)
        assert.matches("tide: MultivariateNormal: the matrix must be [..., 2, 2] for loc {2}",
            catch(function()
                return dist.MultivariateNormal(t64({ 0, 0 }), { scale_tril = t64({ { 1 } }) })
            end), 1, true)
        assert.matches("tide: kl_divergence: no closed form for Cauchy and Uniform",
            catch(function()
                return dist.kl_divergence(dist.Cauchy(0, 1), dist.Uniform(0, 1))
            end), 1, true)
        assert.matches("tide: Normal.sample: the sample shape must be a list of sizes",
            catch(function() return dist.Normal(0, 1):sample(3) end), 1, true)
        assert.are.equal("Normal(loc: {3}, scale: {3})",
            tostring(dist.Normal(t64(T.LOC), t64(T.SCALE))))
    end)

    it("need their parameters and values on one device", function()
        local other = tide.tensor({ 1.0 }, { dtype = "float64", device = D.other })
        assert.matches("tide: Normal: loc is on ",
            catch(function() return dist.Normal(t64({ 0 }), other) end), 1, true)
        assert.matches("tide: Normal.log_prob: the value is on ",
            catch(function() return dist.Normal(t64({ 0 }), t64({ 1 })):log_prob(other) end), 1,
            true)
    end)
end)
