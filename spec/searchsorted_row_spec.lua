-- searchsorted_row_spec.lua — tide.searchsorted and bucketize through the searchsorted kernel
-- row (include/tide_kernels.def): PyTorch's binary search per value, on the device under test
-- (docs/testing.md), against counts of the sequence's elements below each value.
local tide = require("tide")
local D = require("spec.support.device")

local function on(v, dtype)
    return tide.tensor(v, { dtype = dtype, device = D.name })
end

local function host(t)
    return t:to("cpu"):totable()
end

describe("searchsorted's kernel row (" .. D.name .. ")", function()
    for _, dt in ipairs({ "float32", "float64", "float16", "bfloat16", "int32", "int64", "uint8" }) do
        it("gives PyTorch's positions plus one in " .. dt, function()
            local s, v = on({ 1, 2, 2, 3, 5 }, dt), on({ 0, 2, 4, 5, 6 }, dt)
            assert.are.same({ 1, 2, 5, 5, 6 }, host(tide.searchsorted(s, v)))
            assert.are.same({ 1, 4, 5, 6, 6 }, host(tide.searchsorted(s, v, { right = true })))
            assert.are.same({ { 1, 2 }, { 5, 6 } }, host(tide.bucketize(on({ { 0, 2 }, { 4, 9 } }, dt), s)))
        end)
    end

    it("sends NaN past the end, searches each row of a sorted matrix, takes a number", function()
        local s = on({ 1, 2, 3 }, "float32")
        assert.are.same({ 4, 2 }, host(tide.searchsorted(s, on({ 0 / 0, 1.5 }, "float32"))))
        local rows = on({ { 1, 3, 5 }, { 2, 4, 6 } }, "float64")
        assert.are.same({ { 2, 4 }, { 1, 4 } },
            host(tide.searchsorted(rows, on({ { 3, 6 }, { 1, 7 } }, "float64"))))
        assert.are.same({ { 3, 4 }, { 2, 4 } },
            host(tide.searchsorted(rows, on({ { 3, 6 }, { 2, 7 } }, "float64"), { right = true })))
        assert.are.equal(2, tide.searchsorted(s, 2):item())
        -- mixed dtypes search in the promoted one
        assert.are.same({ 2, 3 }, host(tide.searchsorted(on({ 1, 2, 3 }, "int32"), on({ 1.5, 2.5 }, "float32"))))
    end)

    it("agrees with a count of the elements below each value, in one kernel", function()
        tide.manual_seed(3)
        local seq = tide.randn(300):sort():to(D.name)
        local vals = tide.randn(2000):to(D.name)
        local left = seq:view(1, -1):lt(vals:view(-1, 1)):sum(2) + 1
        local right = seq:view(1, -1):le(vals:view(-1, 1)):sum(2) + 1
        assert.is_true(tide.searchsorted(seq, vals):eq(left):all():item())
        assert.is_true(tide.searchsorted(seq, vals, { right = true }):eq(right):all():item())
        local names = {}
        local prof = tide.profiler.profile({}, function() return tide.searchsorted(seq, vals) end)
        for _, e in ipairs(prof:events()) do
            names[e.name] = true
        end
        assert.is_nil(names.gather) -- no binary search by tensor ops
        assert.is_nil(names.where)
    end)
end)
