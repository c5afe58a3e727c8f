-- autograd_api_spec.lua — the torch.autograd API (grad, backward, hooks, Function, functional,
-- anomaly mode, torch.func basics) against PyTorch 1.13: every expected value below is what
-- PyTorch printed for the same code (float64), and where PyTorch raises, tide raises a
-- `tide:` message.
local tide = require("tide")
local A = tide.autograd
local unpack = table.unpack or unpack

local function T(v, rg)
    return tide.tensor(v, { dtype = "float64", requires_grad = rg })
end
local function same(want, t)
    assert.are.same(want, t:tolist())
end
local function raises(pattern, fn, ...)
    local ok, e = pcall(fn, ...)
    assert.is_false(ok)
    assert.matches(pattern, tostring(e), 1, true)
end

describe("autograd.grad (PyTorch 1.13)", function()
    it("create_graph gives differentiable gradients: double backward", function()
        local x = T({ 1, 2, 3 }, true)
        local g = A.grad((x ^ 3):sum(), x, { create_graph = true })
        same({ 3, 12, 27 }, g[1])
        same({ 6, 12, 18 }, A.grad(g[1]:sum(), x)[1])
    end)
    it("grad_outputs, a list of outputs, a second call without retain_graph", function()
        local x = T({ 1, 2, 3 }, true)
        same({ 2, 40, 600 }, A.grad(x * x, x, T({ 1, 10, 100 }))[1])
        local a = T({ 1, 2 }, true)
        same({ 4, 6 }, A.grad({ (a * 2):sum(), (a * a):sum() }, a)[1])
        local y = (x * x):sum()
        A.grad(y, x)
        raises("tide: autograd.grad: trying to backward through the graph a second time",
            A.grad, y, x)
    end)
    it("allow_unused: false raises, true gives nil", function()
        local x, z = T({ 1, 2, 3 }, true), T({ 1 }, true)
        raises("tide: autograd.grad: input 2 was not used", A.grad, (x * 2):sum(), { x, z })
        local r = A.grad((x * 2):sum(), { x, z }, { allow_unused = true })
        same({ 2, 2, 2 }, r[1])
        assert.is_nil(r[2])
    end)
    it("only_inputs = true is accepted", function()
        local x = T({ 1, 2 }, true)
        same({ 2, 4 }, A.grad((x * x):sum(), x, { only_inputs = true })[1])
    end)
    it("is_grads_batched: one gradient per row of grad_outputs", function()
        local a = T({ 1, 2 }, true)
        local g = A.grad(a * a, a, tide.eye(2, { dtype = "float64" }), { is_grads_batched = true })
        same({ { 2, 0 }, { 0, 4 } }, g[1])
        local h = A.grad({ outputs = a * a, inputs = a, is_grads_batched = false,
            grad_outputs = T({ 1, 1 }) })
        same({ 2, 4 }, h[1])
        raises("tide: autograd.grad: is_grads_batched needs grad_outputs", A.grad, (a * a):sum(),
            a, { is_grads_batched = true })
    end)
end)

describe("backward, .grad, retain_grad, in-place checks (PyTorch 1.13)", function()
    it("non-scalar without gradient raises; gradient's shape is checked", function()
        local a = T({ 1, 2 }, true)
        raises("tide: backward: grad can be implicitly created only", function()
            (a * 2):backward()
        end)
        raises("tide: backward: grad of shape {3} does not match", function()
            (a * 3):backward(T({ 1, 2, 3 }))
        end)
    end)
    it("backward(gradient), accumulation over two backwards", function()
        local a = T({ 1, 2 }, true)
        ;(a * 3):backward(T({ 1, 2 }))
        same({ 3, 6 }, a.grad)
        ;(a * a):sum():backward()
        same({ 5, 10 }, a.grad)
    end)
    it("a non-leaf's .grad is nil unless retain_grad", function()
        local a = T({ 1, 2 }, true)
        local h = a * 2
        h:sum():backward()
        assert.is_nil(h.grad)
        local k = a * 2
        k:retain_grad()
        ;(k * k):sum():backward()
        same({ 4, 8 }, k.grad)
        assert.is_true(k.retains_grad)
    end)
    it("requires_grad_ on a non-leaf, in-place on a leaf, a saved tensor modified", function()
        local a = T({ 1, 2 }, true)
        raises("tide: requires_grad_: can only change requires_grad of leaf tensors", function()
            (a * 2):requires_grad_(false)
        end)
        raises("tide: add_: in-place operation on a leaf tensor that requires grad", function()
            a:add_(1)
        end)
        local c = a * 1
        local d = c * c
        c:mul_(2)
        raises("was modified in place after it was used", function() d:sum():backward() end)
    end)
    it("detach and detach_", function()
        local a = T({ 1, 2 }, true)
        local d = a:detach()
        assert.is_false(d.requires_grad)
        assert.is_nil(d.grad_fn)
        local e = a * 2
        e:detach_()
        assert.is_false(e.requires_grad)
        assert.is_true(e.is_leaf)
    end)
end)

