-- runs_combinations_spec.lua — unique_consecutive (flattened and along a dim, inverse and
-- counts) and combinations (with and without replacement, r past n), as PyTorch 1.13 gives
-- them (its 0-based inverse plus one), on the device under test.
local tide = require("tide")
local D = require("spec.support.device")

local function T(v, dt)
    return tide.tensor(v, { dtype = dt, device = D.name })
end

local function host(t)
    return t:to("cpu"):totable()
end

describe("unique_consecutive and combinations (" .. D.name .. ")", function()
    it("unique_consecutive keeps each run once, with the inverse and the counts", function()
        local x = T({ 1, 1, 2, 2, 3, 1, 1, 2 })
        local v, inv, counts = x:unique_consecutive({ return_inverse = true,
            return_counts = true })
        assert.are.same({ 1, 2, 3, 1, 2 }, host(v))
        assert.are.same({ 1, 1, 2, 2, 3, 4, 4, 5 }, host(inv))
        assert.are.same({ 2, 2, 1, 2, 1 }, host(counts))
        local y = T({ { 1, 1 }, { 1, 1 }, { 2, 3 }, { 2, 3 }, { 1, 1 } })
        local rows, rinv, rcounts = tide.unique_consecutive(y, { dim = 1, return_inverse = true,
            return_counts = true })
        assert.are.same({ { 1, 1 }, { 2, 3 }, { 1, 1 } }, host(rows))
        assert.are.same({ 1, 1, 2, 2, 3 }, host(rinv))
        assert.are.same({ 2, 2, 1 }, host(rcounts))
        local n = T({ 0 / 0, 0 / 0, 1 }, "float32")
        assert.are.equal(3, n:unique_consecutive():numel()) -- each NaN a run of its own
        assert.are.same({ 0 }, T({}, "float32"):unique_consecutive().shape)
        local ok, err = pcall(function()
            return T({ 1.0, 1.0 }, "float32"):requires_grad_(true):unique_consecutive()
        end)
        assert.is_false(ok)
        assert.matches("tide: unique_consecutive: not differentiable", tostring(err), 1, true)
    end)

    it("combinations in PyTorch's order, with replacement, and r past n", function()
        assert.are.same({ { 1, 2 }, { 1, 3 }, { 1, 4 }, { 2, 3 }, { 2, 4 }, { 3, 4 } },
            host(tide.combinations(T({ 1, 2, 3, 4 }, "float32"))))
        assert.are.same({ { 1, 1 }, { 1, 2 }, { 1, 3 }, { 2, 2 }, { 2, 3 }, { 3, 3 } },
            host(tide.combinations(T({ 1, 2, 3 }, "float32"), 2, { with_replacement = true })))
        assert.are.same({ 1, 3 }, tide.combinations(T({ 1, 2, 3 }, "float32"), 3).shape)
        assert.are.same({ 0, 4 }, tide.combinations(T({ 1, 2, 3 }, "float32"), 4).shape)
        local x = T({ 1, 2, 3 }, "float64"):requires_grad_(true)
        tide.combinations(x):sum():backward() -- each element in two pairs
        assert.are.same({ 2, 2, 2 }, host(x.grad))
        local ok, err = pcall(tide.combinations, T({ { 1 } }, "float32"))
        assert.is_false(ok)
        assert.matches("tide: combinations: expected a 1-D tensor, got {1, 1}", tostring(err), 1,
            true)
    end)
end)
