-- parity2_optim_spec.lua — issue 27, optim: SequentialLR, ReduceLROnPlateau,
-- CosineAnnealingWarmRestarts (step with and without a fractional epoch) and ChainedScheduler
-- against PyTorch 1.13's lr sequences; scheduler state dicts of numbers (PyTorch's own load,
-- every value's type is checked); Adam/AdamW amsgrad. Values from PyTorch 1.13 (Debian's
-- python3-torch) in spec/fixtures/parity2_optim_torch.lua, made by make_parity2_optim.py.
local tide = require("tide")
local optim = require("tide.optim")
local autograd = require("tide.autograd")
local S = optim.lr_scheduler
local REF = dofile("spec/fixtures/parity2_optim_torch.lua")

local function err_of(f, ...)
    local ok, err = pcall(f, ...)
    assert.is_false(ok, "expected an error")
    assert.is_string(err)
    assert.matches("parity2_optim_spec%.lua:%d+: tide: ", err)
    return err
end

local function close(got, want, tol, what)
    assert.are.equal(#want, #got, what)
    for i = 1, #want do
        if math.abs(got[i] - want[i]) > tol * math.max(1, math.abs(want[i])) then
            error(string.format("%s element %d: got %.17g, expected %.17g", what or "", i, got[i],
                want[i]), 2)
        end
    end
end

-- SGD over two groups, lr 0.1 and 0.01 (the fixture's optimizer)
local function sgd()
    local p1 = tide.zeros({ 2 }, { requires_grad = true })
    local p2 = tide.zeros({ 2 }, { requires_grad = true })
    return optim.SGD({ { params = { p1 } }, { params = { p2 }, lr = 0.01 } },
        { lr = 0.1, momentum = 0.9 })
end

-- the fixture's schedulers, built as make_parity2_optim.py builds them
local BUILD = {
    sequential_linear_cosine = function(o)
        return S.SequentialLR(o, { S.LinearLR(o, { start_factor = 0.1, total_iters = 4 }),
            S.CosineAnnealingLR(o, { T_max = 6, eta_min = 0.001 }) }, { 5 })
    end,
    sequential_three = function(o)
        return S.SequentialLR(o, { S.ExponentialLR(o, { gamma = 0.9 }),
            S.StepLR(o, { step_size = 3, gamma = 0.5 }),
            S.MultiStepLR(o, { milestones = { 2, 4, 4 } }) }, { 6, 15 })
    end,
    sequential_lambda_linear = function(o)
        return S.SequentialLR(o, { S.LambdaLR(o, { lr_lambda = function(e)
            return 0.5 ^ e + 0.25
        end }), S.LinearLR(o, { start_factor = 0.5, end_factor = 1.0, total_iters = 3 }) }, { 4 })
    end,
    sequential_warm_restarts = function(o)
        return S.SequentialLR(o, { S.LinearLR(o, { start_factor = 0.25, total_iters = 3 }),
            S.CosineAnnealingWarmRestarts(o, 4, { T_mult = 2, eta_min = 0.0005 }) }, { 3 })
    end,
    plateau = function(o)
        return S.ReduceLROnPlateau(o, { patience = 2 })
    end,
    plateau_max_abs_cooldown = function(o)
        return S.ReduceLROnPlateau(o, { mode = "max", factor = 0.5, patience = 1,
            threshold = 0.01, threshold_mode = "abs", cooldown = 2, min_lr = { 0.02, 0.004 } })
    end,
    plateau_eps = function(o)
        return S.ReduceLROnPlateau(o, { factor = 0.2, patience = 0, eps = 0.001, threshold = 0 })
    end,
    warm_restarts = function(o)
        return S.CosineAnnealingWarmRestarts(o, 5)
    end,
    warm_restarts_mult = function(o)
        return S.CosineAnnealingWarmRestarts(o, 3, { T_mult = 2, eta_min = 0.001 })
    end,
    warm_restarts_fractional = function(o)
        return S.CosineAnnealingWarmRestarts(o, 2, { T_mult = 2 })
    end,
    warm_restarts_fractional_mult1 = function(o)
        return S.CosineAnnealingWarmRestarts(o, 3, { eta_min = 0.002 })
    end,
    chained = function(o)
        return S.ChainedScheduler({ S.LinearLR(o, { start_factor = 0.5, total_iters = 3 }),
            S.ExponentialLR(o, { gamma = 0.9 }) })
    end,
    chained_three = function(o)
        return S.ChainedScheduler({ S.StepLR(o, { step_size = 4, gamma = 0.5 }),
            S.LinearLR(o, { start_factor = 0.25, total_iters = 5 }),
            S.MultiStepLR(o, { milestones = { 7, 7, 20 }, gamma = 0.8 }) })
    end,
    onecycle = function(o)
        return S.OneCycleLR(o, { max_lr = { 1.0, 0.1 }, total_steps = 30 })
    end,
}

-- step k (1-based) of case `name`: a metric, a (fractional) epoch or a plain step
local function advance(name, s, k)
    local case = REF.schedules[name]
    if name:match("^plateau") then
        s:step(REF.metrics[k])
    elseif case.epochs and case.epochs[k] ~= false then
        s:step(case.epochs[k])
    else
        s:step()
    end
end

local function group_lrs(o)
    return { o.param_groups[1].lr, o.param_groups[2].lr }
end

describe("new lr schedulers match PyTorch 1.13 over 30 steps (issue 27)", function()
    for name in pairs(BUILD) do
        it(name, function()
            local case = REF.schedules[name]
            local o = sgd()
            local s = BUILD[name](o)
            close(group_lrs(o), case.lrs[1], 1e-13, name .. " at construction")
            for k = 1, REF.steps do
                advance(name, s, k)
                close(s:get_last_lr(), case.lrs[k + 1], 1e-13, name .. " step " .. k)
                close(group_lrs(o), case.lrs[k + 1], 1e-13, name .. " groups, step " .. k)
            end
        end)
    end
end)

describe("scheduler state dicts (issue 27)", function()
    -- runs `name` to the fixture's step AT, and a fresh scheduler over a fresh optimizer
    local function at_checkpoint(name)
        local o = sgd()
        local s = BUILD[name](o)
        for k = 1, REF.at do
            advance(name, s, k)
        end
        local o2 = sgd()
        return o, s, o2, BUILD[name](o2)
    end

    local function resumes(name, o2, s2)
        local case = REF.schedules[name]
        for k = REF.at + 1, REF.steps do
            advance(name, s2, k)
            close(group_lrs(o2), case.lrs[k + 1], 1e-13, name .. " resumed, step " .. k)
        end
    end

    it("hold numbers and lists of numbers, and resume the schedule", function()
        for name in pairs(BUILD) do
            local o, s, o2, s2 = at_checkpoint(name)
            local sd = s:state_dict()
            if not name:match("^chained") then -- PyTorch's ChainedScheduler keeps no epoch
                assert.are.equal("number", type(sd.last_epoch), name)
            end
            assert.are.equal("table", type(sd._last_lr), name)
            assert.are.equal("number", type(sd._last_lr[1]), name)
            if sd._schedulers then
                assert.are.equal("number", type(sd._schedulers[1].last_epoch))
                assert.are.equal("number", type(sd._schedulers[1].base_lrs[2]))
            end
            s2:load_state_dict(sd)
            o2:load_state_dict(o:state_dict())
            -- the state dict is a copy: stepping s leaves it as it was
            local last = sd._last_lr[1]
            advance(name, s, REF.at + 1)
            assert.are.equal(last, sd._last_lr[1])
            resumes(name, o2, s2)
        end
    end)

    it("load PyTorch's state dict written as a Lua table", function()
        for name in pairs(BUILD) do
            local case = REF.schedules[name]
            local _, _, o2, s2 = at_checkpoint(name)
            s2:load_state_dict(case.sd)
            for i, g in ipairs(o2.param_groups) do
                g.lr = case.sd_lrs[i]
            end
            resumes(name, o2, s2)
        end
    end)

    it("save with tide.save through lr_scheduler.to_tensors", function()
        local path = os.tmpname()
        for name in pairs(BUILD) do
            local o, s, o2, s2 = at_checkpoint(name)
            tide.save(path, S.to_tensors(s:state_dict()))
            s2:load_state_dict(tide.load(path))
            o2:load_state_dict(o:state_dict())
            resumes(name, o2, s2)
        end
        os.remove(path)
        local flat = S.to_tensors(BUILD.sequential_three(sgd()):state_dict())
        assert.are.equal("int64", flat["_schedulers.3.milestones"].dtype)
        assert.are.equal("float64", flat["_schedulers.1.gamma"].dtype)
        local r = S.to_tensors(BUILD.plateau(sgd()):state_dict())
        assert.are.same({ 109, 105, 110 }, r.mode:totable()) -- "min"
        assert.matches("lr_scheduler.to_tensors: 'f' is a function, which has no tensor form",
            err_of(S.to_tensors, { f = print }))
    end)

    it("keep integers and floats apart through tide.save #lua53", function()
        local path = os.tmpname()
        for _, name in ipairs({ "warm_restarts_fractional", "warm_restarts_mult" }) do
            local _, s, _, s2 = at_checkpoint(name)
            tide.save(path, S.to_tensors(s:state_dict()))
            local saved = tide.load(path)
            assert.are.equal(math.type(s.T_cur) == "float" and "float64" or "int64",
                saved.T_cur.dtype)
            s2:load_state_dict(saved)
            assert.are.equal("integer", math.type(s2.last_epoch))
            assert.are.equal(math.type(s.T_cur), math.type(s2.T_cur))
        end
        os.remove(path)
    end)

    -- sd with one value replaced must not load: the error names the key, nothing changes
    local function rejects(s, sd, pattern)
        local before = s:state_dict()
        local err = err_of(function() s:load_state_dict(sd) end)
        assert.matches(pattern, err)
        assert.are.same(before, s:state_dict())
    end

    local function with(sd, key, value)
        local out = {}
        for k, v in pairs(sd) do
            out[k] = v
        end
        out[key] = value
        return out
    end

    it("check every value's type and name the key", function()
        local o = sgd()
        local s = S.StepLR(o, { step_size = 2, gamma = 0.5 })
        s:step()
        local sd = s:state_dict()
        rejects(s, with(sd, "last_epoch", {}), "tide: StepLR:load_state_dict: 'last_epoch' " ..
            "must be an integer, got a table; pass the state dict sched:state_dict%(%) gave")
        rejects(s, with(sd, "last_epoch", 2.5), "'last_epoch' must be an integer, got 2%.5")
        rejects(s, with(sd, "gamma", { 0.5 }), "'gamma' must be a number, got a table")
        rejects(s, with(sd, "gamma", 0 / 0), "'gamma' must be a number, got nan")
        rejects(s, with(sd, "base_lrs", 0.1), "'base_lrs' must be a list of 2 numbers %(one " ..
            "per parameter group%), got a number")
        rejects(s, with(sd, "base_lrs", { 0.1 }), "'base_lrs' must be a list of 2 numbers " ..
            "%(one per parameter group%), got a list of 1")
        rejects(s, with(sd, "_last_lr", { 0.1, "x" }), "'_last_lr' must be a list of 2 " ..
            "numbers %(one per parameter group%), got a string at position 2")
        rejects(s, with(sd, "_last_lr", { 0.1, { 0.2 } }), "'_last_lr' .* got a table at " ..
            "position 2")
        rejects(s, with(sd, "step_size", tide.zeros({ 2 }, { dtype = "int64" })),
            "'step_size' must be an integer, got a table")
        rejects(s, with(sd, "step_size", nil), "StepLR:load_state_dict: the state dict lacks " ..
            "'step_size'")
        rejects(s, with(sd, "step", 3), "StepLR:load_state_dict: unexpected key 'step'; a " ..
            "StepLR state dict has last_epoch, _step_count, base_lrs, _last_lr, step_size, gamma")
        rejects(s, 3, "StepLR:load_state_dict: expected a state dict")
        -- PyTorch's own keys are taken (and skipped where tide has no use for them)
        s:load_state_dict(with(with(sd, "verbose", false), "_get_lr_called_within_step", false))

        local m = S.MultiStepLR(o, { milestones = { 3, 5 } })
        rejects(m, with(m:state_dict(), "milestones", { 3, 5.5 }),
            "MultiStepLR:load_state_dict: 'milestones' must be a list of integers, got 5%.5 " ..
            "at position 2")
        rejects(m, with(m:state_dict(), "milestones", { [2] = 1 }),
            "'milestones' must be a list of integers, got a table with the key 2, not a list")

        local r = S.ReduceLROnPlateau(o)
        r:step(1.0)
        local rsd = r:state_dict()
        assert.are.equal(math.huge, rsd.mode_worse)
        rejects(r, with(rsd, "mode", "median"), 'ReduceLROnPlateau:load_state_dict: mode = ' ..
            'median; expected "min" or "max"')
        rejects(r, with(rsd, "best", {}), "'best' must be a number, got a table")
        rejects(r, with(rsd, "patience", "2"), "'patience' must be an integer, got a string")
        rejects(r, with(rsd, "min_lrs", { 0 }), "'min_lrs' must be a list of 2 numbers")
        rejects(r, with(rsd, "verbose", 1), "'verbose' must be a boolean, got a number")

        local c = S.CosineAnnealingWarmRestarts(o, 3)
        rejects(c, with(c:state_dict(), "T_cur", {}), "CosineAnnealingWarmRestarts:" ..
            "load_state_dict: 'T_cur' must be a number, got a table")
    end)

    it("SequentialLR and ChainedScheduler check every scheduler's part before loading any",
        function()
            local o = sgd()
            local s = BUILD.sequential_three(o)
            for k = 1, 8 do
                advance("sequential_three", s, k)
            end
            local sd = s:state_dict()
            local bad = with(sd, "_schedulers", { sd._schedulers[1], sd._schedulers[2],
                with(sd._schedulers[3], "gamma", {}) })
            rejects(s, bad, "MultiStepLR:load_state_dict: 'gamma' must be a number, got a table")
            rejects(s, with(sd, "_schedulers", { sd._schedulers[1] }), "SequentialLR:" ..
                "load_state_dict: '_schedulers' must be a list of 3 state dicts %(one per " ..
                "scheduler%), got a list of 1")
            rejects(s, with(sd, "_milestones", { 6 }), "SequentialLR:load_state_dict: " ..
                "'_milestones' has 1 entries; this SequentialLR has 2")
            rejects(s, with(sd, "last_epoch", "8"), "SequentialLR:load_state_dict: " ..
                "'last_epoch' must be an integer, got a string")
            local c = BUILD.chained(o)
            local csd = c:state_dict()
            rejects(c, with(csd, "_schedulers", { csd._schedulers[1],
                with(csd._schedulers[2], "last_epoch", {}) }),
                "ExponentialLR:load_state_dict: 'last_epoch' must be an integer, got a table")
        end)
end)

describe("new lr schedulers reject bad arguments at the caller's line (issue 27)", function()
    it("SequentialLR, ChainedScheduler, CosineAnnealingWarmRestarts, ReduceLROnPlateau",
        function()
            local o, other = sgd(), sgd()
            local a = S.ExponentialLR(o, { gamma = 0.9 })
            local b = S.StepLR(other, { step_size = 2 })
            assert.matches("SequentialLR: scheduler 2 belongs to another optimizer than the " ..
                "one given", err_of(S.SequentialLR, o, { a, b }, { 3 }))
            assert.matches("SequentialLR: expected 1 milestone %(one fewer than the 2 " ..
                "schedulers%), got 2", err_of(S.SequentialLR, o, { a, a }, { 3, 4 }))
            assert.matches("SequentialLR: milestone 2 is 2; expected increasing integer epochs",
                err_of(S.SequentialLR, o, { a, a, a }, { 3, 2 }))
            assert.matches("SequentialLR: expected a list of schedulers",
                err_of(S.SequentialLR, o, a, {}))
            assert.matches("SequentialLR: scheduler 2 %(ReduceLROnPlateau%) cannot be sequenced",
                err_of(S.SequentialLR, o, { a, S.ReduceLROnPlateau(o) }, { 3 }))
            assert.matches("ChainedScheduler: scheduler 2 belongs to another optimizer than " ..
                "scheduler 1", err_of(S.ChainedScheduler, { a, b }))
            assert.matches("CosineAnnealingWarmRestarts: T_0 = 0; expected a positive integer",
                err_of(S.CosineAnnealingWarmRestarts, o, 0))
            assert.matches("CosineAnnealingWarmRestarts: T_0 = table",
                err_of(S.CosineAnnealingWarmRestarts, o, { T_0 = { 3 } }))
            assert.matches("CosineAnnealingWarmRestarts: T_mult = 1.5; expected an integer >= 1",
                err_of(S.CosineAnnealingWarmRestarts, o, 3, { T_mult = 1.5 }))
            assert.matches('CosineAnnealingWarmRestarts: T_0 given twice',
                err_of(S.CosineAnnealingWarmRestarts, o, 3, { T_0 = 3 }))
            local c = S.CosineAnnealingWarmRestarts(o, 3)
            assert.matches("CosineAnnealingWarmRestarts:step: expected an epoch >= 0, got %-1",
                err_of(c.step, c, -1))
            assert.matches("ReduceLROnPlateau: factor = 1; expected a number < 1",
                err_of(S.ReduceLROnPlateau, o, { factor = 1 }))
            assert.matches('ReduceLROnPlateau: mode = avg; expected "min" or "max"',
                err_of(S.ReduceLROnPlateau, o, { mode = "avg" }))
            assert.matches('ReduceLROnPlateau: unknown option "patient"',
                err_of(S.ReduceLROnPlateau, o, { patient = 3 }))
            assert.matches("ReduceLROnPlateau: expected min_lr to be a number or a list of 2 " ..
                "numbers", err_of(S.ReduceLROnPlateau, o, { min_lr = { 0.1 } }))
            local r = S.ReduceLROnPlateau(o)
            assert.matches("ReduceLROnPlateau:step: expected the metric as a number",
                err_of(r.step, r, "0.5"))
            -- a one-element tensor is a metric
            r:step(tide.tensor(0.5, { dtype = "float64" }))
            assert.are.equal(0.5, r.best)
        end)
end)

describe("Adam and AdamW amsgrad match PyTorch 1.13 (issue 27)", function()
    local CLS = { adam_amsgrad = optim.Adam, adam_amsgrad_wd_maximize = optim.Adam,
        adamw_amsgrad = optim.AdamW, adamw_amsgrad_wd = optim.AdamW }

    local function copy(t)
        local r = {}
        for k, v in pairs(t) do
            r[k] = v
        end
        return r
    end

    local function param()
        return tide.tensor({ 1.0, 2.0, -3.0 }, { dtype = "float64" }):requires_grad_(true)
    end

    local function step(o, p, k)
        autograd.set_grad(p, tide.tensor(REF.grads[k], { dtype = "float64" }))
        o:step()
    end

    for name, case in pairs(REF.adam) do
        it(name .. ", and its state dict resumes through tide.save", function()
            local p = param()
            local o = CLS[name]({ p }, copy(case.opts))
            local path = os.tmpname()
            for k = 1, #REF.grads do
                step(o, p, k)
                close(p:totable(), case.steps[k], 1e-12, name .. " step " .. k)
                if k == 4 then
                    tide.save(path, o:state_dict())
                end
            end
            close(o.state[p].max_exp_avg_sq:totable(), case.max_exp_avg_sq, 1e-12, name)
            local q = tide.tensor(case.steps[4], { dtype = "float64" }):requires_grad_(true)
            local o2 = CLS[name]({ q }, copy(case.opts))
            o2:load_state_dict(tide.load(path))
            os.remove(path)
            assert.is_true(tide.is_tensor(o2.state[q].max_exp_avg_sq))
            for k = 5, #REF.grads do
                step(o2, q, k)
            end
            close(q:totable(), case.steps[#REF.grads], 1e-12, name .. " resumed")
        end)
    end

    it("a state without max_exp_avg_sq does not step an amsgrad Adam", function()
        local p = param()
        local o = optim.Adam({ p }, { lr = 0.1 })
        step(o, p, 1)
        local q = param()
        local o2 = optim.Adam({ q }, { lr = 0.1, amsgrad = true })
        local sd = o:state_dict()
        sd["param_groups.1.amsgrad"] = nil
        o2:load_state_dict(sd)
        local before = q:totable()
        assert.matches("Adam: the state of parameter 1: max_exp_avg_sq is missing",
            err_of(step, o2, q, 2))
        assert.are.same(before, q:totable())
        assert.matches("Adam: expected amsgrad to be a boolean, got number",
            err_of(optim.Adam, { q }, { amsgrad = 1 }))
    end)

    it("in float32, as the formula in float64 rounded", function()
        local case = REF.adam.adamw_amsgrad_wd
        local p = tide.tensor({ 1.0, 2.0, -3.0 }, { dtype = "float32" }):requires_grad_(true)
        local o = optim.AdamW({ p }, copy(case.opts))
        for k = 1, #REF.grads do
            autograd.set_grad(p, tide.tensor(REF.grads[k], { dtype = "float32" }))
            o:step()
        end
        close(p:totable(), case.steps[#REF.grads], 1e-5, "float32")
    end)
end)

describe("Adam amsgrad on CUDA (issue 27) #cuda", function()
    it("matches PyTorch 1.13 on cuda:0", function()
        if not tide.cuda.is_available() then
            pending("no CUDA device")
            return
        end
        local case = REF.adam.adam_amsgrad_wd_maximize
        local p = tide.tensor({ 1.0, 2.0, -3.0 }, { dtype = "float64", device = "cuda:0" })
        p:requires_grad_(true)
        local opts = {}
        for k, v in pairs(case.opts) do
            opts[k] = v
        end
        local o = optim.Adam({ p }, opts)
        for k = 1, #REF.grads do
            autograd.set_grad(p, tide.tensor(REF.grads[k], { dtype = "float64", device = "cuda:0" }))
            o:step()
        end
        close(p:cpu():totable(), case.steps[#REF.grads], 1e-12, "cuda")
        assert.are.equal("cuda:0", tostring(o.state[p].max_exp_avg_sq.device))
        close(o.state[p].max_exp_avg_sq:cpu():totable(), case.max_exp_avg_sq, 1e-12, "cuda")
    end)
end)
