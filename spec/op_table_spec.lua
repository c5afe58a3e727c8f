-- op_table_spec.lua — tide.core._ops, the op table of include/tide_ops.def as Lua sees it: one
-- row per op in table order, with the properties the kernels and the binding are generated from.
local core = require("tide.core")
local tide = require("tide")

local function row(name)
    for _, r in ipairs(core._ops) do
        if r.name == name then
            return r
        end
    end
end

describe("tide.core._ops", function()
    it("lists every op once, in table order, each a method of Tensor", function()
        local seen = {}
        assert.are.equal("add", core._ops[1].name)
        for _, r in ipairs(core._ops) do
            assert.is_nil(seen[r.name], r.name)
            seen[r.name] = true
            assert.is_function(tide.Tensor[r.name], r.name)
            if r.inplace then
                assert.is_function(tide.Tensor[r.name .. "_"], r.name .. "_")
            end
        end
    end)

    it("carries each row's family and flags", function()
        assert.are.same({ name = "add", family = "binary", arity = 2, float_only = false,
            float_input = false, integer_only = false, no_bool = false, int_exact = true, no_grad = false,
            not_differentiable = false, cheap = true, int_wrap = true, int_division = false,
            int_power = false, bool_result = false, inplace = true, autocast_fp32 = false },
            row("add"))
        -- integer pow stays integer, as PyTorch's; a negative integer exponent raises
        assert.is_false(row("pow").float_only)
        assert.is_true(row("pow").int_power)
        assert.is_true(row("exp").autocast_fp32) -- PyTorch's autocast float32 list
        assert.is_true(row("sum").autocast_fp32)
        assert.is_true(row("hypot").float_input) -- integers raise, as PyTorch's hypot
        assert.is_false(row("atan2").float_input) -- (and promote for atan2)
        local div = row("div")
        assert.is_true(div.float_only)
        assert.is_false(div.int_exact)
        local lt = row("lt")
        assert.are.equal("compare", lt.family)
        assert.is_true(lt.no_grad)
        assert.is_true(lt.bool_result)
        assert.is_false(lt.inplace)
        assert.is_true(row("exp").float_only)
        assert.are.equal("unary", row("exp").family)
        assert.are.equal(1, row("exp").arity)
        assert.are.equal("bounded", row("clamp").family)
        assert.are.equal("reduce", row("sum").family)
        assert.is_true(row("argmax").no_grad)
        assert.is_true(row("bitwise_and").integer_only)
        assert.is_false(row("bitwise_and").no_bool)
        assert.is_true(row("bitwise_left_shift").integer_only)
        assert.is_true(row("bitwise_left_shift").no_bool)
        assert.is_false(row("exp").integer_only)
        assert.is_true(row("floor_divide").int_division)
        -- no gradient formula (PyTorch has none): an input that requires grad raises
        assert.is_true(row("airy_ai").not_differentiable)
        assert.is_true(row("legendre_polynomial_p").not_differentiable)
        assert.is_false(row("bessel_j0").not_differentiable)
        assert.are.equal("binary", row("chebyshev_polynomial_t").family)
    end)
end)
