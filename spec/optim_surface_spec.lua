-- RMSprop, Adagrad, optimizer state dicts, LR schedulers: values from PyTorch 1.13 (Debian's
-- python3-torch) in spec/fixtures/optim_reference.lua, made by make_optim_reference.py
local tide = require("tide")
local nn = require("tide.nn")
local optim = require("tide.optim")
local autograd = require("tide.autograd")
local S = optim.lr_scheduler
local REF = dofile("spec/fixtures/optim_reference.lua")

local function raises_here(pattern, f, ...)
    local ok, err = pcall(f, ...)
    assert.is_false(ok)
    assert.matches("optim_surface_spec%.lua:%d+: tide: " .. pattern, err)
end

local function close(got, want, tol, what)
    assert.are.equal(#want, #got)
    for i = 1, #want do
        if math.abs(got[i] - want[i]) > (tol or 1e-12) * math.max(1, math.abs(want[i])) then
            error(string.format("%s element %d: got %.17g, expected %.17g", what or "", i, got[i],
                want[i]), 2)
        end
    end
end

local function copy(t)
    local r = {}
    for k, v in pairs(t) do
        r[k] = v
    end
    return r
end

-- p = {1, 2, -3} (float64) on device, the fixture's gradients one step each (a case's own
-- list when it has one)
local function run(cls, opts, device, steps, grads)
    grads = grads or REF.grads
    local p = tide.tensor({ 1.0, 2.0, -3.0 }, { dtype = "float64", device = device })
    p:requires_grad_(true)
    local o = cls({ p }, copy(opts))
    local out = {}
    for k = 1, steps or #grads do
        autograd.set_grad(p, tide.tensor(grads[k], { dtype = "float64", device = device }))
        o:step()
        out[k] = p:cpu():totable()
    end
    return out, o, p
end

describe("RMSprop, Adagrad, Adamax, NAdam, RAdam and Adadelta match PyTorch 1.13", function()
    for name, case in pairs(REF.optimizers) do
        it(name, function()
            local got = run(optim[case.cls], case.opts, nil, nil, case.grads)
            for k, want in ipairs(case.steps) do
                close(got[k], want, 1e-12, name .. " step " .. k)
            end
        end)
    end

    it("on another device and in float32", function()
        local case = REF.optimizers.rmsprop_centered_momentum_maximize
        local got = run(optim.RMSprop, case.opts, "cpu:1")
        close(got[4], case.steps[4], 1e-12)
        local p = tide.tensor({ 1.0, 2.0, -3.0 }, { requires_grad = true })
        local o = optim.Adagrad({ p }, copy(REF.optimizers.adagrad_decay_wd.opts))
        for k = 1, 4 do
            autograd.set_grad(p, tide.tensor(REF.grads[k]))
            o:step()
        end
        close(p:totable(), REF.optimizers.adagrad_decay_wd.steps[4], 1e-6)
    end)

    it("have PyTorch's defaults and reject bad options", function()
        local ps = nn.Linear(2, 2):parameters()
        local r = optim.RMSprop(ps).param_groups[1]
        assert.are.same({ 1e-2, 0.99, 1e-8, 0, 0, false }, { r.lr, r.alpha, r.eps,
            r.weight_decay, r.momentum, r.centered })
        local a = optim.Adagrad(ps).param_groups[1]
        assert.are.same({ 1e-2, 0, 0, 0, 1e-10 }, { a.lr, a.lr_decay, a.weight_decay,
            a.initial_accumulator_value, a.eps })
        raises_here('RMSprop: unknown option "moment" %(did you mean "momentum"%?%)', function()
            return optim.RMSprop(ps, { moment = 0.9 })
        end)
        raises_here("RMSprop: expected alpha >= 0, got %-1", function()
            return optim.RMSprop(ps, { alpha = -1 })
        end)
        raises_here("Adagrad: expected lr_decay >= 0, got %-0.5", function()
            return optim.Adagrad(ps, { lr_decay = -0.5 })
        end)
    end)
end)

