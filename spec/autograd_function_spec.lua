-- autograd_function_spec.lua — tide.autograd.Function, PyTorch's torch.autograd.Function: a
-- differentiable op written as forward(ctx, ...) and backward(ctx, g), on the device under
-- test: gradients, non-tensor arguments, nil gradients, ctx.needs_input_grad, saved tensors
-- and their in-place check, non-differentiable outputs, grad mode off, double backward, and
-- the errors a wrong backward gets.
local tide = require("tide")
local D = require("spec.support.device")
local P = require("spec.support.porting")

local Function = tide.autograd.Function
local DEV = D.name

local function t64(v, rg)
    local t = P.t64(v, DEV)
    return rg and t:requires_grad_(true) or t
end

local function catch(f)
    local ok, err = pcall(f)
    assert.is_false(ok, "expected an error")
    return tostring(err)
end

local Exp = Function:extend("Exp")
function Exp.forward(ctx, x)
    local y = x:exp()
    ctx:save_for_backward(y)
    return y
end
function Exp.backward(ctx, g)
    return g * ctx.saved_tensors[1]
end

-- a * x^k with k a number: gradients to a and x, none to k
local ScaledPow = Function:extend("ScaledPow")
function ScaledPow.forward(ctx, a, x, k)
    ctx:save_for_backward(a, x)
    ctx.k = k
    return a * x:pow(k)
end
function ScaledPow.backward(ctx, g)
    local a, x = ctx.saved_tensors[1], ctx.saved_tensors[2]
    local k = ctx.k
    local ga = ctx.needs_input_grad[1] and g * x:pow(k) or nil
    local gx = ctx.needs_input_grad[2] and g * a * x:pow(k - 1) * k or nil
    return ga, gx, nil
end

describe("autograd.Function (" .. DEV .. ")", function()
    it("records one node whose backward is the class's", function()
        local x = t64({ 0, 1, -2 }, true)
        local y = Exp.apply(x)
        assert.are.equal("ExpBackward", tostring(y.grad_fn))
        y:sum():backward()
        P.close({ 1, math.exp(1), math.exp(-2) }, x.grad, 1e-15, "exp'")
    end)

    it("passes numbers through and routes each gradient to its argument", function()
        local a, x = t64({ 2, 3 }, true), t64({ 1.5, -1 }, true)
        ScaledPow.apply(a, x, 3):sum():backward()
        P.close({ 1.5 ^ 3, -1 }, a.grad, 1e-15, "d/da")
        P.close({ 2 * 3 * 1.5 ^ 2, 3 * 3 }, x.grad, 1e-15, "d/dx")
        -- only x requires grad: needs_input_grad says so, a nil gradient for a is fine
        local x2 = t64({ 2 }, true)
        ScaledPow.apply(t64({ 5 }), x2, 2):backward()
        P.close({ 20 }, x2.grad, 0, "d/dx alone")
    end)

    it("records nothing with grad mode off or inputs that need no grad", function()
        local x = t64({ 1 }, true)
        local y = tide.no_grad(function() return Exp.apply(x) end)
        assert.is_false(y.requires_grad)
        assert.is_false(Exp.apply(t64({ 1 })).requires_grad)
    end)

    it("differentiates twice when backward is written in tide's ops", function()
        local x = t64({ 0.5 }, true)
        local g = tide.autograd.grad(Exp.apply(x), x, { create_graph = true })[1]
        g:backward()
        P.close({ math.exp(0.5) }, x.grad, 1e-15, "exp''")
    end)

    it("takes non-differentiable outputs marked as such", function()
        local MaxIdx = Function:extend("MaxIdx")
        function MaxIdx.forward(ctx, x)
            local v, i = x:max(1)
            ctx:mark_non_differentiable(i)
            ctx:save_for_backward(x, i)
            return v, i
        end
        function MaxIdx.backward(ctx, g)
            local x, i = ctx.saved_tensors[1], ctx.saved_tensors[2]
            return tide.zeros_like(x):index_add(1, i:reshape(1), g:reshape(1))
        end
        local x = t64({ 1, 5, 2 }, true)
        local v, i = MaxIdx.apply(x)
        assert.are.equal(2, i:item())
        assert.is_false(i.requires_grad)
        v:backward()
        P.close({ 0, 1, 0 }, x.grad, 0, "max'")
    end)

    it("names what a wrong backward or forward does", function()
        local x = t64({ 1, 2 }, true)
        local Bad = Function:extend("Bad")
        function Bad.forward(_, t) return t * 2 end
        function Bad.backward(_, g) return g:sum() end
        assert.matches("tide: Bad.backward: the gradient of argument 1 has shape {}, the " ..
            "argument {2}", catch(function() Bad.apply(x):sum():backward() end), 1, true)
        local Many = Function:extend("Many")
        function Many.forward(_, t) return t * 2 end
        function Many.backward(_, g) return g, g end
        assert.matches("tide: Many.backward returned an incorrect number of gradients " ..
            "(expected 1, got 2); return one gradient (or nil) per forward argument",
            catch(function() Many.apply(x):sum():backward() end), 1, true)
        local Two = Function:extend("Two")
        function Two.forward(_, t) return t * 2, t:to("float32") end
        assert.matches("tide: Two.forward: the outputs that take gradients must share a " ..
            "dtype and device (output 1 is float64", catch(function() Two.apply(x) end), 1, true)
        local Saved = Function:extend("Saved")
        function Saved.forward(ctx, t)
            local c = t:detach():clone()
            ctx:save_for_backward(c)
            ctx.c = c
            return t * 2
        end
        function Saved.backward(_, g) return g * 2 end
        local y = Saved.apply(x)
        y.grad_fn.ctx.c:add_(1)
        assert.matches("tide: Saved.backward: saved tensor 1 was modified in place after " ..
            "save_for_backward", catch(function() y:sum():backward() end), 1, true)
        local Empty = Function:extend("Empty")
        assert.matches("tide: Empty: forward is not defined; define Empty.forward(ctx, ...)",
            catch(function() Empty.apply(x) end), 1, true)
    end)
end)
