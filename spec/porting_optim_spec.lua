-- porting_optim_spec.lua — the optimizers and schedulers a ported script reaches for that tide
-- lacked, against PyTorch 1.13 (spec/fixtures/porting_optim_torch.lua, written by
-- spec/fixtures/make_porting_optim.py): Rprop and ASGD over 12 steps (ASGD's average ax too),
-- LBFGS (fixed step and strong_wolfe) on Rosenbrock and a least-squares fit, a state dict
-- saved through tide.save and resumed on another device, MultiplicativeLR and CyclicLR (lr and
-- momentum) over 20 steps, and their errors.
local tide = require("tide")

-- a gradient that does not fit its parameter: PyTorch's (and tide's) t.grad = g refuses one, so
-- it is reshaped, converted or moved in place after a fitting assignment (g:set_), which
-- reaches the step; the step's own checks stay the last fence
local function misfit_grad(p, g)
    p.grad = tide.zeros_like(p)
    p.grad:set_(g)
end
local optim = require("tide.optim")
local autograd = require("tide.autograd")
local S = optim.lr_scheduler
local D = require("spec.support.device")

local REF = dofile("spec/fixtures/porting_optim_torch.lua")
local DEV = D.name

local function close(got, want, tol, what)
    if type(want) == "table" then
        assert(type(got) == "table" and #got == #want, what .. ": expected " .. #want ..
            " values")
        for i = 1, #want do
            close(got[i], want[i], tol, what .. "[" .. i .. "]")
        end
        return
    end
    if math.abs(got - want) > tol * math.max(1, math.abs(want)) then
        error(string.format("%s: got %.17g, PyTorch %.17g", what, got, want), 2)
    end
end

local function rows(t)
    return t:cpu():totable()
end

local OPTIMIZERS = {
    rprop = { optim.Rprop, {} },
    rprop_custom = { optim.Rprop, { lr = 0.1, etas = { 0.3, 1.5 }, step_sizes = { 0.05, 0.2 },
        maximize = true } },
    asgd = { optim.ASGD, {} },
    asgd_averaging = { optim.ASGD, { lr = 0.05, lambd = 0.01, alpha = 0.5, t0 = 3,
        weight_decay = 0.1, maximize = true } },
}

local function copy(t)
    local r = {}
    for k, v in pairs(t) do
        r[k] = v
    end
    return r
end

-- p = {1, 2, -3} (float64) on dev, the fixture's gradients from step `from` to `to`
local function run(name, dev, to, from, p, o)
    local cls, opts = OPTIMIZERS[name][1], OPTIMIZERS[name][2]
    p = p or tide.tensor({ 1, 2, -3 }, { dtype = "float64", device = dev }):requires_grad_(true)
    o = o or cls({ p }, copy(opts))
    for k = from or 1, to or #REF.grads do
        autograd.set_grad(p, tide.tensor(REF.grads[k], { dtype = "float64", device = dev }))
        o:step()
        close(rows(p), REF.optimizers[name].steps[k], 1e-12, name .. " step " .. k)
        if REF.optimizers[name].ax then
            close(rows(o.state[p].ax), REF.optimizers[name].ax[k], 1e-12, name .. " ax " .. k)
        end
    end
    return p, o
end

