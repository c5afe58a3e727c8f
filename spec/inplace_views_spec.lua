-- inplace_views_spec.lua — PyTorch's in-place view ops t_, transpose_, swapdims_, swapaxes_,
-- squeeze_ and unsqueeze_: the tensor takes the view's geometry (same object, same storage),
-- gradients flow through them as PyTorch 1.13's do (values from PyTorch on the same programs),
-- and the refusals (a leaf that requires grad, bad dims) name the op and leave the tensor as it
-- was.
local tide = require("tide")
local D = require("spec.support.device")

local function catch(f)
    local ok, err = pcall(f)
    assert.is_false(ok, "expected an error")
    return tostring(err)
end

local function values(t)
    return t:to("cpu"):reshape(-1):totable()
end

local function shape(t)
    return table.concat(t.shape, "x")
end

describe("in-place view ops (" .. D.name .. ")", function()
    it("change the tensor's geometry in place and return it, sharing its storage", function()
        local base = tide.arange(6, { device = D.name }):float()
        local w = base:view(2, 1, 3)
        assert.are.equal(w, w:squeeze_(2))
        assert.are.equal("2x3", shape(w))
        assert.are.equal(w, w:unsqueeze_(-1))
        assert.are.equal("2x3x1", shape(w))
        assert.are.equal(w, w:transpose_(1, 3))
        assert.are.equal("1x3x2", shape(w))
        assert.are.equal(w, w:swapdims_(1, 2))
        assert.are.equal("3x1x2", shape(w))
        assert.are.equal(w, w:swapaxes_(2, 3))
        assert.are.equal("3x2x1", shape(w))
        assert.are.equal(w, w:squeeze_())
        assert.are.equal("3x2", shape(w))
        assert.are.equal(w, w:t_())
        assert.are.equal("2x3", shape(w))
        assert.are.same({ 0, 1, 2, 3, 4, 5 }, values(w))
        w:t_()
        assert.are.same({ 0, 3, 1, 4, 2, 5 }, values(w))
        w:fill_(7) -- still a view of base
        assert.are.same({ 7, 7, 7, 7, 7, 7 }, values(base))
        assert.are.same({ 1, 3 }, w:stride()) -- the transpose of a contiguous 2x3
    end)

    it("refuse bad dims with the in-place op's name, leaving the tensor as it was", function()
        local x = tide.zeros({ 2, 3 }, { device = D.name })
        assert.matches("tide: transpose_: ", catch(function() return x:transpose_(1, 5) end), 1,
            true)
        assert.matches("tide: squeeze_: ", catch(function() return x:squeeze_(5) end), 1, true)
        assert.matches("tide: unsqueeze_: ", catch(function() return x:unsqueeze_(9) end), 1, true)
        local y = tide.zeros({ 2, 3, 4 }, { device = D.name })
        assert.matches("tide: t_: ", catch(function() return y:t_() end), 1, true)
        assert.are.equal("2x3", shape(x))
        assert.are.equal("2x3x4", shape(y))
    end)

    it("carry the gradient through a chain of them (PyTorch 1.13's values)", function()
        local x = tide.arange(6, { device = D.name }):float():view(2, 1, 3):requires_grad_(true)
        local y = x * 3
        y:squeeze_(2)
        y:unsqueeze_(1)
        y:transpose_(1, 3)
        assert.are.equal("3x2x1", shape(y))
        assert.are.equal("TransposeBackward1", tostring(y.grad_fn))
        local w = tide.arange(6, { device = D.name }):float():view(3, 2, 1)
        local loss = (y * w):sum()
        loss:backward()
        assert.are.same({ 0, 6, 12, 3, 9, 15 }, values(x.grad))
    end)

    it("name their nodes as PyTorch does", function()
        local x = tide.ones({ 2, 1, 3 }, { device = D.name }):requires_grad_(true)
        local function node(f)
            local y = x * 1
            f(y)
            return tostring(y.grad_fn)
        end
        assert.are.equal("TBackward1", node(function(y) y:squeeze_(2):t_() end))
        assert.are.equal("TransposeBackward1", node(function(y) y:swapdims_(1, 2) end))
        assert.are.equal("SqueezeBackward3", node(function(y) y:squeeze_(2) end))
        assert.are.equal("SqueezeBackward2", node(function(y) y:squeeze_() end))
        assert.are.equal("UnsqueezeBackward1", node(function(y) y:unsqueeze_(1) end))
    end)

    it("keep a write through a view of the result in the gradient", function()
        local x = tide.arange(6, { device = D.name }):float():view(2, 1, 3):requires_grad_(true)
        local y = (x * 1):squeeze(2)
        y:t_()
        assert.are.same({ 0, 3, 1, 4, 2, 5 }, values(y))
        y[1]:mul_(10)
        local loss = (y * 1):sum()
        loss:backward()
        assert.are.same({ 10, 1, 1, 10, 1, 1 }, values(x.grad))
    end)

    it("make tensors saved before them stale, as PyTorch does", function()
        local x = tide.ones({ 2, 1, 3 }, { device = D.name }):requires_grad_(true)
        local y = x * 1
        local z = y * y -- saves y
        y:squeeze_(2)
        assert.matches("tide: backward: a tensor needed for the gradient of mul (its argument 2) " ..
            "was modified in place after it was used (version 1, expected 0)",
            catch(function() z:sum():backward() end), 1, true)
    end)

    it("refuse a leaf that requires grad, unless grad mode is off", function()
        local w = tide.ones({ 2, 3 }, { device = D.name }):requires_grad_(true)
        assert.matches("tide: t_: in-place operation on a leaf tensor that requires grad",
            catch(function() return w:t_() end), 1, true)
        assert.are.equal("2x3", shape(w))
        tide.no_grad(function()
            w:t_()
        end)
        assert.are.equal("3x2", shape(w))
        assert.is_true(w.requires_grad)
        assert.is_true(w.is_leaf)
    end)
end)
