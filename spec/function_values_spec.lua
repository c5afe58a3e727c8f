-- function_values_spec.lua — custom autograd functions (tide.autograd.Function) against
-- PyTorch 1.13's torch.autograd.Function: saved tensors and their in-place check,
-- needs_input_grad, mark_dirty, mark_non_differentiable, set_materialize_grads(false), the
-- number, kind and shape of backward's gradients, once_differentiable, no_grad, double backward
-- and gradcheck. Expected values and error substance printed by PyTorch 1.13 (float64).
local tide = require("tide")

local Function = tide.autograd.Function
local unpack = table.unpack or unpack

local function t64(v, rg)
    local t = tide.tensor(v, { dtype = "float64" })
    return rg and t:requires_grad_(true) or t
end

local function close(want, got, what)
    local g = got:tolist()
    assert.are.equal(#want, #g, what)
    for i = 1, #want do
        assert.is_true(math.abs(want[i] - g[i]) < 1e-9, what .. " [" .. i .. "]: " ..
            tostring(g[i]) .. " vs " .. tostring(want[i]))
    end
end

local function catch(f)
    local ok, err = pcall(f)
    assert.is_false(ok, "expected an error")
    return tostring(err)
end

local function class(name, forward, backward)
    local C = Function:extend(name)
    C.forward, C.backward = forward, backward
    return C
end

local Exp = class("FvExp", function(ctx, x)
    local y = x:exp()
    ctx:save_for_backward(y)
    return y
end, function(ctx, g) return g * ctx.saved_tensors[1] end)

local Cube = class("FvCube", function(ctx, a)
    ctx:save_for_backward(a)
    return a:pow(3)
end, function(ctx, g) return 3 * ctx.saved_tensors[1]:pow(2) * g end)

describe("autograd.Function values against PyTorch 1.13", function()
    it("saves tensors, names needs_input_grad and checks versions", function()
        local x = t64({ 0.5, 1.0 }, true)
        local y = Exp.apply(x)
        assert.are.equal("FvExpBackward", tostring(y.grad_fn), "grad_fn")
        assert.is_true(y.requires_grad, "requires_grad")
        y:sum():backward()
        close({ 1.6487212707001282, 2.718281828459045 }, x.grad, "exp grad")
        -- PyTorch: one of the variables needed for gradient computation has been modified by an
        -- inplace operation: [torch.DoubleTensor [2]], which is output 0 of ExpBackward, is at
        -- version 1; expected version 0 instead.
        y = Exp.apply(t64({ 0.5, 1.0 }, true))
        tide.no_grad(function() y:mul_(2) end)
        local e = catch(function() y:sum():backward() end)
        assert.matches("one of the variables needed for gradient computation has been modified " ..
            "by an inplace operation: the float64 tensor of shape {2}, saved tensor 1 of " ..
            "FvExpBackward, is at version 1; expected version 0 instead", e, 1, true)
        -- needs_input_grad (True, False, False); saved_tensors keeps None; to_save
        local seen = {}
        local NIG = class("FvNIG", function(ctx, a, b, k)
            seen.nig = { ctx.needs_input_grad[1], ctx.needs_input_grad[2],
                ctx.needs_input_grad[3] }
            ctx:save_for_backward(a, nil)
            return a * b * k
        end, function(ctx, g)
            seen.saved = { ctx.saved_tensors.n, ctx.saved_tensors[2], ctx.to_save.n }
            return g, nil, nil
        end)
        local a = t64({ 1, 2 }, true)
        NIG.apply(a, t64({ 3, 4 }), 3):sum():backward()
        assert.are.same({ true, false, false }, seen.nig, "needs_input_grad")
        assert.are.same({ 2, nil, 2 }, seen.saved, "saved_tensors")
        close({ 1, 1 }, a.grad, "nig grad")
        -- save non tensor: save_for_backward can only save variables, but argument 1 is of type int
        local SN = class("FvSN", function(ctx, t) ctx:save_for_backward(t, 3); return t * 2 end,
            function(_, g) return g end)
        assert.matches("save_for_backward takes tensors (or nil), argument 2 is a number",
            catch(function() SN.apply(t64({ 1 }, true)) end), 1, true)
    end)

    it("marks outputs dirty, non-differentiable, and gradients unmaterialized", function()
        -- mark_dirty: o is h, h = [2, 3], AddOneBackward, grad [8, 12]
        local AddOne = class("FvAddOne", function(ctx, x)
            x:add_(1)
            ctx:mark_dirty(x)
            return x
        end, function(_, g) return g * 2 end)
        local a = t64({ 1, 2 }, true)
        local h = a * 1
        local o = AddOne.apply(h)
        assert.is_true(rawequal(o, h), "dirty output is the input")
        close({ 2, 3 }, h, "dirty values")
        assert.are.equal("FvAddOneBackward", tostring(h.grad_fn), "dirty grad_fn")
        assert.are.equal(1, AddOne.apply(t64({ 1 })):numel(), "dirty without grad")
        ;(o * o):sum():backward()
        close({ 8, 12 }, a.grad, "dirty grad")
        -- a leaf Variable that requires grad has been used in an in-place operation.
        assert.matches("a leaf tensor that requires grad has been used in an in-place operation",
            catch(function() AddOne.apply(t64({ 1 }, true)) end), 1, true)
        -- Some elements marked as dirty during the forward method were not returned as output.
        local Bad = class("FvBadDirty", function(ctx, x)
            x:add_(1); ctx:mark_dirty(x); return x * 2
        end, function(_, g) return g end)
        assert.matches("marked with mark_dirty was not returned",
            catch(function() Bad.apply(t64({ 1 }, true) * 1) end), 1, true)
        -- mark_non_differentiable: v True, i False (grad_fn None); backward gets gi zeros
        local seen = {}
        local Sort = class("FvSort", function(ctx, x)
            local v, i = x:sort()
            ctx:mark_non_differentiable(i)
            ctx:save_for_backward(i)
            return i, v -- the index first: backward(ctx, gi, gv)
        end, function(ctx, gi, g)
            seen.gi = gi:tolist()
            return tide.zeros_like(g):scatter(1, ctx.saved_tensors[1], g)
        end)
        local x = t64({ 3, 1, 2 }, true)
        local i, v = Sort.apply(x)
        assert.is_true(v.requires_grad, "v requires grad")
        assert.is_false(i.requires_grad, "i requires grad")
        assert.is_nil(i.grad_fn, "i grad_fn")
        ;(v * t64({ 1, 2, 3 })):sum():backward()
        assert.are.same({ 0, 0, 0 }, seen.gi, "gi")
        close({ 3, 1, 2 }, x.grad, "sort grad")
        -- an integer output not marked: requires_grad False, grad_fn None, no error
        local IntOut = class("FvIntOut", function(_, t) return t:long() end,
            function(_, g) return g end)
        local io = IntOut.apply(t64({ 1 }, true))
        assert.is_false(io.requires_grad, "int output")
        -- set_materialize_grads(False): a non-differentiable output's gradient is None
        local Mat = class("FvMat", function(ctx, t)
            ctx:set_materialize_grads(false)
            local k = t:argmax()
            ctx:mark_non_differentiable(k)
            return t * 2, k
        end, function(_, g, gk)
            seen.mat = { g == nil, gk == nil }
            return g * 2
        end)
        x = t64({ 1, 2 }, true)
        Mat.apply(x):sum():backward()
        assert.are.same({ false, true }, seen.mat, "materialize false")
        close({ 2, 2 }, x.grad, "mat grad")
    end)

    pending("set_materialize_grads(false) with several differentiable outputs: PyTorch " ..
        "passes None for an unused one (mat False True), tide zeros (one packed tensor)")

    it("checks the number, kind and shape of backward's gradients", function()
        local function run(C, ...)
            local args = { n = select("#", ...), ... }
            return catch(function()
                C.apply(unpack(args, 1, args.n)):sum():backward()
            end)
        end
        local a = t64({ 1 }, true)
        -- function FewBackward returned an incorrect number of gradients (expected 2, got 1)
        local Few = class("FvFew", function(_, p, q) return p * q end, function(_, g) return g end)
        local b = t64({ 1 }, true)
        assert.matches("tide: FvFew.backward returned an incorrect number of gradients " ..
            "(expected 2, got 1); return one gradient (or nil) per forward argument",
            run(Few, a, b), 1, true)
        -- function MoreBackward returned an incorrect number of gradients (expected 1, got 2)
        local More = class("FvMore", function(_, p) return p * 2 end,
            function(_, g) return g, g end)
        assert.matches("FvMore.backward returned an incorrect number of gradients (expected " ..
            "1, got 2); return one gradient (or nil) per forward argument (any beyond them " ..
            "must be nil)", run(More, a), 1, true)
        local MoreNone = class("FvMoreNone", function(_, p) return p * 2 end,
            function(_, g) return g * 2, nil end)
        a = t64({ 1 }, true)
        MoreNone.apply(a):sum():backward()
        close({ 2 }, a.grad, "more none")
        -- function NTBackward returned a gradient different than None at position 2, but the
        -- corresponding forward input was not a Variable
        local NT = class("FvNT", function(_, p, k) return p * k end,
            function(_, g) return g * 3, g end)
        assert.matches("FvNT.backward returned a gradient different than nil for argument 2, " ..
            "but the argument was not a tensor", run(NT, t64({ 1 }, true), 3), 1, true)
        -- Function WSBackward returned an invalid gradient at index 0 - got [3] but expected
        -- shape compatible with [2]
        local WS = class("FvWS", function(_, p) return p * 2 end,
            function() return tide.ones(3, { dtype = "float64" }) end)
        assert.matches("FvWS.backward: the gradient of argument 1 has shape {3}, the argument " ..
            "{2} (an invalid gradient", run(WS, t64({ 1, 2 }, true)), 1, true)
        -- got [] but expected shape compatible with [2]
        local Scal = class("FvScal", function(_, p) return p * 2 end,
            function() return tide.tensor(5, { dtype = "float64" }) end)
        assert.matches("has shape {}, the argument {2}", run(Scal, t64({ 1, 2 }, true)), 1, true)
        -- a gradient the input's shape expands to is summed: broadcast grad [3, 3]
        local BS = class("FvBS", function(_, p) return p * 2 end,
            function() return tide.ones(3, 2, { dtype = "float64" }) end)
        a = t64({ 1, 2 }, true)
        BS.apply(a):sum():backward()
        close({ 3, 3 }, a.grad, "broadcast grad")
        -- a float32 gradient is cast: dtype grad torch.float64
        local DT = class("FvDT", function(_, p) return p * 2 end,
            function() return tide.ones(2, { dtype = "float32" }) end)
        a = t64({ 1, 2 }, true)
        DT.apply(a):sum():backward()
        assert.are.equal("float64", a.grad.dtype, "dtype grad")
        -- expected Variable or None (got int)
        local NotT = class("FvNotT", function(_, p) return p * 2 end, function() return 3 end)
        assert.matches("the gradient of argument 1 must be a tensor or nil, got a number",
            run(NotT, t64({ 1 }, true)), 1, true)
        -- an input returned as it is: a new tensor (o is a False), IdBackward, grad [2]
        local Id = class("FvId", function(_, p) return p end, function(_, g) return g * 2 end)
        a = t64({ 1 }, true)
        local o = Id.apply(a)
        assert.is_false(rawequal(o, a), "id is a new tensor")
        assert.are.equal("FvIdBackward", tostring(o.grad_fn), "id grad_fn")
        o:sum():backward()
        close({ 2 }, a.grad, "id grad")
    end)

    it("runs once_differentiable, no_grad, double backward and gradcheck", function()
        local OD = class("FvOD", function(ctx, p) ctx:save_for_backward(p); return p:pow(2) end,
            Function.once_differentiable(function(ctx, g)
                return 2 * ctx.saved_tensors[1] * g
            end))
        local a = t64({ 1, 2 }, true)
        local ga = tide.autograd.grad(OD.apply(a):sum(), a, { create_graph = true })[1]
        close({ 2, 4 }, ga, "once_differentiable grad")
        assert.is_false(ga.requires_grad, "od requires_grad") -- od [2.0, 4.0] False
        -- no_grad: requires_grad False, grad_fn None
        local y = tide.no_grad(function() return Exp.apply(t64({ 1 }, true)) end)
        assert.is_false(y.requires_grad, "nograd")
        assert.is_nil(y.grad_fn, "nograd grad_fn")
        -- double [3.0, 12.0] [6.0, 12.0]
        a = t64({ 1, 2 }, true)
        ga = tide.autograd.grad(Cube.apply(a):sum(), a, { create_graph = true })[1]
        close({ 3, 12 }, ga, "double first")
        close({ 6, 12 }, tide.autograd.grad(ga:sum(), a)[1], "double second")
        -- gradcheck True True; a wrong backward: Jacobian mismatch for output 0 ..., False
        local gc = tide.autograd.gradcheck
        assert.is_true(gc(Cube.apply, { t64({ 1, 2 }, true) }), "gradcheck")
        assert.is_true(tide.autograd.gradgradcheck(Cube.apply, { t64({ 1, 2 }, true) }), "gg")
        local Wrong = class("FvWrong", function(_, p) return p:pow(3) end,
            function(_, g) return g end)
        assert.matches("Jacobian mismatch for output 1 with respect to input 1",
            catch(function() gc(Wrong.apply, { t64({ 1, 2 }, true) }) end), 1, true)
        assert.is_false(gc(Wrong.apply, { t64({ 1, 2 }, true) }, { raise_exception = false }),
            "raise false")
    end)
end)