describe("Rprop and ASGD match PyTorch 1.13 (" .. DEV .. ")", function()
    for name in pairs(OPTIMIZERS) do
        it(name, function()
            run(name, DEV)
        end)
    end

    it("resume from a state dict through tide.save on another device", function()
        local path = os.tmpname()
        for name, c in pairs(OPTIMIZERS) do
            local _, o = run(name, DEV, 6)
            tide.save(path, o:state_dict())
            local p = tide.tensor(REF.optimizers[name].steps[6], { dtype = "float64",
                device = D.other }):requires_grad_(true)
            local o2 = c[1]({ p }, { lr = 12345 }) -- the state dict brings the hyperparameters
            o2:load_state_dict(tide.load(path))
            run(name, D.other, nil, 7, p, o2)
            assert.are.equal(tide.device(D.other), o2.state[p].prev and
                o2.state[p].step_size.device or o2.state[p].ax.device)
            assert.are.equal(12, o2.state[p].step)
        end
        os.remove(path)
    end)

    it("Rprop's state is prev and step_size; ASGD's eta and mu are numbers", function()
        local _, o = run("asgd_averaging", DEV, 5)
        local p = o.param_groups[1].params[1]
        assert.are.equal("number", type(o.state[p].eta))
        assert.are.equal("number", type(o.state[p].mu))
        assert.are.equal(0.5, o.state[p].mu) -- 1 / (5 - t0)
        local sd = o:state_dict()
        assert.are.equal(5, sd["state.1.step"]:item())
        local _, r = run("rprop", DEV, 2)
        sd = r:state_dict()
        assert.are.same({ 3 }, sd["state.1.prev"].shape)
        assert.are.same({ 3 }, sd["state.1.step_size"].shape)
    end)

    it("reject bad options, naming them", function()
        local p = tide.zeros({ 2 }, { device = DEV }):requires_grad_(true)
        assert.has_error(function() optim.Rprop({ p }, { etas = { 1.5, 1.2 } }) end,
            "tide: Rprop: expected etas = {etaminus, etaplus} with 0 < etaminus < 1 < etaplus, " ..
            "got {1.5, 1.2}")
        assert.has_error(function() optim.Rprop({ p }, { step_sizes = { 1, 0.5 } }) end,
            "tide: Rprop: expected step_sizes = {min, max} with 0 <= min <= max, got {1, 0.5}")
        assert.has_error(function() optim.Rprop({ p }, { eta = 1 }) end)
        assert.has_error(function() optim.ASGD({ p }, { weight_decay = -1 }) end,
            "tide: ASGD: expected weight_decay >= 0, got -1")
        assert.has_error(function() optim.ASGD({ p }, { lambda = 1 }) end)
        -- a gradient on another device: the step refuses it, changing nothing
        local r = optim.Rprop({ p })
        misfit_grad(p, tide.ones({ 2 }, { device = D.other }))
        assert.has_error(function() r:step() end, string.format("tide: Rprop: the gradient of " ..
            "parameter 1 is on %s, the parameter on %s; move the gradient with :to(\"%s\")",
            tostring(tide.device(D.other)), tostring(tide.device(DEV)),
            tostring(tide.device(DEV))))
        assert.are.same({ 0, 0 }, rows(p))
        assert.is_nil(r.state[p])
    end)
end)

-- the fixture's problems: Rosenbrock from (-1.5, 2) and a least-squares fit of w [3, 1], c [1]
local PROBLEMS = {
    rosenbrock = function(dev)
        local x = tide.tensor({ -1.5, 2 }, { dtype = "float64", device = dev })
            :requires_grad_(true)
        return { x }, function()
            local a, b = x:select(1, 1), x:select(1, 2)
            return a:neg():add(1):square():add(b:sub(a:square()):square():mul(100))
        end
    end,
    least_squares = function(dev)
        local w = tide.tensor({ { 0.5 }, { -0.5 }, { 1 } }, { dtype = "float64", device = dev })
            :requires_grad_(true)
        local c = tide.tensor({ 0.25 }, { dtype = "float64", device = dev }):requires_grad_(true)
        local a = tide.tensor(REF.A, { dtype = "float64", device = dev })
        local b = tide.tensor(REF.B, { dtype = "float64", device = dev }):view(5, 1)
        return { w, c }, function()
            return a:matmul(w):add(c):sub(b):square():mean()
        end
    end,
}

local LBFGS = {
    rosenbrock = { "rosenbrock", {} },
    rosenbrock_wolfe = { "rosenbrock", { line_search_fn = "strong_wolfe" } },
    rosenbrock_short = { "rosenbrock", { lr = 0.5, max_iter = 4, history_size = 2 } },
    least_squares = { "least_squares", { max_iter = 3 } },
    least_squares_wolfe = { "least_squares", { max_iter = 5, max_eval = 7,
        line_search_fn = "strong_wolfe" } },
}

