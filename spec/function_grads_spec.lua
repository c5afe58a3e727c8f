-- function_grads_spec.lua — the number of gradients a tide.autograd.Function's backward
-- returns, against PyTorch 1.13: one per argument of apply (nil counts, so `return gx, nil` is
-- two); fewer raises, more raises unless every extra one is nil. Values and errors printed by
-- PyTorch 1.13 (a Function of x, y and the number 5 whose forward is x * 2).
local tide = require("tide")

local Function = tide.autograd.Function
local unpack = table.unpack or unpack

local function close(want, got, what)
    local g = got:tolist()
    assert.are.equal(#want, #g, what)
    for i = 1, #want do
        assert.is_true(math.abs(want[i] - g[i]) < 1e-9, what .. " [" .. i .. "]: " ..
            tostring(g[i]) .. " vs " .. tostring(want[i]))
    end
end

local function t64(v, rg)
    local t = tide.tensor(v, { dtype = "float64" })
    return rg and t:requires_grad_(true) or t
end

local n = 0
-- a Function of nargs arguments (x, y, 5) whose forward is x * 2; backward is bw
local function run(nargs, bw)
    n = n + 1
    local C = Function:extend("Fg" .. n)
    function C.forward(_, a)
        return a * 2
    end
    C.backward = bw
    local x, y = t64({ 1, 2 }, true), t64({ 3, 4 }, true)
    local args = { x, y, 5 }
    local ok, err = pcall(function()
        C.apply(unpack(args, 1, nargs)):sum():backward()
    end)
    return (not ok) and tostring(err) or nil, x, y, "Fg" .. n
end

local FIX = "; return one gradient (or nil) per forward argument"

describe("autograd.Function's backward: the number of gradients", function()
    it("raises on fewer, and on more unless the extra ones are nil, as PyTorch", function()
        local function raises(nargs, got, extra, bw)
            local err, _, _, name = run(nargs, bw)
            assert.is_not_nil(err, name .. " should raise")
            assert.matches("tide: " .. name .. ".backward returned an incorrect number of " ..
                "gradients (expected " .. nargs .. ", got " .. got .. ")" .. FIX ..
                (extra and " (any beyond them must be nil)" or ""), err, 1, true)
        end
        -- function FBackward returned an incorrect number of gradients (expected 3, got 2)
        raises(3, 2, false, function(_, g) return g * 2, g end)
        -- (expected 3, got 1): one gradient, or a lone tensor for three arguments
        raises(3, 1, false, function(_, g) return g * 2 end)
        -- (expected 3, got 4): an extra one that is not None
        raises(3, 4, true, function(_, g) return g * 2, g, nil, g end)
        -- (expected 3, got 5): a non-None extra, then a None one; PyTorch counts them all
        raises(3, 5, true, function(_, g) return g * 2, g, nil, g, nil end)
        -- (expected 1, got 2)
        raises(1, 2, true, function(_, g) return g * 3, g end)
        -- (expected 1, got 0): PyTorch's empty tuple; a Lua backward that returns nothing
        raises(1, 0, false, function() end)
        -- (expected 2, got 1): the trailing nil counts only when written
        raises(2, 1, false, function(_, g) return g * 2 end)
    end)

    it("takes one per argument, nil counting, and extra nils, as PyTorch", function()
        -- (g*2, g, None, None) for (x, y, 5): x.grad [2, 2], y.grad [1, 1]
        local err, x, y = run(3, function(_, g) return g * 2, g, nil, nil end)
        assert.is_nil(err)
        close({ 2, 2 }, x.grad, "more none x")
        close({ 1, 1 }, y.grad, "more none y")
        -- (g*2, None, None): x.grad [2, 2]
        err, x = run(3, function(_, g) return g * 2, nil, nil end)
        assert.is_nil(err)
        close({ 2, 2 }, x.grad, "exact x")
        -- g*3 (a tensor) and (g*3,) for one argument: x.grad [3, 3]; (g*3, None) as well
        err, x = run(1, function(_, g) return g * 3 end)
        assert.is_nil(err)
        close({ 3, 3 }, x.grad, "one")
        err, x = run(1, function(_, g) return g * 3, nil end)
        assert.is_nil(err)
        close({ 3, 3 }, x.grad, "one and nil")
        -- None for one argument, (None, None) for two: no error
        assert.is_nil((run(1, function() return nil end)))
        assert.is_nil((run(2, function() return nil, nil end)))
        -- once_differentiable keeps the count
        local err2, _, _, name = run(2, Function.once_differentiable(function(_, g)
            return g
        end))
        assert.matches("tide: " .. name .. ".backward returned an incorrect number of " ..
            "gradients (expected 2, got 1)" .. FIX, err2, 1, true)
    end)

    it("tide's own Functions return one per argument (binary_cross_entropy)", function()
        -- F.binary_cross_entropy(x, t): 0.2899092476264711, x.grad [0.625, -0.7142857142857143],
        -- t.grad [0.6931471805599453, -0.4236489301936017]; t detached: the same x.grad
        local x, t = t64({ 0.2, 0.7 }, true), t64({ 0, 1 }, true)
        local l = tide.nn.functional.binary_cross_entropy(x, t)
        l:backward()
        assert.is_true(math.abs(l:item() - 0.2899092476264711) < 1e-12)
        close({ 0.6249999999999999, -0.7142857142857143 }, x.grad, "bce x")
        close({ 0.6931471805599453, -0.4236489301936017 }, t.grad, "bce t")
        x = t64({ 0.2, 0.7 }, true)
        tide.nn.functional.binary_cross_entropy(x, t64({ 0, 1 })):backward()
        close({ 0.6249999999999999, -0.7142857142857143 }, x.grad, "bce x only")
    end)
end)
