-- autograd_functional_spec.lua — tide.autograd.functional against PyTorch 1.13's
-- torch.autograd.functional (spec/fixtures/autograd_functional_torch.lua, written by
-- spec/fixtures/make_autograd_functional.py on the same functions): jacobian of one input
-- and one output, of several inputs, of several outputs; hessian of one and of two inputs;
-- vjp, jvp, vhp, hvp; create_graph's differentiable results; the argument checks.
local tide = require("tide")
local D = require("spec.support.device")
local AF = tide.autograd.functional

local T = dofile("spec/fixtures/autograd_functional_torch.lua")
local DEV = D.name

local function t64(v)
    return tide.tensor(v, { dtype = "float64", device = DEV })
end

local X = { 0.5, -1.2, 2.0 }
local Y = { { 1.5, 0.25 }, { -0.5, 2.0 } }
local V3 = { 1.0, -2.0, 0.5 }
local V2 = { 0.3, -0.7 }

-- the fixture's functions, written with tide's ops (1-based)
local function f(x)
    return tide.stack({ x[1] * x[2]:sin() + x[3]:pow(2), (x[1] * x[3]):exp() - x[2] })
end
local function g(x, y)
    return y:matmul(x:narrow(1, 1, 2)) * x[3] + y:sum(1):tanh()
end
local function two(x)
    return { x * x:sum(), x:pow(3):sum() }
end
local function s(x)
    return x[1]:pow(2) * x[2] + x[2]:sin() * x[3]:exp() + x[3]:pow(3)
end
local function s2(x, y)
    return y:matmul(x:narrow(1, 1, 2)):pow(2):sum() * x[3] + (y * y):sum():log()
end

-- a tensor (or nested lists of them) against the fixture's {shape, values} (or lists)
local function same(want, got, what)
    if want.shape == nil then
        assert.are.equal(#want, #got, what .. ": number of parts")
        for i = 1, #want do
            same(want[i], got[i], what .. "[" .. i .. "]")
        end
        return
    end
    assert.are.same(want.shape, got.shape, what .. ": shape")
    local flat = got:to("cpu"):reshape(-1):totable()
    for k, w in ipairs(want.values) do
        assert(math.abs(flat[k] - w) <= 1e-12 * math.max(1, math.abs(w)),
            ("%s: element %d is %.17g, PyTorch's %.17g"):format(what, k, flat[k], w))
    end
end

describe("tide.autograd.functional (" .. DEV .. ")", function()
    it("jacobian: one input and output, several inputs, several outputs", function()
        same(T.jacobian_f, AF.jacobian(f, t64(X)), "jacobian f")
        same(T.jacobian_g, AF.jacobian(g, { t64(X), t64(Y) }), "jacobian g")
        same(T.jacobian_two, AF.jacobian(two, t64(X)), "jacobian two")
    end)

    it("hessian of one input, and the blocks of two", function()
        same(T.hessian_s, AF.hessian(s, t64(X)), "hessian s")
        same(T.hessian_s2, AF.hessian(s2, { t64(X), t64(Y) }), "hessian s2")
    end)

    it("vjp, jvp, vhp and hvp give the output and the product", function()
        local out, vjp = AF.vjp(f, t64(X), t64(V2))
        same(T.vjp_f, { out, vjp }, "vjp")
        out, vjp = AF.jvp(f, t64(X), t64(V3))
        same(T.jvp_f, { out, vjp }, "jvp")
        local o2, vh = AF.vhp(s, t64(X), t64(V3))
        same(T.vhp_s, { o2:reshape({}), vh }, "vhp")
        o2, vh = AF.hvp(s, t64(X), t64(V3))
        same(T.hvp_s, { o2:reshape({}), vh }, "hvp")
    end)

    it("leave the inputs' graph alone, or extend it with create_graph", function()
        local x = t64(X):requires_grad_(true)
        local J = AF.jacobian(f, x)
        assert.is_false(J.requires_grad)
        local Jc = AF.jacobian(f, x, { create_graph = true })
        assert.is_true(Jc.requires_grad)
        local loss = Jc:sum()
        loss:backward() -- d/dx of the sum of f's Jacobian, through it
        assert.are.same({ 3 }, x.grad.shape)
        assert.is_nil(AF.jacobian(f, t64(X)).grad_fn)
    end)

    it("give zeros for an input the output does not use, or raise with strict", function()
        local J = AF.jacobian(function(a, _) return a * 2 end, { t64({ 1, 2 }), t64({ 3 }) })
        assert.are.same({ { 0 }, { 0 } }, J[2]:to("cpu"):totable())
        local ok, err = pcall(AF.jacobian, function(a, _) return a * 2 end,
            { t64({ 1, 2 }), t64({ 3 }) }, { strict = true })
        assert.is_false(ok)
        assert.matches("tide: jacobian: the output is independent of input 2 (strict = true)",
            tostring(err), 1, true)
        -- an output made of no input (a constant): J v is zeros, as PyTorch's
        local _, jv = AF.jvp(function(_) return t64({ 1, 2 }) end, t64(X), t64(V3))
        assert.are.same({ 0, 0 }, jv:to("cpu"):totable())
    end)

    it("check their arguments", function()
        local function msg(fn, ...)
            local ok, err = pcall(fn, ...)
            assert.is_false(ok)
            return tostring(err)
        end
        assert.matches("tide: hessian: the function must return a tensor of one element, got {2}",
            msg(AF.hessian, f, t64(X)), 1, true)
        assert.matches("tide: vjp: the output {2} has more than one element: give v of its shape",
            msg(AF.vjp, f, t64(X)), 1, true)
        assert.matches("tide: jvp: v[1] must have the shape {3} of the inputs, got {2}",
            msg(AF.jvp, f, t64(X), t64(V2)), 1, true)
        assert.matches("tide: jacobian: input 1 is int64; differentiation needs floating-point",
            msg(AF.jacobian, f, tide.tensor({ 1, 2, 3 })), 1, true)
        assert.matches('tide: jacobian: unknown option "vectorise"',
            msg(AF.jacobian, f, t64(X), { vectorise = true }), 1, true)
        assert.matches("tide: hessian: strategy forward-mode is not supported",
            msg(AF.hessian, s, t64(X), { strategy = "forward-mode" }), 1, true)
        -- PyTorch's speed hint: the same results
        same(T.jacobian_f, AF.jacobian(f, t64(X), { vectorize = true }), "vectorize")
    end)
end)
