-- porting_loss_spec.lua — the losses a ported script reaches for that tide lacked, against
-- PyTorch 1.13's values and gradients under every reduction (spec/fixtures/
-- porting_loss_torch.lua, written by spec/fixtures/make_porting_loss.py): soft_margin_loss,
-- hinge_embedding_loss, multilabel_soft_margin_loss, multi_margin_loss, poisson_nll_loss,
-- gaussian_nll_loss (var clamped in value only), multilabel_margin_loss (1-based targets ended
-- by 0), their nn modules, and their errors.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local D = require("spec.support.device")

local T = dofile("spec/fixtures/porting_loss_torch.lua")
local DEV = D.name

local P = require("spec.support.porting")

local function t64(v)
    return P.t64(v, DEV)
end

local function long(v, dev)
    return tide.tensor(v, { dtype = "int64", device = dev or DEV })
end

local function check_case(name, fn, ...)
    P.check_case(T.cases[name], name, DEV, {}, fn, ...)
end

describe("PyTorch's losses, PyTorch's values (" .. DEV .. ")", function()
    local X, Y, VAR = T.X, T.Y, T.VAR
    local CASES = {
        hinge_margin = { function(x)
            return F.hinge_embedding_loss(x, t64(T.SIGN), { margin = 0.5, reduction = "none" })
        end, X },
        hinge_other_targets = { function(x)
            return nn.HingeEmbeddingLoss({ margin = 2, reduction = "none" })(x,
                t64({ 0, 2, -1, 1 }))
        end, { 0.5, 2, 1, -3 } },
        hinge_tie = { function(x)
            return F.hinge_embedding_loss(x, t64({ -1, -1, 1, -1 }), { reduction = "sum" })
        end, { 0.5, -1, 2, 1 } },
        mlsm_weight = { function(x, y)
            return nn.MultiLabelSoftMarginLoss({ weight = t64(T.CW), reduction = "none" })(x, y)
        end, X, T.BIN },
        mlsm_1d = { function(x, y)
            return F.multilabel_soft_margin_loss(x, y)
        end, X[1], T.BIN[1] },
        mlsm_extreme = { function(x, y)
            return F.multilabel_soft_margin_loss(x, y, { reduction = "none" })
        end, { { -800, 800, 30, -30 } }, { { 1, 0, 1, 0 } } },
        multi_margin_p2 = { function(x)
            return F.multi_margin_loss(x, long(T.CLS), { p = 2, margin = 2, reduction = "none" })
        end, X },
        multi_margin_weight = { function(x)
            return nn.MultiMarginLoss({ weight = t64(T.CW), reduction = "none" })(x, long(T.CLS))
        end, X },
        multi_margin_p2_weight = { function(x)
            return F.multi_margin_loss(x, long(T.CLS), { p = 2, weight = t64(T.CW) })
        end, X },
        multi_margin_1d = { function(x)
            return F.multi_margin_loss(x, long(3), { reduction = "none" })
        end, X[2] },
        multi_margin_tie = { function(x)
            return F.multi_margin_loss(x, long({ 1, 2 }), { reduction = "sum" })
        end, { { 1, 0, 0.5 }, { 1, 2, 1 } } },
        poisson_rates = { function(x, y)
            return nn.PoissonNLLLoss({ log_input = false, reduction = "none" })(x, y)
        end, T.RATES, T.COUNTS },
        poisson_rates_eps = { function(x, y)
            return F.poisson_nll_loss(x, y, { log_input = false, eps = 0.5, reduction = "sum" })
        end, T.RATES, T.COUNTS },
        poisson_full = { function(x, y)
            return F.poisson_nll_loss(x, y, { full = true, reduction = "none" })
        end, X, T.COUNTS },
        poisson_full_rates = { function(x, y)
            return nn.PoissonNLLLoss({ log_input = false, full = true })(x, y)
        end, T.RATES, T.COUNTS },
        gaussian_full = { function(x, y, v)
            return nn.GaussianNLLLoss({ full = true, reduction = "none" })(x, y, v)
        end, X, Y, VAR },
        gaussian_eps = { function(x, y, v)
            return F.gaussian_nll_loss(x, y, v, { eps = 0.6, reduction = "none" })
        end, X, Y, VAR },
        gaussian_row = { function(x, y, v)
            return F.gaussian_nll_loss(x, y, v, { reduction = "none" })
        end, X, Y, T.VAR_ROW },
        gaussian_row1 = { function(x, y, v)
            return F.gaussian_nll_loss(x, y, v, { reduction = "sum" })
        end, X, Y, { { T.VAR_ROW[1] }, { T.VAR_ROW[2] }, { T.VAR_ROW[3] } } },
        multilabel_margin_1d = { function(x)
            return F.multilabel_margin_loss(x, long(T.ML[1]), { reduction = "none" })
        end, X[1] },
        multilabel_margin_dup = { function(x)
            return nn.MultiLabelMarginLoss({ reduction = "sum" })(x, long({ { 2, 2, 0, 0 } }))
        end, { X[2] } },
        multilabel_margin_tie = { function(x)
            return F.multilabel_margin_loss(x, long({ { 1, 0, 0 } }), { reduction = "sum" })
        end, { { 1, 0, 0.5 } } },
        soft_margin_nan = { function(x)
            return F.soft_margin_loss(x, t64({ 1, -1, 1 }), { reduction = "none" })
        end, { 0 / 0, 0.5, -2 } },
        multi_margin_empty_sum = { function(x)
            return F.multi_margin_loss(x:narrow(1, 1, 0), long({}), { reduction = "sum" })
        end, X },
        multilabel_margin_empty = { function(x)
            return F.multilabel_margin_loss(x:narrow(1, 1, 0), long(T.ML):narrow(1, 1, 0),
                { reduction = "none" })
        end, X },
        mlsm_empty_mean = { function(x, y)
            return F.multilabel_soft_margin_loss(x:narrow(1, 1, 0), y:narrow(1, 1, 0))
        end, X, T.BIN },
        gaussian_empty_sum = { function(x, y, v)
            return F.gaussian_nll_loss(x:narrow(1, 1, 0), y:narrow(1, 1, 0), v:narrow(1, 1, 0),
                { reduction = "sum" })
        end, X, Y, T.VAR_ROW },
    }
    -- every reduction of each loss: F under "none" and "sum", the module under "mean"
    for _, r in ipairs({ "mean", "sum", "none" }) do
        local o = { reduction = r }
        local module = r == "mean"
        CASES["soft_margin_" .. r] = { function(x)
            local f = module and nn.SoftMarginLoss(o) or function(a, b)
                return F.soft_margin_loss(a, b, o)
            end
            return f(x, t64(T.SIGN))
        end, X }
        CASES["hinge_" .. r] = { function(x)
            local f = module and nn.HingeEmbeddingLoss(o) or function(a, b)
                return F.hinge_embedding_loss(a, b, o)
            end
            return f(x, t64(T.SIGN))
        end, X }
        CASES["mlsm_" .. r] = { function(x, y)
            return F.multilabel_soft_margin_loss(x, y, o)
        end, X, T.BIN }
        CASES["multi_margin_" .. r] = { function(x)
            local f = module and nn.MultiMarginLoss() or function(a, b)
                return F.multi_margin_loss(a, b, o)
            end
            return f(x, long(T.CLS))
        end, X }
        CASES["poisson_" .. r] = { function(x, y)
            return F.poisson_nll_loss(x, y, o)
        end, X, T.COUNTS }
        CASES["gaussian_" .. r] = { function(x, y, v)
            local f = module and nn.GaussianNLLLoss(o) or function(a, b, c)
                return F.gaussian_nll_loss(a, b, c, o)
            end
            return f(x, y, v)
        end, X, Y, VAR }
        CASES["multilabel_margin_" .. r] = { function(x)
            local f = module and nn.MultiLabelMarginLoss(o) or function(a, b)
                return F.multilabel_margin_loss(a, b, o)
            end
            return f(x, long(T.ML))
        end, X }
    end
    P.run_cases(it, T, CASES, check_case)
    it("every fixture case has a check", function()
        for name in pairs(T.cases) do
            assert(CASES[name], "no check for the fixture's " .. name)
        end
    end)
end)

