-- checkpoint_spec.lua — tide.utils.checkpoint (torch.utils.checkpoint): the same outputs and
-- gradients (to the inputs and to the parameters the block uses) as without it, dropout's
-- masks drawn again the same, several outputs, inputs without grad, nested checkpoints, the
-- activations not kept, and its refusals.
local tide = require("tide")
local nn = tide.nn
local D = require("spec.support.device")
local checkpoint = tide.utils.checkpoint

local function catch(f)
    local ok, err = pcall(f)
    assert.is_false(ok, "expected an error")
    return tostring(err)
end

local function grads(params)
    local out = {}
    for i, p in ipairs(params) do
        out[i] = p.grad:to("cpu"):totable()
    end
    return out
end

describe("tide.utils.checkpoint (" .. D.name .. ")", function()
    local function block()
        tide.manual_seed(3)
        return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Dropout(0.5), nn.Linear(8, 4))
            :double():to(D.name)
    end

    it("gives the outputs and gradients of the plain block, dropout included", function()
        local m = block()
        local x0 = tide.randn({ 5, 4 }, { dtype = "float64", device = D.name })
        -- plain
        local x = x0:clone():requires_grad_(true)
        tide.manual_seed(7)
        local y = m(x)
        local loss = (y * y):sum()
        loss:backward()
        local want_x, want_p = x.grad:to("cpu"):totable(), grads(m:parameters())
        local want_y = y:detach():to("cpu"):totable()
        m:zero_grad()
        -- checkpointed
        local xc = x0:clone():requires_grad_(true)
        tide.manual_seed(7)
        local yc = checkpoint(m, xc)
        assert.are.same(want_y, yc:detach():to("cpu"):totable())
        local lc = (yc * yc):sum()
        lc:backward()
        assert.are.same(want_x, xc.grad:to("cpu"):totable())
        assert.are.same(want_p, grads(m:parameters()))
    end)

    it("reaches the parameters when the input needs no grad, and takes several outputs",
        function()
            local lin = nn.Linear(3, 3):double():to(D.name)
            local x = tide.randn({ 2, 3 }, { dtype = "float64", device = D.name })
            local a, b = checkpoint(function(t) return lin(t), lin(t):tanh() end, x)
            local loss = a:sum() + b:sum() * 2
            loss:backward()
            local got = lin.weight.grad:clone()
            lin:zero_grad()
            local loss2 = lin(x):sum() + lin(x):tanh():sum() * 2
            loss2:backward()
            assert.is_true(got:allclose(lin.weight.grad, { rtol = 1e-12, atol = 1e-12 }))
        end)

    it("nests, and keeps none of the block's activations", function()
        local lin = nn.Linear(3, 3):double():to(D.name)
        local x = tide.randn({ 2, 3 }, { dtype = "float64", device = D.name }):requires_grad_(true)
        local y = checkpoint(function(t)
            return checkpoint(function(u) return lin(u):sin() end, t):exp()
        end, x)
        local loss = y:sum()
        loss:backward()
        local g = x.grad:clone()
        x.grad = nil
        local plain = lin(x):sin():exp():sum()
        plain:backward()
        assert.is_true(g:allclose(x.grad, { rtol = 1e-12, atol = 1e-12 }))
    end)

    it("runs plainly under no_grad, and refuses what it cannot do", function()
        local lin = nn.Linear(2, 2):to(D.name)
        local y = tide.no_grad(function()
            return checkpoint(lin, tide.ones({ 1, 2 }, { device = D.name }))
        end)
        assert.is_false(y.requires_grad)
        assert.matches("tide: checkpoint: expected a function (or a module) first, got number",
            catch(function() checkpoint(3) end), 1, true)
        assert.matches("tide: checkpoint: the function must return floating-point tensors",
            catch(function()
                checkpoint(function() return tide.tensor({ 1 }) end, tide.ones(1):requires_grad_(true))
            end), 1, true)
        local x = tide.ones({ 1, 2 }, { device = D.name }):requires_grad_(true)
        local out = checkpoint(lin, x):sum()
        assert.matches("tide: checkpoint: not compatible with tide.autograd.grad",
            catch(function() tide.autograd.grad(out, x) end), 1, true)
        -- the options table: preserve_rng_state = false is taken, not passed to fn
        local seen
        checkpoint(function(...) seen = select("#", ...) return lin(x) end, x,
            { preserve_rng_state = false })
        assert.are.equal(1, seen)
    end)

    it("checkpoint_sequential: the plain Sequential's outputs and gradients, every run but the last checkpointed", function()
        local m = block()
        local x0 = tide.randn({ 5, 4 }, { dtype = "float64", device = D.name })
        local function pass(f)
            m:zero_grad()
            local x = x0:clone():requires_grad_(true)
            tide.manual_seed(7)
            local y = f(x)
            local loss = (y * y):sum()
            loss:backward()
            return y:detach():to("cpu"):totable(), x.grad:to("cpu"):totable(), grads(m:parameters())
        end
        local want_y, want_x, want_p = pass(function(x) return m(x) end)
        local seq = tide.utils.checkpoint_sequential
        for segments = 1, 4 do -- 4 layers: runs of 4, 2, 1 (and one left over), 1
            local y, gx, gp = pass(function(x) return seq(m, segments, x) end)
            assert.are.same(want_y, y, "segments " .. segments)
            assert.are.same(want_x, gx, "segments " .. segments)
            assert.are.same(want_p, gp, "segments " .. segments)
        end
        -- a list of functions too, the same values
        local list = { m[1], function(x) return m[2](x) end, m[3], m[4] }
        local y = pass(function(x) return seq(list, 2, x, { preserve_rng_state = true }) end)
        assert.are.same(want_y, y)
        assert.matches("tide: checkpoint_sequential: segments = 5; expected an integer in 1..4",
            catch(function() seq(m, 5, x0) end), 1, true)
        assert.matches("tide: checkpoint_sequential: function 2 is a number",
            catch(function() seq({ m[1], 3 }, 1, x0) end), 1, true)
        assert.matches("tide: checkpoint_sequential: unknown option",
            catch(function() seq(m, 2, x0, { reentrant = true }) end), 1, true)
    end)
end)
