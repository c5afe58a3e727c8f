-- The gradient of a narrow or select view goes into its input's gradient buffer where the view
-- lies (autograd/formulas.lua's parts, engine.lua's accumulate): attention's q, k and v, three
-- narrow views of one projection, fill one buffer. These check the values against the sums
-- they replace, and that no tensor the user holds is written in place.
local tide = require("tide")
local autograd = require("tide.autograd")
local D = require("spec.support.device")

local function R(...)
    return tide.randn({ ... }, { dtype = "float64", requires_grad = true, device = D.name })
end

-- max |a - b| over the elements (both on the device under test)
local function diff(a, b)
    return a:sub(b):abs():max():item()
end

-- the gradient of sum(w_i * view_i(x)) written out by hand: w_i placed where view_i lies
local function placed(x, parts)
    local z = tide.zeros(x.shape, { dtype = x.dtype, device = D.name })
    for _, p in ipairs(parts) do
        local r = p.len and z:narrow(p.dim, p.start, p.len) or z:select(p.dim, p.start)
        r:add_(p.w)
    end
    return z
end

describe("gradients of narrow and select views #autograd", function()
    it("three narrow views of one non-leaf (q, k, v) fill one buffer with each one's gradient",
        function()
            local x = R(4, 9)
            local y = x:mul(2) -- a non-leaf, as attention's projection is
            local parts = {}
            local loss
            for i = 0, 2 do
                local w = tide.randn({ 4, 3 }, { dtype = "float64", device = D.name })
                parts[#parts + 1] = { dim = 2, start = 3 * i + 1, len = 3, w = w }
                local term = y:narrow(2, 3 * i + 1, 3):mul(w):sum()
                loss = loss and loss:add(term) or term
            end
            loss:backward()
            assert.is_true(diff(x.grad, placed(x, parts):mul(2)) < 1e-12)
        end)

    it("overlapping views and a select add up where they overlap", function()
        local x = R(5, 6)
        local y = x:mul(1)
        local w1 = tide.randn({ 5, 4 }, { dtype = "float64", device = D.name })
        local w2 = tide.randn({ 5, 4 }, { dtype = "float64", device = D.name })
        local w3 = tide.randn({ 6 }, { dtype = "float64", device = D.name })
        local loss = y:narrow(2, 1, 4):mul(w1):sum():add(y:narrow(2, 3, 4):mul(w2):sum())
            :add(y:select(1, 2):mul(w3):sum())
        loss:backward()
        local want = placed(x, { { dim = 2, start = 1, len = 4, w = w1 },
            { dim = 2, start = 3, len = 4, w = w2 }, { dim = 1, start = 2, w = w3 } })
        assert.is_true(diff(x.grad, want) < 1e-12)
    end)

    it("a view's gradient added to a whole gradient, in either order", function()
        for _, view_first in ipairs({ true, false }) do
            local x = R(3, 4)
            local y = x:mul(3)
            local w = tide.randn({ 3, 2 }, { dtype = "float64", device = D.name })
            local a = y:narrow(2, 2, 2):mul(w):sum()
            local b = y:mul(y):sum()
            local loss = view_first and a:add(b) or b:add(a)
            loss:backward()
            local want = placed(x, { { dim = 2, start = 2, len = 2, w = w } }):mul(3)
                :add(x:detach():mul(18))
            assert.is_true(diff(x.grad, want) < 1e-10)
        end
    end)

    it("a view of a leaf gives the leaf its gradient, zeros outside the view", function()
        local x = R(2, 5)
        x:narrow(2, 2, 3):sum():backward()
        assert.are.same({ { 0, 1, 1, 1, 0 }, { 0, 1, 1, 1, 0 } }, x.grad:cpu():totable())
    end)

    it("leaves the gradient the user passes to backward as it was", function()
        local x = R(2, 6)
        local y = x:add(0) -- add's formula passes the user's gradient on as it is
        local out = y:narrow(2, 1, 3):add(y:narrow(2, 4, 3)):add(y:narrow(2, 1, 3))
        local g = tide.ones({ 2, 3 }, { dtype = "float64", device = D.name })
        out:backward(g)
        assert.are.same({ { 1, 1, 1 }, { 1, 1, 1 } }, g:cpu():totable())
        assert.are.same({ { 2, 2, 2, 1, 1, 1 }, { 2, 2, 2, 1, 1, 1 } }, x.grad:cpu():totable())
        -- the user's gradient reaches y whole first, then a view's part is added to it
        local x2 = R(2, 3)
        local y2 = x2:add(0)
        local g2 = tide.ones({ 2, 3 }, { dtype = "float64", device = D.name })
        y2:add(y2:narrow(2, 2, 2):sum(2, true)):backward(g2)
        assert.are.same({ { 1, 1, 1 }, { 1, 1, 1 } }, g2:cpu():totable())
        assert.are.same({ { 1, 4, 4 }, { 1, 4, 4 } }, x2.grad:cpu():totable())
    end)

    it("leaves a gradient another tensor holds as it was when a part lands on it", function()
        for _, part_first in ipairs({ true, false }) do
            local x = R(2, 3)
            local y = x:mul(1)
            -- add's formula hands one tensor to both x (its .grad) and y
            local whole = x:add(y):sum()
            local part = y:narrow(2, 1, 2):sum()
            local loss = part_first and part:add(whole) or whole:add(part)
            loss:backward()
            assert.are.same({ { 3, 3, 2 }, { 3, 3, 2 } }, x.grad:cpu():totable())
        end
    end)

    it("builds a graph of the gradient under create_graph (second derivative)", function()
        local x = R(2, 4)
        local y = x:mul(x)
        local s = y:narrow(2, 1, 2):sum():add(y:narrow(2, 2, 3):sum())
        local gx = autograd.grad(s, x, { create_graph = true })[1]
        -- d/dx of sum(gx) where gx = 2x * (1 + [col 2 or 3]) = 2 * (1 + [col 2 or 3])
        local gxx = autograd.grad(gx:sum(), x)[1]
        assert.are.same({ { 2, 4, 2, 2 }, { 2, 4, 2, 2 } }, gxx:cpu():totable())
    end)
end)