describe("PyTorch's losses: errors, devices and modules (" .. DEV .. ")", function()
    local X = T.X

    it("name the values at fault and the fix", function()
        local x = t64(X)
        assert.has_error(function() F.soft_margin_loss(x, x, { margin = 1 }) end,
            'tide: soft_margin_loss: unknown option "margin"; options are reduction')
        assert.has_error(function() nn.HingeEmbeddingLoss()(x, x:narrow(1, 1, 2)) end,
            "tide: HingeEmbeddingLoss: expected target of the input's shape {3, 4}, got {2, 4}")
        assert.has_error(function() F.multi_margin_loss(x, long({ 1, 2 })) end,
            "tide: multi_margin_loss: expected target of shape {3} (one class per row) for " ..
            "input {3, 4}, got {2}")
        assert.has_error(function()
            F.multi_margin_loss(x, tide.tensor({ 1, 2, 3 }, { dtype = "float64", device = DEV }))
        end, "tide: multi_margin_loss: expected integer class targets (int64, 1-based), got " ..
            "float64; convert with target:long()")
        assert.has_error(function() F.multi_margin_loss(x, long(T.CLS), { p = 3 }) end,
            "tide: multi_margin_loss: expected p to be 1 or 2, got 3")
        assert.has_error(function()
            F.multi_margin_loss(x, long(T.CLS), { weight = t64({ 1, 2, 3 }) })
        end, "tide: multi_margin_loss: expected weight of shape {4} (one per class), got {3}")
        assert.has_error(function() nn.MultiMarginLoss({ weight = 3 }) end,
            "tide: MultiMarginLoss: expected weight to be a tensor (one per class), got number")
        assert.has_error(function() F.multilabel_soft_margin_loss(x, x, { weight = 1 }) end,
            "tide: multilabel_soft_margin_loss: expected weight of shape {4} (one per class), " ..
            "got number")
        assert.has_error(function() F.gaussian_nll_loss(x, x, t64({ 1, 2, 3, 4 })) end,
            "tide: gaussian_nll_loss: expected var of the input's shape {3, 4}, or {3} or " ..
            "{3, 1} (one variance per row), got {4}")
        assert.has_error(function() F.poisson_nll_loss(x, x, { full = 1 }) end,
            "tide: poisson_nll_loss: expected full to be a boolean, got number")
        assert.has_error(function() F.multilabel_margin_loss(x, long({ { 1, 0, 0, 0 } })) end,
            "tide: multilabel_margin_loss: expected target of the input's shape {3, 4} (each " ..
            "row's classes, ended by 0), got {1, 4}")
        assert.has_error(function() F.multi_margin_loss(t64({}), long({})) end,
            "tide: multi_margin_loss: expected input of shape {N, C} or {C} with C > 0, got {0}")
        assert.has_error(function() F.hinge_embedding_loss(x, x, { reduction = "avg" }) end,
            "tide: hinge_embedding_loss: unknown reduction 'avg'; use \"mean\", \"sum\" or " ..
            "\"none\"")
    end)

    -- a target out of range (a negative var): an error where reading it back is free (cpu:0),
    -- a NaN loss elsewhere (no transfer, no guard), as cross_entropy
    it("out-of-range targets and negative variances", function()
        local x = t64(X)
        local calls = {
            { function() return F.multi_margin_loss(x, long({ 1, 5, 2 })) end,
                "tide: multi_margin_loss: target 5 out of range for 4 classes; class targets " ..
                "are 1-based, in 1..4" },
            { function() return F.multi_margin_loss(x, long({ 1, 0, 2 })) end,
                "tide: multi_margin_loss: target 0 out of range for 4 classes; class targets " ..
                "are 1-based, in 1..4" },
            { function()
                return F.multilabel_margin_loss(x, long({ { 1, 0, 9, 0 }, { 1, 0, 0, 0 },
                    { 2, 0, 0, 0 } }))
            end, "tide: multilabel_margin_loss: target 9 out of range for 4 classes; targets " ..
                "are 1-based classes in 1..4, each row's list ended by 0 (PyTorch's targets + 1)" },
            { function()
                return F.multilabel_margin_loss(x, long({ { 1, 0, 0, 0 }, { -1, 0, 0, 0 },
                    { 2, 0, 0, 0 } }))
            end, "tide: multilabel_margin_loss: target -1 out of range for 4 classes; targets " ..
                "are 1-based classes in 1..4, each row's list ended by 0 (PyTorch's targets + 1)" },
            { function()
                return F.gaussian_nll_loss(x, x, t64({ 1, -0.5, 2 }))
            end, "tide: gaussian_nll_loss: var has a negative entry (-0.5); variances must be " ..
                ">= 0" },
        }
        for _, c in ipairs(calls) do
            if D.is_host then
                assert.has_error(c[1], c[2])
            else
                local v = c[1]():cpu():item()
                assert.is_true(v ~= v, c[2])
            end
        end
    end)

    it("results on the inputs' device; mixing devices raises", function()
        local x, other = t64(X), P.t64(X, D.other)
        assert.has_error(function() F.soft_margin_loss(x, other) end)
        assert.has_error(function() F.multi_margin_loss(x, long(T.CLS, D.other)) end)
        local ok, msg = pcall(F.gaussian_nll_loss, x, x, P.t64(T.VAR, D.other))
        assert.is_false(ok)
        assert.truthy(msg:find("tide: gaussian_nll_loss: expected all tensors on the same " ..
            "device", 1, true))
        assert.has_error(function()
            F.multilabel_soft_margin_loss(x, t64(T.BIN), { weight = P.t64(T.CW, D.other) })
        end)
        assert.are.equal(tide.device(DEV), F.multilabel_margin_loss(x, long(T.ML)).device)
    end)

    it("the modules' weight is a buffer: it follows :to()", function()
        for _, cls in ipairs({ "MultiMarginLoss", "MultiLabelSoftMarginLoss" }) do
            local m = nn[cls]({ weight = P.t64(T.CW, D.other) })
            m:to(DEV)
            assert.are.equal(tide.device(DEV), m.weight.device)
            local target = cls == "MultiMarginLoss" and long(T.CLS) or t64(T.BIN)
            local want = F[cls == "MultiMarginLoss" and "multi_margin_loss" or
                "multilabel_soft_margin_loss"](t64(X), target, { weight = t64(T.CW) })
            P.close(want:cpu():item(), m(t64(X), target), 1e-15, cls)
        end
    end)

    -- PyTorch 1.13's kernels leave their mean over an empty batch uninitialised (9e-8, 2e-29):
    -- tide gives NaN, the mean of nothing, as its other losses do
    it("the mean over an empty batch is NaN", function()
        local x = t64(X):narrow(1, 1, 0)
        local v = nn.MultiMarginLoss()(x, long({})):cpu():item()
        assert.is_true(v ~= v)
        v = F.multilabel_margin_loss(x, long(T.ML):narrow(1, 1, 0)):cpu():item()
        assert.is_true(v ~= v)
    end)

    -- a masked class (-inf logit, wav2vec 2.0's contrastive logits[neg_is_pos] = -inf) gives
    -- PyTorch's finite loss and gradient: the target's log-probability is picked, never
    -- multiplied by a one-hot row (-inf * 0 is NaN)
    it("cross_entropy and nll_loss with -inf logits are finite, as PyTorch's", function()
        local inf = math.huge
        local x = tide.tensor({ { 1, -inf, 2 }, { 0.5, 1, -inf } },
            { device = DEV, requires_grad = true })
        local t = long({ 1, 2 })
        -- PyTorch 1.13: F.cross_entropy(x, t, **o); l.sum().backward()
        local cases = {
            { {}, { 0.8937 }, { -0.3655, 0, 0.3655, 0.1888, -0.1888, 0 } },
            { { reduction = "sum" }, { 1.7873 }, { -0.7311, 0, 0.7311, 0.3775, -0.3775, 0 } },
            { { reduction = "none" }, { 1.3133, 0.4741 },
                { -0.7311, 0, 0.7311, 0.3775, -0.3775, 0 } },
            { { weight = tide.tensor({ 1, 2, 3 }, { device = DEV }) }, { 0.7538 },
                { -0.2437, 0, 0.2437, 0.2517, -0.2517, 0 } },
            { { ignore_index = 2 }, { 1.3133 }, { -0.7311, 0, 0.7311, 0, 0, 0 } },
        }
        for _, c in ipairs(cases) do
            local loss = F.cross_entropy(x, t, c[1])
            loss:sum():backward()
            P.close(c[2], loss:view(-1), 1e-4, "loss")
            P.close(c[3], x.grad:view(-1), 1e-4, "grad")
            x.grad = nil
        end
        P.close(0.8937, F.nll_loss(x:log_softmax(2), t), 1e-4, "nll_loss")
        -- label smoothing spreads the target over every class, -inf included: inf, as PyTorch's
        assert.are.equal(inf, F.cross_entropy(x, t, { label_smoothing = 0.1 }):cpu():item())
    end)

    it("float32 in, float32 out", function()
        local x = t64(X):float()
        local y = t64(T.Y):float()
        assert.are.equal("float32", F.soft_margin_loss(x, x:sign()).dtype)
        assert.are.equal("float32", F.multi_margin_loss(x, long(T.CLS)).dtype)
        assert.are.equal("float32", F.gaussian_nll_loss(x, y, x:abs()).dtype)
        assert.are.equal("float32", F.multilabel_margin_loss(x, long(T.ML)).dtype)
    end)
end)

describe("the functional losses take their tensors by PyTorch's names too", function()
    local function err(f, ...)
        local ok, e = pcall(f, ...)
        assert.is_false(ok)
        return tostring(e)
    end

    it("F.mse_loss(x, {target = y}), every tensor by name, and given twice", function()
        -- torch: F.mse_loss(x, target=y) with x = [1., 2.], y = [0., 4.] is 2.5
        local x, y = tide.tensor({ 1.0, 2.0 }), tide.tensor({ 0.0, 4.0 })
        assert.are.equal(2.5, F.mse_loss(x, { target = y }):item())
        assert.are.equal(2.5, F.mse_loss({ input = x, target = y }):item())
        assert.are.equal(5, F.mse_loss(x, { target = y, reduction = "sum" }):item())
        assert.matches("tide: mse_loss: target given twice, as argument #2 and by name; pass " ..
            "it once", err(F.mse_loss, x, y, { target = y }), 1, true)
        assert.matches("tide: mse_loss: input given twice, as argument #1 and by name",
            err(F.mse_loss, x, { input = x, target = y }), 1, true)
        -- three tensors: the knowledge distillation tutorial's cosine loss, gaussian_nll's var
        local a, b, t = tide.randn(3, 4), tide.randn(3, 4), tide.ones(3)
        assert.are.equal(F.cosine_embedding_loss(a, b, t):item(),
            F.cosine_embedding_loss(a, b, { target = t }):item())
        assert.are.equal(F.triplet_margin_loss(a, b, a:flip({ 1 })):item(),
            F.triplet_margin_loss({ anchor = a, positive = b, negative = a:flip({ 1 }) }):item())
        local v = tide.ones(3, 4)
        assert.are.equal(F.gaussian_nll_loss(a, b, v):item(),
            F.gaussian_nll_loss(a, b, { var = v }):item())
        assert.are.equal(F.cross_entropy(a, tide.tensor({ 1, 2, 3 })):item(),
            F.cross_entropy(a, { target = tide.tensor({ 1, 2, 3 }) }):item())
    end)
end)
