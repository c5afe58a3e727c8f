-- grad_rule_spec.lua — gradients that used to be silently wrong (issue 10, items 4a and 4b):
-- prod at zeros, remainder and fmod, and the rule checked over every Tensor method: with an
-- input that requires grad, a float result records a gradient or the call raises
-- `tide: <op>: not differentiable ...`; never a silently detached result.
-- Runs on the device under test (spec/support/device.lua).
local tide = require "tide"
local gradcheck = require "spec.support.gradcheck"
local D = require "spec.support.device"

if D.kind == "cuda" and not tide.cuda.is_available() then
    describe("gradient rules on " .. D.name, function()
        it("needs a CUDA device", function()
            pending("no CUDA device")
        end)
    end)
    return
end

local function G(v)
    return tide.tensor(v, { dtype = "float64", requires_grad = true, device = D.name })
end

local function vals(t)
    return t:cpu():totable()
end

local function catch(f)
    local ok, err = pcall(f)
    assert.is_false(ok, "expected an error")
    return tostring(err)
end

describe("prod's gradient on " .. D.name, function()
    it("is the product of the other elements, also at zeros (as PyTorch)", function()
        local x = G({ 1.0, 0.0, 2.0 })
        x:prod():backward()
        assert.are.same({ 0, 2, 0 }, vals(x.grad))
        local y = G({ 0.0, 3.0, 0.0 })
        y:prod():backward()
        assert.are.same({ 0, 0, 0 }, vals(y.grad))
        local z = G({ 2.0, 3.0, 4.0 })
        z:prod():backward()
        assert.are.same({ 12, 8, 6 }, vals(z.grad))
    end)

    it("over a dim, with and without keepdim, and for every shape", function()
        local x = G({ { 1, 0, 2 }, { 3, 4, 5 }, { 0, 0, 7 } })
        x:prod(2):sum():backward()
        assert.are.same({ { 0, 2, 0 }, { 20, 15, 12 }, { 0, 0, 0 } }, vals(x.grad))
        local w = G({ { 1, 0 }, { 3, 4 } })
        w:prod(1, true):mul(G({ { 10, 100 } })):sum():backward()
        assert.are.same({ { 30, 400 }, { 10, 0 } }, vals(w.grad))
        local s = G(5)
        s:prod():backward()
        assert.are.equal(1, s.grad:item())
        tide.manual_seed(1)
        for _, shape in ipairs({ { 7 }, { 3, 5 }, { 2, 3, 4 } }) do
            local r = tide.randn(shape, { dtype = "float64", device = D.name }):requires_grad_(true)
            assert.is_true(gradcheck(function(t) return t:prod() end, { r }))
            for d = 1, #shape do
                assert.is_true(gradcheck(function(t) return t:prod(d) end, { r }))
                assert.is_true(gradcheck(function(t) return t:prod(-d, true) end, { r }))
            end
        end
    end)
end)
