-- module_hooks_spec.lua — a Module's forward hooks (register_forward_pre_hook,
-- register_forward_hook: order, replaced inputs and outputs, handles, several results), as
-- PyTorch's; get_submodule / get_parameter / get_buffer by dotted names; register_module;
-- half() and bfloat16().
local tide = require("tide")
local nn = tide.nn
local D = require("spec.support.device")

local function catch(f)
    local ok, err = pcall(f)
    assert.is_false(ok, "expected an error")
    return tostring(err)
end

describe("forward hooks (" .. D.name .. ")", function()
    local function model()
        tide.manual_seed(1)
        return nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2)):to(D.name)
    end

    it("see each layer's input and output, in order, and capture activations", function()
        local m = model()
        local seen = {}
        local h1 = m[1]:register_forward_hook(function(mod, inputs, out)
            seen[#seen + 1] = { "post", mod, inputs[1], out }
        end)
        local h0 = m[1]:register_forward_pre_hook(function(mod, inputs)
            seen[#seen + 1] = { "pre", mod, inputs[1] }
        end)
        local x = tide.randn({ 5, 3 }, { device = D.name })
        local y = m(x)
        assert.are.equal(2, #seen)
        assert.are.equal("pre", seen[1][1])
        assert.are.equal(m[1], seen[1][2])
        assert.are.equal(x, seen[1][3])
        assert.are.equal("post", seen[2][1])
        assert.is_true(seen[2][4]:equal(m[1]:forward(x)))
        assert.are.same({ 5, 2 }, y.shape)
        h1.remove()
        h0:remove() -- either call form
        m(x)
        assert.are.equal(2, #seen)
        assert.is_nil(rawget(m[1], "_forward_hooks"))
    end)

    it("replace inputs and outputs with what they return, hooks in registration order", function()
        local lin = nn.Linear(2, 2):to(D.name)
        local order = {}
        lin:register_forward_pre_hook(function(_, inputs)
            order[#order + 1] = 1
            return inputs[1] * 0 -- one value: the new (only) input
        end)
        lin:register_forward_hook(function(_, _, out)
            order[#order + 1] = 2
            return out + 10
        end)
        lin:register_forward_hook(function(_, _, out)
            order[#order + 1] = 3
            return out * 2
        end)
        local y = lin(tide.ones({ 1, 2 }, { device = D.name }))
        assert.are.same({ 1, 2, 3 }, order)
        local want = (lin.bias:detach() + 10) * 2
        assert.is_true(y:view(-1):equal(want))
    end)

    it("pass several results as a list, and gradients through replaced outputs", function()
        local lstm = nn.LSTM(3, 4):to(D.name)
        local shapes
        lstm:register_forward_hook(function(_, _, out)
            shapes = #out
        end)
        local x = tide.randn({ 2, 1, 3 }, { device = D.name })
        local out = lstm(x)
        assert.is_true(shapes >= 2)
        assert.are.same({ 2, 1, 4 }, out.shape)
        local lin = nn.Linear(2, 1):to(D.name)
        lin:register_forward_hook(function(_, _, o) return o * 3 end)
        local loss = lin(tide.ones({ 1, 2 }, { device = D.name })):sum()
        loss:backward()
        assert.are.same({ 3 }, lin.bias.grad:to("cpu"):totable())
    end)

    it("backward hooks see grad_input and grad_output, and may replace grad_input", function()
        -- PyTorch 1.13, the same weights: grad_input [[-1, 5.5, 12]], grad_output [[2, 3]]
        local lin = nn.Linear(3, 2):double():to(D.name)
        tide.no_grad(function()
            lin.weight:copy_(tide.tensor({ { 1, 2, 3 }, { -1, 0.5, 2 } }, { dtype = "float64" }))
        end)
        local rec = {}
        local h = lin:register_full_backward_hook(function(_, gi, go)
            rec.gi, rec.go = gi[1]:to("cpu"):totable(), go[1]:to("cpu"):totable()
        end)
        local x = tide.tensor({ { 1, -1, 2 } }, { dtype = "float64", device = D.name })
            :requires_grad_(true)
        local loss = (lin(x) * tide.tensor({ { 2, 3 } }, { dtype = "float64", device = D.name }))
            :sum()
        loss:backward()
        assert.are.same({ { -1, 5.5, 12 } }, rec.gi)
        assert.are.same({ { 2, 3 } }, rec.go)
        assert.are.same({ { -1, 5.5, 12 } }, x.grad:to("cpu"):totable())
        h.remove()
        -- a replacement grad_input reaches the input
        lin:register_full_backward_hook(function(_, gi) return { gi[1] * 0 } end)
        x.grad = nil
        local loss2 = lin(x):sum()
        loss2:backward()
        assert.are.same({ { 0, 0, 0 } }, x.grad:to("cpu"):totable())
        -- no input that needs grad: called with grad_output, grad_input nil
        local seen
        local lin3 = nn.Linear(3, 2):double():to(D.name)
        lin3:register_full_backward_hook(function(_, gi, go)
            seen = { gi[1] == nil, go[1]:to("cpu"):totable() }
        end)
        local loss3 = lin3(tide.ones({ 1, 3 }, { dtype = "float64", device = D.name })):sum()
        loss3:backward()
        assert.are.same({ true, { { 1, 1 } } }, seen)
    end)

    it("refuse a hook that is not a function", function()
        assert.matches("tide: register_forward_hook: expected a function, got number",
            catch(function() nn.Linear(1, 1):register_forward_hook(3) end), 1, true)
    end)
end)

describe("modules by dotted name, and half precision", function()
    it("get_submodule, get_parameter and get_buffer follow state_dict's names", function()
        local m = nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3))
        assert.are.equal(m[1], m:get_submodule("1"))
        assert.are.equal(m, m:get_submodule(""))
        assert.are.equal(m[1].weight, m:get_parameter("1.weight"))
        assert.are.equal(m[2].running_mean, m:get_buffer("2.running_mean"))
        assert.matches("tide: get_submodule: Sequential has no submodule '7'",
            catch(function() m:get_submodule("7") end), 1, true)
        assert.matches("tide: get_parameter: BatchNorm1d has no parameter 'running_mean'",
            catch(function() m:get_parameter("2.running_mean") end), 1, true)
        local p = nn.Module()
        p:register_module("head", nn.Linear(1, 1))
        assert.are.equal(p.head, p:get_submodule("head"))
    end)

    it("half() and bfloat16() cast the floating parameters", function()
        local m = nn.Linear(2, 2):half()
        assert.are.equal("float16", m.weight.dtype)
        assert.are.equal("bfloat16", m:bfloat16().bias.dtype)
    end)
end)
