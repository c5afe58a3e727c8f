-- optimizers' and schedulers' PyTorch attributes (defaults, param_groups, state, state_dict,
-- scheduler attributes and get_last_lr), each value pasted from PyTorch 1.13 on the same setup:
-- two parameters {1, -2} and {{0.5, 0.25}},
-- loss = sum(a*{0.3,-0.7}) + sum(b*{{0.2,0.1}}) + sum(a^2)
local tide = require("tide")
local optim = require("tide.optim")
local L = optim.lr_scheduler

local function params()
    return { tide.tensor({ 1.0, -2.0 }):float():requires_grad_(true),
        tide.tensor({ { 0.5, 0.25 } }):requires_grad_(true) }
end

local function close(a, b)
    if type(a) == "table" and type(b) == "table" then
        for k, v in pairs(b) do if not close(a[k], v) then return false end end
        for k in pairs(a) do if b[k] == nil then return false end end
        return true
    end
    if type(a) == "number" and type(b) == "number" then
        return a == b or math.abs(a - b) <= 1e-12 * math.max(1, math.abs(b))
    end
    return a == b
end

-- PyTorch 1.13's opt.defaults (== param_groups[1] less params), less foreach = None (nil in Lua)
-- and the speed flags (capturable/differentiable/fused = False; pending below); state: the
-- keys of opt.state[a] after one step
local OPT = {
    { "SGD", { lr = 0.1 }, { dampening = 0, lr = 0.1, maximize = false, momentum = 0,
        nesterov = false, weight_decay = 0 }, {} },
    { "SGD", { lr = 0.1, momentum = 0.9, nesterov = true, weight_decay = 0.01 },
        { dampening = 0, lr = 0.1, maximize = false, momentum = 0.9, nesterov = true,
            weight_decay = 0.01 }, { "momentum_buffer" } },
    { "Adam", {}, { amsgrad = false, betas = { 0.9, 0.999 }, eps = 1e-08, lr = 0.001,
        maximize = false, weight_decay = 0 }, { "exp_avg", "exp_avg_sq", "step" } },
    { "Adam", { lr = 0.01, betas = { 0.8, 0.9 }, amsgrad = true, weight_decay = 0.1 },
        { amsgrad = true, betas = { 0.8, 0.9 }, eps = 1e-08, lr = 0.01, maximize = false,
            weight_decay = 0.1 }, { "exp_avg", "exp_avg_sq", "max_exp_avg_sq", "step" } },
    { "AdamW", {}, { amsgrad = false, betas = { 0.9, 0.999 }, eps = 1e-08, lr = 0.001,
        maximize = false, weight_decay = 0.01 }, { "exp_avg", "exp_avg_sq", "step" } },
    { "AdamW", { lr = 0.01, amsgrad = true }, { amsgrad = true, betas = { 0.9, 0.999 },
        eps = 1e-08, lr = 0.01, maximize = false, weight_decay = 0.01 },
        { "exp_avg", "exp_avg_sq", "max_exp_avg_sq", "step" } },
    { "Adamax", {}, { betas = { 0.9, 0.999 }, eps = 1e-08, lr = 0.002, maximize = false,
        weight_decay = 0 }, { "exp_avg", "exp_inf", "step" } },
    { "Adamax", { lr = 0.01, weight_decay = 0.1 }, { betas = { 0.9, 0.999 }, eps = 1e-08,
        lr = 0.01, maximize = false, weight_decay = 0.1 }, { "exp_avg", "exp_inf", "step" } },
    { "Adagrad", {}, { eps = 1e-10, initial_accumulator_value = 0, lr = 0.01, lr_decay = 0,
        maximize = false, weight_decay = 0 }, { "step", "sum" } },
    { "Adagrad", { lr = 0.1, lr_decay = 0.01, initial_accumulator_value = 0.1 },
        { eps = 1e-10, initial_accumulator_value = 0.1, lr = 0.1, lr_decay = 0.01,
            maximize = false, weight_decay = 0 }, { "step", "sum" } },
    { "Adadelta", {}, { eps = 1e-06, lr = 1.0, maximize = false, rho = 0.9, weight_decay = 0 },
        { "acc_delta", "square_avg", "step" } },
    { "Adadelta", { lr = 0.5, rho = 0.8 }, { eps = 1e-06, lr = 0.5, maximize = false, rho = 0.8,
        weight_decay = 0 }, { "acc_delta", "square_avg", "step" } },
    { "RMSprop", {}, { alpha = 0.99, centered = false, eps = 1e-08, lr = 0.01, maximize = false,
        momentum = 0, weight_decay = 0 }, { "square_avg", "step" } },
    { "RMSprop", { lr = 0.01, momentum = 0.9, centered = true }, { alpha = 0.99, centered = true,
        eps = 1e-08, lr = 0.01, maximize = false, momentum = 0.9, weight_decay = 0 },
        { "grad_avg", "momentum_buffer", "square_avg", "step" } },
    { "Rprop", {}, { etas = { 0.5, 1.2 }, lr = 0.01, maximize = false,
        step_sizes = { 1e-06, 50 } }, { "prev", "step", "step_size" } },
    { "Rprop", { lr = 0.05, etas = { 0.4, 1.1 } }, { etas = { 0.4, 1.1 }, lr = 0.05,
        maximize = false, step_sizes = { 1e-06, 50 } }, { "prev", "step", "step_size" } },
    { "ASGD", {}, { alpha = 0.75, lambd = 0.0001, lr = 0.01, maximize = false, t0 = 1000000.0,
        weight_decay = 0 }, { "ax", "eta", "mu", "step" } },
    { "ASGD", { lr = 0.05, t0 = 1 }, { alpha = 0.75, lambd = 0.0001, lr = 0.05, maximize = false,
        t0 = 1, weight_decay = 0 }, { "ax", "eta", "mu", "step" } },
    -- NAdam and RAdam also have maximize = false (PyTorch 2's; docs/API.md)
    { "NAdam", {}, { betas = { 0.9, 0.999 }, eps = 1e-08, lr = 0.002, momentum_decay = 0.004,
        weight_decay = 0, maximize = false }, { "exp_avg", "exp_avg_sq", "mu_product", "step" } },
    { "NAdam", { lr = 0.01, momentum_decay = 0.005 }, { betas = { 0.9, 0.999 }, eps = 1e-08,
        lr = 0.01, momentum_decay = 0.005, weight_decay = 0, maximize = false },
        { "exp_avg", "exp_avg_sq", "mu_product", "step" } },
    { "RAdam", {}, { betas = { 0.9, 0.999 }, eps = 1e-08, lr = 0.001, weight_decay = 0,
        maximize = false }, { "exp_avg", "exp_avg_sq", "step" } },
    { "RAdam", { lr = 0.01, weight_decay = 0.1 }, { betas = { 0.9, 0.999 }, eps = 1e-08,
        lr = 0.01, weight_decay = 0.1, maximize = false }, { "exp_avg", "exp_avg_sq", "step" } },
    { "SparseAdam", {}, { betas = { 0.9, 0.999 }, eps = 1e-08, lr = 0.001, maximize = false } },
    { "SparseAdam", { lr = 0.01, betas = { 0.8, 0.9 } }, { betas = { 0.8, 0.9 }, eps = 1e-08,
        lr = 0.01, maximize = false } },
    { "LBFGS", {}, { history_size = 100, lr = 1, max_eval = 25, max_iter = 20,
        tolerance_change = 1e-09, tolerance_grad = 1e-07 },
        { "H_diag", "al", "d", "func_evals", "n_iter", "old_dirs", "old_stps",
            "prev_flat_grad", "prev_loss", "ro", "t" } },
    { "LBFGS", { lr = 0.5, history_size = 5, line_search_fn = "strong_wolfe" },
        { history_size = 5, line_search_fn = "strong_wolfe", lr = 0.5, max_eval = 25,
            max_iter = 20, tolerance_change = 1e-09, tolerance_grad = 1e-07 },
        { "H_diag", "al", "d", "func_evals", "n_iter", "old_dirs", "old_stps",
            "prev_flat_grad", "prev_loss", "ro", "t" } },
}

-- tide's own bookkeeping in opt.state[p] (the device and dtype the state was made for)
local TIDE_STATE = { device = true, dtype = true }

describe("optimizers' attributes as PyTorch 1.13's", function()
    for ci, case in ipairs(OPT) do
        local name, kw, want, state = case[1], case[2], case[3], case[4]
        it(name .. " #" .. ci .. ": defaults, param_groups, state, state_dict", function()
            local ps = params()
            local o = optim[name](ps, kw)
            assert.is_true(close(o.defaults, want))
            local g = {}
            for k, v in pairs(o.param_groups[1]) do if k ~= "params" then g[k] = v end end
            assert.is_true(close(g, want))
            assert.are.equal(ps[1], o.param_groups[1].params[1])
            if name == "SparseAdam" then return end -- stepped by spec/sparse's embedding tests
            local function closure()
                o:zero_grad()
                local loss = (ps[1] * tide.tensor({ 0.3, -0.7 })):sum() +
                    (ps[2] * tide.tensor({ { 0.2, 0.1 } })):sum() + (ps[1] ^ 2):sum()
                loss:backward()
                return loss
            end
            if name == "LBFGS" then o:step(closure) else closure(); o:step() end
            local keys = {}
            for k in pairs(o.state[ps[1]] or {}) do
                if not TIDE_STATE[k] then keys[#keys + 1] = k end
            end
            table.sort(keys)
            assert.are.same(state, keys)
            local sd = o:state_dict()
            assert.are.same({ 1, 2 }, sd.param_groups[1].params) -- 1-based (docs/API.md)
            for k, v in pairs(want) do
                if k ~= "line_search_fn" then -- pending below
                    assert.is_true(close(sd.param_groups[1][k], v), k)
                end
            end
            -- LBFGS keeps one state, under the first parameter; SGD's without momentum: pending
            if name ~= "LBFGS" and o.param_groups[1].momentum ~= 0 then
                for i = 1, 2 do assert.are.equal("table", type(sd.state[i])) end
            end
        end)
    end
    pending("capturable/differentiable/fused = false in defaults and groups (SGD, Adam, AdamW, " ..
        "RMSprop): docs/API.md says tide checks and drops them, not kept in the groups")
    pending("foreach = None in defaults: a Lua table cannot hold nil")
    pending("state step (and ASGD's eta/mu, NAdam's mu_product, LBFGS's H_diag) a 0-d tensor " ..
        "in PyTorch 1.13: tide keeps Lua numbers (Cls.scalar_state, docs/API.md)")
    pending("SGD without momentum: PyTorch's state_dict()['state'][i] is {momentum_buffer = " ..
        "None} ({} in Lua); tide's sd.state[i] is nil after a step (docs/API.md says {})")
    pending("LBFGS state_dict()'s param_groups[1].line_search_fn = 'strong_wolfe': nil in " ..
        "tide's state_dict view (a string has no tensor form)")
    pending("opt.state[p] also holds tide's device/dtype bookkeeping, which PyTorch's lacks")
end)

-- PyTorch 1.13's public attributes, get_last_lr() after 0 and 3 steps (SGD lr = 0.1; CyclicLR
-- and OneCycleLR with momentum = 0.9), and state_dict keys (less verbose and
-- _get_lr_called_within_step, pending below)
local SCH = {
    { "StepLR", function(o) return L.StepLR(o, 2, 0.5) end,
        { base_lrs = { 0.1 }, gamma = 0.5, step_size = 2, verbose = false }, { 0.1 }, { 0.05 },
        { "_last_lr", "_step_count", "base_lrs", "gamma", "last_epoch", "step_size" } },
    { "MultiStepLR", function(o) return L.MultiStepLR(o, { 1, 3 }, 0.5) end,
        { base_lrs = { 0.1 }, gamma = 0.5, verbose = false }, { 0.1 }, { 0.025 },
        { "_last_lr", "_step_count", "base_lrs", "gamma", "last_epoch", "milestones" } },
    { "ConstantLR", function(o) return L.ConstantLR(o) end,
        { base_lrs = { 0.1 }, factor = 0.3333333333333333, total_iters = 5, verbose = false },
        { 0.03333333333333333 }, { 0.03333333333333333 },
        { "_last_lr", "_step_count", "base_lrs", "factor", "last_epoch", "total_iters" } },
    { "LinearLR", function(o) return L.LinearLR(o) end,
        { base_lrs = { 0.1 }, end_factor = 1.0, start_factor = 0.3333333333333333,
            total_iters = 5, verbose = false }, { 0.03333333333333333 }, { 0.07333333333333335 },
        { "_last_lr", "_step_count", "base_lrs", "end_factor", "last_epoch", "start_factor",
            "total_iters" } },
    { "ExponentialLR", function(o) return L.ExponentialLR(o, 0.9) end,
        { base_lrs = { 0.1 }, gamma = 0.9, verbose = false }, { 0.1 }, { 0.07290000000000002 },
        { "_last_lr", "_step_count", "base_lrs", "gamma", "last_epoch" } },
    { "CosineAnnealingLR", function(o) return L.CosineAnnealingLR(o, 10, 0.01) end,
        { T_max = 10, base_lrs = { 0.1 }, eta_min = 0.01, verbose = false }, { 0.1 },
        { 0.08145033635316129 },
        { "T_max", "_last_lr", "_step_count", "base_lrs", "eta_min", "last_epoch" } },
    { "ReduceLROnPlateau", function(o) return L.ReduceLROnPlateau(o, { patience = 1 }) end,
        { cooldown = 0, cooldown_counter = 0, eps = 1e-08, factor = 0.1, min_lrs = { 0 },
            mode = "min", mode_worse = math.huge, num_bad_epochs = 0, patience = 1,
            threshold = 0.0001, threshold_mode = "rel", verbose = false }, nil,
        { 0.010000000000000002 },
        { "_last_lr", "best", "cooldown", "cooldown_counter", "eps", "factor", "last_epoch",
            "min_lrs", "mode", "mode_worse", "num_bad_epochs", "patience", "threshold",
            "threshold_mode", "verbose" }, { best = 1.0 } },
    { "CyclicLR", function(o) return L.CyclicLR(o, 0.01, 0.1, { step_size_up = 2 }) end,
        { base_lrs = { 0.01 }, base_momentums = { 0.8 }, cycle_momentum = true, gamma = 1.0,
            max_lrs = { 0.1 }, max_momentums = { 0.9 }, mode = "triangular",
            scale_mode = "cycle", step_ratio = 0.5, total_size = 4.0, verbose = false },
        { 0.01 }, { 0.05500000000000001 }, { "_last_lr", "_step_count", "base_lrs",
            "last_epoch" } },
    { "OneCycleLR", function(o) return L.OneCycleLR(o, 0.1, { total_steps = 10 }) end,
        { base_lrs = { 0.004 }, cycle_momentum = true, total_steps = 10, use_beta1 = false,
            verbose = false }, { 0.0040000000000000036 }, { 0.09504846320134738 },
        { "_last_lr", "_step_count", "base_lrs", "last_epoch", "total_steps" } },
    { "CosineAnnealingWarmRestarts",
        function(o) return L.CosineAnnealingWarmRestarts(o, 2, 2, 0.001) end,
        { T_0 = 2, T_mult = 2, base_lrs = { 0.1 }, eta_min = 0.001, verbose = false }, { 0.1 },
        { 0.0855017856687341 }, { "T_0", "T_cur", "T_i", "T_mult", "_last_lr", "_step_count",
            "base_lrs", "eta_min", "last_epoch" }, { T_cur = 1, T_i = 4 }, { T_cur = 0, T_i = 2 } },
    { "LambdaLR", function(o) return L.LambdaLR(o, function(e) return 0.5 ^ e end) end,
        { base_lrs = { 0.1 }, verbose = false }, { 0.1 }, { 0.0125 },
        { "_last_lr", "_step_count", "base_lrs", "last_epoch" } },
    { "MultiplicativeLR", function(o) return L.MultiplicativeLR(o, function() return 0.9 end) end,
        { base_lrs = { 0.1 }, verbose = false }, { 0.1 }, { 0.07290000000000002 },
        { "_last_lr", "_step_count", "base_lrs", "last_epoch" } },
    { "PolynomialLR", function(o) return L.PolynomialLR(o, 4, 2.0) end,
        { base_lrs = { 0.1 }, power = 2.0, total_iters = 4, verbose = false }, { 0.1 },
        { 0.0062499999999999995 },
        { "_last_lr", "_step_count", "base_lrs", "last_epoch", "power", "total_iters" } },
    { "SequentialLR", function(o)
        return L.SequentialLR(o, { L.ConstantLR(o, 0.5, 2), L.ExponentialLR(o, 0.9) }, { 2 })
    end, {}, { 0.05 }, { 0.09000000000000001 },
        { "_last_lr", "_milestones", "_schedulers", "last_epoch" } },
    { "ChainedScheduler", function(o)
        return L.ChainedScheduler({ L.ConstantLR(o, 0.5, 2), L.ExponentialLR(o, 0.9) })
    end, {}, { 0.05 }, { 0.07290000000000002 }, { "_last_lr", "_schedulers" }, {} },
}

describe("lr schedulers' attributes as PyTorch 1.13's", function()
    for _, case in ipairs(SCH) do
        local name, make, attrs, lr0, lr3, sd_keys, after3, before =
            (table.unpack or unpack)(case) -- luacheck: ignore
        it(name .. ": attributes, get_last_lr after 0 and 3 steps, state_dict keys", function()
            local mom = name == "CyclicLR" or name == "OneCycleLR"
            local o = optim.SGD(params(), { lr = 0.1, momentum = mom and 0.9 or 0 })
            local s = make(o)
            for k, v in pairs(attrs) do assert.is_true(close(s[k], v), k) end
            for k, v in pairs(before or {}) do assert.is_true(close(s[k], v), k) end
            if name ~= "ChainedScheduler" then assert.are.equal(0, s.last_epoch) end
            if lr0 then assert.is_true(close(s:get_last_lr(), lr0)) end
            for _ = 1, 3 do
                o:step()
                if name == "ReduceLROnPlateau" then s:step(1.0) else s:step() end
            end
            for k, v in pairs(attrs) do assert.is_true(close(s[k], v), k) end
            for k, v in pairs(after3 or {}) do assert.is_true(close(s[k], v), k) end
            if name ~= "ChainedScheduler" then assert.are.equal(3, s.last_epoch) end
            local got = name == "ReduceLROnPlateau" and { o.param_groups[1].lr } or s:get_last_lr()
            assert.is_true(close(got, lr3))
            local sd = s:state_dict()
            for _, k in ipairs(sd_keys) do assert.is_not_nil(sd[k], k) end
        end)
    end
    it("CyclicLR.mode and OneCycleLR.anneal_func, which its steps read", function()
        local o = optim.SGD(params(), { lr = 0.1, momentum = 0.9 })
        local c = L.CyclicLR(o, 0.01, 0.1, { mode = "exp_range", gamma = 0.9 })
        assert.are.equal("exp_range", c.mode)
        o = optim.SGD(params(), { lr = 0.1, momentum = 0.9 })
        local s = L.OneCycleLR(o, 0.1, { total_steps = 10, anneal_strategy = "linear" })
        -- PyTorch's _annealing_linear(start, end, pct)
        assert.are.equal(0.5 * (0.1 - 0.004) + 0.004, s.anneal_func(0.004, 0.1, 0.5))
        s.anneal_func = function(a) return a end -- PyTorch's steps call self.anneal_func
        o:step(); s:step()
        assert.are.equal(0.004, s:get_last_lr()[1])
    end)
    pending("verbose and _get_lr_called_within_step in every LRScheduler's state_dict(): " ..
        "tide's holds neither (both accepted on load)")
    pending("MultiStepLR.milestones is PyTorch's Counter {[1] = 1, [3] = 1}; tide's a sorted " ..
        "list {1, 3} (a Counter table is accepted on load)")
    pending("CyclicLR/OneCycleLR state_dict: PyTorch's option keys (max_lrs, mode, gamma, " ..
        "total_size, _scale_fn_ref, anneal_func, use_beta1, ...); tide keeps the epoch only " ..
        "and takes them on load")
    pending("LambdaLR/MultiplicativeLR state_dict 'lr_lambdas' ([None] for a plain function): " ..
        "nil in Lua")
end)
