-- nn.utils (spectral / weight norm, parametrizations, parametrize, prune), the lr schedulers,
-- swa_utils and the attention calls by PyTorch 1.13's keyword names: by position, by name in a
-- trailing table and mixed give the same (PyTorch's values); a misspelt name raises
local tide = require("tide")
local nn, F, S, optim = tide.nn, tide.nn.functional, tide.optim.lr_scheduler, tide.optim
local U, PZ, P, PR, SW = nn.utils, nn.utils.parametrizations, nn.utils.parametrize,
    nn.utils.prune, optim.swa_utils

local unpack = table.unpack or unpack

local function lin() tide.manual_seed(0) return nn.Linear(3, 2) end
local function flat(t)
    local r = {}
    for i, v in ipairs(t:reshape(-1):tolist()) do r[i] = string.format("%.6g", v) end
    return table.concat(r, ",")
end
local function w(m) return flat(m.weight) end
local function same(forms)
    local a = forms[1]()
    for i = 2, #forms do assert.are.equal(a, forms[i]()) end
    return a
end

describe("nn.utils by name", function()
    it("spectral_norm / remove_spectral_norm by position and mixed (were refused)", function()
        same({ function() return w(U.spectral_norm(lin(), "weight", 2, 1e-12, 1)) end,
            function() return w(U.spectral_norm(lin(), { name = "weight", n_power_iterations = 2,
                eps = 1e-12, dim = 1 })) end,
            function()
                return w(U.spectral_norm(lin(), "weight", { n_power_iterations = 2 }))
            end,
            function() local m = U.spectral_norm(lin(), "weight", 2)
                local v = w(m) U.remove_spectral_norm(m, { name = "weight" })
                assert.is_nil(rawget(m, "weight_orig")) return v end })
        assert.has_error(function() U.spectral_norm(lin(), { n_power_iteration = 2 }) end,
            'tide: spectral_norm: unknown option "n_power_iteration" ' ..
            '(did you mean "n_power_iterations"?)')
    end)
    it("weight_norm(m, name, {dim =}), remove_weight_norm(m, {name =}) (were refused)", function()
        local a = same({ function() return w(U.weight_norm(lin(), "weight", 2)) end,
            function() return w(U.weight_norm(lin(), "weight", { dim = 2 })) end,
            function() return w(PZ.weight_norm(lin(), "weight", { dim = 2 })) end })
        assert.are.equal(w(lin()), a) -- the weight is unchanged
        local m = U.weight_norm(lin(), { dim = 2 })
        U.remove_weight_norm(m, { name = "weight" })
        assert.is_nil(rawget(m, "weight_g"))
    end)
    it("parametrizations.spectral_norm / orthogonal by position (were refused)", function()
        same({ function() return w(PZ.spectral_norm(lin(), "weight", 2)) end,
            function() return w(PZ.spectral_norm(lin(), { n_power_iterations = 2 })) end,
            function()
                return w(PZ.spectral_norm(lin(), "weight", { n_power_iterations = 2 }))
            end })
        same({ function() return w(PZ.orthogonal(lin(), "weight", "cayley")) end,
            function() return w(PZ.orthogonal(lin(), { orthogonal_map = "cayley" })) end })
        local m = PZ.orthogonal(lin(), "weight", "cayley", { use_trivialization = false })
        local o = m.weight:matmul(m.weight:t())
        assert.is_true(o:sub(tide.eye(2)):abs():max():item() < 1e-5)
        assert.has_error(function() PZ.orthogonal(lin(), "weight", "cayley", false) end)
        assert.has_error(function() PZ.orthogonal(lin(), { orthogonal_mapp = "cayley" }) end)
    end)
    local Dbl = nn.Module:extend("Dbl_by_name")
    function Dbl:forward(x) return x * 2 end
    it("register_parametrization(m, name, p, true) and is_parametrized(m, {tensor_name =})",
        function()
            local m = P.register_parametrization(lin(), "weight", Dbl(), true)
            local m2 = P.register_parametrization(lin(), "weight", Dbl(), { unsafe = true })
            assert.are.equal(w(m2), w(m))
            -- was false (the table taken for a name) for a parametrized weight
            assert.is_true(P.is_parametrized(m, { tensor_name = "weight" }))
            assert.is_false(P.is_parametrized(m, { tensor_name = "bias" }))
            assert.has_error(function() P.is_parametrized(m, { tensor = "weight" }) end)
            P.remove_parametrizations(m, "weight", { leave_parametrized = false })
            assert.are.equal(w(lin()), w(m))
            assert.has_error(function() P.register_parametrization(lin(), "weight", Dbl(),
                { unsaf = true }) end, 'tide: register_parametrization: unknown option "unsaf"')
        end)
end)

-- prune: masks of a seeded Linear(3, 2), each form
local PRUNE = {
    { "l1_unstructured", { "weight", 0.5 }, { amount = 0.5 }, "0,1,0,0,1,1" },
    { "ln_structured", { "weight", 1, 1, 2 }, { amount = 1, n = 1, dim = 2 },
        "0,1,1,0,1,1" },
    { "random_unstructured", { "weight", 2 }, { amount = 2 } },
    { "random_structured", { "weight", 1, 2 }, { amount = 1, dim = 2 } },
    { "identity", { "weight" }, {}, "1,1,1,1,1,1" },
}
describe("nn.utils.prune by name", function()
    for _, c in ipairs(PRUNE) do
        it(c[1] .. ": by position, by name and mixed", function()
            local function mask(...)
                local m = lin() tide.manual_seed(3) PR[c[1]](m, ...)
                return flat(m.weight_mask)
            end
            local named = { name = "weight" }
            for k, v in pairs(c[3]) do named[k] = v end
            local a = same({ function() return mask(unpack(c[2])) end,
                function() return mask(named) end,
                function() return mask("weight", c[3]) end })
            if c[4] then assert.are.equal(c[4], a) end
        end)
    end
    it("global_unstructured(parameters, {pruning_method =, amount =}); a typo raises", function()
        local function g(...)
            local m = lin() PR.global_unstructured({ { m, "weight" }, { m, "bias" } }, ...)
            return flat(m.weight_mask)
        end
        assert.are.equal(g(PR.L1Unstructured, { amount = 3 }),
            g({ pruning_method = PR.L1Unstructured, amount = 3 }))
        assert.has_error(function() PR.l1_unstructured(lin(), "weight", { amout = 0.5 }) end)
    end)
end)

local function opt() return optim.SGD({ tide.ones(2):requires_grad_(true) }, 0.1, 0.9) end
local function run(s, o, n)
    local r = {}
    for i = 1, n do o:step() s:step() r[i] = string.format("%.5g", o.param_groups[1].lr) end
    return table.concat(r, " ")
end
local function two(o) return S.ConstantLR(o, 0.5, 2), S.ExponentialLR(o, 0.9) end

describe("lr_scheduler / swa_utils by name", function()
    it("SequentialLR reads schedulers=, milestones= and a trailing table (was ignored)", function()
        local want = "0.05 0.1 0.09 0.081" -- PyTorch 1.13
        for _, mk in ipairs({
            function(o, a, b) return S.SequentialLR(o, { a, b }, { 2 }) end,
            function(o, a, b) return S.SequentialLR(o, { a, b }, { milestones = { 2 } }) end,
            function(o, a, b)
                return S.SequentialLR(o, { schedulers = { a, b }, milestones = { 2 } })
            end,
            function(o, a, b) return S.SequentialLR(o, { a, b }, { 2 }, { last_epoch = -1 }) end,
            function(o, a, b) return S.SequentialLR({ optimizer = o, schedulers = { a, b },
                milestones = { 2 } }) end,
        }) do
            local o = opt()
            assert.are.equal(want, run(mk(o, two(o)), o, 4))
        end
        local o = opt()
        local a, b = two(o)
        assert.has_error(function() S.SequentialLR(o, { a, b }, { 2 }, { milestone = 3 }) end,
            'tide: SequentialLR: unknown option "milestone" (did you mean "milestones"?)')
    end)
    it("ChainedScheduler({schedulers =}) (was refused)", function()
        local o = opt()
        assert.are.equal("0.045 0.081 0.0729 0.06561",
            run(S.ChainedScheduler({ schedulers = { two(o) } }), o, 4))
    end)
    it("AveragedModel by position and mixed; update_bn(loader, model, {device =})", function()
        local function avg(...)
            tide.manual_seed(1)
            local m = nn.Linear(2, 1)
            local am = SW.AveragedModel(m, ...)
            am:update_parameters(m)
            tide.no_grad(function() m.weight:add_(1) end)
            am:update_parameters(m)
            return w(am.module)
        end
        local f = function(a, b) return a + (b - a) * 0.25 end
        local x = avg("cpu", f, true)
        assert.are.equal(x, avg({ device = "cpu", avg_fn = f, use_buffers = true }))
        assert.are.equal(x, avg("cpu", { avg_fn = f }))
        assert.are_not.equal(x, avg())
        local function bn(...)
            tide.manual_seed(2)
            local m = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2))
            SW.update_bn({ tide.randn(4, 2), tide.randn(4, 2) }, m, ...)
            return flat(m[2].running_mean)
        end
        assert.are.equal(bn(), bn("cpu"))
        assert.are.equal(bn(), bn({ device = "cpu" }))
        assert.has_error(function() bn({ devise = "cpu" }) end)
    end)
    -- PyTorch 1.13's lrs: {name, positional, by name, steps, want}
    local SCHED = {
        { "ReduceLROnPlateau", { "min", 0.5, 1, 1e-4, "rel", 0, 0.001, 1e-8 }, { mode = "min",
            factor = 0.5, patience = 1, min_lr = 0.001 }, 5, "0.1 0.1 0.05 0.05 0.025" },
        { "OneCycleLR", { 1.0, 10, nil, nil, 0.3, "linear", nil, nil, nil, nil, nil, true },
            { max_lr = 1.0, total_steps = 10, pct_start = 0.3, anneal_strategy = "linear",
                three_phase = true }, 4, "0.52 1 0.52 0.04" },
        { "OneCycleLR", { 1.0, nil, 2, 5 }, { max_lr = 1.0, epochs = 2, steps_per_epoch = 5 }, 4,
            "0.52 1 0.95048 0.81175" },
        { "CyclicLR", { 0.01, 0.1, 2, nil, "triangular2" }, { base_lr = 0.01, max_lr = 0.1,
            step_size_up = 2, mode = "triangular2" }, 6, "0.055 0.1 0.055 0.01 0.0325 0.055" },
        { "CosineAnnealingWarmRestarts", { 2, 2, 0.01 }, { T_0 = 2, T_mult = 2, eta_min = 0.01 },
            6, "0.055 0.1 0.08682 0.055 0.02318 0.1" },
        { "PolynomialLR", { 4, 2.0 }, { total_iters = 4, power = 2.0 }, 4,
            "0.05625 0.025 0.00625 0" },
        { "SWALR", { 0.05, 2, "linear" }, { swa_lr = 0.05, anneal_epochs = 2,
            anneal_strategy = "linear" }, 4, "0.075 0.05 0.05 0.05", SW },
    }
    for _, c in ipairs(SCHED) do
        it(c[1] .. ": by position and by name give PyTorch's; a typo raises", function()
            local lib = c[6] or S
            local plateau = c[1] == "ReduceLROnPlateau"
            local function go(...)
                local o = opt()
                local s = lib[c[1]](o, ...)
                if not plateau then return run(s, o, c[4]) end
                local r = {}
                for i = 1, c[4] do
                    o:step() s:step(1.0) r[i] = string.format("%.5g", o.param_groups[1].lr)
                end
                return table.concat(r, " ")
            end
            local n = 0
            for k in pairs(c[2]) do n = math.max(n, k) end
            assert.are.equal(c[5], go(unpack(c[2], 1, n)))
            assert.are.equal(c[5], go(c[3]))
            assert.has_error(function() go({ bogus_name = 1 }) end)
        end)
    end
