-- deepcopy_spec.lua — tide.deepcopy, Python's copy.deepcopy as PyTorch scripts use it: a
-- model's copy with its own parameters of the same values (a DQN's target network), shared
-- structure kept (tied weights stay tied, cycles end), leaves' requires_grad and .grad copied,
-- the class shared, a non-leaf refused as PyTorch refuses it; on the device under test.
local tide = require("tide")
local nn = tide.nn
local D = require("spec.support.device")

local DEV = D.name

local function catch(f)
    local ok, err = pcall(f)
    assert.is_false(ok, "expected an error")
    return tostring(err)
end

local function max_diff(a, b)
    return (a:detach() - b:detach()):abs():max():item()
end

describe("tide.deepcopy (" .. DEV .. ")", function()
    it("copies a model: same class and values, its own parameters", function()
        local policy = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2)):to(DEV)
        local target = tide.deepcopy(policy)
        assert.are.equal(getmetatable(policy), getmetatable(target))
        assert.are.equal(getmetatable(policy[1]), getmetatable(target[1]))
        local pp, tp = policy:parameters(), target:parameters()
        assert.are.equal(#pp, #tp)
        for i = 1, #pp do
            assert.are_not.equal(pp[i], tp[i])
            assert.are.equal(0, max_diff(pp[i], tp[i]))
            assert.is_true(tp[i].requires_grad and tp[i].is_leaf)
            assert.are.equal(DEV, tostring(tp[i].device))
        end
        local x = tide.randn({ 5, 3 }, { device = DEV })
        assert.are.equal(0, max_diff(policy(x), target(x)))
        -- training the policy leaves the target as it was, until a load_state_dict
        tide.no_grad(function() policy[1].weight:add_(1) end)
        assert.are.equal(1, max_diff(policy[1].weight, target[1].weight))
        target:load_state_dict(policy:state_dict())
        assert.are.equal(0, max_diff(policy(x), target(x)))
    end)

    it("keeps shared structure: tied weights, cycles, gradients", function()
        local emb = nn.Embedding(5, 3):to(DEV)
        local head = nn.Linear(3, 5, { bias = false }):to(DEV)
        head.weight = emb.weight -- tied, as a language model's output layer
        local m = nn.ModuleList({ emb, head })
        local c = tide.deepcopy(m)
        assert.are.equal(c[1].weight, rawget(c[2], "weight"))
        assert.are_not.equal(emb.weight, c[1].weight)
        local t = { name = "cycle" }
        t.self = t
        local tc = tide.deepcopy(t)
        assert.are.equal(tc, tc.self)
        assert.are_not.equal(t, tc)
        local w = tide.ones({ 2 }, { device = DEV }):requires_grad_(true)
        w:sum():backward()
        local wc = tide.deepcopy(w)
        assert.are.same({ 1, 1 }, wc.grad:to("cpu"):totable())
        assert.are_not.equal(w.grad, wc.grad)
    end)

    it("refuses a tensor computed by a recorded op, as PyTorch", function()
        local x = tide.ones({ 2 }, { device = DEV }):requires_grad_(true)
        assert.matches("tide: deepcopy: the value.out is the result of MulBackward0, not a " ..
            "leaf; only leaves copy", catch(function() tide.deepcopy({ out = x * 2 }) end), 1,
            true)
        assert.is_false(tide.deepcopy(x:detach() * 2).requires_grad)
    end)

    -- BYOL's target encoder: the online net's forward hook stores into self.hidden; Python's
    -- deepcopy copies the bound method's self, so the copy's hook fills the copy's table
    it("rebinds a hook that closes over the copied model to the copy", function()
        local Wrapper = nn.Module:extend("Wrapper")
        function Wrapper:init()
            self.net = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1)):to(DEV)
            self.hidden = {}
            local calls = 0
            self.net[2]:register_forward_hook(function(_, _, out)
                calls = calls + 1
                self.hidden.out = out
            end)
            self.calls = function()
                return calls
            end
            self.scale = tide.full({ 1 }, 2, { device = DEV })
            self.scaled = function(x)
                return x * self.scale -- a copied tensor: the copy's
            end
        end
        function Wrapper:forward(x)
            self.hidden = {}
            self.net(x)
            return self.hidden.out
        end
        local online = Wrapper()
        local target = tide.deepcopy(online)
        local x = tide.ones({ 1, 2 }, { device = DEV })
        assert.is_not_nil(target(x), "the copy's hook wrote into the copy")
        assert.is_nil(online.hidden.out)
        assert.is_not_nil(online(x))
        target.scale:fill_(3)
        assert.are.same({ 2 }, online.scaled(tide.ones({ 1 }, { device = DEV })):cpu():totable())
        assert.are.same({ 3 }, target.scaled(tide.ones({ 1 }, { device = DEV })):cpu():totable())
        -- an upvalue that is not part of the copy stays the original's variable (Lua 5.1: its
        -- value at the copy)
        local shared = debug.upvaluejoin ~= nil
        assert.are.equal(shared and 2 or 1, online.calls())
        assert.are.equal(shared and 2 or 1, target.calls())
        -- tide's own functions are shared
        local m = nn.Sequential(nn.Linear(2, 2), nn.ReLU())
        m.act = tide.nn.functional.relu
        assert.are.equal(tide.nn.functional.relu, tide.deepcopy(m).act)
    end)
end)
