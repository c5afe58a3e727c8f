-- transforms_spec.lua — tide.distributions' transforms, constraints, biject_to / transform_to,
-- TransformedDistribution and the distributions built on it (LogisticNormal, Pareto,
-- Kumaraswamy, LogitRelaxedBernoulli, RelaxedBernoulli, ExpRelaxedCategorical,
-- RelaxedOneHotCategorical) against PyTorch 1.13 (spec/fixtures/transforms_torch.lua, written
-- by spec/fixtures/make_transforms.py): values and gradients on the device under test, rsample
-- through fixed base draws, shapes, caching, equality, register_kl, draws by their statistics,
-- and the error texts.
local tide = require("tide")
local D = require("spec.support.device")
local P = require("spec.support.porting")

local F = dofile("spec/fixtures/transforms_torch.lua")
local DEV = D.name
local dist = tide.distributions
local T = dist.transforms
local C = dist.constraints

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

local function ladj(t, x)
    return t:log_abs_det_jacobian(x, t(x))
end

local function inv_ladj(t, y)
    return t.inv:log_abs_det_jacobian(y, t.inv(y))
end

-- f() with tide.core.rand giving u (the relaxed distributions' uniform draws)
local function with_rand(u, f)
    local core = require("tide.core")
    local saved = core.rand
    core.rand = function()
        return u
    end
    local ok, r = pcall(f)
    core.rand = saved
    if not ok then
        error(r, 0)
    end
    return r
end

local function td_affine_exp(m, s, l, c)
    return dist.TransformedDistribution(dist.Normal(m, s), { T.AffineTransform(l, c),
        T.ExpTransform() })
end

local function td_flip(m, s)
    return dist.TransformedDistribution(dist.Normal(m, s), { T.AffineTransform(1, -2) })
end

local function td_broadcast(loc)
    return dist.TransformedDistribution(dist.Normal(t64(0), t64(1)),
        { T.AffineTransform(loc, 2) })
end

local function td_reshape(m, s)
    return dist.TransformedDistribution(dist.Normal(m, s), { T.ReshapeTransform({ 4 }, { 2, 2 }) })
end

-- PyTorch's dim 1 is tide's 2
local function cat_t()
    return T.CatTransform({ T.ExpTransform(), T.AffineTransform(1, 2) },
        { dim = 2, lengths = { 1, 2 } })
end

local function cat_rows()
    return T.CatTransform({ T.ExpTransform(), T.IndependentTransform(T.SigmoidTransform(), 1) },
        { dim = -1, lengths = { 1, 2 } })
end

local function stack_t()
    return T.StackTransform({ T.ExpTransform(), T.SigmoidTransform(), T.TanhTransform() },
        { dim = 2 })
end

local function compose_t(m, s)
    return T.ComposeTransform({ T.AffineTransform(m, s), T.StickBreakingTransform() })
end

local function cdt(m, s)
    return T.CumulativeDistributionTransform(dist.Normal(m, s))
end

local kl = dist.kl_divergence

describe("transforms, PyTorch's values (" .. DEV .. ")", function()
    local CASES = {
        exp_fwd = { function(x) return T.ExpTransform()(x) end, F.X },
        exp_inv = { function(y) return T.ExpTransform().inv(y) end, F.XP },
        exp_ladj = { function(x) return ladj(T.ExpTransform(), x) end, F.X },
        exp_inv_ladj = { function(y) return inv_ladj(T.ExpTransform(), y) end, F.XP },
        power_fwd = { function(e, x) return T.PowerTransform(e)(x) end, F.EXPO, F.XP },
        power_inv = { function(e, y) return T.PowerTransform(e).inv(y) end, F.EXPO, F.XP },
        power_ladj = { function(e, x) return ladj(T.PowerTransform(e), x) end, F.EXPO, F.XP },
        power_number_ladj = { function(x) return ladj(T.PowerTransform(2.5), x) end, F.XP },
        sigmoid_fwd = { function(x) return T.SigmoidTransform()(x) end, F.X },
        sigmoid_inv = { function(y) return T.SigmoidTransform().inv(y) end, F.YU },
        sigmoid_ladj = { function(x) return ladj(T.SigmoidTransform(), x) end, F.X },
        sigmoid_far = { function(x) return T.SigmoidTransform()(x) end, { -800, 40, 800 } },
        tanh_fwd = { function(x) return T.TanhTransform()(x) end, F.X },
        tanh_inv = { function(y) return T.TanhTransform().inv(y) end, F.YT },
        tanh_ladj = { function(x) return ladj(T.TanhTransform(), x) end, F.X },
        tanh_far_ladj = { function(x) return ladj(T.TanhTransform(), x) end, { -30, 25 } },
        softplus_fwd = { function(x) return T.SoftplusTransform()(x) end, F.X },
        softplus_inv = { function(y) return T.SoftplusTransform().inv(y) end, F.XP },
        softplus_ladj = { function(x) return ladj(T.SoftplusTransform(), x) end, F.X },
        abs_fwd = { function(x) return T.AbsTransform()(x) end, F.X },
        affine_fwd = { function(m, s, x) return T.AffineTransform(m, s)(x) end, F.LOC, F.SCALE,
            F.X },
        affine_inv = { function(m, s, y) return T.AffineTransform(m, s).inv(y) end, F.LOC,
            F.SCALE, F.X },
        affine_ladj = { function(m, s, x) return ladj(T.AffineTransform(m, s), x) end, F.LOC,
            { 1.5, -0.25, 2 }, F.X },
        affine_event_ladj = { function(m, s, x)
            return ladj(T.AffineTransform(m, s, 1), x)
        end, F.LOC, { 1.5, -0.25, 2 }, F.X },
        affine_number_ladj = { function(x) return ladj(T.AffineTransform(1, -3), x) end, F.X },
        affine_number_event_ladj = { function(x)
            return ladj(T.AffineTransform(1, -3, { event_dim = 2 }), x)
        end, F.X },
        softmax_fwd = { function(x) return T.SoftmaxTransform()(x) end, F.X },
        softmax_inv = { function(y) return T.SoftmaxTransform().inv(y) end, F.SIMPLEX },
        stickbreaking_fwd = { function(x) return T.StickBreakingTransform()(x) end, F.X },
        stickbreaking_inv = { function(y) return T.StickBreakingTransform().inv(y) end,
            F.SIMPLEX },
        stickbreaking_ladj = { function(x) return ladj(T.StickBreakingTransform(), x) end, F.X },
        lowercholesky_fwd = { function(x) return T.LowerCholeskyTransform()(x) end, F.SQ },
        lowercholesky_inv = { function(x)
            return T.LowerCholeskyTransform().inv(T.LowerCholeskyTransform()(x))
        end, F.SQ },
        corrcholesky_fwd = { function(x) return T.CorrCholeskyTransform()(x) end, F.V6 },
        corrcholesky_fwd3 = { function(x) return T.CorrCholeskyTransform()(x) end, F.X },
        corrcholesky_inv = { function(x)
            return T.CorrCholeskyTransform().inv(T.CorrCholeskyTransform()(x):detach())
        end, F.V6 },
        corrcholesky_ladj = { function(x) return ladj(T.CorrCholeskyTransform(), x) end, F.V6 },
        corrcholesky_ladj3 = { function(x) return ladj(T.CorrCholeskyTransform(), x) end, F.X },
        independent_ladj = { function(x)
            return ladj(T.IndependentTransform(T.ExpTransform(), 1), x)
        end, F.X },
        independent2_ladj = { function(x)
            return ladj(T.IndependentTransform(T.StickBreakingTransform(), 1), x)
        end, F.X },
        reshape_fwd = { function(x) return T.ReshapeTransform({ 2, 3 }, { 3, 2 })(x) end,
            { F.X } },
        reshape_ladj = { function(x)
            return ladj(T.ReshapeTransform({ 3 }, { 3, 1 }), x)
        end, F.X },
        cat_fwd = { function(x) return cat_t()(x) end, F.X },
        cat_inv = { function(y) return cat_t().inv(y) end, F.XP },
        cat_ladj = { function(x) return ladj(cat_t(), x) end, F.X },
        cat_rows_ladj = { function(x) return ladj(cat_rows(), x) end, F.X },
        stack_fwd = { function(x) return stack_t()(x) end, F.X },
        stack_inv = { function(y) return stack_t().inv(y) end, F.YU },
        stack_ladj = { function(x) return ladj(stack_t(), x) end, F.X },
        compose_fwd = { function(m, s, x) return compose_t(m, s)(x) end, F.LOC, F.SCALE, F.X },
        compose_inv = { function(m, s, y) return compose_t(m, s).inv(y) end, F.LOC, F.SCALE,
            F.SIMPLEX },
        compose_ladj = { function(m, s, x) return ladj(compose_t(m, s), x) end, F.LOC, F.SCALE,
            F.X },
        compose_exp_affine_ladj = { function(x)
            return ladj(T.ComposeTransform({ T.ExpTransform(), T.AffineTransform(0.5, -2) }), x)
        end, F.X },
        identity_ladj = { function(x) return ladj(T.identity_transform, x) end, F.X },
        cdt_fwd = { function(m, s, x) return cdt(m, s)(x) end, F.LOC, F.SCALE, F.X },
        cdt_inv = { function(m, s, y) return cdt(m, s).inv(y) end, F.LOC, F.SCALE, F.YU },
        cdt_ladj = { function(m, s, x) return ladj(cdt(m, s), x) end, F.LOC, F.SCALE, F.X },
        -- TransformedDistribution
        td_log_prob = { function(m, s, l, c, y) return td_affine_exp(m, s, l, c):log_prob(y) end,
            F.LOC, F.SCALE, { 0.1, 0.2, -0.3 }, { 1, 0.5, 2 }, F.XP },
        td_cdf = { function(m, s, l, c, y) return td_affine_exp(m, s, l, c):cdf(y) end,
            F.LOC, F.SCALE, { 0.1, 0.2, -0.3 }, { 1, 0.5, 2 }, F.XP },
        td_icdf = { function(m, s, l, c, q) return td_affine_exp(m, s, l, c):icdf(q) end,
            F.LOC, F.SCALE, { 0.1, 0.2, -0.3 }, { 1, 0.5, 2 }, F.QU },
        td_flip_cdf = { function(m, s, y) return td_flip(m, s):cdf(y) end, F.LOC, F.SCALE, F.X },
        td_flip_icdf = { function(m, s, q) return td_flip(m, s):icdf(q) end, F.LOC, F.SCALE,
            F.QU },
        td_flip_log_prob = { function(m, s, y) return td_flip(m, s):log_prob(y) end, F.LOC,
            F.SCALE, F.X },
        td_broadcast_log_prob = { function(l, y) return td_broadcast(l):log_prob(y) end, F.LOC,
            F.X },
        td_reshape_log_prob = { function(m, s, y) return td_reshape(m, s):log_prob(y) end,
            { { 0.5, -1, 2, 0 } }, { { 1.5, 0.25, 2, 1 } },
            { { { 0.3, -0.2 }, { 1, 0.1 } }, { { 2, 0.5 }, { -1, 0 } } } },
        -- the distributions
        logistic_normal_log_prob = { function(m, s, y)
            return dist.LogisticNormal(m, s):log_prob(y)
        end, F.LOC, F.SCALE, F.SIMPLEX },
        logistic_normal_scalar_log_prob = { function(m, s, y)
            return dist.LogisticNormal(m, s):log_prob(y)
        end, 0.5, 1.5, { { 0.3, 0.7 }, { 0.9, 0.1 } } },
        pareto_log_prob = { function(s, a, x) return dist.Pareto(s, a):log_prob(x) end,
            F.PSCALE, F.ALPHA, F.PX },
        pareto_cdf = { function(s, a, x) return dist.Pareto(s, a):cdf(x) end, F.PSCALE, F.ALPHA,
            F.PX },
        pareto_icdf = { function(s, a, q) return dist.Pareto(s, a):icdf(q) end, F.PSCALE,
            F.ALPHA, F.QU },
        pareto_entropy = { function(s, a) return dist.Pareto(s, a):entropy() end, F.PSCALE,
            F.ALPHA },
        pareto_moments = { function(s, a) return moments(dist.Pareto(s, a)) end, F.PSCALE,
            { 2.5, 3, 5 } },
        pareto_moments_inf = { function(s, a) return moments(dist.Pareto(s, a)) end, F.PSCALE,
            F.ALPHA },
        kumaraswamy_log_prob = { function(a, b, x) return dist.Kumaraswamy(a, b):log_prob(x) end,
            F.C1, F.C0, F.KX },
        kumaraswamy_cdf = { function(a, b, x) return dist.Kumaraswamy(a, b):cdf(x) end, F.C1,
            F.C0, F.KX },
        kumaraswamy_icdf = { function(a, b, q) return dist.Kumaraswamy(a, b):icdf(q) end, F.C1,
            F.C0, F.QU },
        kumaraswamy_entropy = { function(a, b) return dist.Kumaraswamy(a, b):entropy() end, F.C1,
            F.C0 },
        kumaraswamy_moments = { function(a, b) return moments(dist.Kumaraswamy(a, b)) end, F.C1,
            F.C0 },
        logit_relaxed_bernoulli_log_prob = { function(t, p, x)
            return dist.LogitRelaxedBernoulli(t, { probs = p }):log_prob(x)
        end, F.TEMP, F.P, F.RX },
        logit_relaxed_bernoulli_logits_log_prob = { function(t, l, x)
            return dist.LogitRelaxedBernoulli(t, { logits = l }):log_prob(x)
        end, F.TEMP, F.LOC, F.RX },
        relaxed_bernoulli_log_prob = { function(t, p, x)
            return dist.RelaxedBernoulli(t, { probs = p }):log_prob(x)
        end, F.TEMP, F.P, F.YU },
        relaxed_bernoulli_logits_log_prob = { function(t, l, x)
            return dist.RelaxedBernoulli(t, { logits = l }):log_prob(x)
        end, { 2 }, F.LOC, F.YU },
        exp_relaxed_categorical_log_prob = { function(t, l, x)
            return dist.ExpRelaxedCategorical(t, { logits = l }):log_prob(x)
        end, F.TEMP, F.LOGITS, F.LSIMPLEX },
        relaxed_onehot_log_prob = { function(t, p, x)
            return dist.RelaxedOneHotCategorical(t, { probs = p }):log_prob(x)
        end, F.TEMP, F.PROBS, F.SIMPLEX },
        relaxed_onehot_logits_log_prob = { function(t, l, x)
            return dist.RelaxedOneHotCategorical(t, { logits = l }):log_prob(x)
        end, { 1.5 }, F.LOGITS, F.SIMPLEX },
        -- rsample through fixed base draws (the base's rsample, or tide.core.rand, replaced)
        pareto_rsample = { function(s, a, e)
            local d = dist.Pareto(s, a)
            d.base_dist.rsample = function(base) return e / base.rate end
            return d:rsample()
        end, F.PSCALE, F.ALPHA, F.E },
        kumaraswamy_rsample = { function(a, b, u)
            local d = dist.Kumaraswamy(a, b)
            d.base_dist.rsample = function() return u end
            return d:rsample()
        end, F.C1, F.C0, F.U },
        logistic_normal_rsample = { function(m, s, eps)
            local d = dist.LogisticNormal(m, s)
            d.base_dist.rsample = function() return m + eps * s end
            return d:rsample()
        end, F.LOC, F.SCALE, F.EPS },
        relaxed_bernoulli_rsample = { function(t, p, u)
            return with_rand(u, function()
                return dist.RelaxedBernoulli(t, { probs = p }):rsample()
            end)
        end, F.TEMP, F.P, F.U },
        relaxed_onehot_rsample = { function(t, l, u)
            return with_rand(u, function()
                return dist.RelaxedOneHotCategorical(t, { logits = l }):rsample()
            end)
        end, F.TEMP, F.LOGITS, F.U4[1] },
        -- kl_divergence
        kl_pareto = { function(s, a, s2, a2) return kl(dist.Pareto(s, a), dist.Pareto(s2, a2)) end,
            F.PSCALE, F.ALPHA, { 0.5, 1, 1 }, { 1, 2, 4 } },
        kl_pareto_exponential = { function(s, a, r)
            return kl(dist.Pareto(s, a), dist.Exponential(r))
        end, F.PSCALE, { 0.8, 1.5, 3 }, F.SCALE },
        kl_pareto_gamma = { function(s, a, c, r)
            return kl(dist.Pareto(s, a), dist.Gamma(c, r))
        end, F.PSCALE, { 0.8, 1.5, 3 }, F.C1, F.SCALE },
        kl_pareto_normal = { function(s, a, m, sc)
            return kl(dist.Pareto(s, a), dist.Normal(m, sc))
        end, F.PSCALE, { 1.5, 2.5, 3 }, F.LOC, F.SCALE },
        kl_uniform_pareto = { function(lo, hi, s, a)
            return kl(dist.Uniform(lo, hi), dist.Pareto(s, a))
        end, { 1, 0.25, 2.5 }, { 2, 3, 4 }, F.PSCALE, F.ALPHA },
        kl_logistic_normal = { function(m, s, m2, s2)
            return kl(dist.LogisticNormal(m, s), dist.LogisticNormal(m2, s2))
        end, F.LOC, F.SCALE, { 0, 0, 1 }, { 1, 0.5, 3 } },
        -- the constraints
        check_real = { function(x) return C.real:check(x) end, { 1, 0 / 0, math.huge } },
        check_positive = { function(x) return C.positive:check(x) end, F.X },
        check_nonnegative = { function(x) return C.nonnegative:check(x) end, { 0, -1e-9, 2 } },
        check_greater_than = { function(x) return C.greater_than(0.5):check(x) end, F.X },
        check_greater_than_eq = { function(x) return C.greater_than_eq(0.5):check(x) end,
            { 0.5, 0.4, 2 } },
        check_less_than = { function(x) return C.less_than(0.5):check(x) end, F.X },
        check_interval = { function(x) return C.interval(-1, 1):check(x) end, F.X },
        check_half_open = { function(x) return C.half_open_interval(0, 1):check(x) end,
            { 0, 1, 0.5, -0.1 } },
        check_unit_interval = { function(x) return C.unit_interval:check(x) end, { 0, 1, 1.5 } },
        check_boolean = { function(x) return C.boolean:check(x) end, { 0, 1, 0.5 } },
        check_integer_interval = { function(x) return C.integer_interval(0, 3):check(x) end,
            { 0, 3, 1.5, 4, -1 } },
        check_nonnegative_integer = { function(x) return C.nonnegative_integer:check(x) end,
            { 0, 3, 1.5, -1 } },
        check_positive_integer = { function(x) return C.positive_integer:check(x) end,
            { 0, 3, 1.5 } },
        check_one_hot = { function(x) return C.one_hot:check(x) end,
            { { 0, 1, 0 }, { 1, 1, 0 }, { 0, 0.5, 0.5 } } },
        check_simplex = { function(x) return C.simplex:check(x) end,
            { { 0.2, 0.3, 0.5 }, { 0.2, 0.3, 0.4 }, { -0.1, 0.6, 0.5 } } },
        check_multinomial = { function(x) return C.multinomial(3):check(x) end,
            { { 1, 2 }, { 2, 2 } } },
        check_lower_triangular = { function(x) return C.lower_triangular:check(x) end,
            { { { 1, 0 }, { 2, -1 } }, { { 1, 0.1 }, { 0, 1 } } } },
        check_lower_cholesky = { function(x) return C.lower_cholesky:check(x) end,
            { { { 1, 0 }, { 2, 1 } }, { { 1, 0 }, { 2, -1 } } } },
        check_corr_cholesky = { function(x)
            return C.corr_cholesky:check(T.CorrCholeskyTransform()(x))
        end, F.V6 },
        check_corr_cholesky_not = { function(x) return C.corr_cholesky:check(x) end,
            { { { 1, 0 }, { 0.6, 0.8 } }, { { 1, 0 }, { 0.6, 0.7 } } } },
        check_square = { function(x) return C.square:check(x) end, { { { 1, 2 }, { 3, 4 } } } },
        check_symmetric = { function(x) return C.symmetric:check(x) end,
            { { { 1, 2 }, { 2, 4 } }, { { 1, 2 }, { 3, 4 } } } },
        check_positive_definite = { function(x) return C.positive_definite:check(x) end,
            { { { 2, 1 }, { 1, 2 } }, { { 1, 2 }, { 2, 1 } } } },
        check_positive_semidefinite = { function(x) return C.positive_semidefinite:check(x) end,
            { { { 1, 1 }, { 1, 1 } }, { { 1, 2 }, { 2, 1 } } } },
        check_independent = { function(x) return C.independent(C.positive, 1):check(x) end,
            { F.XP[1], F.XP[2], F.X[1], F.X[2] } },
        check_real_vector = { function(x) return C.real_vector:check(x) end,
            { { 1, 2 }, { 0 / 0, 0 } } },
        check_cat = { function(x)
            return C.cat({ C.positive, C.real }, { dim = 2, lengths = { 1, 2 } }):check(x)
        end, F.X },
        check_stack = { function(x)
            return C.stack({ C.positive, C.real, C.unit_interval }, { dim = 2 }):check(x)
        end, F.X },
        -- biject_to and transform_to
        biject_positive = { function(x) return dist.biject_to(C.positive)(x) end, F.X },
        biject_greater_than = { function(x) return dist.biject_to(C.greater_than(2))(x) end,
            F.X },
        biject_less_than = { function(x) return dist.biject_to(C.less_than(2))(x) end, F.X },
        biject_interval = { function(x) return dist.biject_to(C.interval(-1, 3))(x) end, F.X },
        biject_unit_interval = { function(x) return dist.biject_to(C.unit_interval)(x) end, F.X },
        biject_simplex = { function(x) return dist.biject_to(C.simplex)(x) end, F.X },
        transform_simplex = { function(x) return dist.transform_to(C.simplex)(x) end, F.X },
        transform_lower_cholesky = { function(x)
            return dist.transform_to(C.lower_cholesky)(x)
        end, F.SQ },
        biject_corr_cholesky = { function(x) return dist.biject_to(C.corr_cholesky)(x) end, F.V6 },
        biject_independent_ladj = { function(x)
            return ladj(dist.biject_to(C.independent(C.positive, 1)), x)
        end, F.X },
        biject_cat = { function(x)
            local c = C.cat({ C.positive, C.real }, { dim = 2, lengths = { 1, 2 } })
            return dist.biject_to(c)(x)
        end, F.X },
        biject_stack = { function(x)
            return dist.biject_to(C.stack({ C.positive, C.unit_interval, C.real }, { dim = 2 }))(x)
        end, F.X },
    }
    -- through digamma's and lgamma's derivatives (PyTorch's trigamma is good to about 1e-10)
    local LOOSE = { kumaraswamy_entropy = true, kumaraswamy_moments = true,
        kl_pareto_gamma = true, exp_relaxed_categorical_log_prob = true,
        relaxed_onehot_log_prob = true, relaxed_onehot_logits_log_prob = true }
    P.run_cases(it, F, CASES, function(name, fn, ...)
        P.check_case(F.cases[name], name, DEV, { out = 1e-12,
            grad = LOOSE[name] and 1e-8 or 1e-10 }, fn, ...)
    end)
end)

describe("transforms: shapes, fields and caching (" .. DEV .. ")", function()
    it("shape TransformedDistribution and its subclasses as PyTorch does", function()
        local S = F.values.shapes
        local function same(want, d, what)
            assert.are.same(want.batch, d.batch_shape, what .. " batch_shape")
            assert.are.same(want.event, d.event_shape, what .. " event_shape")
        end
        same(S.td_affine_exp, td_affine_exp(t64(F.LOC), t64(F.SCALE), t64({ 0.1, 0.2, -0.3 }),
            t64({ 1, 0.5, 2 })), "td_affine_exp")
        same(S.td_broadcast, td_broadcast(t64(F.LOC)), "td_broadcast")
        same(S.td_reshape, td_reshape(t64({ { 0.5, -1, 2, 0 } }), t64({ { 1.5, 0.25, 2, 1 } })),
            "td_reshape")
        same(S.td_stick, dist.TransformedDistribution(dist.Normal(t64(F.X), 1),
            T.StickBreakingTransform()), "td_stick")
        same(S.td_corr, dist.TransformedDistribution(dist.Normal(t64(F.V6), 1),
            T.CorrCholeskyTransform()), "td_corr")
        same(S.logistic_normal, dist.LogisticNormal(t64(F.X), 1), "logistic_normal")
        same(S.logistic_normal_scalar, dist.LogisticNormal(t64(0), 1), "logistic_normal_scalar")
        same(S.relaxed_onehot, dist.RelaxedOneHotCategorical(t64(0.5), { logits = t64(F.LOGITS) }),
            "relaxed_onehot")
        same(S.pareto, dist.Pareto(t64(F.PSCALE), 2), "pareto")
    end)

    it("map shapes, and give event dims and signs, as PyTorch's", function()
        local W = F.values.forward_shape
        assert.are.same(W.stick, T.StickBreakingTransform():forward_shape({ 2, 3 }))
        assert.are.same(W.stick_inv, T.StickBreakingTransform():inverse_shape({ 2, 3 }))
        assert.are.same(W.corr, T.CorrCholeskyTransform():forward_shape({ 5, 6 }))
        assert.are.same(W.corr_inv, T.CorrCholeskyTransform():inverse_shape({ 5, 4, 4 }))
        assert.are.same(W.reshape, T.ReshapeTransform({ 2, 3 }, { 6 }):forward_shape({ 4, 2, 3 }))
        assert.are.same(W.reshape_inv, T.ReshapeTransform({ 2, 3 }, { 6 }):inverse_shape({ 4, 6 }))
        assert.are.same(W.affine, T.AffineTransform(t64(F.LOC), 2):forward_shape({ 2, 1 }))
        assert.are.same(W.power, T.PowerTransform(t64({ { 1 }, { 2 } })):forward_shape({ 3 }))
        local comp = T.ComposeTransform({ T.AffineTransform(t64(F.LOC), 1),
            T.StickBreakingTransform() })
        assert.are.same(W.compose, comp:forward_shape({ 1 }))
        assert.are.same(W.compose_inv, comp:inverse_shape({ 4 }))
        local E = F.values.event_dims
        local es = T.ComposeTransform({ T.ExpTransform(), T.StickBreakingTransform() })
        assert.are.equal(E.compose_domain, es.domain.event_dim)
        assert.are.equal(E.compose_codomain, es.codomain.event_dim)
        assert.are.equal(E.corr_domain, T.CorrCholeskyTransform().domain.event_dim)
        assert.are.equal(E.corr_codomain, T.CorrCholeskyTransform().codomain.event_dim)
        assert.are.equal(E.independent, T.IndependentTransform(T.ExpTransform(), 2).event_dim)
        assert.are.equal(E.affine, T.AffineTransform(0, 1, { event_dim = 2 }).event_dim)
        assert.are.equal(E.cat, T.CatTransform({ T.ExpTransform(),
            T.StickBreakingTransform() }).event_dim)
        assert.are.equal(E.stack, C.stack({ C.real, C.simplex }, { dim = -1 }).event_dim)
        assert.are.equal(E.reshape_codomain, T.ReshapeTransform({ 6 }, { 2, 3 }).codomain
            .event_dim)
        local G = F.values.signs
        assert.are.equal(G.compose, T.ComposeTransform({ T.AffineTransform(0, -2),
            T.ExpTransform(), T.AffineTransform(1, -1) }).sign)
        P.close(G.affine_tensor, T.AffineTransform(0, t64({ -2, 0, 3 })).sign, 0, "sign")
        assert.are.equal(G.tanh_inv, T.TanhTransform().inv.sign)
        assert.is_true(T.ExpTransform().bijective)
        assert.is_false(T.AbsTransform().bijective)
        assert.is_false(T.SoftmaxTransform().bijective)
        assert.is_true(T.ComposeTransform({ T.ExpTransform(), T.SigmoidTransform() }).bijective)
        assert.is_false(T.ComposeTransform({ T.ExpTransform(), T.AbsTransform() }).bijective)
    end)

    it("invert: t.inv.inv is t, and the inverse of a composition composes the inverses",
        function()
            local e = T.ExpTransform()
            assert.are.equal(e, e.inv.inv)
            assert.is_true(rawequal(e.inv, e.inv))
            assert.are.equal("_InverseTransform(ExpTransform())", tostring(e.inv))
            local c = T.ComposeTransform({ T.ExpTransform(), T.AffineTransform(1, 2) })
            assert.is_true(rawequal(c.inv.inv, c))
            assert.are.equal("ComposeTransform(\n    _InverseTransform(AffineTransform()),\n" ..
                "    _InverseTransform(ExpTransform())\n)", tostring(c.inv))
            assert.are.equal(tostring(C.positive), tostring(e.inv.domain))
            assert.are.equal(tostring(C.real), tostring(e.inv.codomain))
            local x = t64({ 0.5, -1 })
            P.close({ 0.5, -1 }, c.inv(c(x)), 1e-15, "c.inv(c(x))")
            assert.are.equal("IndependentTransform(ExpTransform(), 1)",
                tostring(T.IndependentTransform(T.ExpTransform(), 1)))
            assert.is_true(T.identity_transform == dist.identity_transform)
            assert.are.same({}, T.identity_transform.parts)
        end)

    it("compare as PyTorch's __eq__", function()
        assert.is_true(T.ExpTransform() == T.ExpTransform())
        assert.is_false(T.ExpTransform() == T.SigmoidTransform())
        assert.is_true(T.ExpTransform().inv == T.ExpTransform().inv)
        assert.is_true(T.AffineTransform(1, 2) == T.AffineTransform(1, 2))
        assert.is_false(T.AffineTransform(1, 2) == T.AffineTransform(1, 3))
        assert.is_true(T.AffineTransform(t64({ 1, 2 }), 2) == T.AffineTransform(t64({ 1, 2 }), 2))
        assert.is_true(T.PowerTransform(t64(2)) == T.PowerTransform(t64(2)))
        assert.is_true(T.ComposeTransform({ T.ExpTransform(), T.AffineTransform(0, 1) }) ==
            T.ComposeTransform({ T.ExpTransform(), T.AffineTransform(0, 1) }))
        assert.is_false(T.ComposeTransform({ T.ExpTransform() }) ==
            T.ComposeTransform({ T.ExpTransform(), T.ExpTransform() }))
        local i = T.IndependentTransform(T.ExpTransform(), 1)
        assert.is_true(i == i)
        assert.is_false(i == T.IndependentTransform(T.ExpTransform(), 1))
    end)

    it("cache the last value with cache_size 1, by identity", function()
        local calls = 0
        local t = T.ExpTransform({ cache_size = 1 })
        local saved = t._call
        t._call = function(self, x)
            calls = calls + 1
            return saved(self, x)
        end
        local x = t64({ 0.5, 1 })
        local y = t(x)
        assert.is_true(rawequal(y, t(x)))
        assert.are.equal(1, calls)
        assert.is_true(rawequal(x, t.inv(y))) -- (the cached x: no log taken)
        t(t64({ 0.5, 1 }))
        assert.are.equal(2, calls)
        local plain = T.ExpTransform()
        assert.is_false(rawequal(plain(x), plain(x)))
        assert.are.equal(1, plain:with_cache()._cache_size)
        assert.is_true(rawequal(t, t:with_cache(1)))
        local a = T.AffineTransform(1, 2):with_cache()
        assert.are.equal(1, a._cache_size)
        assert.are.equal(1, T.ComposeTransform({ T.ExpTransform() }, { cache_size = 1 })
            .parts[1]._cache_size)
        -- TanhTransform's inverse at ±1 is infinite; the cache returns the x instead
        local th = T.TanhTransform({ cache_size = 1 })
        local big = t64({ 30 })
        assert.are.equal(30, th.inv(th(big)):item())
    end)

    it("TransformedDistribution: sample, rsample, has_rsample, support", function()
        tide.manual_seed(41)
        local loc = t64({ 0.5, -1 }):requires_grad_(true)
        local d = td_affine_exp(loc, t64({ 1, 2 }), 0, 1) -- a LogNormal
        assert.is_true(d.has_rsample)
        local x = d:rsample({ 4 })
        assert.are.same({ 4, 2 }, x.shape)
        x:sum():backward()
        P.close({ x:detach():sum(1):to("cpu"):totable() }, loc.grad:view(1, 2), 1e-12,
            "d exp / d loc")
        assert.is_false(d:sample({ 3 }).requires_grad)
        assert.are.equal("GreaterThan(lower_bound=0)", tostring(d:support()))
        -- the broadcast base: independent draws over the new batch
        local b = td_broadcast(t64({ 0, 100, 200 }))
        local s = b:sample({ 5000 })
        assert.are.same({ 5000, 3 }, s.shape)
        P.close({ 0, 100, 200 }, s:mean(1), 0.15, "broadcast means")
        assert.is_true((s:select(2, 1) - s:select(2, 2) + 100):abs():max():item() > 0.1)
        assert.are.same({ 2, 3 }, b:rsample({ 2 }).shape)
        -- a base broadcast along a size-1 dim
        local wide = dist.TransformedDistribution(dist.Normal(t64({ { 0 }, { 10 } }), t64(1)),
            T.AffineTransform(t64({ 0, 1, 2 }), 1))
        assert.are.same({ 2, 3 }, wide.batch_shape)
        local w = wide:sample({ 4000 })
        assert.are.same({ 4000, 2, 3 }, w.shape)
        P.close({ { 0, 1, 2 }, { 10, 11, 12 } }, w:mean(1), 0.15, "size-1 broadcast means")
        assert.is_true((w:select(3, 1) - w:select(3, 2) + 1):abs():max():item() > 0.1)
        -- no rsample where the base has none
        local bin = dist.TransformedDistribution(dist.Binomial(3, { probs = t64({ 0.5 }) }),
            T.AffineTransform(0, 2))
        assert.is_false(bin.has_rsample)
        assert.are.same({ 2, 1 }, bin:sample({ 2 }).shape)
        assert.matches("Binomial: rsample", catch(function() bin:rsample() end), 1, true)
        assert.is_false(dist.LogitRelaxedBernoulli(t64(1), { probs = 0.3 }).has_rsample)
        assert.is_true(dist.RelaxedBernoulli(t64(1), { probs = 0.3 }).has_rsample)
        assert.are.equal("Interval(lower_bound=0, upper_bound=1)",
            tostring(dist.Kumaraswamy(1, 2):support()))
        assert.are.equal("Simplex()", tostring(dist.LogisticNormal(t64({ 0 }), 1):support()))
        assert.are.equal("GreaterThanEq(lower_bound=2)",
            tostring(dist.Pareto(t64(2), 1):support()))
        assert.are.equal("Real()", tostring(dist.Normal(0, 1):support()))
        assert.are.equal("IntegerInterval(lower_bound=1, upper_bound=3)",
            tostring(dist.Categorical({ probs = t64({ 0.2, 0.3, 0.5 }) }):support()))
        assert.are.equal("IndependentConstraint(Real(), 1)",
            tostring(dist.Independent(dist.Normal(t64({ 0, 1 }), 1), 1):support()))
    end)

    it("a Gaussian copula through CumulativeDistributionTransform", function()
        local mvn = dist.MultivariateNormal(t64({ 0, 0 }), { scale_tril = t64({ { 1, 0 },
            { 0.5, 0.8 } }) })
        local cop = dist.TransformedDistribution(mvn, { T.CumulativeDistributionTransform(
            dist.Normal(t64(0), t64(1))) })
        assert.are.same({ 2 }, cop.event_shape)
        local u = cop:sample({ 100 })
        assert.is_true(u:ge(0):logical_and(u:le(1)):all():item())
        local v = t64({ 0.3, 0.6 })
        local n = dist.Normal(t64(0), t64(1))
        local z = n:icdf(v)
        local want = mvn:log_prob(z) - n:log_prob(z):sum()
        P.close(want:item(), cop:log_prob(v), 1e-12, "copula log_prob")
        assert.are.equal("Real()", tostring(T.CumulativeDistributionTransform(n).domain))
    end)
end)

-- the draws' mean within z standard errors of mu
local function near_mean(x, mu, var, what)
    local n = x:numel()
    local m = x:double():mean():item()
    assert(math.abs(m - mu) <= 5 * math.sqrt(var / n),
        ("%s: mean %.6g, expected %.6g"):format(what, m, mu))
end

describe("transforms: the distributions' draws (" .. DEV .. ")", function()
    local N = 20000
    it("Pareto and Kumaraswamy draw at their moments, in their supports", function()
        tide.manual_seed(42)
        local p = dist.Pareto(t64({ 2 }), t64({ 5 }))
        local x = p:sample({ N })
        assert.is_true(x:ge(2):all():item())
        near_mean(x, p:mean():item(), p:variance():item(), "pareto")
        local k = dist.Kumaraswamy(t64({ 2 }), t64({ 3 }))
        local y = k:sample({ N })
        assert.is_true(y:ge(0):logical_and(y:le(1)):all():item())
        near_mean(y, k:mean():item(), k:variance():item(), "kumaraswamy")
    end)

    it("the relaxed ones and LogisticNormal draw in their supports", function()
        tide.manual_seed(43)
        local rb = dist.RelaxedBernoulli(t64(0.1), { probs = t64({ 0.2, 0.9 }) })
        local x = rb:sample({ N })
        assert.are.same({ N, 2 }, x.shape)
        assert.is_true(x:gt(0):logical_and(x:lt(1)):all():item())
        -- a low temperature: nearly Bernoulli
        P.close({ 0.2, 0.9 }, x:gt(0.5):double():mean(1), 0.02, "relaxed shares")
        local rc = dist.RelaxedOneHotCategorical(t64(0.1), { probs = t64({ 0.1, 0.6, 0.3 }) })
        local c = rc:sample({ N })
        assert.are.same({ N, 3 }, c.shape)
        P.close({ N }, c:sum():view(1), 1e-9, "rows sum to 1")
        local winners = c:argmax(-1)
        local share = {}
        for i = 1, 3 do
            share[i] = winners:eq(i):double():mean():item()
        end
        P.close({ 0.1, 0.6, 0.3 }, t64(share), 0.02, "relaxed categorical shares")
        local ln = dist.LogisticNormal(t64({ 0, 1 }), t64({ 1, 0.5 }))
        local s = ln:rsample({ 100 })
        assert.are.same({ 100, 3 }, s.shape)
        local ones = {}
        for i = 1, 100 do
            ones[i] = 1
        end
        P.close(ones, s:sum(-1), 1e-12, "on the simplex")
    end)
end)

describe("transforms: register_kl (" .. DEV .. ")", function()
    it("registers a pair, and the most specific pair wins", function()
        local Mine = dist.Distribution:extend("MineForKL")
        function Mine:init(v)
            self.v = v
            self.batch_shape, self.event_shape = {}, {}
        end
        local Sub = Mine:extend("SubMineForKL")
        local f = function(p, q) return t64(p.v - q.v) end
        assert.are.equal(f, dist.register_kl(Mine, Mine)(f))
        assert.are.equal(2, kl(Mine(5), Mine(3)):item())
        assert.are.equal(2, kl(Sub(5), Mine(3)):item()) -- (through the base class)
        dist.register_kl(Sub, Mine)(function() return t64(-1) end)
        assert.are.equal(-1, kl(Sub(5), Sub(3)):item()) -- (p's class first)
        assert.are.equal(2, kl(Mine(5), Sub(3)):item())
        -- a subclass of a built-in family: its own pair first, else the family's closed form
        local N = dist.Normal
        local MyN = N:extend("MyNormalForKL")
        dist.register_kl(MyN, MyN)(function() return t64(7) end)
        assert.are.equal(7, kl(MyN(t64(0), 1), MyN(t64(1), 1)):item())
        assert.are.equal(0.5, kl(MyN(t64(0), 1), N(t64(1), 1)):item())
        assert.are.equal(0.5, kl(N(t64(0), 1), N(t64(1), 1)):item())
        -- TransformedDistribution pairs through their bases; Relaxed ones have none
        local rb = dist.RelaxedBernoulli(t64(1), { probs = 0.3 })
        assert.matches("no closed form for LogitRelaxedBernoulli and LogitRelaxedBernoulli",
            catch(function() kl(rb, rb) end), 1, true)
        local t1 = dist.TransformedDistribution(dist.Normal(t64({ 0 }), 1), T.ExpTransform())
        local t2 = dist.TransformedDistribution(dist.Normal(t64({ 1 }), 1), T.ExpTransform())
        P.close({ 0.5 }, kl(t1, t2), 1e-15, "same transforms")
        local t3 = dist.TransformedDistribution(dist.Normal(t64({ 1 }), 1), T.SigmoidTransform())
        assert.matches("through different transforms have no closed form",
            catch(function() kl(t1, t3) end), 1, true)
        -- a broadcast base: the bases' divergence, broadcast
        local b1 = td_broadcast(t64({ 1, 2, 3 }))
        P.close({ 0, 0, 0 }, kl(b1, td_broadcast(t64({ 1, 2, 3 }))), 1e-15, "broadcast bases")
    end)
end)

describe("transforms: checks (" .. DEV .. ")", function()
    it("refuse bad arguments, naming them", function()
        local cases = {
            { "tide: Transform: the base class transforms nothing",
                function() T.Transform() end },
            { "tide: ExpTransform: cache_size must be 0 or 1, got 2",
                function() T.ExpTransform({ cache_size = 2 }) end },
            { 'tide: ExpTransform: unknown option "cache"',
                function() T.ExpTransform({ cache = 1 }) end },
            { "tide: ExpTransform: expected a tensor, got number",
                function() T.ExpTransform()(2) end },
            { "tide: ExpTransform.inv: expected a tensor, got number",
                function() T.ExpTransform().inv(2) end },
            { "tide: StickBreakingTransform.inv: expected vectors of at least 2 entries",
                function() T.StickBreakingTransform().inv(t64({ 1 })) end },
            { "tide: AbsTransform: log_abs_det_jacobian is not defined for this transform",
                function() T.AbsTransform():log_abs_det_jacobian(t64({ 1 }), t64({ 1 })) end },
            { "tide: AbsTransform: sign is not defined for this transform",
                function() return T.AbsTransform().sign end },
            { "tide: CorrCholeskyTransform: domain and codomain have event dims 1 and 2",
                function() return T.CorrCholeskyTransform().event_dim end },
            { "tide: AffineTransform: scale must be a number or a tensor, got string",
                function() T.AffineTransform(0, "2") end },
            { "tide: AffineTransform: event_dim must be an integer >= 0, got -1",
                function() T.AffineTransform(0, 1, -1) end },
            { 'tide: AffineTransform: unknown option "event_dims"',
                function() T.AffineTransform(0, 1, { event_dims = 1 }) end },
            { "tide: PowerTransform: exponent must be a number or a tensor, got nil",
                function() T.PowerTransform() end },
            { "tide: ComposeTransform: parts must be a list of transforms, got a transform",
                function() T.ComposeTransform(T.ExpTransform()) end },
            { "tide: ComposeTransform: parts[2] is no transform (a number)",
                function() T.ComposeTransform({ T.ExpTransform(), 3 }) end },
            { "tide: IndependentTransform: reinterpreted_batch_ndims must be an integer >= 0",
                function() T.IndependentTransform(T.ExpTransform(), -1) end },
            { "tide: IndependentTransform: expected at least 2 dims (the event's), got 1",
                function() T.IndependentTransform(T.ExpTransform(), 2)(t64({ 1 })) end },
            { "tide: ReshapeTransform: in_shape {2, 3} and out_shape {5} hold different numbers",
                function() T.ReshapeTransform({ 2, 3 }, { 5 }) end },
            { "tide: ReshapeTransform: expected the last dims {2, 3}, got the shape {3, 2}",
                function() T.ReshapeTransform({ 2, 3 }, { 6 })(t64({ { 1, 2 }, { 3, 4 },
                    { 5, 6 } })) end },
            { "tide: ReshapeTransform.forward_shape: expected the last sizes {2, 3}, got {4, 6}",
                function() T.ReshapeTransform({ 2, 3 }, { 6 }):forward_shape({ 4, 6 }) end },
            { "tide: CatTransform: expected 3 entries along dim 1 (the lengths' sum), got 2",
                function() T.CatTransform({ T.ExpTransform(), T.ExpTransform() },
                    { lengths = { 1, 2 } })(t64({ 1, 2 })) end },
            { "tide: CatTransform: lengths must be a list of 2 sizes",
                function() T.CatTransform({ T.ExpTransform(), T.ExpTransform() },
                    { lengths = { 1 } }) end },
            { "tide: CatTransform: dim = 0; dims are 1-based",
                function() T.CatTransform({ T.ExpTransform() }, { dim = 0 }) end },
            { "tide: StackTransform: expected 2 entries along dim 1 (one a transform), got 3",
                function() T.StackTransform({ T.ExpTransform(), T.ExpTransform() })(
                    t64({ 1, 2, 3 })) end },
            { "tide: CorrCholeskyTransform: the last dim has 4 entries, which is no lower " ..
                "triangle", function() T.CorrCholeskyTransform()(t64({ 1, 2, 3, 4 })) end },
            { "tide: CorrCholeskyTransform.forward_shape: the last size 4 is no D (D - 1) / 2",
                function() T.CorrCholeskyTransform():forward_shape({ 4 }) end },
            { "tide: StickBreakingTransform: expected at least 1 dim (the vector)",
                function() T.StickBreakingTransform()(t64(1)) end },
            { "tide: CumulativeDistributionTransform: expected a distribution, got a tensor",
                function() T.CumulativeDistributionTransform(t64(1)) end },
            { "tide: MyT.with_cache: not defined for this transform",
                function()
                    local My = T.Transform:extend("MyT")
                    function My:init(a) self.a = a; self:_options() end
                    My(1):with_cache(1)
                end },
        }
        for _, c in ipairs(cases) do
            assert.matches(c[1], catch(c[2]), 1, true)
        end
    end)

    it("refuse bad constraints and registry uses", function()
        local cases = {
            { "tide: Constraint: the base class constrains nothing",
                function() C.Constraint() end },
            { "tide: constraints.greater_than: lower_bound must be a number or a tensor, got nil",
                function() C.greater_than() end },
            { "tide: constraints.independent: expected a constraint as the base, got number",
                function() C.independent(1, 1) end },
            { "tide: Real.check: expected a tensor, got number",
                function() C.real:check(1) end },
            { "tide: Dependent.check: cannot determine the validity",
                function() C.dependent:check(t64({ 1 })) end },
            { "tide: IndependentConstraint.check: expected a value of at least 2 dims, got 1",
                function() C.independent(C.real, 2):check(t64({ 1 })) end },
            { 'tide: constraints.cat: unknown option "dims"',
                function() C.cat({ C.real }, { dims = 1 }) end },
            { "tide: biject_to: cannot transform LowerCholesky constraints; register a factory " ..
                "with biject_to.register(constraint, factory)",
                function() dist.biject_to(C.lower_cholesky) end },
            { "tide: transform_to: expected a constraint such as constraints.positive, got " ..
                "a constraint class (make one: call it)",
                function() dist.transform_to(C.greater_than) end },
            { "tide: biject_to.register: expected a constraint or a constraint class",
                function() dist.biject_to:register(3, function() end) end },
            { "tide: biject_to.register: the factory must be a function (constraint) -> " ..
                "transform, got number", function() dist.biject_to:register(C.real, 3) end },
        }
        for _, c in ipairs(cases) do
            assert.matches(c[1], catch(c[2]), 1, true)
        end
        -- a registry of one's own
        local reg = dist.constraint_registry.ConstraintRegistry()
        reg:register(C.positive)(function() return T.ExpTransform() end)
        assert.is_true(reg(C.greater_than(3)) == T.ExpTransform())
        assert.is_true(C.is_dependent(C.dependent))
        assert.is_false(C.is_dependent(C.real))
    end)

    it("refuse bad distributions and values, naming them", function()
        local cases = {
            { "tide: TransformedDistribution: expected a distribution as the base, got number",
                function() dist.TransformedDistribution(3, {}) end },
            { "tide: TransformedDistribution: transforms[1] is no transform (a string)",
                function() dist.TransformedDistribution(dist.Normal(0, 1), { "exp" }) end },
            { "tide: TransformedDistribution: the transforms take events of 1 dims and the " ..
                "base's shape {} has fewer",
                function()
                    dist.TransformedDistribution(dist.Normal(0, 1), T.StickBreakingTransform())
                end },
            { "tide: TransformedDistribution.log_prob: the values must be positive",
                function() td_affine_exp(t64(0), 1, 0, 1):log_prob(t64({ -1 })) end },
            { "tide: TransformedDistribution.log_prob: the value's last dims must be the event " ..
                "shape {4}, got the shape {3}",
                function()
                    dist.TransformedDistribution(dist.Normal(t64({ 0, 0, 0 }), 1),
                        T.StickBreakingTransform()):log_prob(t64({ 0.2, 0.3, 0.5 }))
                end },
            { "tide: TransformedDistribution: mean is not defined for this distribution",
                function() td_affine_exp(t64(0), 1, 0, 1):mean() end },
            { "tide: TransformedDistribution: entropy is not defined for this distribution",
                function() td_affine_exp(t64(0), 1, 0, 1):entropy() end },
            { "tide: Pareto: alpha must be positive", function() dist.Pareto(1, t64({ 0 })) end },
            { "tide: Pareto: scale must be positive", function() dist.Pareto(t64({ -1 }), 1) end },
            { "tide: Pareto.log_prob: the values must be >= scale",
                function() dist.Pareto(t64({ 2 }), 1):log_prob(t64({ 1 })) end },
            { "tide: Pareto.cdf: the values must be >= scale",
                function() dist.Pareto(t64({ 2 }), 1):cdf(t64({ 1 })) end },
            { "tide: Pareto: expected at most 3 arguments",
                function() dist.Pareto(1, 1, 1) end },
            { "tide: Kumaraswamy: concentration1 must be positive",
                function() dist.Kumaraswamy(t64({ 0 }), 1) end },
            { "tide: Kumaraswamy: concentration0 must be positive",
                function() dist.Kumaraswamy(1, t64({ -1 })) end },
            { "tide: Kumaraswamy.log_prob: the values must be in [0, 1]",
                function() dist.Kumaraswamy(t64({ 1 }), 1):log_prob(t64({ 1.5 })) end },
            { "tide: LogisticNormal: scale must be positive",
                function() dist.LogisticNormal(t64({ 0 }), t64({ 0 })) end },
            { "tide: LogisticNormal.log_prob: the values must be on the simplex",
                function() dist.LogisticNormal(t64({ 0 }), 1):log_prob(t64({ 0.5, 0.6 })) end },
            { "tide: RelaxedBernoulli: give exactly one of probs and logits",
                function() dist.RelaxedBernoulli(t64(1), {}) end },
            { 'tide: RelaxedBernoulli: unknown option "prob"',
                function() dist.RelaxedBernoulli(t64(1), { prob = 0.3 }) end },
            { "tide: RelaxedBernoulli: probs must lie in [0, 1]",
                function() dist.RelaxedBernoulli(t64(1), { probs = t64({ 1.5 }) }) end },
            { "tide: RelaxedBernoulli: temperature must be positive",
                function() dist.RelaxedBernoulli(t64(0), { probs = 0.5 }) end },
            { "tide: RelaxedBernoulli: temperature comes first",
                function() dist.RelaxedBernoulli({ probs = 0.5 }) end },
            { "tide: RelaxedBernoulli.log_prob: the values must be in [0, 1]",
                function()
                    dist.RelaxedBernoulli(t64(1), { probs = t64({ 0.5 }) }):log_prob(t64({ 2 }))
                end },
            { "tide: LogitRelaxedBernoulli: temperature must be a tensor or a number, got string",
                function() dist.LogitRelaxedBernoulli("hot", { probs = 0.5 }) end },
            { "tide: LogitRelaxedBernoulli.log_prob: the values must be real numbers (not NaN)",
                function()
                    dist.LogitRelaxedBernoulli(t64(1), { probs = t64({ 0.5 }) })
                        :log_prob(t64({ 0 / 0 }))
                end },
            { "tide: RelaxedOneHotCategorical: probs must be >= 0",
                function() dist.RelaxedOneHotCategorical(t64(1), { probs = t64({ 1, -1 }) }) end },
            { "tide: RelaxedOneHotCategorical: logits must be a tensor with at least one dim",
                function() dist.RelaxedOneHotCategorical(t64(1), { logits = t64(1) }) end },
            { "tide: RelaxedOneHotCategorical.log_prob: the values must be on the simplex",
                function()
                    dist.RelaxedOneHotCategorical(t64(1), { probs = t64({ 0.5, 0.5 }) })
                        :log_prob(t64({ 0.5, 0.6 }))
                end },
            { "tide: ExpRelaxedCategorical.log_prob: the values must be vectors of 2 (the " ..
                "classes) along the last dim, got the shape {3}",
                function()
                    dist.ExpRelaxedCategorical(t64(1), { probs = t64({ 0.5, 0.5 }) })
                        :log_prob(t64({ 0, 0, 0 }))
                end },
            { "tide: TransformedDistribution.log_prob: the value is on ",
                function()
                    td_affine_exp(t64(0), 1, 0, 1):log_prob(tide.tensor({ 1.0 },
                        { dtype = "float64", device = D.other }))
                end },
            { "tide: register_kl: P must be a distribution class such as " ..
                "tide.distributions.Normal, got a Normal instance (give its class)",
                function() dist.register_kl(dist.Normal(0, 1), dist.Normal) end },
            { "tide: register_kl(Normal, Normal): expected a function (p, q) -> tensor, got nil",
                function() dist.register_kl(dist.Normal, dist.Normal)() end },
            { "tide: kl_divergence: Kumaraswamy and Pareto through different transforms " ..
                "have no closed form",
                function() kl(dist.Kumaraswamy(1, 1), dist.Pareto(1, 1)) end },
        }
        for _, c in ipairs(cases) do
            assert.matches(c[1], catch(c[2]), 1, true)
        end
        assert.are.equal("Pareto(scale: {3}, alpha: {3})",
            tostring(dist.Pareto(t64(F.PSCALE), t64(F.ALPHA))))
    end)
end)
