-- grad_scaler_spec.lua — tide.amp.GradScaler against PyTorch 1.13's torch.cuda.amp.GradScaler
-- (spec/fixtures/grad_scaler_torch.lua, written by spec/fixtures/make_grad_scaler.py): four
-- training runs of a small float32 net on the device under test (scaled gradients that
-- overflow float32, an inf and a NaN written into gradients, unscale_ + clip_grad_norm_, two
-- optimizers under one scaler) give PyTorch's scale, growth tracker, skipped steps, losses and
-- final parameters; float16 gradients unscale to PyTorch's bits; update(new_scale); growth after
-- growth_interval; state_dict round trips; a disabled scaler passes everything through; the
-- gradients of another device; and the errors, each leaving the scaler as it was.
local tide = require("tide")

-- a gradient that does not fit its parameter: PyTorch's (and tide's) t.grad = g refuses one, so
-- it is reshaped, converted or moved in place after a fitting assignment (g:set_), which
-- reaches the step; the step's own checks stay the last fence
local function misfit_grad(p, g)
    p.grad = tide.zeros_like(p)
    p.grad:set_(g)
end
local nn = tide.nn
local F = tide.nn.functional
local GradScaler = tide.amp.GradScaler
local D = require("spec.support.device")

local REF = dofile("spec/fixtures/grad_scaler_torch.lua")
local DEV = D.name

local function close(got, want, tol, what)
    if type(want) == "table" then
        assert(type(got) == "table" and #got == #want, what .. ": expected " .. #want ..
            " values, got " .. (type(got) == "table" and #got or type(got)))
        for i = 1, #want do
            close(got[i], want[i], tol, what .. "[" .. i .. "]")
        end
        return
    end
    if want ~= want or want == math.huge or want == -math.huge then
        if not (got == want or (got ~= got and want ~= want)) then
            error(string.format("%s: got %.17g, PyTorch %.17g", what, got, want), 2)
        end
        return
    end
    if math.abs(got - want) > tol * math.max(1, math.abs(want)) then
        error(string.format("%s: got %.17g, PyTorch %.17g", what, got, want), 2)
    end
end

local function rows(t)
    if t:dim() == 0 then
        return t:cpu():item()
    end
    return t:cpu():totable()
end

local W = { { { 0.5, -0.3, 0.8 }, { 0.1, 0.7, -0.6 }, { -0.4, 0.2, 0.9 }, { 0.3, -0.8, 0.05 } },
    { 0.1, -0.2, 0.05, 0.3 }, { { 0.6, -0.5, 0.4, 0.7 } }, { -0.1 } }

-- make_grad_scaler.py's net(): Linear(3, 4), Tanh, Linear(4, 1), its weights set by hand
local function net()
    local m = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1)):to(DEV)
    tide.no_grad(function()
        for i, p in ipairs(m:parameters()) do
            p:copy_(tide.tensor(W[i], { device = DEV }))
        end
    end)
    return m
end

-- opt:step counted, so that a test sees which steps the scaler skipped
local function counted(opt)
    local real = opt.step
    opt.steps = 0
    opt.step = function(self, ...)
        self.steps = self.steps + 1
        return real(self, ...)
    end
    return opt
end

