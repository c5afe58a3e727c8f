-- autograd: hand-computed gradients, graph rules, devices, and a finite-difference check of
-- every differentiable op (spec/support/gradcheck.lua) on the device under test
-- (spec/support/device.lua: run_all.sh runs this file again on cpu:1, gpu-check on cuda:0)
local tide = require("tide")
local K = tide._internal -- the internal kernels (tide._internal in docs/API.md)
local autograd = require("tide.autograd")
local gradcheck = require("spec.support.gradcheck")
local D = require("spec.support.device")

local function R(...)
    return tide.randn({ ... }, { dtype = "float64", requires_grad = true, device = D.name })
end

-- positive inputs for log/sqrt/pow
local function P(...)
    local t = tide.rand({ ... }, { dtype = "float64", device = D.name }):add(0.5)
    return t:requires_grad_(true)
end

-- an integer or bool tensor on the device under test
local function T(v)
    return tide.tensor(v, { device = D.name })
end

local function close(t, expected, tol)
    local got = t:cpu():reshape(-1):totable()
    local flat = {}
    local function walk(x)
        if type(x) == "table" then
            for _, v in ipairs(x) do
                walk(v)
            end
        else
            flat[#flat + 1] = x
        end
    end
    walk(expected)
    assert.are.equal(#flat, #got)
    for i = 1, #flat do
        if math.abs(got[i] - flat[i]) > (tol or 1e-5) then
            error(string.format("element %d: got %.7g, expected %.7g", i, got[i], flat[i]), 2)
        end
    end
end

describe("autograd", function()
    before_each(function()
        tide.manual_seed(7)
    end)
    after_each(function()
        collectgarbage()
    end)

    describe("hand-computed gradients", function()
        it("sum(a*b + a)", function()
            local a = tide.tensor({ 1.0, 2.0 }, { requires_grad = true })
            local b = tide.tensor({ 3.0, 4.0 }, { requires_grad = true })
            local y = (a * b + a):sum()
            assert.are.equal(14, y:item())
            y:backward()
            close(a.grad, { 4, 5 })
            close(b.grad, { 1, 2 })
        end)

        it("sums gradients back over broadcast dims", function()
            local a = tide.tensor({ { 1.0, 2.0, 3.0 }, { 4.0, 5.0, 6.0 } }, { requires_grad = true })
            local b = tide.tensor({ 10.0, 20.0, 30.0 }, { requires_grad = true })
            local c = tide.tensor({ { 2.0 }, { 3.0 } }, { requires_grad = true })
            ;(a * b + c):sum():backward()
            close(b.grad, { 5, 7, 9 })
            close(a.grad, { { 10, 20, 30 }, { 10, 20, 30 } })
            close(c.grad, { { 3 }, { 3 } })
            assert.are.same({ 3 }, b.grad.shape)
            assert.are.same({ 2, 1 }, c.grad.shape)
        end)

        it("handles numbers on either side", function()
            local a = tide.tensor({ 1.0, 2.0 }, { requires_grad = true })
            ;(2 - a * 3 + 1 / a):sum():backward()
            -- d/da = -3 - 1/a^2
            close(a.grad, { -4, -3.25 })
        end)

        it("relu passes gradient where the input is positive", function()
            local a = tide.tensor({ -1.0, 2.0, -3.0, 4.0 }, { requires_grad = true })
            a:relu():sum():backward()
            close(a.grad, { 0, 1, 0, 1 })
        end)

        it("max over a dim routes the gradient to the argmax", function()
            local a = tide.tensor({ { 1.0, 5.0, 2.0 }, { 7.0, 0.0, 3.0 } }, { requires_grad = true })
            local v = a:max(2)
            v:sum():backward()
            close(a.grad, { { 0, 1, 0 }, { 1, 0, 0 } })
        end)

        it("matmul: dW = g^T x, dx = g W", function()
            local x = tide.tensor({ { 1.0, 2.0 } })
            local w = tide.tensor({ { 1.0, 0.0 }, { 0.0, 1.0 }, { 1.0, 1.0 } },
                { requires_grad = true })
            local y = x:matmul(w:t()) -- {1, 2, 3}
            close(y, { { 1, 2, 3 } })
            y:sum():backward()
            close(w.grad, { { 1, 2 }, { 1, 2 }, { 1, 2 } })
            assert.is_true(w.grad:is_contiguous())
        end)

        it("backward(grad) on a non-scalar output", function()
            local a = tide.tensor({ 1.0, 2.0, 3.0 }, { requires_grad = true })
            local y = a * a
            y:backward(tide.tensor({ 1.0, 0.5, 0.0 }))
            close(a.grad, { 2, 2, 0 })
        end)

        it("views: select, narrow, t, permute", function()
            local a = tide.tensor({ { 1.0, 2.0, 3.0 }, { 4.0, 5.0, 6.0 } }, { requires_grad = true })
            local y = a[2]:sum() * 10 + a:narrow(2, 2, 2):sum() + a:t()[1]:sum() * 100
            y:backward()
            close(a.grad, { { 100, 1, 1 }, { 110, 11, 11 } })
        end)
    end)

    describe("graph rules", function()
        -- the op-table test asks this of every row (issue 12): a formula, or a no-grad flag
        it("has_formula tells whether an op name has a backward formula", function()
            assert.is_true(autograd.has_formula("add"))
            assert.is_true(autograd.has_formula("matmul"))
            assert.is_true(autograd.has_formula("maxpool2d"))
            assert.is_false(autograd.has_formula("eq"))
            assert.is_false(autograd.has_formula("argmax"))
            assert.is_false(autograd.has_formula("no_such_op"))
        end)

        it("the graph holds an intermediate only while a formula will read it", function()
            -- h feeds relu alone, whose formula reads its result: nothing keeps h, as reference
            -- counting would free it once relu has run; r (read by relu's formula and sum's
            -- shape) stays
            local x = tide.tensor({ -1.0, 2.0, -3.0, 4.0 }, { requires_grad = true, device = D.name })
            local weak = setmetatable({}, { __mode = "v" })
            local y
            do
                local h = x:mul(2)
                local r = h:relu()
                weak.h, weak.r = h, r
                y = r:sum()
            end
            collectgarbage()
            collectgarbage()
            assert.is_nil(weak.h)
            assert.is_not_nil(weak.r)
            y:backward()
            close(x.grad, { 0, 2, 0, 2 })
            -- retain_grad keeps the result it names, whatever the formula reads
            local h = x:mul(3)
            h:retain_grad()
            local e = h:relu():mul(h):sum() -- sum(relu(h) * h)
            e:backward()
            close(h.grad, { 0, 12, 0, 24 }) -- relu(h) + h * (h > 0)
        end)

        it("a node lets go of what it saved once its formula has run, not at the pass's end", function()
            local x = tide.tensor({ 1.0, 2.0, 3.0 }, { requires_grad = true, device = D.name })
            local weak = setmetatable({}, { __mode = "v" })
            local seen, y = "hook not run", nil
            do
                local h = x:mul(2)
                weak.h = h
                -- runs when h's gradient is ready: sin, which saved h, has run
                h:register_hook(function(g)
                    collectgarbage()
                    collectgarbage()
                    seen = weak.h
                    return g
                end)
                y = h:sin():sum()
            end
            collectgarbage()
            collectgarbage()
            assert.is_not_nil(weak.h) -- saved by sin until backward
            y:backward()
            assert.is_nil(seen)
            close(x.grad, { 2 * math.cos(2), 2 * math.cos(4), 2 * math.cos(6) })
            -- retain_graph keeps it for the next pass
            local z = tide.tensor({ 0.5 }, { requires_grad = true, device = D.name })
            local w = z:mul(3):sin():sum()
            w:backward({ retain_graph = true })
            w:backward()
            close(z.grad, { 6 * math.cos(1.5) })
        end)

        it("relu's gradient goes into the incoming gradient only where it may", function()
            -- float32 spelled out: 1.0 is an integer to Lua 5.1 and LuaJIT
            local F32 = { dtype = "float32", device = D.name }
            local F32G = { dtype = "float32", requires_grad = true, device = D.name }
            local y = tide.tensor({ { 1.0, -1.0 }, { 0.0, 2.0 } }, F32)
            local g = tide.tensor({ { 5.0, 6.0 }, { 7.0, 8.0 } }, F32)
            local v0 = g:_version()
            assert.are.equal(0, select("#", K.relu_backward_(g, y))) -- in place: returns nothing
            close(g, { 5, 0, 0, 8 })
            assert.is_true(g:_version() > v0) -- marked written
            assert.is_false(rawequal(g, K.relu_backward(g, y))) -- relu_backward: a new tensor
            -- an expanded gradient has one element under many: refused, left as it was
            local e = tide.tensor({ 3.0 }, F32):expand(2, 2)
            local ok, err = pcall(K.relu_backward_, e, y)
            assert.is_false(ok)
            assert.is_truthy(err:find("tide: relu_backward_: grad_out is written in place and must "
                .. "be contiguous", 1, true), err)
            close(e, { 3, 3, 3, 3 })
            -- who may be written: only a contiguous gradient that nothing else shares
            local g2 = tide.tensor({ { 5.0, 6.0 }, { 7.0, 8.0 } }, F32)
            assert.is_true(g2:_sole_owner())
            local view = g2:t()
            assert.is_false(g2:_sole_owner())
            close(view, { 5, 7, 6, 8 })
            -- through autograd: one gradient reaches two relus, directly and as a transposed
            -- view; each relu's mask applies to its own path only
            local a = tide.tensor({ { 1.0, -2.0 }, { 3.0, -4.0 } }, F32G)
            local b = tide.tensor({ { -1.0, 2.0 }, { 3.0, 4.0 } }, F32G)
            local s = a:mul(1):relu() + b:mul(1):relu():t()
            s:backward(tide.tensor({ { 1.0, 2.0 }, { 3.0, 4.0 } }, F32))
            close(a.grad, { 1, 0, 3, 0 })
            close(b.grad, { 0, 3, 2, 4 }) -- the gradient transposed, masked by b > 0
        end)

        it("accumulates .grad across backward calls", function()
            local a = tide.tensor({ 1.0, 2.0 }, { requires_grad = true })
            ;(a * 3):sum():backward()
            ;(a * a):sum():backward()
            close(a.grad, { 5, 7 })
        end)

        it("gives each leaf its own gradient tensor", function()
            local a = tide.tensor({ 1.0, 2.0 }, { requires_grad = true })
            local b = tide.tensor({ 1.0, 2.0 }, { requires_grad = true })
            ;(a + b):sum():backward()
            assert.is_false(rawequal(a.grad, b.grad))
            close(a.grad, { 1, 1 })
        end)

        it("adds the gradients of a tensor used twice", function()
            local a = tide.tensor({ 3.0 }, { requires_grad = true })
            local h = a * 2
            ;(h * h + h):sum():backward() -- 4a^2 + 2a -> 8a + 2
            close(a.grad, { 26 })
        end)

        it("refuses a second backward through a freed graph, unless retain_graph", function()
            local a = tide.tensor({ 1.0, 2.0 }, { requires_grad = true })
            local y = (a * a):sum()
            y:backward({ retain_graph = true })
            y:backward()
            close(a.grad, { 4, 8 })
            local ok, err = pcall(y.backward, y)
            assert.is_false(ok)
            assert.matches("backward through the graph a second time", err)
        end)

        it("needs a gradient for a non-scalar output", function()
            local a = tide.tensor({ 1.0, 2.0 }, { requires_grad = true })
            local ok, err = pcall(function()
                (a * 2):backward()
            end)
            assert.is_false(ok)
            assert.matches("tide: backward: grad can be implicitly created only", err)
        end)

        it("refuses backward on a tensor without grad", function()
            local ok, err = pcall(function()
                tide.tensor({ 1.0 }):backward()
            end)
            assert.is_false(ok)
            assert.matches("does not require grad", err)
        end)

        it("records nothing for tensors without grad", function()
            local a = tide.randn(3)
            local y = a * 2 + a
            assert.is_false(y.requires_grad)
            assert.is_nil(y.grad_fn)
        end)

        it("no_grad returns fn's results and records nothing", function()
            local a = tide.tensor({ 1.0 }, { requires_grad = true })
            local y, z = autograd.no_grad(function(k)
                return a * k, "x"
            end, 2)
            assert.is_false(y.requires_grad)
            assert.are.equal("x", z)
            assert.is_true(autograd.is_grad_enabled())
        end)

        it("no_grad restores grad mode after an error", function()
            local ok = pcall(autograd.no_grad, function()
                error("boom")
            end)
            assert.is_false(ok)
            assert.is_true(autograd.is_grad_enabled())
        end)

        it("detach stops the gradient", function()
            local a = tide.tensor({ 2.0 }, { requires_grad = true })
            local y = a * a:detach()
            y:sum():backward()
            close(a.grad, { 2 })
        end)

        it("requires_grad_ makes a leaf", function()
            local a = tide.tensor({ 2.0, 3.0 }, { dtype = "float32" }):requires_grad_(true)
            assert.is_true(a.requires_grad)
            ;(a * a):sum():backward()
            close(a.grad, { 4, 6 })
        end)

        it("leaves .grad of intermediate tensors empty", function()
            local a = tide.tensor({ 2.0 }, { requires_grad = true })
            local h = a * 3
            h:sum():backward()
            assert.is_nil(h.grad)
        end)
    end)

    describe("devices", function()
        it("keeps gradients on the tensor's device (cpu:1)", function()
            local a = tide.tensor({ 1.0, 2.0 }, { requires_grad = true, device = "cpu:1" })
            ;(a * a):sum():backward()
            assert.are.equal("cpu:1", tostring(a.grad.device))
            close(a.grad, { 2, 4 })
        end)

        it("sends the gradient of to(dev) back to the source device", function()
            local a = tide.tensor({ 1.0, 2.0 }, { requires_grad = true })
            local b = a:to("cpu:1")
            ;(b * 3):sum():backward()
            assert.are.equal("cpu", tostring(a.grad.device))
            close(a.grad, { 3, 3 })
        end)

        it("sends the gradient of a dtype cast back as the source dtype", function()
            local a = tide.tensor({ 1.0, 2.0 }, { requires_grad = true, dtype = "float64" })
            ;(a:float() * 2):sum():backward()
            assert.are.equal("float64", a.grad.dtype)
            close(a.grad, { 2, 2 })
        end)
    end)

    describe("gradcheck (float64 finite differences) on " .. D.name, function()
        local cases = {
            { "add broadcast", function(a, b) return a + b end, { R(2, 3), R(3) } },
            { "add number", function(a) return 2 + a end, { R(3) } },
            { "sub", function(a, b) return a - b end, { R(2, 3), R(2, 1) } },
            { "rsub number", function(a) return 1 - a end, { R(3) } },
            { "mul", function(a, b) return a * b end, { R(2, 3), R(3) } },
            { "div", function(a, b) return a / b end, { R(2, 3), P(3) } },
            { "rdiv number", function(a) return 2 / a end, { P(3) } },
            { "pow number", function(a) return a ^ 3 end, { R(4) } },
            { "pow square", function(a) return a ^ 2 end, { R(4) } },
            { "pow tensor", function(a, b) return a ^ b end, { P(3), R(3) } },
            { "rpow number", function(a) return 2 ^ a end, { R(3) } },
            { "maximum", function(a, b) return a:maximum(b) end, { R(2, 3), R(3) } },
            { "minimum", function(a, b) return a:minimum(b) end, { R(2, 3), R(2, 3) } },
            { "neg", function(a) return -a end, { R(3) } },
            { "abs", function(a) return a:abs() end, { R(5) } },
            { "exp", function(a) return a:exp() end, { R(5) } },
            { "log", function(a) return a:log() end, { P(5) } },
            { "sqrt", function(a) return a:sqrt() end, { P(5) } },
            { "rsqrt", function(a) return a:rsqrt() end, { P(5) } },
            { "tanh", function(a) return a:tanh() end, { R(5) } },
            { "sigmoid", function(a) return a:sigmoid() end, { R(5) } },
            { "relu", function(a) return a:relu() end, { R(6) } },
            { "gelu", function(a) return a:gelu() end, { R(6) } },
            { "sin", function(a) return a:sin() end, { R(5) } },
            { "cos", function(a) return a:cos() end, { R(5) } },
            { "clamp", function(a) return a:clamp(-0.5, 0.5) end, { R(8) } },
            { "sum", function(a) return a:sum() end, { R(2, 3) } },
            { "sum dim", function(a) return a:sum(2) end, { R(2, 3) } },
            { "sum dim keepdim", function(a) return a:sum(-2, true) end, { R(2, 3) } },
            { "mean", function(a) return a:mean() end, { R(2, 3) } },
            { "mean dim", function(a) return a:mean(1) end, { R(2, 3) } },
            { "max", function(a) return a:max() end, { R(2, 3) } },
            { "max dim", function(a) return a:max(1) end, { R(3, 4) } },
            { "min dim keepdim", function(a) return a:min(2, true) end, { R(3, 4) } },
            { "prod", function(a) return a:prod() end, { P(2, 3) } },
            { "prod dim", function(a) return a:prod(2) end, { P(2, 3) } },
            { "matmul 2d", function(a, b) return a:matmul(b) end, { R(2, 3), R(3, 4) } },
            { "matmul w:t()", function(a, b) return a:matmul(b:t()) end, { R(2, 3), R(4, 3) } },
            { "matmul 1d x 2d", function(a, b) return a:matmul(b) end, { R(3), R(3, 2) } },
            { "matmul 2d x 1d", function(a, b) return a:matmul(b) end, { R(2, 3), R(3) } },
            { "matmul 1d x 1d", function(a, b) return a:matmul(b) end, { R(3), R(3) } },
            { "matmul batched", function(a, b) return a:matmul(b) end, { R(2, 2, 3), R(2, 3, 2) } },
            { "matmul broadcast", function(a, b) return a:matmul(b) end, { R(2, 3), R(2, 3, 2) } },
            { "t", function(a) return a:t() end, { R(2, 3) } },
            { "transpose", function(a) return a:transpose(1, 3) end, { R(2, 3, 2) } },
            { "view", function(a) return a:view(3, 2) end, { R(2, 3) } },
            { "reshape of t", function(a) return a:t():reshape(6) end, { R(2, 3) } },
            { "permute", function(a) return a:permute(3, 1, 2) end, { R(2, 3, 2) } },
            { "contiguous", function(a) return a:t():contiguous() end, { R(2, 3) } },
            { "narrow", function(a) return a:narrow(2, 2, 2) end, { R(2, 4) } },
            { "select", function(a) return a:select(1, 2) end, { R(3, 2) } },
            { "index", function(a) return a[3] end, { R(3, 2) } },
            { "select first row", function(a) return a:select(1, 1) end, { R(3, 2) } },
            { "index_select", function(a)
                return a:index_select(1, T({ 3, 1, 3 }))
            end, { R(3, 2) } },
            { "expand", function(a) return a:expand(3, 2) end, { R(1, 2) } },
            { "unsqueeze", function(a) return a:unsqueeze(1) end, { R(2, 3) } },
            { "squeeze", function(a) return a:squeeze() end, { R(2, 1, 3) } },
            { "clone", function(a) return a:clone() end, { R(2, 3) } },
            { "sum_to", function(a) return a:sum_to({ 1, 3 }) end, { R(2, 3) } },
            { "cat", function(a, b) return tide.cat({ a, b }, 2) end, { R(2, 3), R(2, 1) } },
            { "softmax", function(a) return a:softmax(2) end, { R(2, 4) } },
            { "log_softmax", function(a) return a:log_softmax(1) end, { R(3, 2) } },
            { "where", function(a, b)
                return tide.where(T({ true, false, true }), a, b)
            end, { R(2, 3), R(3) } },
            { "where method", function(a, b)
                return a:where(T({ { true, false, true }, { false, false, true } }), b)
            end, { R(2, 3), R(1, 3) } },
            { "to another device", function(a) return a:to(D.other):mul(2) end, { R(3) } },
            { "im2col", function(a) return K.im2col(a, 2, 2, 1, 1, 1, 1) end, { R(1, 2, 3, 3) } },
            { "maxpool2d", function(a)
                return (K.maxpool2d(a, 2, 2, 2, 2, 0, 0))
            end, { R(2, 1, 4, 4) } },
        }
        if tide.stack then
            cases[#cases + 1] =
                { "stack", function(a, b) return tide.stack({ a, b }, 2) end, { R(2, 3), R(2, 3) } }
        end
        for _, c in ipairs(cases) do
            it(c[1], function()
                assert.is_true(gradcheck(c[2], c[3]))
            end)
        end

        it("a two-layer composition", function()
            assert.is_true(gradcheck(function(x, w1, w2)
                return x:matmul(w1):tanh():matmul(w2):log_softmax(2)
            end, { R(3, 4), R(4, 5), R(5, 2) }))
        end)

        it("catches a wrong gradient", function()
            local a = R(3)
            local ok = pcall(gradcheck, function(x)
                return autograd.no_grad(function()
                    return x:detach()
                end):mul(x):mul(x) -- x^3 computed with one factor detached
            end, { a })
            assert.is_false(ok)
        end)
    end)
end)

describe("a tensor modified in place after autograd saved it (on " .. D.name .. ")", function()
    local nn = require("tide.nn")

    -- a float32 tensor on the device under test
    local function F(v, rg)
        return tide.tensor(v, { device = D.name, requires_grad = rg })
    end

    -- backward's error, without the position
    local function backward_error(y)
        local ok, err = pcall(function() y:sum():backward() end)
        assert.is_false(ok, "expected backward to raise")
        return err
    end

    it("makes backward raise instead of computing a wrong gradient", function()
        local w = F({ 1.0, 2.0 }, true)
        local x = F({ 3.0, 4.0 })
        local w2 = w * x
        x:add_(1)
        local line = debug.getinfo(1, "l").currentline + 1
        local ok, err = pcall(function() w2:sum():backward() end)
        assert.is_false(ok)
        assert.are.equal("autograd_spec.lua:" .. line .. ": tide: backward: a tensor needed for "
            .. "the gradient of mul (its argument 2) was modified in place after it was used "
            .. "(version 1, expected 0): the " .. x.dtype .. " tensor of shape {2}; clone it "
            .. "before modifying, or modify it under tide.no_grad before the forward pass",
            err:match("[^/]*$"))
        assert.is_nil(w.grad) -- nothing was accumulated
        assert.is_true(autograd.is_grad_enabled())
    end)

    it("through a view, a result saved by its op, a fused nn layer and set_", function()
        local w = F({ 1.0, 2.0 }, true)
        local x = F({ { 3.0, 4.0 }, { 5.0, 6.0 } })
        local y = w * x[1]
        x[1]:mul_(2) -- x[1] is a new view object, on the same storage
        assert.matches("tide: backward: a tensor needed for the gradient of mul %(its argument "
            .. "2%) was modified in place after it was used %(version 1, expected 0%)",
            backward_error(y))

        local e = w:exp()
        tide.no_grad(function() e:mul_(2) end)
        assert.matches("the gradient of exp %(its result%) was modified in place",
            backward_error(e))

        local lin = nn.Linear(2, 1):to(D.name)
        local input = tide.ones(3, 2, { device = D.name })
        local out = lin(input)
        input:fill_(5)
        assert.matches("the gradient of linear %(its argument 1%) was modified in place",
            backward_error(out))

        local z = F({ 3.0, 4.0 })
        local y2 = w * z
        z:set_(F({ 9.0, 9.0 }))
        assert.matches("the gradient of mul %(its argument 2%) was modified in place",
            backward_error(y2))
        assert.is_nil(w.grad)
        assert.is_nil(lin.weight.grad)
    end)

    it("is fine when the modified tensor is not needed, or was cloned", function()
        local w = F({ 1.0, 2.0 }, true)
        local x = F({ 3.0, 4.0 })
        local y = w + x -- add reads no values
        x:add_(1)
        y:sum():backward()
        close(w.grad, { 1, 1 })
        w.grad = nil
        local y2 = w * x:clone()
        x:add_(1)
        y2:sum():backward()
        close(w.grad, { 4, 5 })
        w.grad = nil
        -- w's own values are needed only for x's gradient, and x needs none
        local y3 = w * x
        tide.no_grad(function() w:add_(1) end)
        y3:sum():backward()
        close(w.grad, { 5, 6 })
    end)

    it("w2 = w * x; x:add_(1) (x without grad); w2:sum():backward() raises", function()
        local w = tide.randn(3, { requires_grad = true, device = D.name })
        local x = tide.randn(3, { device = D.name })
        local w2 = w * x
        x:add_(1)
        assert.matches("^tide: backward: a tensor needed for the gradient of mul",
            backward_error(w2):match("tide: .*"))
    end)

    it("a retained graph sees an optimizer step made between two backward calls", function()
        local w = F({ 1.0, 2.0 }, true)
        local y = (w * w):sum()
        y:backward({ retain_graph = true })
        tide.optim.SGD({ w }, { lr = 0.1 }):step()
        local ok, err = pcall(function() y:backward() end)
        assert.is_false(ok)
        assert.matches("the gradient of mul %(its argument %d%) was modified in place after it "
            .. "was used %(version 1, expected 0%)", err)
    end)
end)

describe("scope helpers reject a missing function with a tide: error", function()
    it("no_grad, enable_grad, with_device", function()
        for name, f in pairs({
            no_grad = function() return tide.no_grad(nil) end,
            enable_grad = function() return tide.enable_grad(nil) end,
            with_device = function() return tide.with_device("cpu", nil) end,
        }) do
            local ok, err = pcall(f)
            assert.is_false(ok)
            assert.matches("tide: " .. name .. ": expected a function", err, 1, true)
        end
        assert.is_true(tide.core.is_grad_enabled())
    end)
end)

-- backward(grad, opts) checks what it is given at the user's call, before anything runs
describe("backward's arguments (on " .. D.name .. ")", function()
    local function at_line(line, f)
        local ok, err = pcall(f)
        assert.is_false(ok)
        return err:match("^spec/autograd_spec%.lua:" .. line .. ": (tide: .*)$") or err
    end

    it("a gradient on another device, of another dtype or shape raises at the call", function()
        local dn, on = tostring(tide.device(D.name)), tostring(tide.device(D.other))
        local x = tide.randn(3, { device = D.name, requires_grad = true })
        local y = x * 2
        local line = debug.getinfo(1, "l").currentline + 1
        local err = at_line(line, function() y:backward(tide.ones(3, { device = D.other })) end)
        assert.are.equal("tide: backward: expected all tensors on the same device, found " ..
            on .. " (grad) and " .. dn .. ' (tensor); move the gradient with grad:to("' .. dn ..
            '")', err)
        line = debug.getinfo(1, "l").currentline + 1
        err = at_line(line, function() y:backward(tide.ones(3, { device = D.name, dtype = "float64" })) end)
        assert.are.equal('tide: backward: expected grad of dtype float32 (the tensor\'s), got ' ..
            'float64; convert it with grad:to("float32")', err)
        line = debug.getinfo(1, "l").currentline + 1
        err = at_line(line, function() y:backward(tide.ones(4, { device = D.name })) end)
        assert.are.equal("tide: backward: grad of shape {4} does not match the tensor's shape {3}",
            err)
        assert.is_nil(x.grad)
        y:backward(tide.ones(3, { device = D.name }))
        assert.are.equal(dn, tostring(x.grad.device))
        close(x.grad, { 2, 2, 2 })
    end)

    it("options that are not a table, or unknown keys, raise tide errors", function()
        local x = tide.randn(3, { device = D.name, requires_grad = true })
        local y = (x * 2):sum()
        local line = debug.getinfo(1, "l").currentline + 1
        local err = at_line(line, function() y:backward(nil, 5) end)
        assert.are.equal("tide: backward: options must be a table such as {retain_graph = true}, " ..
            "got number", err)
        line = debug.getinfo(1, "l").currentline + 1
        err = at_line(line, function() y:backward({ retain_grap = true }) end)
        assert.are.equal('tide: backward: unknown option "retain_grap" (did you mean ' ..
            '"retain_graph"?)', err)
        y:backward(nil, { retain_graph = true })
        y:backward()
        close(x.grad, { 4, 4, 4 })
    end)
end)

-- API.md: in-place ops on non-leaf tensors that require grad are recorded (PyTorch's rule);
-- only leaves that require grad refuse them; version counters still catch misuse at backward
describe("in-place ops on results that require grad (on " .. D.name .. ")", function()
    local function F(v, rg)
        return tide.tensor(v, { device = D.name, requires_grad = rg })
    end

    it("h = x*2; h:relu_(); h:sum():backward() gives relu's gradient", function()
        local x = F({ -1.0, 2.0, -3.0, 4.0 }, true)
        local h = x * 2
        assert.is_true(rawequal(h, h:relu_()))
        close(h, { 0, 4, 0, 8 })
        assert.is_false(h.is_leaf)
        h:sum():backward()
        close(x.grad, { 0, 2, 0, 2 })
    end)

    it("ops that used h before the in-place op keep their own gradient", function()
        local x = F({ -1.0, 2.0, -3.0, 4.0 }, true)
        local h = x * 2
        local y = h * 3 -- mul by a number reads nothing of h
        h:relu_()
        ;(y + h):sum():backward()
        close(x.grad, { 6, 8, 6, 8 })
    end)

    it("each kind of in-place op records its gradient", function()
        local x, w = F({ 1.0, 2.0, 3.0 }, true), F({ 4.0, 5.0, 6.0 }, true)
        local h = x * 1
        h:mul_(w) -- reads h as it was for w's gradient
        h:add_(w, 2)
        h:sum():backward()
        close(x.grad, { 4, 5, 6 })
        close(w.grad, { 1 + 2, 2 + 2, 3 + 2 })

        x.grad, w.grad = nil, nil
        h = x * 1
        h:clamp_(0, 2.5):exp_() -- clamp reads its input, exp its result
        h:sum():backward()
        close(x.grad, { math.exp(1), math.exp(2), 0 }, 1e-3)
        h = x * 1
        h:exp_():clamp_(0, 10) -- exp's saved result overwritten: refused, as in PyTorch
        assert.is_false(pcall(function() h:sum():backward() end))

        x.grad = nil
        h = x * 1
        h:copy_(w) -- the old values are gone: nothing flows to x; w gets it all
        h:mul(x):sum():backward()
        close(x.grad, { 4, 5, 6 })
        close(w.grad, { 1, 2, 3 })

        x.grad, w.grad = nil, nil
        h = x * 2
        h:fill_(1)
        ;(h * x):sum():backward()
        close(x.grad, { 1, 1, 1 })

        x.grad, w.grad = nil, nil
        local m = (x * 1):view(3, 1):expand(3, 2):contiguous()
        m[2] = w[1] -- t[i] = v: slice 2 comes from w[1]
        m:sum():backward()
        close(x.grad, { 2, 0, 2 })
        close(w.grad, { 2, 0, 0 })

        x.grad, w.grad = nil, nil
        h = x * 1
        h:index_add_(1, T({ 3, 3 }), w:narrow(1, 1, 2))
        h:mul(T({ 1.0, 10.0, 100.0 })):sum():backward()
        close(x.grad, { 1, 10, 100 })
        close(w.grad, { 100, 100, 0 })
    end)

    it("a tensor without grad that takes a value requiring grad joins the graph", function()
        local x = F({ 1.0, 2.0 }, true)
        local buf = tide.zeros(2, { device = D.name })
        buf:add_(x:mul(3))
        assert.is_true(buf.requires_grad)
        buf:sum():backward()
        close(x.grad, { 3, 3 })
    end)

    it("keeps backward's check: a value a node saved, modified in place, raises", function()
        local x = F({ -1.0, 2.0 }, true)
        local h = x * 2
        local y = h * h -- saves h
        h:relu_()
        local ok, err = pcall(function() y:sum():backward() end)
        assert.is_false(ok)
        assert.matches("tide: backward: a tensor needed for the gradient of mul %(its argument " ..
            "%d%) was modified in place after it was used %(version 1, expected 0%)", err)
    end)

    it("leaves that require grad refuse, and views of them too", function()
        local x = F({ -1.0, 2.0 }, true)
        local line = debug.getinfo(1, "l").currentline + 1
        local ok, err = pcall(function() x:relu_() end)
        assert.is_false(ok)
        assert.are.equal("spec/autograd_spec.lua:" .. line .. ": tide: relu_: in-place operation " ..
            "on a leaf tensor that requires grad; wrap it in tide.no_grad or use detach()", err)
        line = debug.getinfo(1, "l").currentline + 1
        ok, err = pcall(function() x:narrow(1, 1, 1):mul_(2) end)
        assert.is_false(ok)
        assert.are.equal("spec/autograd_spec.lua:" .. line .. ": tide: mul_: in-place operation " ..
            "on a view of a leaf tensor that requires grad; clone() the view first, or make the " ..
            "change under tide.no_grad", err)
        local h = x * 2
        line = debug.getinfo(1, "l").currentline + 1
        ok, err = pcall(function() h:view(2, 1):expand(2, 3):relu_() end)
        assert.is_false(ok)
        assert.are.equal("spec/autograd_spec.lua:" .. line .. ": tide: relu_: in-place operation " ..
            "on an expanded view (its elements share memory); clone() it first", err)
        close(x, { -1, 2 })
        close(h, { -2, 4 })
    end)
end)

-- An in-place op on a view of a tensor in the graph changes the base: the base's grad_fn becomes
-- CopySlices (the view's region of its gradient goes through the op), the view's a view of it;
-- a view made before its base changed is made again when an op uses it (PyTorch's semantics).
-- Expected values from PyTorch 1.13 (the same script in torch).
describe("in-place ops on views of tensors that require grad", function()
    local function T(v)
        return tide.tensor(v, { dtype = "float64" })
    end

    it("a region of a non-leaf scaled in place", function()
        local x = T({ 1, 2, 3 }):requires_grad_(true)
        local h = x * 2
        h:narrow(1, 2, 1):mul_(5)
        assert.are.equal("CopySlices", tostring(h.grad_fn))
        close(h, { 2, 20, 6 })
        h:sum():backward()
        close(x.grad, { 2, 10, 2 })
    end)

    it("a tensor that requires grad copied into a view: both sides get their part", function()
        local a = T({ 1, 2, 3, 4 }):requires_grad_(true)
        local b = T({ 10, 20 }):requires_grad_(true)
        local z = a * 1
        z:narrow(1, 1, 2):copy_(b)
        close(z, { 10, 20, 3, 4 })
        local loss = (z * T({ 1, 2, 3, 4 })):sum()
        loss:backward()
        close(a.grad, { 0, 0, 3, 4 })
        close(b.grad, { 1, 2 })
    end)

    it("through a chain of views (select of a narrow, t of a select, t[i] = v)", function()
        local x = tide.arange(1, 7, { dtype = "float64" }):reshape(2, 3):requires_grad_(true)
        local h = x * 1
        h:select(1, 2):narrow(1, 2, 2):mul_(10)
        close(h:reshape(-1), { 1, 2, 3, 4, 50, 60 })
        h:sum():backward()
        close(x.grad:reshape(-1), { 1, 1, 1, 1, 10, 10 })
        local x7 = T({ { 1, 2 }, { 3, 4 } }):requires_grad_(true)
        local h7 = x7 * 1
        h7:t():select(1, 1):exp_() -- h7's first column; exp_'s gradient reads its result
        h7:sum():backward()
        close(x7.grad:reshape(-1), { math.exp(1), 1, math.exp(3), 1 })
        local x8 = T({ 1, 2, 3 }):requires_grad_(true)
        local h8 = x8 * 3
        local s8 = h8:narrow(1, 1, 2)
        s8[1] = 0
        h8:sum():backward()
        close(x8.grad, { 0, 3, 3 })
    end)

    it("an op that used the view before keeps its graph; one after sees the change", function()
        local x = T({ 1, 2 }):requires_grad_(true)
        local h = x * 2
        local v = h:view(2, 1)
        local y = v * 3 -- before: 3 * (2x)
        v:mul_(2)       -- h is now 4x
        local loss = y:sum() + h:sum()
        loss:backward()
        close(x.grad, { 10, 10 })
        -- a view taken before its base changed in place follows the base's new graph
        local x2 = T({ -1, 2 }):requires_grad_(true)
        local h2 = x2 * 2
        local v2 = h2:view(2, 1)
        h2:relu_()
        v2:sum():backward()
        close(x2.grad, { 0, 2 })
    end)

    it("a reshape that copied is no view: its base is left alone", function()
        local x = T({ { 1, 2 }, { 3, 4 } }):requires_grad_(true)
        local h = x * 1
        local r = h:t():reshape(4) -- not contiguous: a copy
        r:mul_(10)
        close(h:reshape(-1), { 1, 2, 3, 4 })
        local loss = r:sum() + h:sum()
        loss:backward()
        close(x.grad:reshape(-1), { 11, 11, 11, 11 })
    end)
end)

-- Expected values from PyTorch 1.13 (float64), the same programs.
describe("writes that require grad into views of tensors that need none (PyTorch's _base)", function()
    local function T(v)
        return tide.tensor(v, { dtype = "float64" })
    end

    it("reach the view's base: a region copied in, as Torch7's select(1, i):copy_(h)", function()
        local z = tide.zeros(4, { dtype = "float64" })
        local w = T({ 10, 20 }):requires_grad_(true)
        z:narrow(1, 1, 2):copy_(w)
        assert.is_true(z.requires_grad)
        assert.are.equal("CopySlices", tostring(z.grad_fn))
        close(z, { 10, 20, 0, 0 })
        ;(z * T({ 1, 2, 3, 4 })):sum():backward()
        close(w.grad, { 1, 2 })
        local x = T({ 1, 2 }):requires_grad_(true)
        local out = tide.zeros(3, 2, { dtype = "float64" })
        for i = 1, 3 do
            out:select(1, i):copy_(x * i)
        end
        ;(out * out):sum():backward()
        close(x.grad, { 28, 56 }) -- 2x(1 + 4 + 9)
    end)

    it("through views of views, and every view of the base follows the change", function()
        -- z is itself a view (of arange's result): the root takes the change, z and v follow
        local z = tide.arange(0, 6, { dtype = "float64" }):reshape(2, 3)
        local v = z:t():narrow(1, 2, 2)
        local w = T({ { 1, 2 }, { 3, 4 } }):requires_grad_(true)
        v:mul_(w)
        assert.are.equal("AsStridedBackward0", tostring(v.grad_fn))
        assert.are.equal("AsStridedBackward0", tostring(z.grad_fn))
        close(z, { { 0, 1, 6 }, { 3, 8, 20 } })
        local coef = tide.arange(1, 7, { dtype = "float64" }):reshape(2, 3)
        ;((z * coef):sum() + (v * v):sum()):backward()
        close(w.grad, { { 4, 84 }, { 30, 230 } })
    end)

    it("a view made before its base took a value that requires grad follows it", function()
        local z = tide.zeros(2, 2, { dtype = "float64" })
        local row = z[2]
        local w = T({ { 1, 2 }, { 3, 4 } }):requires_grad_(true)
        z:copy_(w * 3)
        assert.is_true(row.requires_grad)
        ;(row * T({ 5, 7 })):sum():backward()
        close(w.grad, { { 0, 0 }, { 15, 21 } })
        -- its view node is made when its grad_fn is first read, under no_grad too
        local z2 = tide.zeros(2, { dtype = "float64" })
        local first = z2[1]
        local w2 = T({ 4, 5 }):requires_grad_(true)
        z2:copy_(w2)
        tide.no_grad(function()
            assert.are.equal("AsStridedBackward0", tostring(first.grad_fn))
        end)
        ;(first * 2):backward()
        close(w2.grad, { 2, 0 })
    end)

    it("refuses a view of a leaf that requires grad, and an expanded view", function()
        local z = tide.zeros(4, { dtype = "float64" })
        local v = z:narrow(1, 1, 2)
        z:requires_grad_(true)
        local w = T({ 1, 1 }):requires_grad_(true)
        assert.has_error(function()
            v:copy_(w)
        end, "tide: copy_: in-place operation on a view of a leaf tensor that requires grad; " ..
            "clone() the view first, or make the change under tide.no_grad")
        -- (the base held: a view whose base the collector took is refused by the kernel's own
        -- check, in other words)
        local base = tide.zeros(1, { dtype = "float64" })
        local e = base:expand(2)
        assert.has_error(function()
            e:add_(w)
        end, "tide: add_: in-place operation on an expanded view (its elements share memory); " ..
            "clone() it first")
        assert.is_true(base:numel() == 1)
        close(e, { 0, 0 })
        assert.is_false(e.requires_grad)
    end)

    it("a view whose root was collected takes the write itself; no link dangles", function()
        local views = {}
        for i = 1, 40 do
            views[i] = tide.zeros(3, { dtype = "float64" }):narrow(1, 1, 2) -- roots dropped
        end
        local kept = tide.zeros(2, 2, { dtype = "float64" })
        local rows = { kept[1], kept[2] }
        collectgarbage()
        collectgarbage()
        local w = T({ 1, 2 }):requires_grad_(true)
        for i = 1, 40 do
            views[i]:copy_(w * i)
        end
        rows[2]:copy_(w)
        views = nil
        collectgarbage()
        collectgarbage()
        ;(rows[1] + kept[2] * 3):sum():backward()
        close(w.grad, { 3, 3 })
    end)

    it("keep their root alive, and nothing else does: the collector takes both together", function()
        -- the root's graph reaches a view that follows it (index_put_'s own permuted view, a
        -- view's node): a registry reference kept the root, its graph and the library that
        -- made them alive to the end of the program (a leak per call)
        local gone = setmetatable({}, { __mode = "v" })
        do
            local z = tide.zeros(2, 3, { dtype = "float64" })
            local y = T({ { 1, 2, 3 } }):requires_grad_(true)
            z:index_put_({ tide.tensor({ 1, 2 }), tide.tensor({ 3, 1 }) }, y[1]:narrow(1, 1, 2))
            assert.is_true(z.requires_grad)
            local row = z[1]
            local z2 = tide.zeros(3, { dtype = "float64" })
            local v = z2:narrow(1, 1, 2)
            z2:copy_(y[1] * 2)
            gone[1], gone[2], gone[3] = z, row, z2
            assert.are.equal("AsStridedBackward0", tostring(v.grad_fn))
        end
        collectgarbage()
        collectgarbage()
        assert.are.same({}, { gone[1], gone[2], gone[3] })
        -- a view alone keeps its root (PyTorch's _base): its gradient still reaches the write
        local w = T({ 4, 5 }):requires_grad_(true)
        local first
        do
            local z = tide.zeros(2, { dtype = "float64" })
            first = z[1]
            z:copy_(w)
        end
        collectgarbage()
        collectgarbage()
        ;(first * 3):backward()
        close(w.grad, { 3, 0 })
    end)

    it("no_grad and views of tensors that require grad keep their own rules", function()
        local z = tide.zeros(3, { dtype = "float64" })
        local v = z:narrow(1, 2, 2)
        tide.no_grad(function()
            v:copy_(T({ 1, 2 }):requires_grad_(true))
        end)
        assert.is_false(z.requires_grad)
        assert.is_false(v.requires_grad)
        close(z, { 0, 1, 2 })
    end)
end)

describe("as_strided", function()
    local function T(v)
        return tide.tensor(v, { dtype = "float64" })
    end

    it("views any geometry of the storage; its gradient sums where the view overlaps", function()
        local x = tide.arange(0, 6, { dtype = "float64" }):requires_grad_(true)
        local y = x:as_strided({ 2, 2 }, { 1, 2 }, 1)
        close(y, { { 1, 3 }, { 2, 4 } })
        assert.are.equal("AsStridedBackward0", tostring(y.grad_fn))
        ;(y * T({ { 1, 2 }, { 3, 4 } })):sum():backward()
        close(x.grad, { 0, 1, 3, 2, 4, 0 })
        x = tide.arange(0, 6, { dtype = "float64" }):requires_grad_(true)
        y = tide.as_strided(x, { 3, 2 }, { 1, 1 }) -- rows overlap
        close(y, { { 0, 1 }, { 1, 2 }, { 2, 3 } })
        ;(y * tide.arange(1, 7, { dtype = "float64" }):reshape(3, 2)):sum():backward()
        close(x.grad, { 1, 5, 9, 6, 0, 0 })
        -- over the storage, not over x's elements: x is a transpose
        local x0 = tide.arange(0, 6, { dtype = "float64" }):reshape(2, 3):t():requires_grad_(true)
        y = x0:as_strided({ 2, 2 }, { 3, 1 }, 1)
        close(y, { { 1, 2 }, { 4, 5 } })
        ;(y * T({ { 1, 2 }, { 3, 4 } })):sum():backward()
        close(x0.grad, { { 0, 0 }, { 1, 3 }, { 2, 4 } })
        -- writes through it reach the base
        local b = tide.arange(0, 4, { dtype = "float64" })
        b:as_strided({ 2 }, { 2 }, 1):fill_(9)
        close(b, { 0, 9, 2, 9 })
    end)

    it("refuses a geometry outside the storage, negative strides and mismatched lists", function()
        local x = tide.arange(0, 6)
        assert.has_error(function()
            x:as_strided({ 3, 3 }, { 2, 1 })
        end, "tide: as_strided: the geometry reaches element 7 of a storage of 6 elements; " ..
            "give sizes, strides and an offset within it")
        assert.has_error(function()
            x:as_strided({ 2 }, { -1 })
        end, "tide: as_strided: dim 1 has size 2 and stride -1; both must be >= 0")
        assert.has_error(function()
            x:as_strided({ 2, 2 }, { 1 })
        end, "tide: as_strided: 2 sizes but 1 strides; give one stride a size")
        assert.has_error(function()
            x:as_strided({ 2 }, { 1 }, -1)
        end, "tide: as_strided: storage offset must be >= 0, got -1")
        assert.has_error(function()
            x:as_strided(2, 1)
        end, "tide: as_strided: size and stride must be lists such as {2, 3} and {3, 1}, got " ..
            "number and number")
        close(x:as_strided({ 0, 4 }, { 9, 9 }, 6), {}) -- no elements: nothing is reached
    end)
end)

describe("cat and stack keep their own list", function()
    it("a list appended to after the call does not change the gradient", function()
        -- building a list step by step and concatenating it at each step (a row-by-row solve)
        -- used to make backward split the gradient by the grown list and fail
        for _, op in ipairs({ "cat", "stack" }) do
            local x = tide.ones(2):requires_grad_(true)
            local list = { x * 2 }
            local y = tide[op](list)
            list[2] = x * 3
            y:sum():backward()
            assert.are.same({ 2, 2 }, x.grad:totable(), op)
        end
    end)
end)

describe("views made under no_grad, modified in place with grad on (PyTorch's rule)", function()
    local MSG = "in-place operation with grad mode on, on a view made under tide.no_grad: " ..
        "ambiguous, so refused (as PyTorch does); make the view and the in-place op both " ..
        "inside tide.no_grad (not recorded) or both outside it (recorded)"

    local function refused(op, f)
        local ok, err = pcall(f)
        assert.is_false(ok)
        assert.are.equal("tide: " .. op .. ": " .. MSG, tostring(err):match("tide:.*$"))
    end

    it("refuses a write that requires grad, and leaves the tensors as they were", function()
        local x = tide.ones(2):requires_grad_(true)
        local out = tide.zeros(3)
        local v
        tide.no_grad(function() v = out:narrow(1, 1, 2) end)
        refused("copy_", function() v:copy_(x * 2) end)
        assert.are.same({ 0, 0, 0 }, out:totable())
        -- a view of that view is one too, as in PyTorch
        local vv = v:narrow(1, 1, 1)
        refused("add_", function() vv:add_(x:narrow(1, 1, 1)) end)
        -- a write that needs no grad is still fine
        v:copy_(tide.ones(2))
        assert.are.same({ 1, 1, 0 }, out:totable())
    end)

    it("refuses any in-place op on a view of a tensor that requires grad", function()
        local p = tide.ones(3):requires_grad_(true)
        local w
        tide.no_grad(function() w = p:select(1, 2) end)
        refused("mul_", function() w:mul_(2) end)
        refused("t[i] = v", function()
            local m = tide.ones(2, 2):requires_grad_(true)
            local r
            tide.no_grad(function() r = m[1] end)
            r[1] = 5
        end)
        assert.are.same({ 1, 1, 1 }, p:detach():totable())
        -- inside no_grad, as PyTorch's optimizers do, it is a plain write
        tide.no_grad(function() w:mul_(2) end)
        assert.are.same({ 1, 2, 1 }, p:detach():totable())
    end)
end)

describe("a NaN gradient reaches only the elements an op selected (PyTorch's where)", function()
    local nan = 0 / 0

    local function grads(t)
        local out = {}
        for i, v in ipairs(t:totable()) do
            out[i] = v ~= v and "nan" or v
        end
        return out
    end

    local function f64(v, rg)
        return tide.tensor(v, { dtype = "float64" }):requires_grad_(rg or false)
    end

    it("where, clamp, maximum, relu, max and amax give 0 off their selection", function()
        -- PyTorch 1.13's gradients on the same programs
        local x, a = f64({ -1, 2 }, true), f64({ 1, 5 }, true)
        tide.where(x:gt(0), x, a):backward(f64({ nan, 1 }))
        assert.are.same({ 0, 1 }, grads(x.grad))
        assert.are.same({ "nan", 0 }, grads(a.grad))
        x.grad, a.grad = nil, nil
        x:clamp(0, 1):backward(f64({ nan, nan }))
        assert.are.same({ 0, 0 }, grads(x.grad))
        x.grad = nil
        tide.maximum(x, a):backward(f64({ nan, nan }))
        assert.are.same({ 0, 0 }, grads(x.grad))
        assert.are.same({ "nan", "nan" }, grads(a.grad))
        for _, dt in ipairs({ "float32", "float64" }) do
            local y = tide.tensor({ -1, 2 }, { dtype = dt }):requires_grad_(true)
            y:relu():backward(tide.tensor({ nan, 1 }, { dtype = dt }))
            assert.are.same({ 0, 1 }, grads(y.grad), dt)
        end
        local t = f64({ -1, 2, 2 }, true)
        t:max():backward(f64(nan))
        assert.are.same({ 0, "nan", "nan" }, grads(t.grad))
        t.grad = nil
        -- PyTorch 1.13's amax multiplies by the ties' mask (NaN everywhere here); tide's amax
        -- gives what its max gives
        t:amax():backward(f64(nan))
        assert.are.same({ 0, "nan", "nan" }, grads(t.grad))
        t.grad = nil
        local v = t:max(1)
        v:backward(f64(nan))
        assert.are.same({ 0, "nan", 0 }, grads(t.grad))
    end)
end)

-- relu's one-pass backward writes into the incoming gradient when nothing else holds it; an
-- expanded one (sum's gradient, loss:sum() / n) has one element under all, and writing it zeroed
-- every gradient (YOLOv8's cls loss, ported_scripts127). torch: relu(x).sum() / 3 gives
-- [0, 1/3, 1/3]; a hinge loss relu(1 - y) sums likewise
describe("relu's gradient through an expanded incoming gradient", function()
    it("is PyTorch's, not zeros", function()
        for _, f in ipairs({
            function(y) return y:sum() / 3 end,
            function(y) return y:sum() end,
            function(y) return (y:sum(1) * 2):sum() end,
        }) do
            local x = tide.tensor({ -1, 2, 3 }, { dtype = "float32", requires_grad = true })
            f(tide.relu(x)):backward()
            local g = x.grad:totable()
            assert.are.equal(0, g[1])
            assert.is_true(g[2] > 0.3 and g[3] > 0.3 and g[2] == g[3])
        end
        local w = tide.tensor({ 0.5, 2 }, { dtype = "float32", requires_grad = true })
        tide.nn.functional.relu(1 - w):sum():backward() -- hinge: d/dw = -1 where 1 - w > 0
        assert.are.same({ -1, 0 }, w.grad:totable())
    end)
end)
