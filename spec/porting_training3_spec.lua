-- porting_training3_spec.lua — the training-loop forms ported PyTorch scripts write verbatim
-- (survey /tmp/porting/gaps.md items 4, 15, 18, 20, 24 and its documented differences):
-- optimizers and lr schedulers with PyTorch's positional parameters, the optimizer options
-- whose only effect is speed (foreach, fused, capturable), maximize on NAdam and RAdam,
-- RandomSampler with replacement drawn lazily (minGPT's num_samples = 1e10) and a DataLoader
-- that reads samplers batch by batch, DataLoader's multi-process options, the distributions'
-- positional probs / logits / covariance_matrix, tide.compile and tide.backends. Each new form
-- is checked against tide's canonical form, or PyTorch 1.13's value (the expression in a
-- comment).
local tide = require("tide")
local nn = tide.nn
local optim = tide.optim
local S = optim.lr_scheduler
local D = tide.data
local dist = tide.distributions
local unpack = table.unpack or unpack -- luacheck: ignore

local function err_of(f, ...)
    local ok, err = pcall(f, ...)
    assert.is_false(ok, "expected an error")
    return tostring(err)
end

-- the message at the caller's line (this file), exactly
local function raises(msg, f, ...)
    local err = err_of(f, ...)
    assert.matches("porting_training3_spec%.lua:%d+: ", err)
    assert.are.equal(msg, err:gsub("^.-:%d+: ", "", 1))
end

local function close(got, want, tol, what)
    if type(want) == "table" then
        assert.are.equal(#want, #got, what)
        for i = 1, #want do
            close(got[i], want[i], tol, (what or "") .. "[" .. i .. "]")
        end
        return
    end
    assert(math.abs(got - want) <= tol * math.max(1, math.abs(want)),
        string.format("%s: got %.17g, want %.17g", what or "value", got, want))
end

-- a float64 parameter {1, -2} after `steps` steps of make({p}) on loss sum(p^2) (sign: -1
-- minimizes -sum(p^2), the maximize check)
local function run(make, steps, sign)
    local p = tide.tensor({ 1.0, -2.0 }, { dtype = "float64" }):requires_grad_()
    local opt = make({ p })
    for _ = 1, steps or 3 do
        opt:zero_grad()
        local loss = (p * p):sum() * (sign or 1)
        loss:backward()
        opt:step()
    end
    return p:detach():totable(), opt
end

describe("optimizers take PyTorch's positional parameters", function()
    it("SGD(params, lr, momentum) and Adam(params, lr, betas): PyTorch 1.13's values", function()
        -- p = [1, -2]; torch.optim.SGD([p], 0.1, 0.9), 3 steps on (p*p).sum()
        close(run(function(ps) return optim.SGD(ps, 0.1, 0.9) end),
            { 0.0619999999999999, -0.1239999999999998 }, 1e-12, "SGD")
        -- torch.optim.Adam([p], 0.01, (0.8, 0.9)), 3 steps
        close(run(function(ps) return optim.Adam(ps, 0.01, { 0.8, 0.9 }) end),
            { 0.9700112293546814, -1.9700054729962058 }, 1e-12, "Adam")
    end)

    it("every optimizer: positional arguments, then options, as the options form", function()
        local cases = {
            { "SGD", { 0.1, nil, nil, 0.01 }, { momentum = 0.9 },
                { lr = 0.1, weight_decay = 0.01, momentum = 0.9 } },
            { "SGD", { 0.05, 0.8, 0, 0.1, true }, nil,
                { lr = 0.05, momentum = 0.8, dampening = 0, weight_decay = 0.1, nesterov = true } },
            { "Adam", { 0.02, { 0.8, 0.99 }, 1e-6, 0.1, true }, nil,
                { lr = 0.02, betas = { 0.8, 0.99 }, eps = 1e-6, weight_decay = 0.1, amsgrad = true } },
            { "AdamW", { 0.02 }, { weight_decay = 0.5 }, { lr = 0.02, weight_decay = 0.5 } },
            { "RMSprop", { 0.01, 0.9, 1e-6, 0.1, 0.5, true, nil, true }, nil,
                { lr = 0.01, alpha = 0.9, eps = 1e-6, weight_decay = 0.1, momentum = 0.5,
                    centered = true, maximize = true } },
            { "Adagrad", { 0.1, 0.1, 0.1, 0.5, 1e-8, false }, nil,
                { lr = 0.1, lr_decay = 0.1, weight_decay = 0.1, initial_accumulator_value = 0.5,
                    eps = 1e-8 } },
            { "Adamax", { 0.01, { 0.8, 0.9 }, 1e-6, 0.1 }, nil,
                { lr = 0.01, betas = { 0.8, 0.9 }, eps = 1e-6, weight_decay = 0.1 } },
            { "NAdam", { 0.01, nil, nil, 0.1, 0.01 }, nil,
                { lr = 0.01, weight_decay = 0.1, momentum_decay = 0.01 } },
            { "RAdam", { 0.01, { 0.5, 0.6 } }, nil, { lr = 0.01, betas = { 0.5, 0.6 } } },
            { "Adadelta", { 0.5, 0.8, 1e-5, 0.1 }, nil,
                { lr = 0.5, rho = 0.8, eps = 1e-5, weight_decay = 0.1 } },
            { "Rprop", { 0.1, { 0.3, 1.5 }, { 0.05, 0.2 }, nil, true }, nil,
                { lr = 0.1, etas = { 0.3, 1.5 }, step_sizes = { 0.05, 0.2 }, maximize = true } },
            { "ASGD", { 0.05, 0.01, 0.5, 3, 0.1, nil, true }, nil,
                { lr = 0.05, lambd = 0.01, alpha = 0.5, t0 = 3, weight_decay = 0.1,
                    maximize = true } },
        }
        for _, c in ipairs(cases) do
            local cls, pos, opts, canonical = optim[c[1]], c[2], c[3], c[4]
            local positional = { unpack(pos, 1, 8) }
            local n = 0
            for i = 1, 8 do
                if pos[i] ~= nil then
                    n = i
                end
            end
            positional[n + 1] = opts
            local got = run(function(ps) return cls(ps, unpack(positional, 1, n + 1)) end)
            local want = run(function(ps) return cls(ps, canonical) end)
            assert.are.same(want, got, c[1])
            assert.are_not.same({ 1.0, -2.0 }, got, c[1] .. " moved")
        end
    end)

    it("LBFGS(params, lr, max_iter, max_eval, ...), nil holding a place", function()
        local p = tide.zeros(2):requires_grad_()
        local o = optim.LBFGS({ p }, 0.8, 5, nil, 1e-5, nil, 7, "strong_wolfe")
        local g = o.param_groups[1]
        assert.are.same({ 0.8, 5, 6, 1e-5, 1e-9, 7, "strong_wolfe" }, { g.lr, g.max_iter,
            g.max_eval, g.tolerance_grad, g.tolerance_change, g.history_size, g.line_search_fn })
    end)

    it("refuses a name given twice, too many arguments and options not last", function()
        local ps = nn.Linear(2, 2):parameters()
        raises("tide: SGD: lr given twice, as argument #2 and by name; pass it once", optim.SGD,
            ps, 0.1, { lr = 0.2 })
        raises("tide: Adam: betas given twice, as argument #3 and by name; pass it once",
            optim.Adam, ps, 0.1, { 0.8, 0.9 }, { betas = { 0.8, 0.9 } })
        raises("tide: SGD: got 6 positional arguments; it takes at most 5 (lr, momentum, " ..
            "dampening, weight_decay, nesterov), then an options table",
            optim.SGD, ps, 0.1, 0.9, 0, 0, false, true)
        raises("tide: SGD: the options table must come last; got it in the place of lr",
            optim.SGD, ps, { momentum = 0.9 }, 0.1)
        raises("tide: SGD: expected lr to be a number, got string", optim.SGD, ps, "0.1")
    end)

    -- PyTorch's Adam(params=ps, lr=5e-4): one table of names, params among them (it was read
    -- as the parameter list: an optimizer of nothing whose steps changed nothing)
    it("takes every argument by name in one table, params included; refuses no parameters",
        function()
        local p = tide.ones(2):requires_grad_()
        local o = optim.Adam({ params = { p }, lr = 5e-4, betas = { 0.8, 0.9 } })
        assert.are.equal(p, o.param_groups[1].params[1])
        assert.are.same({ 5e-4, 0.8, 0.9 }, { o.param_groups[1].lr,
            o.param_groups[1].betas[1], o.param_groups[1].betas[2] })
        p:sum():backward()
        o:step()
        assert.is_true(math.abs(p[1]:item() - (1 - 5e-4)) < 1e-6)
        raises('tide: SGD: unknown option "momentm" (did you mean "momentum"?)', optim.SGD,
            { params = { p }, lr = 0.1, momentm = 0.9 })
        raises("tide: Adam: optimizer got an empty parameter list", optim.Adam, {})
        raises("tide: SGD: optimizer got an empty parameter list", optim.SGD, {}, 0.1)
    end)
end)

describe("optimizer options whose only effect is speed", function()
    it("foreach, fused and capturable change no value", function()
        for _, name in ipairs({ "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adamax", "NAdam",
            "RAdam", "Adadelta", "Rprop", "ASGD" }) do
            local want = run(function(ps) return optim[name](ps, { lr = 0.05 }) end)
            for _, extra in ipairs({ { foreach = true }, { foreach = false }, { fused = true },
                { fused = false }, { capturable = true }, { differentiable = false } }) do
                extra.lr = 0.05
                assert.are.same(want, run(function(ps) return optim[name](ps, extra) end), name)
            end
        end
        -- nanoGPT: torch.optim.AdamW(groups, lr=lr, betas=betas, fused=use_fused)
        local want = run(function(ps) return optim.AdamW(ps, { lr = 6e-4, betas = { 0.9, 0.95 } }) end)
        assert.are.same(want, run(function(ps)
            return optim.AdamW(ps, 6e-4, { 0.9, 0.95 }, { fused = true })
        end))
    end)

    it("refuses differentiable = true, a non-boolean, and (as PyTorch) any on LBFGS", function()
        local ps = nn.Linear(2, 2):parameters()
        raises("tide: Adam: differentiable = true is not supported yet (tide's step runs " ..
            "without recording); leave it out or false", optim.Adam, ps, { differentiable = true })
        raises("tide: SGD: expected foreach to be a boolean or nil, got string",
            optim.SGD, ps, { foreach = "yes" })
        raises('tide: LBFGS: unknown option "foreach"; options are lr, max_iter, max_eval, ' ..
            "tolerance_grad, tolerance_change, history_size, line_search_fn",
            optim.LBFGS, ps, { foreach = true })
    end)

    it("NAdam and RAdam take maximize: the step of the negated loss", function()
        for _, name in ipairs({ "NAdam", "RAdam" }) do
            local want = run(function(ps) return optim[name](ps, { lr = 0.1 }) end, 8, -1)
            local got = run(function(ps) return optim[name](ps, { lr = 0.1, maximize = true }) end, 8)
            assert.are.same(want, got, name)
            assert.are_not.same(run(function(ps) return optim[name](ps, { lr = 0.1 }) end, 8), got)
        end
    end)
end)

-- the lrs a scheduler sets over n steps (one parameter group, lr 0.1)
local function lrs(make, n)
    local o = optim.SGD({ tide.zeros(1):requires_grad_() }, { lr = 0.1, momentum = 0.9 })
    local s = make(o)
    local r = {}
    for i = 1, n do
        r[i] = o.param_groups[1].lr
        o:step()
        s:step()
    end
    return r
end

describe("lr schedulers take PyTorch's positional parameters", function()
    it("StepLR, CosineAnnealingLR, OneCycleLR, MultiStepLR: PyTorch 1.13's lrs", function()
        -- torch StepLR(opt, 2, 0.5), opt lr 0.1: the lr before each of 5 steps
        close(lrs(function(o) return S.StepLR(o, 2, 0.5) end, 5),
            { 0.1, 0.1, 0.05, 0.05, 0.025 }, 1e-12, "StepLR")
        -- CosineAnnealingLR(opt, 4, 0.01)
        close(lrs(function(o) return S.CosineAnnealingLR(o, 4, 0.01) end, 5),
            { 0.1, 0.08681980515339464, 0.05500000000000001, 0.023180194846605363, 0.01 },
            1e-12, "CosineAnnealingLR")
        -- OneCycleLR(opt, 1.0, 10)
        close(lrs(function(o) return S.OneCycleLR(o, 1.0, 10) end, 5),
            { 0.040000000000000036, 0.52, 1.0, 0.9504846320134737, 0.8117456539497631 },
            1e-12, "OneCycleLR")
        -- MultiStepLR(opt, [2, 4], 0.1)
        close(lrs(function(o) return S.MultiStepLR(o, { 2, 4 }, 0.1) end, 5),
            { 0.1, 0.1, 0.01, 0.01, 0.001 }, 1e-12, "MultiStepLR")
    end)

    it("every scheduler: positional arguments, then options, as the options form", function()
        local f = function(e) return 0.9 ^ e end
        local cases = {
            { "ExponentialLR", { 0.9 }, { gamma = 0.9 } },
            { "LinearLR", { 0.5, 1.0, 4 }, { start_factor = 0.5, end_factor = 1.0, total_iters = 4 } },
            { "ConstantLR", { 0.5, 3 }, { factor = 0.5, total_iters = 3 } },
            { "PolynomialLR", { 4, 2.0 }, { total_iters = 4, power = 2.0 } },
            { "CyclicLR", { 0.01, 0.1, 3, nil, "triangular2" },
                { base_lr = 0.01, max_lr = 0.1, step_size_up = 3, mode = "triangular2" } },
            { "OneCycleLR", { 1.0, nil, 2, 6, 0.4, "linear" },
                { max_lr = 1.0, epochs = 2, steps_per_epoch = 6, pct_start = 0.4,
                    anneal_strategy = "linear" } },
            { "CosineAnnealingWarmRestarts", { 3, 2, 0.001 }, { T_0 = 3, T_mult = 2, eta_min = 0.001 } },
            { "LambdaLR", { f }, { lr_lambda = f } },
            { "MultiplicativeLR", { f }, { lr_lambda = f } },
            { "StepLR", { 3 }, { step_size = 3, gamma = 0.5 }, { gamma = 0.5 } },
        }
        for _, c in ipairs(cases) do
            local cls, pos, canonical, rest = S[c[1]], c[2], c[3], c[4]
            local n = 0
            for i = 1, 6 do
                if pos[i] ~= nil then
                    n = i
                end
            end
            local args = { unpack(pos, 1, n) }
            args[n + 1] = rest
            local got = lrs(function(o) return cls(o, unpack(args, 1, n + 1)) end, 12)
            local want = lrs(function(o) return cls(o, canonical) end, 12)
            assert.are.same(want, got, c[1])
        end
        -- SWALR(opt, swa_lr, anneal_epochs, anneal_strategy)
        assert.are.same(lrs(function(o)
            return optim.swa_utils.SWALR(o, { swa_lr = 0.05, anneal_epochs = 3,
                anneal_strategy = "linear" })
        end, 6), lrs(function(o) return optim.swa_utils.SWALR(o, 0.05, 3, "linear") end, 6))
    end)

    it("CosineAnnealingWarmRestarts takes T_0 in its options too", function()
        assert.are.same(lrs(function(o) return S.CosineAnnealingWarmRestarts(o, 3) end, 8),
            lrs(function(o) return S.CosineAnnealingWarmRestarts(o, { T_0 = 3 }) end, 8))
        local o = optim.SGD({ tide.zeros(1):requires_grad_() }, { lr = 0.1 })
        raises("tide: CosineAnnealingWarmRestarts: T_0 given twice, as argument #2 and by name; "
            .. "pass it once", S.CosineAnnealingWarmRestarts, o, 3, { T_0 = 3 })
    end)

    it("ReduceLROnPlateau(opt, mode, factor, patience, ...)", function()
        local function run_plateau(make)
            local o = optim.SGD({ tide.zeros(1):requires_grad_() }, { lr = 0.1 })
            local s = make(o)
            local r = {}
            for i, metric in ipairs({ 5, 4, 4, 4, 4, 3, 3, 3 }) do
                s:step(metric)
                r[i] = o.param_groups[1].lr
            end
            return r
        end
        local want = run_plateau(function(o)
            return S.ReduceLROnPlateau(o, { mode = "max", factor = 0.5, patience = 1 })
        end)
        assert.are.same(want, run_plateau(function(o) return S.ReduceLROnPlateau(o, "max", 0.5, 1) end))
        assert.are.same(want, run_plateau(function(o)
            return S.ReduceLROnPlateau(o, "max", { factor = 0.5, patience = 1 })
        end))
        assert.are_not.same({ 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1 }, want)
        local o = optim.SGD({ tide.zeros(1):requires_grad_() }, { lr = 0.1 })
        raises("tide: ReduceLROnPlateau: factor given twice, as argument #3 and by name; pass it "
            .. "once", S.ReduceLROnPlateau, o, "min", 0.5, { factor = 0.5 })
    end)

    it("refuses too many positional arguments", function()
        local o = optim.SGD({ tide.zeros(1):requires_grad_() }, { lr = 0.1 })
        raises("tide: StepLR: got 5 positional arguments; it takes at most 4 (step_size, " ..
            "gamma, last_epoch, verbose), then an options table", S.StepLR, o, 30, 0.1, -1,
            false, 1)
        raises("tide: StepLR: step_size = x; expected an integer >= 1", S.StepLR, o, "x")
    end)
end)

describe("RandomSampler with replacement draws lazily (minGPT's trainer)", function()
    local ds = D.TensorDataset(tide.arange(1, 101))
    local HUGE = math.floor(1e10)

    it("len() is num_samples, and iter() gives what indices() draws at once", function()
        local s = D.RandomSampler(ds, { replacement = true, num_samples = HUGE, generator = 7 })
        assert.are.equal(HUGE, s:len())
        local it, first = s:iter(), {}
        for i = 1, 70 do
            first[i] = it()
        end
        -- 70 draws in chunks of 32 are the same as one draw of 70 from the same stream
        local want = D.RandomSampler(ds, { replacement = true, num_samples = 70, generator = 7 })
            :indices()
        assert.are.same(want, first)
        local all = {}
        for i in D.RandomSampler(ds, { replacement = true, num_samples = 70, generator = 7 })
            :iter() do
            all[#all + 1] = i
        end
        assert.are.same(want, all)
        -- a tide.Generator, and tide's own generator (nothing else drawing meanwhile)
        local g1, g2 = tide.Generator():manual_seed(3), tide.Generator():manual_seed(3)
        local a = D.RandomSampler(5, { replacement = true, num_samples = 40, generator = g1 })
            :indices()
        local b = {}
        for i in D.RandomSampler(5, { replacement = true, num_samples = 40, generator = g2 })
            :iter() do
            b[#b + 1] = i
        end
        assert.are.same(a, b)
        tide.manual_seed(11)
        a = D.RandomSampler(5, { replacement = true, num_samples = 40 }):indices()
        tide.manual_seed(11)
        b = {}
        for i in D.RandomSampler(5, { replacement = true, num_samples = 40 }):iter() do
            b[#b + 1] = i
        end
        assert.are.same(a, b)
    end)

    it("an epoch's order is its own: other draws meanwhile change nothing (PyTorch's seed)",
        function()
            local function epoch(draw_between)
                tide.manual_seed(0)
                local out = {}
                for i in D.RandomSampler(100, { replacement = true, num_samples = 64 }):iter() do
                    out[#out + 1] = i
                    if draw_between and #out % 8 == 0 then
                        tide.rand(3) -- dropout, say
                    end
                end
                return out
            end
            assert.are.same(epoch(false), epoch(true))
            -- one seed drawn per epoch: the next epoch is another order
            tide.manual_seed(0)
            local s = D.RandomSampler(100, { replacement = true, num_samples = 64 })
            assert.are_not.same(s:indices(), s:indices())
            -- minGPT's num_samples = 1e10, a float, is the integer on every Lua
            assert.are.equal(HUGE, D.RandomSampler(ds, { replacement = true,
                num_samples = 1e10 }):len())
        end)

    it("a DataLoader reads it batch by batch", function()
        local s = D.RandomSampler(ds, { replacement = true, num_samples = HUGE, generator = 5 })
        local loader = D.DataLoader(ds, { sampler = s, batch_size = 4 })
        assert.are.equal(HUGE / 4, loader:len())
        local want = D.RandomSampler(ds, { replacement = true, num_samples = 12, generator = 5 })
            :indices()
        local got = {}
        for x in loader:iter() do
            for _, v in ipairs(x:totable()) do
                got[#got + 1] = v
            end
            if #got == 12 then
                break
            end
        end
        assert.are.same(want, got)
        -- through a BatchSampler too (also lazy)
        local bs = D.BatchSampler(D.RandomSampler(ds, { replacement = true, num_samples = HUGE,
            generator = 5 }), 4, false)
        local batches = {}
        for x in D.DataLoader(ds, { batch_sampler = bs }):iter() do
            batches[#batches + 1] = x:totable()
            if #batches == 3 then
                break
            end
        end
        assert.are.same({ { want[1], want[2], want[3], want[4] }, { want[5], want[6], want[7],
            want[8] }, { want[9], want[10], want[11], want[12] } }, batches)
    end)

    it("a sampler whose iter() disagrees with its len() raises", function()
        local function sampler(count, len)
            local S2 = {}
            function S2.len() return len end
            function S2.iter()
                local k = 0
                return function()
                    k = k + 1
                    if k <= count then return k end
                end
            end
            return S2
        end
        raises("tide: DataLoader: the sampler gave 2 indices but its len() is 3", function()
            for _ in D.DataLoader(ds, { sampler = sampler(2, 3) }):iter() do end
        end)
        raises("tide: DataLoader: the sampler gave more indices than its len() (2)", function()
            for _ in D.DataLoader(ds, { sampler = sampler(3, 2) }):iter() do end
        end)
        -- drop_last leaves the last indices unread by batches; they still count
        local n = 0
        for _ in D.DataLoader(ds, { sampler = sampler(5, 5), batch_size = 2, drop_last = true })
            :iter() do
            n = n + 1
        end
        assert.are.equal(2, n)
    end)
end)

describe("DataLoader's multi-process options", function()
    local x = tide.arange(1, 11)
    local ds = D.TensorDataset(x)

    local function batches(loader)
        local r = {}
        for b in loader:iter() do
            r[#r + 1] = b:totable()
        end
        return r
    end

    it("are accepted, load in the calling thread and give num_workers = 0's batches", function()
        local want = batches(D.DataLoader(ds, { batch_size = 3, shuffle = true, generator = 4 }))
        local called = false
        local loader = D.DataLoader(ds, { batch_size = 3, shuffle = true, generator = 4,
            num_workers = 4, pin_memory = true, persistent_workers = true, prefetch_factor = 4,
            timeout = 10, worker_init_fn = function() called = true end,
            multiprocessing_context = "spawn", pin_memory_device = "" })
        assert.are.same(want, batches(loader))
        assert.are.equal(4, loader.num_workers)
        assert.is_false(called) -- no worker runs, so none is initialized
        assert.are.same(want, batches(D.DataLoader(ds, { batch_size = 3, shuffle = true,
            generator = 4, num_workers = 0 })))
        -- get_worker_info() is nil where the samples are read
        local Seen = D.Dataset:extend("Seen")
        function Seen:len() return 2 end
        function Seen:get(i)
            assert.is_nil(D.get_worker_info())
            return tide.tensor(i)
        end
        assert.are.same({ { 1, 2 } }, batches(D.DataLoader(Seen(), { batch_size = 2,
            num_workers = 2 })))
    end)

    it("takes PyTorch's positional order: DataLoader(ds, batch_size, shuffle, ...)", function()
        assert.are.same(batches(D.DataLoader(ds, { batch_size = 4 })), batches(D.DataLoader(ds, 4)))
        assert.are.same(batches(D.DataLoader(ds, { batch_size = 4, drop_last = true })),
            batches(D.DataLoader(ds, 4, false, { drop_last = true })))
        local sampler = { 3, 1, 2 }
        assert.are.same({ { 3, 1 }, { 2 } }, batches(D.DataLoader(ds, 2, nil, sampler)))
    end)

    it("refuses them as PyTorch 1.13 does", function()
        raises("tide: DataLoader: num_workers = -1; expected an integer >= 0",
            D.DataLoader, ds, { num_workers = -1 })
        raises("tide: DataLoader: timeout = -1; expected a number >= 0 (seconds)",
            D.DataLoader, ds, { timeout = -1 })
        raises("tide: DataLoader: persistent_workers = true needs num_workers > 0 (as " ..
            "PyTorch's)", D.DataLoader, ds, { persistent_workers = true })
        raises("tide: DataLoader: prefetch_factor applies with num_workers > 0 only (as " ..
            "PyTorch's); leave it out", D.DataLoader, ds, { prefetch_factor = 3 })
        raises("tide: DataLoader: multiprocessing_context applies with num_workers > 0 only " ..
            "(as PyTorch's); leave it out", D.DataLoader, ds, { multiprocessing_context = "fork" })
        raises('tide: DataLoader: multiprocessing_context = threads; expected "fork", "spawn" ' ..
            'or "forkserver"', D.DataLoader, ds, { num_workers = 1,
                multiprocessing_context = "threads" })
        raises("tide: DataLoader: worker_init_fn must be a function of the worker id, got number",
            D.DataLoader, ds, { num_workers = 1, worker_init_fn = 3 })
        raises("tide: DataLoader: batch_size given twice, as argument #2 and by name; pass it "
            .. "once", D.DataLoader, ds, 4, { batch_size = 4 })
    end)
end)

describe("distributions take PyTorch's positional parameters", function()
    local p = tide.tensor({ 0.2, 0.3, 0.5 }, { dtype = "float64" })

    it("Categorical(probs) and Categorical(nil, logits)", function()
        -- torch.distributions.Categorical(torch.tensor([0.2, 0.3, 0.5])).log_prob(2)
        close(dist.Categorical(p):log_prob(tide.tensor(3)):item(), -0.6931471805599453, 1e-12,
            "Categorical")
        assert.is_true(dist.Categorical(nil, p:log()).probs:allclose(p))
        assert.is_false(dist.Categorical(p, { validate_args = false })._validate)
        assert.is_true(dist.OneHotCategorical(p).probs:equal(dist.OneHotCategorical({ probs = p })
            .probs))
        raises("tide: Categorical: probs given twice, as argument #1 and by name; pass it once",
            dist.Categorical, p, { probs = p })
        -- nothing after the options table, counted as written
        raises("tide: Bernoulli: expected at most 3 arguments, got 4 (argument #4 is a number); "
            .. "remove it: Bernoulli takes no such argument or option",
            dist.Bernoulli, 0.3, nil, {}, 5)
    end)

    it("Bernoulli(probs), Binomial(total_count, probs), Geometric, NegativeBinomial, " ..
        "Multinomial, RelaxedBernoulli", function()
        local q = tide.tensor(0.3, { dtype = "float64" })
        -- torch.distributions.Bernoulli(0.3).entropy()
        close(dist.Bernoulli(q):entropy():item(), 0.6108643020548934, 1e-12, "Bernoulli")
        -- torch.distributions.Binomial(10, 0.3).log_prob(3.)
        close(dist.Binomial(10, q):log_prob(tide.tensor(3.0, { dtype = "float64" })):item(),
            -1.321151277766889, 1e-12, "Binomial")
        assert.are.equal(dist.Geometric({ probs = q }):mean():item(), dist.Geometric(q):mean():item())
        assert.are.equal(dist.NegativeBinomial(5, { probs = q }):mean():item(),
            dist.NegativeBinomial(5, q):mean():item())
        assert.is_true(dist.Multinomial(10, p):mean():equal(dist.Multinomial(10, { probs = p })
            :mean()))
        assert.are.equal(dist.RelaxedBernoulli(tide.tensor(0.5), { probs = 0.3 }).probs:item(),
            dist.RelaxedBernoulli(tide.tensor(0.5), 0.3).probs:item())
    end)

    it("MultivariateNormal(loc, covariance_matrix)", function()
        local C = tide.tensor({ { 2.0, 0.5 }, { 0.5, 1.0 } }, { dtype = "float64" })
        local m = dist.MultivariateNormal(tide.zeros(2, { dtype = "float64" }), C)
        -- MultivariateNormal(zeros(2), [[2, .5], [.5, 1]]).log_prob([0.5, -1])
        close(m:log_prob(tide.tensor({ 0.5, -1.0 }, { dtype = "float64" })):item(),
            -2.9033992460913423, 1e-12, "MultivariateNormal")
        local L = tide.linalg.cholesky(C)
        local byname = dist.MultivariateNormal(tide.zeros(2, { dtype = "float64" }),
            { scale_tril = L })
        assert.is_true(dist.MultivariateNormal(tide.zeros(2, { dtype = "float64" }), nil, nil, L)
            :covariance_matrix():allclose(byname:covariance_matrix()))
    end)
end)

describe("tide.compile and tide.backends", function()
    it("compile returns its module or function unchanged, checking torch.compile's options",
        function()
        local m = nn.Linear(2, 2)
        assert.are.equal(m, tide.compile(m))
        assert.are.equal(m, tide.compile(m, { mode = "max-autotune", fullgraph = true,
            dynamic = false, backend = "inductor", options = {}, disable = false }))
        local f = function(v) return v end
        assert.are.equal(f, tide.compile(f))
        assert.are.equal(m, tide.compile(nil, { mode = "default" })(m))
        raises('tide: compile: unknown option "backnd" (did you mean "backend"?)',
            tide.compile, m, { backnd = "eager" })
        raises('tide: compile: mode = fast; expected "default", "reduce-overhead", ' ..
            '"max-autotune" or "max-autotune-no-cudagraphs"', tide.compile, m, { mode = "fast" })
        raises("tide: compile: expected a module or a function, got number", tide.compile, 3)
    end)

    it("backends: settable switches, read back; matmul.allow_tf32 is the matmul precision",
        function()
        local b = tide.backends
        assert.are.same({ false, false, true, true }, { b.cudnn.benchmark, b.cudnn.deterministic,
            b.cudnn.enabled, b.cudnn.allow_tf32 })
        b.cudnn.benchmark = true
        b.cudnn.deterministic = true
        assert.is_true(b.cudnn.benchmark and b.cudnn.deterministic)
        b.cudnn.benchmark, b.cudnn.deterministic = false, false
        assert.is_false(b.cudnn.is_available())
        assert.is_false(b.mps.is_available())
        local before = tide.get_float32_matmul_precision()
        -- torch.backends.cuda.matmul.allow_tf32 = True -> get_float32_matmul_precision() "high"
        b.cuda.matmul.allow_tf32 = true
        assert.are.equal("high", tide.get_float32_matmul_precision())
        assert.is_true(b.cuda.matmul.allow_tf32)
        b.cuda.matmul.allow_tf32 = false
        assert.are.equal("highest", tide.get_float32_matmul_precision())
        assert.is_false(b.cuda.matmul.allow_tf32)
        tide.set_float32_matmul_precision(before)
        raises("tide: backends.cudnn: unknown setting benchmrk", function()
            b.cudnn.benchmrk = true
        end)
        raises("tide: backends.cudnn: benchmark must be true or false, got number", function()
            b.cudnn.benchmark = 1
        end)
    end)
end)
