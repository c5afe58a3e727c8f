-- autograd's user surface beyond backward: t.grad_fn, t:retain_grad(), t:register_hook(fn),
-- tide.autograd.grad(outputs, inputs[, opts]); hand values, PyTorch 1.13's semantics
local tide = require("tide")
local autograd = require("tide.autograd")
local D = require("spec.support.device")

local function V(v)
    return tide.tensor(v, { dtype = "float64", requires_grad = true })
end

local function close(t, want, tol)
    local got = t:to("cpu"):reshape(-1):totable()
    assert.are.equal(#want, #got)
    for i = 1, #want do
        if math.abs(got[i] - want[i]) > (tol or 1e-9) then
            error(string.format("element %d: got %.7g, expected %.7g", i, got[i], want[i]), 2)
        end
    end
end

-- f(...) must fail with msg at the line that called it (here, the pcall's), never inside tide
local function raises_here(msg, f, ...)
    local line = debug.getinfo(1, "l").currentline + 1
    local ok, err = pcall(f, ...)
    assert.is_false(ok)
    assert.are.equal("spec/autograd_hooks_spec.lua:" .. line .. ": tide: " .. msg, err)
end

-- f(...) must fail with msg at a line of this file (a method called through pcall has no
-- caller line of its own: the error names the closure's)
local function raises_in_spec(msg, f)
    local ok, err = pcall(f)
    assert.is_false(ok)
    assert.truthy(err:match("^spec/autograd_hooks_spec%.lua:%d+: tide: "), err)
    assert.are.equal(msg, err:gsub("^[^:]*:%d+: tide: ", ""))
end

describe("t.grad_fn", function()
    it("is nil on leaves and names the op that made a result", function()
        local x = V({ 1, 2 })
        assert.is_nil(x.grad_fn)
        local y = x + 1
        assert.are.equal("AddBackward0", tostring(y.grad_fn))
        assert.are.equal("add", y.grad_fn.name)
        assert.are.equal("MulBackward0", tostring((y * y).grad_fn))
        assert.are.equal("LogSoftmaxBackward0", tostring(y:log_softmax(1).grad_fn))
        assert.is_nil(tide.tensor({ 1.0 }):add(1).grad_fn) -- no grad: no history
    end)
end)

describe("t:retain_grad()", function()
    it("keeps a non-leaf's gradient, accumulated like a leaf's", function()
        local x = V({ 1, 2, 3 })
        local y = x * 2
        local w = y + 0
        y:retain_grad()
        local z = (y * y):sum()
        z:backward({ retain_graph = true })
        close(y.grad, { 4, 8, 12 }) -- dz/dy = 2y
        close(x.grad, { 8, 16, 24 })
        assert.is_nil(w.grad)
        z:backward()
        close(y.grad, { 8, 16, 24 })
    end)

    it("is a no-op on a leaf and refuses a tensor without grad", function()
        local x = V({ 1, 2 })
        assert.are.equal(x, x:retain_grad())
        x:sum():backward()
        close(x.grad, { 1, 1 })
        local z = tide.zeros(2)
        raises_here("retain_grad: the tensor does not require grad; retain_grad() is for " ..
            "results of ops on tensors created with {requires_grad = true}", z.retain_grad, z)
    end)
end)

describe("t:register_hook(fn)", function()
    it("sees a non-leaf's gradient and may replace it", function()
        local x = V({ 1, 2 })
        local y = x * 2
        local seen
        y:register_hook(function(g)
            seen = g:totable()
            return g * 10
        end)
        y:retain_grad();
        (y * 3):sum():backward()
        assert.are.same({ 3, 3 }, seen)
        close(y.grad, { 30, 30 }) -- retain_grad keeps the hooked gradient
        close(x.grad, { 60, 60 })
    end)

    it("runs a leaf's hook once, on its whole gradient, before .grad", function()
        local x = V({ 1, 2 })
        local calls, seen = 0, nil
        local h = x:register_hook(function(g)
            calls = calls + 1
            seen = g:totable()
            return g * 2
        end);
        (x * 3 + x * 4):sum():backward()
        assert.are.equal(1, calls)
        assert.are.same({ 7, 7 }, seen)
        close(x.grad, { 14, 14 })
        h.remove()
        x.grad = nil;
        (x * 3):sum():backward()
        assert.are.equal(1, calls)
        close(x.grad, { 3, 3 })
    end)

    it("runs hooks in order, nil keeps the gradient", function()
        local x = V({ 1 })
        local y = x * 1
        local order = {}
        y:register_hook(function(g)
            order[#order + 1] = "a"
            return g + 1
        end)
        y:register_hook(function(g)
            order[#order + 1] = "b:" .. string.format("%d", g:item())
        end)
        y:sum():backward()
        assert.are.same({ "a", "b:2" }, order)
        close(x.grad, { 2 })
    end)

    it("rejects a non-function, a tensor without grad and a wrong returned shape", function()
        local x = V({ 1, 2 })
        raises_here("register_hook: expected a function, got number", x.register_hook, x, 3)
        local z0 = tide.zeros(2)
        raises_here("register_hook: cannot register a hook on a tensor that does not require " ..
            "grad", z0.register_hook, z0, print)
        local y = x * 1
        y:register_hook(function()
            return tide.zeros(3, { dtype = "float64" })
        end)
        local z = y:sum()
        raises_in_spec("register_hook: a hook returned a gradient of shape {3} for a tensor " ..
            "of shape {2}", function() z:backward() end)
    end)
end)

describe("tide.autograd.grad", function()
    it("returns the gradients as a list and leaves .grad alone", function()
        local x, w = V({ 1, 2, 3 }), V({ 2, 0, -1 })
        local h = x * w
        local y = (h * h):sum() -- sum (x w)^2
        local g = autograd.grad(y, { x, h, w }, { retain_graph = true })
        close(g[1], { 8, 0, 6 })  -- 2 x w^2
        close(g[2], { 4, 0, -6 })  -- 2 h
        close(g[3], { 4, 0, -18 })  -- 2 x^2 w
        assert.is_nil(x.grad)
        assert.is_nil(w.grad)
        assert.is_nil(h.grad)
        y:backward() -- the graph was retained
        close(x.grad, { 8, 0, 6 })
        assert.are.equal(tide.autograd.grad, autograd.grad)
    end)

    it("takes several outputs and grad_outputs", function()
        local x = V({ 1, 2 })
        local a, b = x * 2, x * x
        local g = autograd.grad({ a, b }, x, { grad_outputs = { V({ 1, 1 }):detach(),
            tide.tensor({ 10.0, 1.0 }, { dtype = "float64" }) } })
        close(g[1], { 2 + 20, 2 + 4 })
        raises_here("autograd.grad: grad can be implicitly created only for one-element " ..
            "outputs, output 1 has shape {2}; pass grad_outputs", autograd.grad, x * 2, x)
        raises_here("autograd.grad: grad_outputs[1] of shape {3} does not match the tensor's " ..
            "shape {2}", autograd.grad, x * 2, x,
            { grad_outputs = tide.zeros(3, { dtype = "float64" }) })
    end)

    it("differentiates twice with create_graph", function()
        local x = V({ 2 })
        local y = x:pow(3)
        local g = autograd.grad(y, x, { create_graph = true })[1]
        close(g, { 12 }) -- 3 x^2
        assert.is_true(g.requires_grad)
        local g2 = autograd.grad(g, x)[1]
        close(g2, { 12 }) -- 6 x
        local s = x:sin()
        local ds = autograd.grad(s, x, { create_graph = true })[1]
        close(autograd.grad(ds, x)[1], { -math.sin(2) }, 1e-12)
        assert.is_nil(x.grad)
        -- through a fused layer: Linear's formula is tensor ops, recorded in turn
        local lin = tide.nn.Linear(2, 1):double()
        local v = V({ { 1, 2 } })
        local gv = autograd.grad(lin(v):tanh():sum(), v, { create_graph = true })[1]
        gv:pow(2):sum():backward()
        assert.are.same({ 1, 2 }, lin.weight.grad.shape)
    end)

    it("names a gradient that cannot be differentiated again", function()
        -- every built-in gradient differentiates again (conv2d's too, since its gradient has
        -- a graph of its own); a Function whose backward calls an op without a gradient
        -- formula does not
        local Counted = autograd.Function:extend("Counted")
        function Counted.forward(ctx, x)
            ctx:save_for_backward(x)
            return x * 2
        end
        function Counted.backward(ctx, g)
            local x = ctx.saved_tensors[1]
            local _ = x:unique() -- no gradient formula: refused while a graph is being built
            return g * 2
        end
        local x = V({ 1, 2 })
        raises_here("autograd.grad: create_graph: the gradient of CountedBackward cannot be " ..
            "differentiated again yet (unique: not differentiable: argument #1 requires grad; " ..
            "call it under tide.no_grad or on detach()ed tensors)", autograd.grad,
            Counted.apply(x):sum(), x, { create_graph = true })
        local conv = tide.nn.Conv2d(1, 1, 2):double()
        local im = tide.randn({ 1, 1, 3, 3 }, { dtype = "float64", requires_grad = true })
        local g = autograd.grad(conv(im):sum(), im, { create_graph = true })[1]
        assert.is_true(g.requires_grad)
    end)

    it("raises on unused inputs unless allowed, and on bad arguments", function()
        local x, u = V({ 1 }), V({ 5 })
        local y = x * 3
        raises_here("autograd.grad: input 2 was not used to compute the outputs; pass " ..
            "{allow_unused = true} to get nil for it", autograd.grad, y, { x, u },
            { retain_graph = true })
        local g = autograd.grad(y, { x, u }, { allow_unused = true })
        close(g[1], { 3 })
        assert.is_nil(g[2])
        raises_here("autograd.grad: input 1 does not require grad; create it with " ..
            "{requires_grad = true}", autograd.grad, x * 1, tide.zeros(1))
        raises_here("autograd.grad: output 1 does not require grad and has no grad_fn",
            autograd.grad, tide.zeros(1), x)
        raises_here("autograd.grad: expected (outputs, inputs[, options]); the gradient a " ..
            "backward pass left on a tensor is t.grad", autograd.grad, y)
        local ok, err = pcall(autograd.grad, x * 1, x, { retain = true })
        assert.is_false(ok)
        assert.truthy(err:find("tide: autograd.grad: unknown option \"retain\"", 1, true))
    end)

    it("runs and frees only the part of the graph between outputs and inputs", function()
        local x = V({ 1, 2 })
        local h = x * 2
        local y = (h * 3):sum()
        close(autograd.grad(y, h)[1], { 3, 3 })
        h:sum():backward() -- h's own node was neither run nor freed
        close(x.grad, { 2, 2 })
    end)

    it("frees the graph unless retained", function()
        local x = V({ 1 })
        local y = x * x
        autograd.grad(y, x)
        raises_in_spec("backward: trying to backward through the graph a second time; pass " ..
            "{retain_graph = true} to the first backward", function() y:backward() end)
    end)
end)

describe("hooks, retain_grad and autograd.grad on " .. D.name, function()
    it("give the same values as on the CPU", function()
        local x = tide.tensor({ 1.0, -2.0, 3.0 }, { device = D.name, requires_grad = true })
        local h = x:mul(x)
        h:retain_grad()
        h:register_hook(function(g) return g:mul(2) end)
        local y = h:sum()
        local g = autograd.grad(y, { x, h }, { retain_graph = true })
        close(g[1], { 4, -8, 12 }, 1e-6)
        close(g[2], { 2, 2, 2 }, 1e-6)
        y:backward()
        assert.are.equal(D.name, (tostring(x.grad.device):gsub("^cpu:0$", "cpu")))
        close(x.grad, { 4, -8, 12 }, 1e-6)
        close(h.grad, { 2, 2, 2 }, 1e-6)
    end)
end)

-- PyTorch's engine casts each gradient to its input's dtype (validate_outputs): a bfloat16
-- activation used by a float32 op gets a bfloat16 gradient, so the formulas below it run in
-- the dtypes their forward ran in (autocast's bfloat16 GELU takes its one-pass kernel)
describe("gradients take their input's dtype", function()
    it("along an edge, kept or dropped, and at the leaf", function()
        local x = tide.tensor({ 0.5, -1.25, 2, 3.5 }, { requires_grad = true })
        local h = x:to("bfloat16")
        local seen = {}
        h:register_hook(function(g) seen[#seen + 1] = g.dtype end)
        local f = tide.tensor({ 1.5, 2, -1, 0.25 })
        -- bfloat16 + float32 and bfloat16 * float32 are float32: their formulas give float32
        local y = (h + f):sum() + (h * f):sum()
        y:backward()
        assert.are.same({ "bfloat16" }, seen)
        assert.are.equal("float32", x.grad.dtype)
        assert.are.same({ 2.5, 3, 0, 1.25 }, x.grad:totable())
        local g = tide.tensor({ 1.5, -0.5 }, { requires_grad = true })
        local gelu_in = g:to("bfloat16")
        local got
        gelu_in:register_hook(function(gr) got = gr.dtype end)
        local out = tide.nn.functional.gelu(gelu_in):float():mul(tide.tensor({ 3, 4 })):sum()
        out:backward()
        assert.are.equal("bfloat16", got)
        assert.are.equal("float32", g.grad.dtype)
    end)

    it("leaves an op's non-tensor arguments alone, freed or not (a def's frees)", function()
        local scale = tide.autograd.def {
            name = "hooks_spec_scale",
            frees = { 2 },
            backward = function(_, g) return g * 2 end,
            forward = function(_, x) return x:mul(2) end,
        }
        for _, extra in ipairs({ 3, false, "s", { 1 } }) do
            local x = tide.tensor({ 1.5, 2.5 }, { requires_grad = true })
            scale(x, extra):sum():backward()
            assert.are.same({ 2, 2 }, x.grad:totable())
        end
    end)

    it("second derivatives through ReLU in every float dtype (create_graph: no fused kernel)",
        function()
            for _, dt in ipairs({ "float32", "float64", "bfloat16", "float16" }) do
                local x = tide.tensor({ -1.5, 0.5, 2 }, { dtype = dt, requires_grad = true })
                local z = x:relu():pow(2):sum()
                local g = tide.autograd.grad({ z }, { x }, { create_graph = true })[1]
                assert.are.same({ 0, 1, 4 }, g:float():totable(), dt) -- 2 relu(x)
                g:sum():backward()
                assert.are.same({ 0, 2, 2 }, x.grad:float():totable(), dt)
            end
        end)
end)