-- make_grad_scaler.py's train(): the same loop, recording what it records
local function train(cfg)
    local model = net()
    local params = model:parameters()
    local opts
    if cfg.two then
        opts = { tide.optim.SGD({ params[1], params[2] }, { lr = 0.1 }),
            tide.optim.SGD({ params[3], params[4] }, { lr = 0.1 }) }
    else
        opts = { tide.optim.SGD(params, { lr = 0.1, momentum = 0.9 }) }
    end
    for _, o in ipairs(opts) do
        counted(o)
    end
    local scaler = GradScaler(cfg.scaler)
    local x = tide.tensor(REF.X, { device = DEV })
    local y = tide.tensor(REF.Y, { device = DEV }) * cfg.y_times
    local inject = {}
    for _, e in ipairs(cfg.inject) do
        inject[e[1]] = e
    end
    local rec = { scale = {}, tracker = {}, skipped = {}, loss = {}, scaled = {} }
    for k = 1, cfg.steps do
        for _, o in ipairs(opts) do
            o:zero_grad()
        end
        local loss = F.mse_loss(model(x), y)
        local scaled = scaler:scale(loss)
        scaled:backward()
        if inject[k] then
            params[inject[k][2]].grad:view(-1):narrow(1, 1, 1):fill_(inject[k][3])
        end
        if cfg.clip ~= 0 then
            for _, o in ipairs(opts) do
                scaler:unscale_(o)
            end
            nn.utils.clip_grad_norm_(params, cfg.clip)
        end
        local skipped = {}
        for i, o in ipairs(opts) do
            local before = o.steps
            assert.is_nil(scaler:step(o))
            skipped[i] = o.steps == before
        end
        rec.skipped[k] = skipped
        scaler:update()
        rec.scale[k] = scaler:get_scale()
        rec.tracker[k] = scaler:_get_growth_tracker()
        rec.loss[k] = loss:item()
        rec.scaled[k] = scaled:item()
        assert.are.same({ 1 }, scaled.shape) -- a 0-d loss times the {1} scale, as PyTorch's
    end
    rec.params = {}
    for i, p in ipairs(params) do
        rec.params[i] = rows(p)
    end
    rec.state_dict = scaler:state_dict()
    return rec, scaler
end

describe("amp.GradScaler against PyTorch", function()
    for _, name in ipairs({ "overflow", "inject", "clip", "two_optimizers" }) do
        it("trains as PyTorch's: " .. name, function()
            local want = REF.runs[name]
            local got = train(want.config)
            assert.are.same(want.skipped, got.skipped)
            assert.are.same(want.tracker, got.tracker)
            close(got.scale, want.scale, 1e-6, name .. " scale")
            close(got.loss, want.loss, 1e-6, name .. " loss")
            close(got.scaled, want.scaled, 1e-6, name .. " scaled loss")
            for i = 1, 4 do
                close(got.params[i], want.params[i], 1e-6, name .. " param " .. i)
            end
            assert.are.same(want.state_dict, got.state_dict)
        end)
    end

    it("backs off and grows in float32 as PyTorch's kernel (float64 product, rounded)", function()
        -- growth_factor 1.7, backoff_factor 0.3: scales no power of 2 reaches
        local want = REF.runs.inject.scale
        local got = train(REF.runs.inject.config).scale
        for i = 1, #want do
            assert.are.equal(want[i], got[i])
        end
        -- at 2^127 a growth would reach inf: the scale stays
        assert.are.equal(2 ^ 127, REF.runs.overflow.config.scaler.init_scale)
    end)

    for _, name in ipairs({ "finite", "inf" }) do
        it("unscales float16 gradients to PyTorch's bits: " .. name, function()
            local want = REF.half[name]
            local grad = name == "finite" and { 1000, -3.5, 0.001, 65504, 12.3 } or
                { 1000, -3.5, math.huge, 65504, 12.3 }
            local p = tide.tensor({ 0.5, -0.25, 1.0, 2.0, -1.5 }, { device = DEV })
                :to("float16"):requires_grad_()
            local opt = counted(tide.optim.SGD({ p }, { lr = 0.5 }))
            local scaler = GradScaler({ init_scale = 3000.0 })
            scaler:scale(tide.tensor(1.0, { device = DEV }))
            p.grad = tide.tensor(grad, { device = DEV }):to("float16")
            scaler:unscale_(opt)
            assert.are.equal("float16", p.grad.dtype)
            assert.are.same(want.grad, rows(p.grad:float()))
            scaler:step(opt)
            assert.are.equal(want.found and 0 or 1, opt.steps)
            scaler:update()
            assert.are.same(want.param, rows(p:float()))
            assert.are.equal(want.scale, scaler:get_scale())
        end)
    end

    it("takes update(new_scale) as a number or a 1-element float32 tensor", function()
        local model = net()
        local opt = tide.optim.SGD(model:parameters(), { lr = 0.1 })
        local scaler = GradScaler({ init_scale = 16.0, growth_interval = 1 })
        local x, y = tide.tensor(REF.X, { device = DEV }), tide.tensor(REF.Y, { device = DEV })
        for _, name in ipairs({ "number", "tensor" }) do
            opt:zero_grad()
            scaler:scale(F.mse_loss(model(x), y)):backward()
            scaler:step(opt)
            local arg = name == "number" and 8.0 or tide.tensor({ 0.25 }, { device = DEV })
            scaler:update(arg)
            assert.are.equal(REF.new_scale[name].scale, scaler:get_scale())
            assert.are.equal(REF.new_scale[name].tracker, scaler:_get_growth_tracker())
        end
        -- a later change to the tensor passed does not reach the scale
        local t = tide.tensor({ 2.0 }, { dtype = "float32", device = DEV })
        scaler:update(t)
        t:fill_(5)
        assert.are.equal(2, scaler:get_scale())
    end)
end)