describe("grad modes (PyTorch 1.13)", function()
    local a = T({ 1, 2 }, true)
    it("no_grad / enable_grad nest, no_grad() decorates, inference_mode", function()
        local q, w
        tide.no_grad(function()
            tide.enable_grad(function() q = a * 2 end)
            w = a * 2
        end)
        assert.is_true(q.requires_grad)
        assert.is_false(w.requires_grad)
        local f = tide.no_grad()(function(t) return t * 2 end)
        assert.is_false(f(a).requires_grad)
        local v
        tide.inference_mode(function() v = a * 2 end)
        assert.is_false(v.requires_grad)
        assert.is_true(tide.is_grad_enabled())
    end)
    it("set_grad_enabled(b) returns the previous mode", function()
        local prev = A.set_grad_enabled(false)
        local w = a * 2
        A.set_grad_enabled(prev)
        assert.is_true(prev)
        assert.is_false(w.requires_grad)
    end)
end)

describe("set_grad_enabled as a context manager", function()
    it("set_grad_enabled(b, fn, ...) runs fn with the mode b and restores it", function()
        local a = T({ 1, 2 }, true)
        local w, x = tide.set_grad_enabled(false, function(k) return a * k, 7 end, 3)
        assert.is_false(w.requires_grad)
        assert.are.equal(7, x)
        assert.is_true(tide.is_grad_enabled())
        -- restored on error too
        assert.has_error(function() tide.set_grad_enabled(false, function() error("boom") end) end)
        assert.is_true(tide.is_grad_enabled())
        tide.no_grad(function()
            assert.is_true(tide.set_grad_enabled(true, function() return (a * 2).requires_grad end))
            assert.is_false(tide.is_grad_enabled())
        end)
        assert.has_error(function() tide.set_grad_enabled(false, 3) end,
            "tide: set_grad_enabled: expected a function after the mode " ..
            "(set_grad_enabled(false, fn, ...)), got number")
    end)
end)

describe("hooks (PyTorch 1.13)", function()
    it("tensor hooks run in order, change the grad, and are removed by their handle", function()
        local a = T({ 1, 2 }, true)
        local h1 = a:register_hook(function(g) return g * 2 end)
        local h2 = a:register_hook(function(g) return g + 1 end)
        ;(a * 1):sum():backward()
        same({ 3, 3 }, a.grad)
        h1:remove()
        a.grad = nil
        ;(a * 1):sum():backward()
        same({ 2, 2 }, a.grad)
        h2:remove()
    end)
    local function linear()
        local m = tide.nn.Linear(2, 2):double()
        tide.no_grad(function()
            m.weight:copy_(T({ { 1, 2 }, { 3, 4 } }))
            m.bias:copy_(T({ 0.5, -0.5 }))
        end)
        return m
    end
    it("forward pre hook and forward hook results replace input and output", function()
        local m = linear()
        local hp = m:register_forward_pre_hook(function(_, inp) return { inp[1] * 2 } end)
        same({ { 6.5, 13.5 } }, m(T({ { 1, 1 } })))
        hp:remove()
        local hf = m:register_forward_hook(function(_, _, out) return out + 1 end)
        same({ { 4.5, 7.5 } }, m(T({ { 1, 1 } })))
        hf:remove()
    end)
    it("full backward hook: grad_output, grad_input, its result replacing grad_input", function()
        local m = linear()
        local seen = {}
        local hb = m:register_full_backward_hook(function(_, gi, go)
            seen.go, seen.gi1 = go[1]:clone(), gi[1]:clone()
            return { gi[1] * 10 }
        end)
        local xi = T({ { 1, 1 } }, true)
        m(xi):sum():backward()
        hb:remove()
        same({ { 1, 1 } }, seen.go)
        same({ { 4, 6 } }, seen.gi1)
        same({ { 40, 60 } }, xi.grad)
    end)
    it("full backward hook: the grad_input list the hook kept is left as given", function()
        local m = linear()
        local kept
        local hb = m:register_full_backward_hook(function(_, gi)
            kept = gi
            return { gi[1] * 10 }
        end)
        local xi = T({ { 1, 1 } }, true)
        m(xi):sum():backward()
        hb:remove()
        same({ { 4, 6 } }, kept[1])
        same({ { 40, 60 } }, xi.grad)
    end)
end)

