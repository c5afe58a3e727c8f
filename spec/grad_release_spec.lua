-- A backward pass releases each gradient it made as soon as the node that received it has run
-- and nothing else holds it (autograd/engine.lua's `held`): a chain's gradients do not pile up
-- for the collector. What the user can still reach is never released: the gradient passed to
-- backward, grad_outputs, what a hook kept or returned, retained and captured gradients.
local tide = require("tide")
local autograd = require("tide.autograd")
local D = require("spec.support.device")

local function R(...)
    return tide.randn({ ... }, { requires_grad = true, device = D.name })
end

describe("gradients a backward pass made #autograd", function()
    it("are released as their node runs: a 40-node chain holds a few at a time", function()
        -- settle the collector's pace (lua/gc.c): enough tensor bytes for a full collection,
        -- then a pass that ends; in generational mode no minor step runs during the next pass,
        -- so kept gradients would show in memory_in_use
        for _ = 1, 200 do
            tide.empty(100000, { device = D.name })
        end
        R(2):sum():backward()
        local n = 10000 -- 40 KB a gradient
        local x = R(n)
        local y = x
        local seen = {}
        for i = 1, 40 do
            y = y:mul(1.0001)
            if i == 35 or i == 5 then
                y:register_hook(function()
                    seen[#seen + 1] = tide.memory_in_use()
                end)
            end
        end
        y:sum():backward()
        assert.are.equal(2, #seen)
        -- 30 nodes ran between the hooks; kept, their gradients would take 1.2 MB
        assert.is_true(seen[2] - seen[1] < 8 * 4 * n, seen[2] - seen[1])
        assert.is_true(math.abs(x.grad[1]:item() - 1.0001 ^ 40) < 1e-4)
    end)

    it("leave grad_outputs, hook results, kept gradients and captures usable", function()
        local x = R(3)
        local kept, mine = nil, tide.ones(3, { device = D.name }):mul(2)
        local a = x:mul(2)
        a:register_hook(function(g)
            kept = g
        end)
        local b = a:mul(3)
        b:register_hook(function()
            return mine
        end)
        local c = b:mul(1)
        c:retain_grad()
        local go = tide.ones(3, { device = D.name })
        local gx = autograd.grad(c:mul(1), x, { grad_outputs = go, retain_graph = true })[1]
        assert.are.same({ 1, 1, 1 }, go:cpu():totable())
        assert.are.same({ 2, 2, 2 }, mine:cpu():totable())
        assert.are.same({ 6, 6, 6 }, kept:cpu():totable())
        assert.are.same({ 12, 12, 12 }, gx:cpu():totable())
        c:mul(1):sum():backward()
        assert.are.same({ 1, 1, 1 }, c.grad:cpu():totable())
        assert.are.same({ 12, 12, 12 }, x.grad:cpu():totable())
        assert.are.same({ 6, 6, 6 }, kept:cpu():totable())
    end)
end)