end)

describe("attention by name", function()
    it("F.multi_head_attention_forward takes training, ... by position (was refused)", function()
        tide.manual_seed(0)
        local m = nn.MultiheadAttention(4, 2)
        local q = tide.randn(3, 2, 4)
        local kpm = tide.tensor({ { false, false, true }, { false, false, false } })
        local am = tide.tensor({ { 0.0, -1, 0 }, { 0, 0, -2 }, { 1, 0, 0 } })
        local function s(o, wt)
            return string.format("%.5f %.5f", o:sum():item(), wt:sum():item())
        end
        local function fa(...)
            return F.multi_head_attention_forward(q, q, q, 4, 2, m.in_proj_weight, m.in_proj_bias,
                nil, nil, false, 0.0, m.out_proj.weight, m.out_proj.bias, ...)
        end
        local want = s(m(q, q, q, kpm, true, am, false))
        assert.are.equal(want, s(m(q, q, q, kpm, { attn_mask = am,
            average_attn_weights = false })))
        assert.are.equal(want, s(fa(false, kpm, true, am, false, nil, nil, nil, nil, nil, false)))
        assert.are.equal(want, s(fa({ training = false, key_padding_mask = kpm, attn_mask = am,
            average_attn_weights = false })))
        assert.are.equal(want, s(fa(false, kpm, { attn_mask = am, average_attn_weights = false })))
        assert.has_error(function() fa({ atn_mask = am }) end,
            'tide: multi_head_attention_forward: unknown option "atn_mask" ' ..
            '(did you mean "attn_mask"?)')
    end)
end)
