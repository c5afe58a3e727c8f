-- stateless_spec.lua — nn.utils.stateless.functional_call (PyTorch's, torch.func's in 2.x): a
-- module called with some parameters and buffers replaced for one call, by dotted state_dict
-- names; gradients reach the given tensors; the module's own are back afterwards, also after an
-- error; the refusals name the module and the name.
local tide = require("tide")
local nn = tide.nn
local D = require("spec.support.device")
local P = require("spec.support.porting")

local DEV = D.name
local fc = nn.utils.stateless.functional_call

local function t64(v)
    return P.t64(v, DEV)
end

local function catch(f)
    local ok, err = pcall(f)
    assert.is_false(ok, "expected an error")
    return tostring(err)
end

describe("functional_call (" .. DEV .. ")", function()
    local function model()
        local m = nn.Sequential(nn.Linear(2, 2), nn.ReLU(), nn.Linear(2, 1)):to("float64"):to(DEV)
        tide.no_grad(function()
            m[1].weight:copy_(t64({ { 1, -1 }, { 0.5, 2 } }))
            m[1].bias:copy_(t64({ 0, 1 }))
            m[3].weight:copy_(t64({ { 2, -3 } }))
            m[3].bias:copy_(t64({ 0.25 }))
        end)
        return m
    end

    it("calls the module with the given tensors, and gradients reach them", function()
        local m = model()
        local own = m[1].weight
        local w = t64({ { 1, 0 }, { 0, 1 } }):requires_grad_(true)
        local x = t64({ { 3, -2 } })
        local y = fc(m, { ["1.weight"] = w }, x)
        -- relu(w x + b) = relu({3, -1}) = {3, 0}; 2 * 3 - 3 * 0 + 0.25
        P.close({ { 6.25 } }, y, 0, "out")
        y:sum():backward()
        P.close({ { 6, -4 }, { 0, 0 } }, w.grad, 0, "grad of the given weight")
        assert.is_nil(own.grad)
        assert.are.equal(own, m[1].weight)
        -- without replacements it is the module's own call; several arguments as a list
        P.close(m(x):to("cpu"):totable(), fc(m, {}, { x }), 0, "no replacement")
    end)

    it("replaces buffers, and puts everything back after an error", function()
        local bn = nn.BatchNorm1d(2):to("float64"):to(DEV)
        bn:eval()
        local x = t64({ { 1, 2 } })
        local y = fc(bn, { running_mean = t64({ 1, 1 }), running_var = t64({ 4, 4 }) }, x)
        P.close({ { 0, 0.5 } }, y, 1e-5, "batchnorm with the given statistics")
        P.close({ 0, 0 }, bn.running_mean, 0, "own running_mean back")
        local m = model()
        local own = m[3].bias
        catch(function() fc(m, { ["3.bias"] = t64({ 1 }) }, t64({ { 1, 2, 3 } })) end)
        assert.are.equal(own, m[3].bias)
    end)

    it("names what it refuses, before swapping anything", function()
        local m = model()
        local own = m[1].weight
        assert.matches("tide: functional_call: Sequential has no parameter or buffer named " ..
            "'1.wieght'", catch(function()
                fc(m, { ["1.weight"] = t64({ { 0, 0 }, { 0, 0 } }), ["1.wieght"] = t64({ 1 }) },
                    t64({ { 1, 1 } }))
            end), 1, true)
        assert.are.equal(own, m[1].weight)
        assert.matches("tide: functional_call: '1.bias' must be a tensor, got number",
            catch(function() fc(m, { ["1.bias"] = 3 }, t64({ { 1, 1 } })) end), 1, true)
        assert.matches("tide: functional_call: expected a Module, got table",
            catch(function() fc({}, {}, t64({ 1 })) end), 1, true)
    end)
end)