describe("amp.GradScaler", function()
    -- a parameter whose gradient is set by hand: one step of the standard loop with grad g
    local function iteration(scaler, opt, p, g)
        opt:zero_grad()
        local loss = scaler:scale((p * 0):sum())
        loss:backward()
        p.grad:copy_(tide.tensor(g, { device = p.device }) * scaler:get_scale())
        scaler:step(opt)
        scaler:update()
    end

    it("grows the scale after growth_interval clean steps and backs off at an inf", function()
        local p = tide.zeros({ 2 }, { device = DEV, requires_grad = true })
        local opt = tide.optim.SGD({ p }, { lr = 1 })
        local scaler = GradScaler({ init_scale = 4, growth_interval = 3 })
        assert.are.equal(4, scaler:get_scale())
        local scales, trackers = {}, {}
        local grads = { { 1, 2 }, { 1, 2 }, { 1, 2 }, { 1, 2 }, { math.huge, 0 }, { 1, 0 / 0 },
            { 1, 2 } }
        for i, g in ipairs(grads) do
            iteration(scaler, opt, p, g)
            scales[i], trackers[i] = scaler:get_scale(), scaler:_get_growth_tracker()
        end
        assert.are.same({ 4, 4, 8, 8, 4, 2, 2 }, scales)
        assert.are.same({ 1, 2, 0, 1, 0, 0, 1 }, trackers)
        -- five clean steps moved p by -1 and -2 each (the skipped ones did not)
        assert.are.same({ -5, -10 }, rows(p))
        assert.are.equal("float32", scaler._scale.dtype)
        assert.are.equal("int32", scaler._growth_tracker.dtype)
        assert.are.equal(tide.device(DEV), scaler._scale.device)
    end)

    it("scales a tensor, or each tensor of a nested list", function()
        local scaler = GradScaler({ init_scale = 8 })
        local a = tide.tensor({ 1, 2 }, { device = DEV })
        local b = tide.tensor(3.0, { device = DEV })
        local out = scaler:scale({ a, { b, { a } } })
        assert.are.same({ 8, 16 }, rows(out[1]))
        assert.are.same({ 24 }, rows(out[2][1]))
        assert.are.same({ 8, 16 }, rows(out[2][2][1]))
        assert.are.same({}, scaler:scale({}))
        local h = scaler:scale(tide.tensor({ 0.5 }, { device = DEV }):to("float16"))
        assert.are.equal("float32", h.dtype) -- float16 times the float32 scale, as PyTorch's
        assert.are.same({ 4 }, rows(h))
    end)

    it("passes everything through when disabled", function()
        local scaler = GradScaler({ enabled = false })
        assert.is_false(scaler:is_enabled())
        local p = tide.tensor({ 1.0 }, { device = DEV, requires_grad = true })
        local opt = counted(tide.optim.SGD({ p }, { lr = 0.5 }))
        local loss = (p * 3):sum()
        assert.are.equal(loss, scaler:scale(loss))
        local list = { loss }
        assert.are.equal(list, scaler:scale(list))
        loss:backward()
        scaler:unscale_(opt)
        assert.are.same({ 3 }, rows(p.grad))
        p.grad:fill_(math.huge) -- not checked: the step runs
        scaler:step(opt)
        assert.are.equal(1, opt.steps)
        scaler:update()
        scaler:update(4.0)
        assert.are.equal(1.0, scaler:get_scale())
        assert.are.same({}, scaler:state_dict())
        scaler:load_state_dict({}) -- nothing to load
        assert.is_nil(scaler._scale)
        -- a closure goes to the optimizer, as PyTorch's disabled scaler passes it on
        local called = false
        scaler:step(opt, function()
            called = true
            return 1
        end)
        assert.is_true(called)
    end)

    it("round-trips its state dict (PyTorch's keys), also through to_tensors", function()
        local want = REF.runs.overflow
        local _, scaler = train(want.config)
        local sd = scaler:state_dict()
        assert.are.same(want.state_dict, sd)
        for _, form in ipairs({ "plain", "tensors" }) do
            local fresh = GradScaler()
            fresh:load_state_dict(form == "plain" and sd or
                tide.optim.lr_scheduler.to_tensors(sd))
            assert.are.same(sd, fresh:state_dict())
            assert.are.equal(sd.scale, fresh:get_scale())
            assert.are.equal(3, fresh:get_growth_interval())
            assert.are.equal(2, fresh:get_growth_factor())
            assert.are.equal(0.5, fresh:get_backoff_factor())
            -- the first scale() starts from the loaded scale and tracker
            fresh:scale(tide.tensor(1.0, { device = DEV }))
            assert.are.equal(sd.scale, fresh:get_scale())
            assert.are.equal(2, fresh:_get_growth_tracker())
        end
        -- loaded into a scaler already started, the tensors take the values
        local started = GradScaler({ init_scale = 2 })
        started:scale(tide.tensor(1.0, { device = DEV }))
        started:load_state_dict(sd)
        assert.are.equal(sd.scale, started._scale:item())
        assert.are.equal(2, started._growth_tracker:item())
    end)

    it("gets and sets the growth factor, backoff factor and growth interval", function()
        local scaler = GradScaler()
        assert.are.equal(65536, scaler:get_scale())
        assert.are.equal(2, scaler:get_growth_factor())
        assert.are.equal(0.5, scaler:get_backoff_factor())
        assert.are.equal(2000, scaler:get_growth_interval())
        assert.is_true(scaler:is_enabled())
        scaler:set_growth_factor(3)
        scaler:set_backoff_factor(0.25)
        scaler:set_growth_interval(10)
        assert.are.same({ scale = 65536, growth_factor = 3, backoff_factor = 0.25,
            growth_interval = 10, _growth_tracker = 0 }, scaler:state_dict())
    end)

    it("unscales and checks the gradients on each one's device", function()
        local other = D.other
        local p1 = tide.ones({ 2 }, { device = DEV, requires_grad = true })
        local p2 = tide.ones({ 3 }, { device = other, requires_grad = true })
        local opt = counted(tide.optim.SGD({ p1, p2 }, { lr = 1 }))
        local scaler = GradScaler({ init_scale = 4 })
        local losses = scaler:scale({ p1:sum(), (p2 * 2):sum() })
        assert.are.equal(tide.device(other), losses[2].device)
        losses[1]:backward()
        losses[2]:backward()
        assert.are.same({ 8, 8, 8 }, rows(p2.grad))
        scaler:unscale_(opt)
        assert.are.same({ 1, 1 }, rows(p1.grad))
        assert.are.same({ 2, 2, 2 }, rows(p2.grad))
        assert.are.equal(tide.device(other), p2.grad.device)
        scaler:step(opt)
        assert.are.equal(1, opt.steps)
        scaler:update()
        assert.are.equal(4, scaler:get_scale())
        -- an inf on the other device skips the step and backs off
        opt:zero_grad()
        losses = scaler:scale({ p1:sum(), (p2 * 2):sum() })
        losses[1]:backward()
        losses[2]:backward()
        p2.grad:narrow(1, 2, 1):fill_(0 / 0)
        scaler:step(opt)
        assert.are.equal(1, opt.steps)
        scaler:update()
        assert.are.equal(2, scaler:get_scale())
        assert.are.same({ 0, 0 }, rows(p1))
    end)

    it("raises on a bad option or setting, naming it", function()
        assert.has_error(function() GradScaler({ init = 1 }) end,
            'tide: GradScaler: unknown option "init"; options are init_scale, growth_factor, ' ..
            "backoff_factor, growth_interval, enabled")
        assert.has_error(function() GradScaler(5) end,
            "tide: GradScaler: options must be a table such as {init_scale = 1024}, got number")
        assert.has_error(function() GradScaler({ growth_factor = 1 }) end,
            "tide: GradScaler: growth_factor must be a finite number > 1, got 1; pass e.g. " ..
            "{growth_factor = 2.0}")
        assert.has_error(function() GradScaler({ backoff_factor = 1.5 }) end,
            "tide: GradScaler: backoff_factor must be a number in (0, 1), got 1.5; pass e.g. " ..
            "{backoff_factor = 0.5}")
        assert.has_error(function() GradScaler({ init_scale = 0 / 0 }) end,
            "tide: GradScaler: init_scale must be a finite number > 0, got nan; pass e.g. " ..
            "{init_scale = 65536.0}")
        assert.has_error(function() GradScaler({ growth_interval = 2.5 }) end,
            "tide: GradScaler: growth_interval must be an integer >= 1, got 2.5; pass e.g. " ..
            "{growth_interval = 2000}")
        assert.has_error(function() GradScaler({ enabled = 1 }) end,
            "tide: GradScaler: enabled must be true or false, got 1")
        local scaler = GradScaler()
        assert.has_error(function() scaler:set_growth_interval(0) end,
            "tide: GradScaler:set_growth_interval: growth_interval must be an integer >= 1, " ..
            "got 0; keep the value as it was or pass a valid one")
        assert.has_error(function() scaler:set_backoff_factor("x") end,
            "tide: GradScaler:set_backoff_factor: backoff_factor must be a number in (0, 1), " ..
            "got a string; keep the value as it was or pass a valid one")
        assert.are.equal(2000, scaler:get_growth_interval())
        assert.are.equal(0.5, scaler:get_backoff_factor())
    end)

    it("raises on calls out of order, changing nothing", function()
        local p = tide.ones({ 2 }, { device = DEV, requires_grad = true })
        local opt = counted(tide.optim.SGD({ p }, { lr = 1 }))
        local scaler = GradScaler({ init_scale = 4 })
        assert.has_error(function() scaler:step(opt) end,
            "tide: GradScaler:step: the scale is not set up yet; call scaler:scale(loss) " ..
            "(then backward) earlier in the iteration")
        assert.has_error(function() scaler:unscale_(opt) end,
            "tide: GradScaler:unscale_: the scale is not set up yet; call scaler:scale(loss) " ..
            "(then backward) earlier in the iteration")
        assert.has_error(function() scaler:update() end,
            "tide: GradScaler:update: the scale is not set up yet; call scaler:scale(loss) " ..
            "(then backward) earlier in the iteration")
        local loss = scaler:scale(p:sum())
        assert.has_error(function() scaler:step(opt) end,
            "tide: GradScaler:step: no inf checks were recorded for this optimizer: none of " ..
            "its parameters has a gradient; call scaler:scale(loss):backward() before " ..
            "scaler:step(optimizer)")
        assert.has_error(function() scaler:update() end,
            "tide: GradScaler:update: no inf checks were recorded prior to update(); call " ..
            "scaler:step(optimizer) (or scaler:unscale_(optimizer)) for the optimizers with " ..
            "gradients first")
        loss:backward()
        assert.has_error(function() scaler:step(opt, function() return loss end) end,
            "tide: GradScaler:step: closure use is not supported while the scaler is enabled; " ..
            "compute the loss, call scaler:scale(loss):backward(), then scaler:step(optimizer) " ..
            "without a closure")
        assert.has_error(function() scaler:step(opt, { closure = print }) end)
        assert.are.same({ 4, 4 }, rows(p.grad)) -- nothing unscaled yet
        scaler:unscale_(opt)
        assert.has_error(function() scaler:unscale_(opt) end,
            "tide: GradScaler:unscale_: unscale_() has already been called on this optimizer " ..
            "since the last update(); call it once per optimizer per iteration")
        assert.are.same({ 1, 1 }, rows(p.grad)) -- unscaled once
        scaler:step(opt)
        assert.has_error(function() scaler:step(opt) end,
            "tide: GradScaler:step: step() has already been called since the last update(); " ..
            "call scaler:update() once per iteration, after the steps")
        assert.has_error(function() scaler:unscale_(opt) end,
            "tide: GradScaler:unscale_: unscale_() is being called after step(); call it " ..
            "before scaler:step(optimizer), or after scaler:update() for the next iteration")
        assert.are.equal(1, opt.steps)
        assert.are.same({ 0, 0 }, rows(p))
        scaler:update()
        assert.are.equal(4, scaler:get_scale())
        assert.are.equal(1, scaler:_get_growth_tracker())
    end)

    it("raises on bad arguments, changing nothing", function()
        local scaler = GradScaler({ init_scale = 4 })
        assert.has_error(function() scaler:scale({ tide.ones({ 1 }), "x" }) end,
            "tide: GradScaler:scale: outputs[2] is a string; expected a tensor or a (nested) " ..
            "list of tensors")
        assert.has_error(function() scaler:scale({ loss = tide.ones({ 1 }) }) end,
            "tide: GradScaler:scale: outputs has the key loss; expected a tensor or a " ..
            "(nested) list of tensors")
        assert.has_error(function() scaler:scale(2) end,
            "tide: GradScaler:scale: outputs is a number; expected a tensor or a (nested) " ..
            "list of tensors")
        assert.is_nil(scaler._scale) -- a refused scale() made no scale
        assert.has_error(function() scaler:step({}) end,
            "tide: GradScaler:step: expected an optimizer (tide.optim.SGD(...) etc.), got a " ..
            "table")
        local p = tide.ones({ 2 }, { device = DEV, requires_grad = true })
        local opt = tide.optim.SGD({ p }, { lr = 1 })
        scaler:scale(p:sum()):backward()
        assert.has_error(function() scaler:update(-1) end,
            "tide: GradScaler:update: new_scale must be a finite number > 0, got -1; pass a " ..
            "number such as 1024, a 1-element float32 tensor, or nothing")
        assert.has_error(function() scaler:update(tide.ones({ 2 }, { device = DEV })) end,
            "tide: GradScaler:update: new_scale must be a 1-element float32 tensor that does " ..
            "not require grad, got a float32 tensor of 2 elements; pass a number such as " ..
            "1024, a 1-element float32 tensor, or nothing")
        assert.has_error(function() scaler:update(tide.ones({ 1 }, { dtype = "float64" })) end,
            "tide: GradScaler:update: new_scale must be a 1-element float32 tensor that does " ..
            "not require grad, got a float64 tensor of 1 elements; pass a number such as " ..
            "1024, a 1-element float32 tensor, or nothing")
        assert.are.equal(4, scaler:get_scale())
        assert.has_error(function() scaler:load_state_dict({}) end,
            "tide: GradScaler:load_state_dict: the state dict is empty, as a disabled " ..
            "GradScaler's state_dict() is; save it from an enabled scaler")
        local sd = scaler:state_dict()
        sd.scale = nil
        assert.has_error(function() scaler:load_state_dict(sd) end,
            "tide: GradScaler:load_state_dict: the state dict lacks 'scale'; pass the state " ..
            "dict scaler:state_dict() gave")
        sd = scaler:state_dict()
        sd.extra = 1
        assert.has_error(function() scaler:load_state_dict(sd) end,
            "tide: GradScaler:load_state_dict: unexpected key 'extra'; a GradScaler state " ..
            "dict has scale, growth_factor, backoff_factor, growth_interval, _growth_tracker")
        sd = scaler:state_dict()
        sd.growth_factor, sd.scale = 0.5, 99
        assert.has_error(function() scaler:load_state_dict(sd) end,
            "tide: GradScaler:load_state_dict: growth_factor must be a finite number > 1, got " ..
            "0.5; pass the state dict scaler:state_dict() gave")
        assert.has_error(function() scaler:load_state_dict(5) end,
            "tide: GradScaler:load_state_dict: expected a state dict (scaler:state_dict() or " ..
            "tide.load's table), got a number")
        assert.are.same({ scale = 4, growth_factor = 2, backoff_factor = 0.5,
            growth_interval = 2000, _growth_tracker = 0 }, scaler:state_dict())
        -- an integer gradient is refused before any gradient is unscaled
        local q = tide.ones({ 2 }, { device = DEV, requires_grad = true })
        local both = tide.optim.SGD({ p, q }, { lr = 1 })
        misfit_grad(q, tide.ones({ 2 }, { dtype = "int64", device = DEV }))
        assert.has_error(function() scaler:unscale_(both) end,
            "tide: GradScaler:unscale_: the gradient of parameter 2 is a int64 tensor; " ..
            "expected a floating-point tensor")
        assert.are.same({ 4, 4 }, rows(p.grad))
        q.grad = nil
        scaler:step(opt)
        assert.has_error(function() scaler:update(1, 2) end)
        assert.has_error(function() GradScaler({}, 2) end)
    end)
end)