describe("autograd.Function (PyTorch 1.13)", function()
    it("save_for_backward, ctx fields, non-tensor arguments, nil gradients", function()
        local F = A.Function:extend("F")
        function F.forward(ctx, x, k, y)
            ctx:save_for_backward(x, y)
            ctx.k = k
            return x * y * k
        end
        function F.backward(ctx, g)
            local _, y = unpack(ctx.saved_tensors)
            return g * y * ctx.k, nil, nil
        end
        local p = T({ 1, 2 }, true)
        F.apply(p, 2.0, T({ 3, 4 })):sum():backward()
        same({ 6, 8 }, p.grad)
    end)
    it("needs_input_grad, mark_non_differentiable, set_materialize_grads(false)", function()
        local nig
        local H = A.Function:extend("H")
        function H.forward(ctx, x, y) nig = ctx.needs_input_grad; return x + y end
        function H.backward(_, g) return g, g, nil end
        local p = T({ 1, 2 }, true)
        H.apply(p, T({ 3, 4 }), 3)
        assert.are.same({ true, false, false }, { nig[1], nig[2], nig[3] == true })
        local G = A.Function:extend("G")
        local nones
        function G.forward(ctx, x)
            ctx:set_materialize_grads(false)
            local i = x:argmax()
            ctx:mark_non_differentiable(i)
            return x * 2, i
        end
        function G.backward(_, g, gi)
            nones = { g == nil, gi == nil }
            return g * 2
        end
        local o, i = G.apply(p)
        assert.is_false(i.requires_grad)
        o:sum():backward()
        assert.are.same({ false, true }, nones)
        same({ 2, 2 }, p.grad)
    end)
    it("once_differentiable runs backward with grad mode off", function()
        local O = A.Function:extend("O")
        local mode
        function O.forward(ctx, x) ctx:save_for_backward(x); return x * x end
        O.backward = A.Function.once_differentiable(function(ctx, g)
            mode = tide.is_grad_enabled()
            return ctx.saved_tensors[1] * 2 * g
        end)
        local p = T({ 1, 2 }, true)
        O.apply(p):sum():backward()
        same({ 2, 4 }, p.grad)
        assert.is_false(mode)
        -- PyTorch: the gradient needs no grad (its incoming gradient needed none), so a second
        -- backward raises
        local gg = A.grad(O.apply(p):sum(), p, { create_graph = true })[1]
        raises("tide: backward: tensor does not require grad", function() gg:sum():backward() end)
    end)
end)

