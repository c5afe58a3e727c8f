-- tide.optim: one-step values against PyTorch's formulas (reference numbers computed by hand
-- and checked with torch.optim in float64), state placement and its moves
local tide = require("tide")
local nn = require("tide.nn")
local optim = require("tide.optim")
local autograd = require("tide.autograd")

local G1, G2 = { 0.5, -1.0 }, { 1.0, 1.0 }

-- p = {1, 2} (float64), one step per gradient in grads; returns p's values
local function run(cls, opts, grads, device)
    local p = tide.tensor({ 1.0, 2.0 }, { dtype = "float64", device = device })
    p:requires_grad_(true)
    local o = cls({ p }, opts)
    for _, g in ipairs(grads) do
        autograd.set_grad(p, tide.tensor(g, { dtype = "float64", device = device }))
        o:step()
    end
    return p:cpu():totable(), o, p
end

local function close(got, want, tol)
    assert.are.equal(#want, #got)
    for i = 1, #want do
        if math.abs(got[i] - want[i]) > (tol or 1e-12) then
            error(string.format("element %d: got %.15g, expected %.15g", i, got[i], want[i]), 2)
        end
    end
end

describe("optim", function()
    describe("SGD", function()
        it("plain: p -= lr*g", function()
            close(run(optim.SGD, { lr = 0.1 }, { G1 }), { 0.95, 2.1 })
        end)
        it("momentum: buf = m*buf + g", function()
            close(run(optim.SGD, { lr = 0.1, momentum = 0.9 }, { G1, G1 }), { 0.855, 2.29 })
        end)
        it("nesterov: g + m*buf", function()
            close(run(optim.SGD, { lr = 0.1, momentum = 0.9, nesterov = true }, { G1, G1 }),
                { 0.7695, 2.461 })
        end)
        it("weight decay: g + wd*p", function()
            close(run(optim.SGD, { lr = 0.1, weight_decay = 0.1 }, { G1 }), { 0.94, 2.08 })
        end)
        it("dampening scales the new gradient after the first step", function()
            close(run(optim.SGD, { lr = 0.1, momentum = 0.9, dampening = 0.5 }, { G1, G1 }),
                { 0.88, 2.24 })
        end)
        it("rejects unknown options and nesterov without momentum", function()
            local p = tide.zeros(1):requires_grad_(true)
            local ok, err = pcall(optim.SGD, { p }, { lr = 0.1, momentun = 0.9 })
            assert.is_false(ok)
            assert.matches('tide: SGD: unknown option "momentun" (did you mean "momentum"?)', err, 1, true)
            ok, err = pcall(optim.SGD, { p }, { lr = 0.1, nesterov = true })
            assert.is_false(ok)
            assert.matches("nesterov needs momentum > 0", err, 1, true)
        end)
        it("skips parameters without a gradient", function()
            local p = tide.tensor({ 1.0 }, { dtype = "float32" }):requires_grad_(true)
            optim.SGD({ p }, { lr = 1 }):step()
            close(p:totable(), { 1 })
        end)
    end)

    describe("Adam and AdamW", function()
        it("Adam, two steps", function()
            close(run(optim.Adam, { lr = 0.1 }, { G1, G2 }),
                { 0.8034818006385094, 2.0947368411578946 })
        end)
        it("Adam with L2 weight decay", function()
            close(run(optim.Adam, { lr = 0.1, weight_decay = 0.1 }, { G1, G2 }),
                { 0.8025029703202308, 2.074859045356938 })
        end)
        it("AdamW: decoupled decay, default weight_decay 1e-2", function()
            close(run(optim.AdamW, { lr = 0.1 }, { G1, G2 }),
                { 0.8015828006365093, 2.0906388411588948 })
        end)
        it("AdamW with betas, eps and weight decay", function()
            close(run(optim.AdamW, { lr = 0.1, weight_decay = 0.5, betas = { 0.8, 0.99 },
                eps = 1e-3 }, { G1, G2 }), { 0.7095795429534628, 1.8888050838050836 })
        end)
    end)

    describe("state placement", function()
        it("creates state on the parameter's device", function()
            local _, o, p = run(optim.Adam, { lr = 0.1 }, { G1 }, "cpu:1")
            local st = o.state[p]
            assert.are.equal("cpu:1", tostring(st.exp_avg.device))
            assert.are.equal("cpu:1", tostring(st.exp_avg_sq.device))
        end)

        it("follows the model when it moves, with the same results", function()
            local function train(move)
                tide.manual_seed(5)
                local m = nn.Linear(3, 2):to("float64")
                local o = optim.Adam(m:parameters(), { lr = 0.01 })
                local x = tide.randn({ 4, 3 }, { dtype = "float64" })
                for i = 1, 4 do
                    if move and i == 3 then
                        m:to("cpu:1")
                        x = x:to("cpu:1")
                    end
                    o:zero_grad()
                    m(x):pow(2):sum():backward()
                    o:step()
                end
                return m, o
            end
            local a = train(false)
            local b, ob = train(true)
            local w = b.weight
            assert.are.equal("cpu:1", tostring(ob.state[w].exp_avg.device))
            assert.are.equal("cpu:1", tostring(w.device))
            close(w:cpu():reshape(-1):totable(), a.weight:reshape(-1):totable(), 1e-12)
        end)

        it("SGD momentum buffers follow a move too", function()
            local m = nn.Linear(2, 1)
            local o = optim.SGD(m:parameters(), { lr = 0.1, momentum = 0.9 })
            m(tide.ones(1, 2)):sum():backward()
            o:step()
            m:to("cpu:1")
            o:zero_grad()
            m(tide.ones({ 1, 2 }, { device = "cpu:1" })):sum():backward()
            o:step()
            assert.are.equal("cpu:1", tostring(o.state[m.weight].momentum_buffer.device))
        end)
    end)

    it("zero_grad clears the gradients", function()
        local _, o, p = run(optim.SGD, { lr = 0.1 }, { G1 })
        o:zero_grad()
        assert.is_nil(p.grad)
    end)

    it("accepts parameter groups with their own options", function()
        local a = tide.tensor({ 1.0 }, { dtype = "float64" }):requires_grad_(true)
        local b = tide.tensor({ 1.0 }, { dtype = "float64" }):requires_grad_(true)
        local o = optim.SGD({ { params = { a } }, { params = { b }, lr = 1 } }, { lr = 0.1 })
        autograd.set_grad(a, tide.tensor({ 1.0 }, { dtype = "float64" }))
        autograd.set_grad(b, tide.tensor({ 1.0 }, { dtype = "float64" }))
        o:step()
        close(a:totable(), { 0.9 })
        close(b:totable(), { 0 })
    end)
end)

describe("training loops with version counters", function()
    -- the optimizer updates parameters in place after backward: the next forward pass saves
    -- them again, so no step may trip the in-place check
    local function train(make_opt)
        tide.manual_seed(7)
        local model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 8), nn.Tanh(),
            nn.Linear(8, 2))
        local opt = make_opt(model:parameters())
        local loss_fn = nn.MSELoss()
        local x, y = tide.randn(16, 4), tide.randn(16, 2)
        local losses = {}
        for step = 1, 8 do
            opt:zero_grad()
            local loss = loss_fn(model(x), y)
            loss:backward()
            opt:step()
            losses[step] = loss:item()
        end
        assert.is_true(losses[8] < losses[1], ("loss %g -> %g"):format(losses[1], losses[8]))
        for _, p in ipairs(model:parameters()) do
            assert.is_true(p:_version() >= 8)
        end
    end

    it("SGD with momentum", function()
        train(function(ps) return optim.SGD(ps, { lr = 0.05, momentum = 0.9 }) end)
    end)

    it("Adam", function()
        train(function(ps) return optim.Adam(ps, { lr = 0.01 }) end)
    end)

    it("AdamW, with a BatchNorm1d whose running stats change in place", function()
        tide.manual_seed(3)
        local model = nn.Sequential(nn.Linear(3, 6), nn.BatchNorm1d(6), nn.ReLU(),
            nn.Linear(6, 1))
        local opt = optim.AdamW(model:parameters(), { lr = 0.01 })
        local x, y = tide.randn(8, 3), tide.randn(8, 1)
        for _ = 1, 5 do
            opt:zero_grad()
            nn.MSELoss()(model(x), y):backward()
            opt:step()
        end
    end)
end)

describe("optimizer option errors", function()
    local function raises_here(pattern, f, ...)
        local ok, err = pcall(f, ...)
        assert.is_false(ok)
        assert.matches("optim_spec%.lua:%d+: tide: " .. pattern, err)
    end

    it("point at the user's line and never leak raw Lua errors", function()
        local ps = nn.Linear(2, 2):parameters()
        raises_here("SGD: expected a list of parameters", function() return optim.SGD(nil) end)
        raises_here("SGD: expected lr >= 0", function() return optim.SGD(ps, { lr = -1 }) end)
        raises_here('SGD: unknown option "lrr" %(did you mean "lr"%?%)', function() return optim.SGD(ps, { lrr = 1 }) end)
        raises_here("SGD: expected momentum to be a number, got string", function()
            return optim.SGD(ps, { momentum = "a" })
        end)
        raises_here("SGD: nesterov needs momentum", function()
            return optim.SGD(ps, { nesterov = true })
        end)
        raises_here("Adam: expected betas", function()
            return optim.Adam(ps, { betas = { 0.9, "x" } })
        end)
        raises_here("AdamW: expected betas", function()
            return optim.AdamW(ps, { betas = { 1, 0.9 } })
        end)
    end)
end)