-- PyTorch's closure: zero the gradients, compute the loss, backward, return the loss
local function lbfgs_case(name, dev)
    local params, f = PROBLEMS[LBFGS[name][1]](dev)
    local o = optim.LBFGS(params, copy(LBFGS[name][2]))
    local function closure()
        o:zero_grad()
        local loss = f()
        loss:backward()
        return loss
    end
    return o, params, closure
end

-- PyTorch's dot is BLAS's ddot (fused multiply-adds, its own order): tide's sum of products
-- differs in the last bits, which 60 iterations along Rosenbrock's valley grow to 1e-7
local LBFGS_TOL = { rosenbrock = 1e-6 }

local function check_lbfgs_step(name, k, o, params, loss)
    local want = REF.lbfgs[name].steps[k]
    local what = name .. " step " .. k
    local tol = LBFGS_TOL[name] or 1e-9
    close(loss:item(), want.loss, tol, what .. " loss")
    for i, p in ipairs(params) do
        close(rows(p), want.params[i], tol, what .. " param " .. i)
    end
    local st = o.state[params[1]]
    assert.are.equal(want.func_evals, st.func_evals, what .. " func_evals")
    assert.are.equal(want.n_iter, st.n_iter, what .. " n_iter")
end

describe("LBFGS matches PyTorch 1.13 (" .. DEV .. ")", function()
    for name in pairs(LBFGS) do
        it(name, function()
            local o, params, closure = lbfgs_case(name, DEV)
            for k = 1, #REF.lbfgs[name].steps do
                local loss = o:step(closure)
                check_lbfgs_step(name, k, o, params, loss)
            end
        end)
    end

    it("resumes from a state dict through tide.save on another device", function()
        local path = os.tmpname()
        for _, name in ipairs({ "rosenbrock_short", "least_squares_wolfe" }) do
            local o, _, closure = lbfgs_case(name, DEV)
            o:step(closure)
            o:step(closure)
            tide.save(path, o:state_dict())
            local o2, params2, closure2 = lbfgs_case(name, D.other)
            tide.no_grad(function()
                for i, p in ipairs(params2) do
                    p:copy_(tide.tensor(REF.lbfgs[name].steps[2].params[i],
                        { dtype = "float64" }):to(D.other))
                end
            end)
            o2:load_state_dict(tide.load(path))
            assert.are.equal(tide.device(D.other), o2.state[params2[1]].d.device)
            for k = 3, #REF.lbfgs[name].steps do
                check_lbfgs_step(name, k, o2, params2, o2:step(closure2))
            end
        end
        os.remove(path)
    end)

    -- a model moved between steps (Module:to): the state, history lists too, follows it
    it("follows a model moved to another device between steps, in float32 too", function()
        local function fit(dtype, move_after)
            local model = tide.nn.Linear(3, 1):to(dtype):to(DEV)
            tide.no_grad(function()
                model.weight:copy_(tide.tensor({ { 0.5, -0.5, 1 } }, { dtype = dtype }):to(DEV))
                model.bias:copy_(tide.tensor({ 0.25 }, { dtype = dtype }):to(DEV))
            end)
            local o = optim.LBFGS(model:parameters(), { max_iter = 3, history_size = 2 })
            local dev = DEV
            for k = 1, 4 do
                if k == move_after then
                    dev = D.other
                    model:to(dev)
                end
                local a = tide.tensor(REF.A, { dtype = dtype }):to(dev)
                local b = tide.tensor(REF.B, { dtype = dtype }):to(dev):view(5, 1)
                o:step(function()
                    o:zero_grad()
                    local loss = model(a):sub(b):square():mean()
                    loss:backward()
                    return loss
                end)
            end
            assert.are.equal(tide.device(dev), o.state[model.weight].old_dirs[1].device)
            assert.are.equal(dtype, model.weight.dtype)
            return rows(model.weight)[1]
        end
        local still = fit("float64")
        close(fit("float64", 3), still, 1e-12, "moved after 2 steps")
        close(fit("float32"), still, 1e-4, "float32")
    end)

    it("checks its options and its closure", function()
        local p = tide.zeros({ 2 }, { device = DEV }):requires_grad_(true)
        assert.has_error(function() optim.LBFGS({ p }, { line_search_fn = "backtracking" }) end,
            'tide: LBFGS: line_search_fn must be nil or "strong_wolfe", got "backtracking"')
        assert.has_error(function() optim.LBFGS({ p }, { max_iter = 0 }) end,
            "tide: LBFGS: expected max_iter to be an integer >= 1, got 0")
        assert.has_error(function() optim.LBFGS({ p }, { history = 3 }) end)
        assert.has_error(function()
            local q = tide.zeros({ 2 }):requires_grad_(true)
            optim.LBFGS({ { params = { p } }, { params = { q } } })
        end, "tide: LBFGS: parameter groups are not supported (PyTorch's neither); pass one " ..
            "list of parameters")
        local o = optim.LBFGS({ p })
        assert.has_error(function() o:step() end, "tide: LBFGS: step: expected a closure (a " ..
            "function that zeroes the gradients, computes the loss, calls backward and " ..
            "returns the loss), got nil")
        assert.has_error(function() o:step(function() return "x" end) end,
            "tide: LBFGS: step: the closure must return the loss, got string")
        local q = tide.zeros({ 2 }, { device = D.other }):requires_grad_(true)
        assert.has_error(function()
            o:step(function()
                misfit_grad(p, tide.ones({ 3 }, { device = DEV }))
                return 1
            end)
        end, "tide: LBFGS: the gradient of parameter 1 has shape {3}, expected {2} (the " ..
            "parameter's shape); set p.grad to a tensor of the parameter's shape")
        local ok, msg = pcall(optim.LBFGS, { p, q })
        assert.is_false(ok)
        assert.truthy(msg:find("tide: LBFGS: every parameter on one device in one dtype", 1,
            true))
        -- a zero gradient: optimal at once, the parameters untouched, the loss returned
        local loss = o:step(function()
            o:zero_grad()
            local l = p:square():sum()
            l:backward()
            return l
        end)
        assert.are.equal(0, loss:item())
        assert.are.same({ 0, 0 }, rows(p))
    end)
end)