describe("add_param_group", function()
    it("adds a group with the optimizer's defaults, its state made as the constructor makes it", function()
        local a, b = tide.nn.Linear(2, 2), tide.nn.Linear(2, 3)
        local opt = tide.optim.SGD(a:parameters(), { lr = 0.1, momentum = 0.9 })
        assert.are.equal(0.1, opt.defaults.lr)
        opt:add_param_group({ params = b:parameters(), lr = 0.01 })
        assert.are.equal(2, #opt.param_groups)
        local g = opt.param_groups[2]
        assert.are.equal(0.01, g.lr)
        assert.are.equal(0.9, g.momentum) -- the constructor's, not the class's 0
        opt:add_param_group({ params = tide.zeros({ 2 }, { requires_grad = true }) }) -- one tensor
        assert.are.equal(0.1, opt.param_groups[3].lr)
        assert.are.equal(1, #opt.param_groups[3].params)
        -- the new groups train
        local w0 = b.weight:clone()
        b(tide.ones({ 1, 2 })):sum():backward()
        opt:step()
        assert.is_true((b.weight - w0):abs():max():item() > 0)
        -- Adagrad: the new parameters get their sums, the old keep theirs
        local ada = tide.optim.Adagrad(a:parameters(), { initial_accumulator_value = 0.5 })
        local sum_before = ada:state_of(a.weight).sum
        sum_before:fill_(7)
        ada:add_param_group({ params = b:parameters() })
        assert.are.equal(7, ada:state_of(a.weight).sum:max():item())
        assert.are.equal(0.5, ada:state_of(b.weight).sum:max():item())
    end)

    it("leaves a group added after a scheduler to its own lr, as PyTorch's zip does", function()
        local S = tide.optim.lr_scheduler
        local makers = {
            function(o) return S.StepLR(o, { step_size = 1, gamma = 0.5 }) end,
            function(o) return S.LambdaLR(o, function(e) return 0.5 ^ e end) end,
            function(o) return S.MultiplicativeLR(o, function() return 0.5 end) end,
            function(o) return S.CosineAnnealingLR(o, { T_max = 4 }) end,
            function(o) return S.OneCycleLR(o, { max_lr = 0.2, total_steps = 10 }) end,
            function(o) return S.CosineAnnealingWarmRestarts(o, 2) end,
        }
        for k, make in ipairs(makers) do
            local a, b = tide.nn.Linear(2, 2), tide.nn.Linear(2, 2)
            local opt = tide.optim.SGD(a:parameters(), { lr = 0.1, momentum = 0.9 })
            local s = make(opt)
            opt:add_param_group({ params = b:parameters(), lr = 0.03 })
            for _ = 1, 3 do
                opt:step()
                s:step()
            end
            assert.are.equal(0.03, opt.param_groups[2].lr, "scheduler " .. k)
            assert.are.equal(1, #s:get_last_lr(), "scheduler " .. k)
            assert.are.equal(opt.param_groups[1].lr, s:get_last_lr()[1], "scheduler " .. k)
            assert.are.equal(2, #opt.param_groups)
        end
    end)

    it("refuses a parameter twice, a bad option or LBFGS, and leaves the optimizer as it was", function()
        local a, b = tide.nn.Linear(2, 2), tide.nn.Linear(2, 2)
        local opt = tide.optim.SGD(a:parameters(), { lr = 0.1 })
        local function err(f)
            local ok, e = pcall(f)
            assert.is_false(ok)
            return e
        end
        assert.matches("tide: SGD:add_param_group: parameter 1 is already in a parameter group",
            err(function() opt:add_param_group({ params = { a.bias } }) end), 1, true)
        assert.matches("tide: SGD:add_param_group: expected lr >= 0, got -1",
            err(function() opt:add_param_group({ params = b:parameters(), lr = -1 }) end), 1, true)
        assert.matches("tide: SGD: nesterov needs momentum > 0",
            err(function() opt:add_param_group({ params = b:parameters(), nesterov = true }) end),
            1, true)
        assert.matches("tide: SGD:add_param_group: the group has no params",
            err(function() opt:add_param_group({ lr = 0.1 }) end), 1, true)
        assert.matches("tide: SGD:add_param_group: expected a table such as {params = ",
            err(function() opt:add_param_group(b.weight) end), 1, true)
        assert.are.equal(1, #opt.param_groups)
        opt:add_param_group({ params = b:parameters() }) -- b is still free
        assert.are.equal(2, #opt.param_groups)
        local lbfgs = tide.optim.LBFGS(a:parameters())
        assert.matches("tide: LBFGS:add_param_group: parameter groups are not supported",
            err(function() lbfgs:add_param_group({ params = b:parameters() }) end), 1, true)
    end)
end)

describe("optimizer state_dict", function()
    local path = os.tmpname()
    after_each(function()
        os.remove(path)
    end)

    -- two steps, save through tide.save on cpu, resume on `dev`: the next two steps match an
    -- uninterrupted run
    local function resume(cls, opts, dev)
        local full = run(cls, opts, "cpu")
        local _, o = run(cls, opts, "cpu", 2)
        tide.save(path, o:state_dict())
        local p = tide.tensor(full[2], { dtype = "float64", device = dev })
        p:requires_grad_(true)
        local o2 = cls({ p }, { lr = 12345 }) -- the state dict brings the hyperparameters
        o2:load_state_dict(tide.load(path))
        for k = 3, 4 do
            autograd.set_grad(p, tide.tensor(REF.grads[k], { dtype = "float64", device = dev }))
            o2:step()
        end
        assert.are.equal(dev, tostring(p.device))
        close(p:cpu():totable(), full[4], 1e-15)
        return o2, p
    end

    local SCALAR_OPTS = { lr = 0.05, momentum = 0.9, weight_decay = 0.01, nesterov = true }
    it("resumes each optimizer on cpu:1 identically", function()
        resume(optim.SGD, SCALAR_OPTS, "cpu:1")
        resume(optim.Adam, { lr = 0.1, betas = { 0.8, 0.9 } }, "cpu:1")
        resume(optim.AdamW, { lr = 0.1 }, "cpu:1")
        resume(optim.RMSprop, REF.optimizers.rmsprop_centered_momentum_maximize.opts, "cpu:1")
        local o, p = resume(optim.Adagrad, REF.optimizers.adagrad_decay_wd.opts, "cpu:1")
        assert.are.equal("cpu:1", tostring(o.state[p].sum.device))
        assert.are.equal(4, o.state[p].step)
        for _, name in ipairs({ "adamax_wd_maximize", "nadam_wd", "radam", "adadelta" }) do
            local case = REF.optimizers[name]
            o, p = resume(optim[case.cls], case.opts, "cpu:1")
            assert.are.equal(4, o.state[p].step)
        end
        assert.is_true(math.abs(o.state[p].acc_delta:sum():item()) > 0)
    end)

    it("has PyTorch's layout, flattened into names", function()
        local _, o = run(optim.Adam, { lr = 0.1 }, "cpu", 2)
        local sd = o:state_dict()
        assert.are.equal(2, sd["state.1.step"]:item())
        assert.are.same({ 3 }, sd["state.1.exp_avg"].shape)
        assert.are.same({ 1 }, sd["param_groups.1.params"]:totable())
        assert.are.equal(0.1, sd["param_groups.1.lr"]:item())
        assert.are.same({ 0.9, 0.999 }, sd["param_groups.1.betas"]:totable())
        assert.is_false(sd["param_groups.1.maximize"]:item())
        assert.is_nil(sd["state.1.device"])
    end)

    it("keeps groups apart and refuses a state dict of other groups, changing nothing", function()
        local a, b = nn.Linear(2, 2), nn.Linear(2, 1)
        local o = optim.SGD({ { params = a:parameters() }, { params = b:parameters(), lr = 0.5 } },
            { lr = 0.1, momentum = 0.9 })
        local sd = o:state_dict()
        assert.are.same({ 3, 4 }, sd["param_groups.2.params"]:totable())
        assert.are.equal(0.5, sd["param_groups.2.lr"]:item())
        local one = optim.SGD(a:parameters(), { lr = 0.3 })
        raises_here("SGD:load_state_dict: the state dict has parameter group 2, the optimizer has 1 group",
            function()
                return one:load_state_dict(sd)
            end)
        local other = optim.SGD({ { params = a:parameters() },
            { params = nn.Linear(2, 2):parameters() } })
        raises_here("SGD:load_state_dict: parameter group 2 has 3 parameters in the state dict and 2 in the optimizer",
            function()
                sd["param_groups.2.params"] = tide.tensor({ 3, 4, 5 })
                return other:load_state_dict(sd)
            end)
        assert.are.equal(0.3, one.param_groups[1].lr)
        raises_here("SGD:load_state_dict: unexpected key 'lr'", function()
            return one:load_state_dict({ lr = tide.tensor(1) })
        end)
    end)

    -- PyTorch's sd["param_groups"][0]["lr"] = 0.01 before optimizer.load_state_dict(sd)
    it("takes what a script writes into its nested view, on load and on save", function()
        local _, o = run(optim.Adam, { lr = 0.1 }, "cpu", 2)
        local sd = o:state_dict()
        local g = sd["param_groups"][1]
        g.lr = 0.01
        sd.param_groups[1].betas = { 0.5, 0.6 }
        sd.state[1].step = 7
        assert.are.equal(g, sd.param_groups[1]) -- one view, read again
        assert.are.equal(0.01, sd["param_groups.1.lr"]:item())
        o:load_state_dict(sd)
        local p = o.param_groups[1].params[1]
        assert.are.equal(0.01, o.param_groups[1].lr)
        assert.are.same({ 0.5, 0.6 }, o.param_groups[1].betas)
        assert.are.equal(7, o.state[p].step)
        -- a flat name written after the view was read shows when the view is read again
        sd["param_groups.1.lr"] = tide.tensor(0.02, { dtype = "float64" })
        assert.are.equal(0.02, sd.param_groups[1].lr)
        assert.are.equal(0.02, g.lr)
        -- saved as written, in a checkpoint tree too
        g.lr = 0.03
        tide.save(path, { optimizer = sd, epoch = 3 })
        assert.are.equal(0.03, tide.load(path).optimizer["param_groups.1.lr"]:item())
        -- and what tide.load gives back reads as the nested dict again
        assert.are.equal(0.03, tide.load(path).optimizer["param_groups"][1].lr)
        assert.are.equal(7, tide.load(path).optimizer.state[1].step)
        tide.save(path, sd)
        assert.are.same({ 0.5, 0.6 }, tide.load(path).param_groups[1].betas)
        -- a value with no tensor form stays in the view and is named on load, changing nothing
        g.lr = "fast"
        assert.are.equal("fast", sd.param_groups[1].lr)
        raises_here("Adam:load_state_dict: param_groups.1.lr was set to a string, which has " ..
            "no place in a state dict", function()
                return o:load_state_dict(sd)
            end)
        assert.are.equal(0.01, o.param_groups[1].lr)
        assert.are.equal(7, o.state[p].step)
        g.lr, g.params = 0.04, { 1, 2 }
        raises_here("Adam:load_state_dict: parameter group 1 has 2 parameters in the state " ..
            "dict and 1 in the optimizer", function()
                return o:load_state_dict(sd)
            end)
        assert.are.equal(0.01, o.param_groups[1].lr)
    end)
end)

-- optim.SparseAdam over nn.Embedding(..., {sparse = true}): PyTorch 1.13's values (its lazy
-- Adam: only the rows a step touches move, their moments alone decay)
describe("optim.SparseAdam", function()
    local function rows(t)
        local out = {}
        for _, r in ipairs(t:totable()) do
            for _, x in ipairs(r) do
                out[#out + 1] = x
            end
        end
        return out
    end

    it("updates the rows an embedding's lookups touched, as PyTorch's", function()
        local emb = nn.Embedding(5, 3, { sparse = true })
        assert.are.equal("Embedding(5, 3, sparse=True)  [15 parameters]", tostring(emb))
        tide.no_grad(function()
            emb.weight:copy_(tide.arange(15, { dtype = tide.float32 }):view(5, 3):sin())
        end)
        local o = optim.SparseAdam(emb:parameters(), { lr = 0.1, betas = { 0.8, 0.9 },
            eps = 1e-6 })
        local w = tide.tensor({ { 1, -2, 0.5 } })
        local want = {
            { 0, 0.741471, 0.8092981, 0.14112, -0.7568025, -0.9589243, -0.1794158, 0.5569866,
                0.8893586, 0.4121185, -0.5440211, -0.9999902, -0.5365729, 0.420167, 0.9906074 },
            { 0, 0.741471, 0.8092981, 0.0645428, -0.6802245, -0.8823467, -0.0936996, 0.4667881,
                0.7982137, 0.4121185, -0.5440211, -0.9999902, -0.5365729, 0.420167, 0.9906074 },
            { 0, 0.741471, 0.8092981, 0.0645428, -0.6802245, -0.8823467, -0.0936996, 0.4667881,
                0.7982137, 0.4121185, -0.5440211, -0.9999902, -0.4691056, 0.3526995, 0.9231403 },
        }
        for k, idx in ipairs({ { 1, 3, 3 }, { 2, 3 }, { 5 } }) do
            o:zero_grad()
            emb(tide.tensor(idx)):mul(w):pow(2):sum():backward()
            o:step()
            close(rows(emb.weight:detach()), want[k], 2e-6, "step " .. k)
        end
        local st = o.state[emb.weight]
        assert.are.equal(3, st.step)
        close(rows(st.exp_avg), { 0, 1.3463535, 0.0909297, 0.056448, -1.210884, -0.0958924,
            -0.2505922, 2.5730643, 0.2472332, 0, 0, 0, -0.2146292, 0.6722673, 0.0990607 }, 2e-6,
            "exp_avg")
        -- maximize, through F.embedding with sparse = true
        local w2 = nn.Parameter(tide.arange(8, { dtype = tide.float32 }):view(4, 2):cos())
        local o2 = optim.SparseAdam({ w2 }, { lr = 0.05, maximize = true })
        for _, idx in ipairs({ { 4, 2 }, { 2 } }) do
            o2:zero_grad()
            nn.functional.embedding(tide.tensor(idx), w2, { sparse = true }):sum():backward()
            o2:step()
        end
        close(rows(w2:detach()), { 1, 0.5403023, -0.3161469, -0.8899926, -0.6536436, 0.2836622,
            1.0101702, 0.8039022 }, 2e-6, "maximize")
        raises_here("SparseAdam: unknown option", function()
            return optim.SparseAdam(emb:parameters(), { weight_decay = 0.1 })
        end)
    end)
end)

-- every scheduler's last two parameters in PyTorch 1.13, last_epoch = -1 and verbose (a line
-- per group and step, PyTorch's print_lr), by position and by name
describe("lr_scheduler's last_epoch and verbose", function()
    it("take PyTorch's defaults and verbose's lines; another last_epoch names the fix",
        function()
            local o = optim.SGD({ nn.Parameter(tide.ones(2)) }, { lr = 0.1 })
            local lines, real_print = {}, _G.print
            _G.print = function(s) lines[#lines + 1] = s end -- (busted gives a spec its own env)
            local ok, err = pcall(function()
                local s = S.StepLR(o, 1, 0.5, -1, true) -- PyTorch's positional order
                s:step()
            end)
            _G.print = real_print
            assert.is_true(ok, tostring(err))
            assert.are.same({ "Adjusting learning rate of group 1 to 1.0000e-01.",
                "Adjusting learning rate of group 1 to 5.0000e-02." }, lines)
            local quiet = S.StepLR(o, { step_size = 1, gamma = 0.5, last_epoch = -1,
                verbose = false })
            quiet:step()
            assert.are.equal(0.025, o.param_groups[1].lr)
            assert.is_nil(quiet:state_dict().verbose)
            raises_here("StepLR: last_epoch = 3: a schedule resumes from its state_dict " ..
                "%(scheduler:load_state_dict%(sd%)%); last_epoch = %-1, PyTorch's default, " ..
                "starts it", function()
                    return S.StepLR(o, { step_size = 1, last_epoch = 3 })
                end)
            raises_here("CosineAnnealingLR: verbose must be true or false, got string", function()
                return S.CosineAnnealingLR(o, 10, 0, -1, "yes")
            end)
        end)
end)

describe("lr_scheduler matches PyTorch 1.13", function()
    local CLASSES = {
        step = S.StepLR, multistep = S.MultiStepLR, exponential = S.ExponentialLR,
        cosine = S.CosineAnnealingLR, linear = S.LinearLR, linear_custom = S.LinearLR,
        onecycle = S.OneCycleLR, onecycle_linear_3phase = S.OneCycleLR, lambda = S.LambdaLR,
        constant = S.ConstantLR, constant_custom = S.ConstantLR, polynomial = S.PolynomialLR,
        polynomial_custom = S.PolynomialLR,
    }

    local function sgd()
        local p1 = tide.zeros({ 2 }, { requires_grad = true })
        local p2 = tide.zeros({ 2 }, { requires_grad = true })
        return optim.SGD({ { params = { p1 } }, { params = { p2 }, lr = 0.01 } },
            { lr = 0.1, momentum = 0.9 })
    end

    local function make(name, o)
        local opts = copy(REF.schedules[name].opts)
        if name == "lambda" then
            opts.lr_lambda = function(e)
                return 0.95 ^ e + math.floor(e / 4)
            end
        end
        return CLASSES[name](o, opts)
    end

    for name, case in pairs(REF.schedules) do
        it(name, function()
            local o = sgd()
            local s = make(name, o)
            for k, want in ipairs(case.lrs) do
                if k > 1 then
                    o:step()
                    s:step()
                end
                close(s:get_last_lr(), want, 1e-14, name .. " epoch " .. (k - 1))
                close({ o.param_groups[1].lr, o.param_groups[2].lr }, want, 1e-14)
                if case.momentum then
                    close({ o.param_groups[1].momentum, o.param_groups[2].momentum },
                        case.momentum[k], 1e-14, name .. " momentum " .. (k - 1))
                end
            end
        end)
    end

    -- the closed form SequentialLR restarts a schedule from (closed_lr) agrees with the steps
    it("ConstantLR and PolynomialLR: the closed form gives the recursive form's lr", function()
        for _, name in ipairs({ "constant_custom", "polynomial_custom" }) do
            local s = make(name, sgd())
            for epoch = 0, 12 do
                s.last_epoch = epoch
                close({ s:closed_lr(0.1), s:closed_lr(0.01) }, REF.schedules[name].lrs[epoch + 1],
                    1e-14, name .. " epoch " .. epoch)
            end
        end
    end)

    it("LambdaLR and MultiplicativeLR take lr_lambda positionally too, as PyTorch's", function()
        local S = tide.optim.lr_scheduler
        local function lrs(make_s)
            local o = sgd()
            local s, out = make_s(o), {}
            for e = 1, 4 do
                o:step()
                s:step()
                out[e] = o.param_groups[1].lr
            end
            return out
        end
        local f = function(e) return 0.5 ^ e end
        assert.are.same(lrs(function(o) return S.LambdaLR(o, { lr_lambda = f }) end),
            lrs(function(o) return S.LambdaLR(o, f) end))
        assert.are.same(lrs(function(o) return S.MultiplicativeLR(o, { lr_lambda = f }) end),
            lrs(function(o) return S.MultiplicativeLR(o, f) end))
        assert.are.equal(0.1 * 0.5 ^ 4, lrs(function(o) return S.LambdaLR(o, f) end)[4])
    end)

    it("a schedule whose first step fails leaves the optimizer's groups as they were", function()
        -- found by the fuzzer (seed 25006): the groups kept initial_lr after the error
        local o = sgd()
        local lr = o.param_groups[1].lr
        raises_here("LambdaLR: lr_lambda 1 returned a nil for epoch 0, expected a number",
            tide.optim.lr_scheduler.LambdaLR, o, function() end)
        assert.is_nil(o.param_groups[1].initial_lr)
        assert.are.equal(lr, o.param_groups[1].lr)
        raises_here("LambdaLR: lr_lambda 1 returned a string for epoch 0",
            tide.optim.lr_scheduler.LambdaLR, o, function() return "x" end)
        local g = o.param_groups[1]
        assert.are.same({ lr = lr }, { lr = g.lr, initial_lr = g.initial_lr })
    end)

    it("state_dict resumes a schedule through tide.save", function()
        local path = os.tmpname()
        for name, case in pairs(REF.schedules) do
            local o = sgd()
            local s = make(name, o)
            for _ = 1, 5 do
                s:step()
            end
            tide.save(path, S.to_tensors(s:state_dict()))
            local o2 = sgd()
            local s2 = make(name, o2)
            s2:load_state_dict(tide.load(path))
            o2:load_state_dict(o:state_dict())
            for k = 7, #case.lrs do
                s2:step()
                close(s2:get_last_lr(), case.lrs[k], 1e-14, name .. " resumed epoch " .. (k - 1))
            end
        end
        os.remove(path)
    end)

    it("OneCycleLR cycles Adam's beta1 and refuses an optimizer without momentum", function()
        local p = tide.zeros({ 1 }, { requires_grad = true })
        local o = optim.Adam({ p }, { lr = 1 })
        S.OneCycleLR(o, { max_lr = 1.0, total_steps = 12 })
        assert.are.same({ 0.95, 0.999 }, o.param_groups[1].betas)
        local s = S.OneCycleLR(optim.Adagrad({ p }), { max_lr = 0.1, total_steps = 2,
            cycle_momentum = false })
        s:step()
        s:step()
        raises_here("OneCycleLR: tried to step 4 times; the specified number of total steps is 2",
            function()
                return s:step()
            end)
        raises_here("OneCycleLR: the optimizer has no momentum nor betas to cycle", function()
            return S.OneCycleLR(optim.Adagrad({ p }), { max_lr = 0.1, total_steps = 2 })
        end)
        raises_here("OneCycleLR: give total_steps, or epochs and steps_per_epoch", function()
            return S.OneCycleLR(o, { max_lr = 0.1 })
        end)
    end)

    it("rejects unknown and missing options at the caller's line", function()
        local o = sgd()
        raises_here('StepLR: unknown option "step"; options are step_size, gamma', function()
            return S.StepLR(o, { step = 3 })
        end)
        raises_here("StepLR: option step_size is required", function()
            return S.StepLR(o, { gamma = 0.5 })
        end)
        raises_here("CosineAnnealingLR: T_max = 0.5; expected an integer >= 1", function()
            return S.CosineAnnealingLR(o, { T_max = 0.5 })
        end)
        raises_here("LinearLR: start_factor = 2; expected a number in %[0, 1%]", function()
            return S.LinearLR(o, { start_factor = 2 })
        end)
        raises_here("LambdaLR: expected lr_lambda to be a function or a list of 2 functions", function()
            return S.LambdaLR(o, { lr_lambda = 3 })
        end)
        raises_here("MultiStepLR: milestone 2 is 2.5", function()
            return S.MultiStepLR(o, { milestones = { 1, 2.5 } })
        end)
        raises_here("ExponentialLR: expected an optimizer", function()
            return S.ExponentialLR(nil, { gamma = 0.5 })
        end)
        raises_here("ExponentialLR:step: the epoch argument is not supported", function()
            return S.ExponentialLR(o, { gamma = 0.5 }):step(3)
        end)
    end)
end)

describe("optim surface on CUDA #cuda", function()
    it("RMSprop and Adagrad match PyTorch; a cpu checkpoint resumes on cuda:0; clipping", function()
        if not tide.cuda.is_available() then
            pending("no CUDA device")
            return
        end
        for _, name in ipairs({ "rmsprop_centered_momentum_maximize", "adagrad_decay_wd" }) do
            local case = REF.optimizers[name]
            local cls = name:match("^rmsprop") and optim.RMSprop or optim.Adagrad
            local got = run(cls, case.opts, "cuda:0")
            close(got[4], case.steps[4], 1e-12, name)
        end
        local full = run(optim.RMSprop, { lr = 0.01, momentum = 0.5, centered = true }, "cpu")
        local _, o = run(optim.RMSprop, { lr = 0.01, momentum = 0.5, centered = true }, "cpu", 2)
        local path = os.tmpname()
        tide.save(path, o:state_dict())
        local p = tide.tensor(full[2], { dtype = "float64", device = "cuda:0" })
        p:requires_grad_(true)
        local o2 = optim.RMSprop({ p })
        o2:load_state_dict(tide.load(path, { device = "cuda:0" }))
        os.remove(path)
        for k = 3, 4 do
            autograd.set_grad(p, tide.tensor(REF.grads[k], { dtype = "float64", device = "cuda:0" }))
            o2:step()
        end
        assert.are.equal("cuda:0", tostring(o2.state[p].square_avg.device))
        close(p:cpu():totable(), full[4], 1e-15)
        local q = tide.zeros({ 2 }, { device = "cuda:0", dtype = "float64", requires_grad = true })
        autograd.set_grad(q, tide.tensor({ 3, -4 }, { dtype = "float64", device = "cuda:0" }))
        assert.are.equal(5, nn.utils.clip_grad_norm_({ q }, 1))
        nn.utils.clip_grad_value_({ q }, 0.1)
        close(q.grad:cpu():totable(), { 0.1, -0.1 }, 1e-15)
        nn.init.orthogonal_(tide.empty({ 3, 5 }, { device = "cuda:0" }))
        nn.init.kaiming_uniform_(tide.empty({ 3, 5 }, { device = "cuda:0" }))
    end)
end)

describe("scheduler state_dict", function()
    it("keeps integers integers through tide.save #lua53", function()
        local p = tide.zeros({ 1 }, { requires_grad = true })
        local s = S.MultiStepLR(optim.SGD({ p }, { lr = 0.5 }), { milestones = { 2, 4 } })
        local sd = s:state_dict()
        assert.are.equal("integer", math.type(sd.last_epoch))
        assert.are.same({ 2, 4 }, sd.milestones)
        local path = os.tmpname()
        tide.save(path, S.to_tensors(sd))
        local saved = tide.load(path)
        os.remove(path)
        assert.are.equal("int64", saved.milestones.dtype)
        assert.are.equal("int64", saved.last_epoch.dtype)
        assert.are.equal("float64", saved.base_lrs.dtype)
        local s2 = S.MultiStepLR(optim.SGD({ p }, { lr = 1 }), { milestones = { 7 } })
        s2:load_state_dict(saved)
        assert.are.same({ 2, 4 }, s2.milestones)
        assert.are.equal("integer", math.type(s2.milestones[1]))
        raises_here("MultiStepLR:load_state_dict: the state dict lacks 'gamma'", function()
            sd.gamma = nil
            return s2:load_state_dict(sd)
        end)
    end)
end)

-- PyTorch's StepLR(optimizer=opt, step_size=2): in Lua one table holds every argument by name
describe("schedulers take every argument by name in one table", function()
    local function sgd(lr)
        return optim.SGD({ nn.Parameter(tide.ones(2)) }, { lr = lr })
    end
    local function raises(msg, f, ...)
        local ok, err = pcall(f, ...)
        assert.is_false(ok)
        assert.matches(msg, err, 1, true)
    end

    it("StepLR, LambdaLR, OneCycleLR, ReduceLROnPlateau and SequentialLR, as positionally", function()
        local a, b = sgd(1), sgd(1)
        local named = S.StepLR({ optimizer = a, step_size = 2, gamma = 0.5 })
        local positional = S.StepLR(b, 2, 0.5)
        for _ = 1, 5 do
            named:step()
            positional:step()
        end
        assert.are.equal(0.25, a.param_groups[1].lr)
        assert.are.equal(b.param_groups[1].lr, a.param_groups[1].lr)
        local l = sgd(0.5)
        S.LambdaLR({ optimizer = l, lr_lambda = function(e) return 0.1 * (e + 1) end })
        assert.is_true(math.abs(l.param_groups[1].lr - 0.05) < 1e-15)
        local c = sgd(0.1)
        S.OneCycleLR({ optimizer = c, max_lr = 1, total_steps = 10 })
        assert.is_true(math.abs(c.param_groups[1].lr - 0.04) < 1e-12) -- max_lr / div_factor 25
        local r = sgd(1)
        local plateau = S.ReduceLROnPlateau({ optimizer = r, patience = 0, factor = 0.5 })
        plateau:step(1)
        plateau:step(2)
        assert.are.equal(0.5, r.param_groups[1].lr)
        local q = sgd(1)
        local s1 = S.ConstantLR(q, { factor = 0.5, total_iters = 1 })
        local s2 = S.ExponentialLR(q, { gamma = 0.5 })
        S.SequentialLR({ optimizer = q, schedulers = { s1, s2 }, milestones = { 1 } })
        assert.are.equal(0.5, q.param_groups[1].lr)
    end)

    it("rejects more arguments after that table, and unknown names, leaving the lr", function()
        local o = sgd(0.3)
        raises("tide: StepLR: the optimizer came by name in a table and 1 more " ..
            "argument(s) followed it; put them all in that table: StepLR({optimizer = opt, ...})",
            S.StepLR, { optimizer = o, step_size = 2 }, 0.5)
        raises('tide: StepLR: unknown option "stepsize"', S.StepLR,
            { optimizer = o, stepsize = 2 })
        raises('tide: SequentialLR: unknown option "milestone"', S.SequentialLR,
            { optimizer = o, schedulers = {}, milestone = { 1 } })
        raises("tide: ReduceLROnPlateau: the optimizer came by name in a table",
            S.ReduceLROnPlateau, { optimizer = o }, "max")
        assert.are.equal(0.3, o.param_groups[1].lr)
        assert.is_nil(o.param_groups[1].initial_lr)
    end)
end)