describe("autograd.functional (PyTorch 1.13)", function()
    local AF = A.functional
    local cube = function(x) return x ^ 3 end
    local sum3 = function(x) return (x ^ 3):sum() end
    local xx = T({ 1, 2 })
    it("jacobian: reverse, vectorize, forward-mode, create_graph, strict", function()
        local J = { { 3, 0 }, { 0, 12 } }
        same(J, AF.jacobian(cube, xx))
        same(J, AF.jacobian(cube, xx, { vectorize = true }))
        same(J, AF.jacobian(cube, xx, { vectorize = true, strategy = "forward-mode" }))
        raises("tide: jacobian: strategy = \"forward-mode\" is only implemented for vectorize",
            AF.jacobian, cube, xx, { strategy = "forward-mode" })
        raises("tide: jacobian: create_graph = true and strategy = \"forward-mode\"",
            AF.jacobian, cube, xx, { vectorize = true, strategy = "forward-mode",
                create_graph = true })
        assert.is_true(AF.jacobian(cube, xx:clone():requires_grad_(),
            { create_graph = true }).requires_grad)
        raises("tide: jacobian: the output is independent of input 1 (strict = true)",
            AF.jacobian, function() return tide.ones(2, { dtype = "float64" }) end, xx,
            { strict = true })
    end)
    it("hessian, vjp, jvp, hvp, vhp", function()
        same({ { 6, 0 }, { 0, 12 } }, AF.hessian(sum3, xx))
        local o, v = AF.vjp(cube, xx, T({ 1, 1 }))
        same({ 1, 8 }, o); same({ 3, 12 }, v)
        o, v = AF.jvp(cube, xx, T({ 1, 0 }))
        same({ 1, 8 }, o); same({ 3, 0 }, v)
        o, v = AF.hvp(sum3, xx, T({ 1, 1 }))
        assert.are.equal(9, o:item()); same({ 6, 12 }, v)
        o, v = AF.vhp(sum3, xx, T({ 1, 1 }))
        assert.are.equal(9, o:item()); same({ 6, 12 }, v)
    end)
end)

describe("gradcheck, anomaly mode, tide.func (PyTorch 1.13)", function()
    it("gradcheck and gradgradcheck return true", function()
        assert.is_true(A.gradcheck(function(x) return (x ^ 2):sum() end, T({ 1, 2 }, true)))
        assert.is_true(A.gradgradcheck(function(x) return x ^ 3 end, T({ 1, 2 }, true)))
    end)
    it("detect_anomaly: NaN in backward raises naming the op", function()
        raises("tide: backward: the gradient of sqrt (its argument #1) has NaN values", function()
            A.detect_anomaly(function()
                local t = T({ 0, 1 }, true)
                ;(t:sqrt() * 0):sum():backward()
            end)
        end)
    end)
    it("grad, vmap, jacrev, jacfwd", function()
        local F = tide.func
        local cube = function(x) return x ^ 3 end
        local xx = T({ 1, 2 })
        same({ 3, 12 }, F.grad(function(x) return (x ^ 3):sum() end)(xx))
        same({ 5, 25 }, F.vmap(function(x) return (x * x):sum() end)(T({ { 1, 2 }, { 3, 4 } })))
        same({ { 3, 0 }, { 0, 12 } }, F.jacrev(cube)(xx))
        same({ { 3, 0 }, { 0, 12 } }, F.jacfwd(cube)(xx))
    end)
end)

describe("t.grad = g (PyTorch 1.13's assigned-grad checks)", function()
    it("refuses a gradient of another shape, dtype or device, leaving the old one", function()
        local p = tide.ones(3):requires_grad_()
        p.grad = tide.full({ 3 }, 2.5)
        assert.has_error(function() p.grad = tide.ones(2) end,
            "tide: t.grad = g: g has shape {2}, the tensor {3} (as PyTorch's: assigned grad " ..
            "has data of a different size)")
        assert.has_error(function() p.grad = tide.ones(3, { dtype = "float64" }) end,
            "tide: t.grad = g: g is float64, the tensor float32 (as PyTorch's: assigned grad " ..
            "has data of a different type); convert it with :to(\"float32\")")
        assert.has_error(function() p.grad = tide.ones(3, { device = "cpu:1" }) end,
            "tide: t.grad = g: g is on cpu:1, the tensor on cpu (as PyTorch's: assigned grad " ..
            "has data located on a different device); move it with :to(\"cpu\")")
        assert.are.same({ 2.5, 2.5, 2.5 }, p.grad:totable())
        p.grad = nil
        assert.is_nil(p.grad)
    end)
end)