describe("MultiplicativeLR and CyclicLR match PyTorch 1.13", function()
    local function sgd()
        local p1 = tide.zeros({ 2 }, { requires_grad = true })
        local p2 = tide.zeros({ 2 }, { requires_grad = true })
        return optim.SGD({ { params = { p1 } }, { params = { p2 }, lr = 0.01 } },
            { lr = 0.1, momentum = 0.9 })
    end
    local MAKE = {
        multiplicative = function(o)
            return S.MultiplicativeLR(o, { lr_lambda = function() return 0.95 end })
        end,
        multiplicative_list = function(o)
            return S.MultiplicativeLR(o, { lr_lambda = {
                function(e) return e % 3 == 0 and 0.5 or 1.0 end,
                function(e) return 1.0 + e / 10 end,
            } })
        end,
        cyclic = function(o)
            return S.CyclicLR(o, { base_lr = 0.01, max_lr = 0.1, step_size_up = 3 })
        end,
        cyclic_triangular2 = function(o)
            return S.CyclicLR(o, { base_lr = { 0.01, 0.001 }, max_lr = { 0.1, 0.05 },
                step_size_up = 3, step_size_down = 2, mode = "triangular2", base_momentum = 0.7,
                max_momentum = { 0.95, 0.9 } })
        end,
        cyclic_exp_range = function(o)
            return S.CyclicLR(o, { base_lr = 0.01, max_lr = 0.1, step_size_up = 4,
                step_size_down = 1, mode = "exp_range", gamma = 0.9 })
        end,
        cyclic_scale_fn = function(o)
            return S.CyclicLR(o, { base_lr = 0.02, max_lr = 0.2, step_size_up = 2,
                scale_fn = function(x) return 1 / (1 + x) end, cycle_momentum = false })
        end,
        cyclic_scale_fn_iterations = function(o)
            return S.CyclicLR(o, { base_lr = 0.02, max_lr = 0.2, step_size_up = 2,
                step_size_down = 3, scale_fn = function(x) return 0.97 ^ x end,
                scale_mode = "iterations" })
        end,
    }

    local function momenta(o)
        return { o.param_groups[1].momentum, o.param_groups[2].momentum }
    end

    for name, case in pairs(REF.schedules) do
        it(name, function()
            local o = sgd()
            local s = MAKE[name](o)
            for k, want in ipairs(case.lrs) do
                if k > 1 then
                    o:step()
                    s:step()
                end
                close(s:get_last_lr(), want, 1e-14, name .. " epoch " .. (k - 1))
                close({ o.param_groups[1].lr, o.param_groups[2].lr }, want, 1e-14, name)
                close(momenta(o), case.momentum[k], 1e-14, name .. " momentum " .. (k - 1))
            end
        end)
    end

    it("resume from a state dict through tide.save", function()
        local path = os.tmpname()
        for name, case in pairs(REF.schedules) do
            local o = sgd()
            local s = MAKE[name](o)
            for _ = 1, 7 do
                s:step()
            end
            tide.save(path, S.to_tensors(s:state_dict()))
            local o2 = sgd()
            local s2 = MAKE[name](o2)
            s2:load_state_dict(tide.load(path))
            o2:load_state_dict(o:state_dict())
            for k = 9, #case.lrs do
                s2:step()
                close(s2:get_last_lr(), case.lrs[k], 1e-14, name .. " resumed epoch " .. (k - 1))
                close(momenta(o2), case.momentum[k], 1e-14, name .. " resumed momentum")
            end
        end
        os.remove(path)
    end)

    it("name what is wrong", function()
        local o = sgd()
        assert.has_error(function() S.MultiplicativeLR(o, { lr_lambda = 0.9 }) end,
            "tide: MultiplicativeLR: expected lr_lambda to be a function or a list of 2 " ..
            "functions (one per parameter group), got number")
        assert.has_error(function() S.CyclicLR(o, { max_lr = 0.1 }) end,
            "tide: CyclicLR: option base_lr is required")
        assert.has_error(function()
            S.CyclicLR(o, { base_lr = 0.01, max_lr = 0.1, mode = "sine" })
        end, 'tide: CyclicLR: mode must be "triangular", "triangular2" or "exp_range" (or ' ..
            'give scale_fn), got "sine"')
        assert.has_error(function()
            S.CyclicLR(o, { base_lr = { 0.1, 0.2, 0.3 }, max_lr = 1 })
        end, "tide: CyclicLR: expected base_lr to be a number or a list of 2 numbers (one per " ..
            "parameter group), got a list of 3")
        assert.has_error(function()
            S.CyclicLR(o, { base_lr = 0.01, max_lr = 0.1, max_momentum = { 0.9, "high" } })
        end, "tide: CyclicLR: expected max_momentum to be a number or a list of numbers, got " ..
            "string at position 2")
        assert.are.same({ 0.1, 0.01 }, { o.param_groups[1].lr, o.param_groups[2].lr })
        local p = tide.zeros({ 1 }, { requires_grad = true })
        assert.has_error(function()
            S.CyclicLR(optim.Adam({ p }), { base_lr = 0.01, max_lr = 0.1 })
        end, "tide: CyclicLR: the optimizer has no momentum to cycle (Adam); pass " ..
            "cycle_momentum = false")
        S.CyclicLR(optim.Adam({ p }), { base_lr = 0.01, max_lr = 0.1, cycle_momentum = false })
    end)
end)
