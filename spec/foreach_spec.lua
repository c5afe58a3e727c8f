-- tide._foreach_* (PyTorch's torch._foreach_ ops): one op over lists of tensors, values checked
-- against PyTorch 1.13 (lerp and copy_ against PyTorch 2's definition), in place and not, and
-- the errors of mismatched lists.
local tide = require("tide")

local function close(want, got)
    assert.are.equal(#want, #got)
    for i = 1, #want do
        local w = tide.tensor(want[i], { dtype = "float32" })
        assert.is_true(w:allclose(got[i], 1e-4, 1e-5), "element " .. i .. ": " .. tostring(got[i]))
    end
end

local function f32(v)
    return tide.tensor(v, { dtype = "float32" })
end

local function lists()
    return { f32({ 1, 2 }), f32({ 3, 4, 5 }) }, { f32({ 0.5, 0.5 }), f32({ 1, 2, 3 }) }
end

describe("tide._foreach_*", function()
    it("gives PyTorch's values for the binary, ternary, unary and norm forms", function()
        local a, b = lists()
        close({ { 2, 3 }, { 5, 8, 11 } }, tide._foreach_add(a, b, { alpha = 2 }))
        close({ { 2, 4 }, { 9, 12, 15 } }, tide._foreach_mul(a, { 2, 3 }))
        close({ { -0.5, 0.5 }, { 1.5, 2.5, 3.5 } }, tide._foreach_sub(a, 1.5))
        close({ { 2, 4 }, { 3, 2, 1.6667 } }, tide._foreach_div(a, b))
        close({ { 1, 2 }, { 3, 4, 5 } }, tide._foreach_maximum(a, b))
        close({ { 1.5, 2.5 }, { 5, 6, 7 } }, tide._foreach_addcdiv(a, b, b, { 0.5, 2 }))
        close({ { 1.6487, 1.6487 }, { 2.7183, 7.3891, 20.0855 } }, tide._foreach_exp(b))
        close({ 2.2361, 7.0711 }, tide._foreach_norm(a))
        close({ { 1, 2 }, { 3, 4, 5 } }, a) -- the out-of-place forms left a as it was
    end)

    it("changes tensors in place with the _ forms, returning nothing (EMA's lerp)", function()
        local a, b = lists()
        local first = a[1]
        assert.are.equal(0, select("#", tide._foreach_lerp_(a, b, 0.5)))
        assert.are.equal(first, a[1]) -- the same tensors, changed
        close({ { 0.75, 1.25 }, { 2, 3, 4 } }, a)
        tide._foreach_mul_(a, 2)
        close({ { 1.5, 2.5 }, { 4, 6, 8 } }, a)
        tide._foreach_copy_(a, b)
        close({ { 0.5, 0.5 }, { 1, 2, 3 } }, a)
        tide._foreach_zero_(a)
        close({ { 0, 0 }, { 0, 0, 0 } }, a)
    end)

    it("passes gradients through, as the per-tensor ops", function()
        local x = tide.tensor({ 1, 2 }, { dtype = "float64", requires_grad = true })
        local y = tide._foreach_mul({ x }, 3)[1]
        y:sum():backward()
        assert.are.same({ 3, 3 }, x.grad:totable())
    end)

    it("refuses lists of different lengths, a non-list, an unknown option, naming them", function()
        local a, b = lists()
        local function err(f, ...)
            local ok, e = pcall(f, ...)
            assert.is_false(ok)
            return e
        end
        assert.truthy(err(tide._foreach_add, a, { b[1] }):find("tide: _foreach_add: other has 1 " ..
            "elements where the tensors are 2; give one a tensor", 1, true))
        assert.truthy(err(tide._foreach_exp, a[1]):find("tide: _foreach_exp: self must be a " ..
            "list of tensors, got a tensor", 1, true))
        assert.truthy(err(tide._foreach_add_, a, b, { beta = 1 }):find('unknown option "beta"', 1,
            true))
        assert.truthy(err(tide._foreach_lerp_, a, { b[1], 3 }, 0.5):find("tide: _foreach_lerp_: " ..
            "tensors1[2] is number, not a tensor", 1, true))
        -- an element that would fail is found before the first is changed
        assert.truthy(err(tide._foreach_add_, a, { b[1], tide.ones({ 2 }) }):find("tide: " ..
            "_foreach_add_: element 2: an operand of shape {2} does not broadcast to the " ..
            "tensor's {3}, which an in-place op keeps", 1, true))
        local ints = { tide.tensor({ 1, 2 }), tide.tensor({ 3 }) }
        assert.truthy(err(tide._foreach_mul_, ints, { 2, 0.5 }):find("tide: _foreach_mul_: " ..
            "element 2: the result type float32 cannot be written to the int64 tensor in place",
            1, true))
        assert.are.same({ 1, 2 }, ints[1]:totable())
        assert.truthy(err(tide._foreach_sqrt_, ints):find("tide: _foreach_sqrt_: element 1 is " ..
            "int64; sqrt in place needs floating-point tensors", 1, true))
        assert.truthy(err(tide._foreach_copy_, a, { b[1], tide.ones({ 4 }) }):find("element 2",
            1, true))
        close({ { 1, 2 }, { 3, 4, 5 } }, a) -- nothing changed by the refused calls
    end)
end)
