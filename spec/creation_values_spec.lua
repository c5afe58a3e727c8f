-- creation_values_spec.lua — tensor creation against PyTorch 1.13 (values pasted from its
-- output): each case's dtype, shape and values (1-based indices where docs/API.md says:
-- tril_indices, triu_indices and randperm are shifted by 1 here), the errors PyTorch raises,
-- the draws' dtypes, shapes and ranges, manual_seed repeating a sequence, and
-- set_default_dtype("float64").
local tide = require("tide")
local T = tide

local x = T.tensor({ { 1, 2 }, { 3, 4 } })
local v = T.tensor({ 1, 2, 3 })
local F32 = { dtype = "float32" } -- whole floats are integers on Lua 5.1 and LuaJIT
local function z(t) -- a draw's dtype and shape, its values zeroed
    return T.zeros_like(t)
end

local CASES = {
    { "tensor_int", function() return T.tensor({{1, 2}, {3, 4}}) end,
        "int64", { 2, 2 }, { 1, 2, 3, 4 } },
    { "tensor_float", function() return T.tensor({1.5, 2.0}) end,
        "float32", { 2 }, { 1.5, 2 } },
    { "tensor_bool", function() return T.tensor({true, false}) end,
        "bool", { 2 }, { true, false } },
    { "tensor_mixed", function() return T.tensor({1, 2.5}) end,
        "float32", { 2 }, { 1, 2.5 } },
    { "tensor_empty", function() return T.tensor({}) end,
        "float32", { 0 }, {} },
    { "tensor_nested_empty", function() return T.tensor({{}, {}}) end,
        "float32", { 2, 0 }, {} },
    { "tensor_scalar_int", function() return T.tensor(3) end,
        "int64", {}, { 3 } },
    { "tensor_scalar_float", function() return T.tensor(3.5) end,
        "float32", {}, { 3.5 } },
    { "tensor_dtype", function() return T.tensor({1, 2}, {dtype = "float64"}) end,
        "float64", { 2 }, { 1, 2 } },
    { "tensor_dtype_int_from_float", function() return T.tensor({1.7, -1.7}, {dtype = "int64"}) end,
        "int64", { 2 }, { 1, -1 } },
    { "as_tensor", function() return T.as_tensor({1, 2}) end,
        "int64", { 2 }, { 1, 2 } },
    { "as_tensor_dtype", function() return T.as_tensor({1, 2}, {dtype = "float32"}) end,
        "float32", { 2 }, { 1, 2 } },
    { "zeros", function() return T.zeros(2, 3) end,
        "float32", { 2, 3 }, { 0, 0, 0, 0, 0, 0 } },
    { "ones_dtype", function() return T.ones(2, {dtype = "int32"}) end,
        "int32", { 2 }, { 1, 1 } },
    { "empty_shape", function() return T.zeros(2, 0) end,
        "float32", { 2, 0 }, {} },
    { "full_int", function() return T.full({2}, 7) end,
        "int64", { 2 }, { 7, 7 } },
    { "full_bool", function() return T.full({2}, true) end,
        "bool", { 2 }, { true, true } },
    { "full_float", function() return T.full({2}, 1.5) end,
        "float32", { 2 }, { 1.5, 1.5 } },
    { "full_dtype", function() return T.full({2}, 7, {dtype = "float64"}) end,
        "float64", { 2 }, { 7, 7 } },
    { "zeros_like", function() return T.zeros_like(x) end,
        "int64", { 2, 2 }, { 0, 0, 0, 0 } },
    { "ones_like_dtype", function() return T.ones_like(x, {dtype = "float64"}) end,
        "float64", { 2, 2 }, { 1, 1, 1, 1 } },
    { "full_like", function() return T.full_like(x, 2.7) end,
        "int64", { 2, 2 }, { 2, 2, 2, 2 } },
    { "full_like_f", function() return T.full_like(x:float(), 7) end,
        "float32", { 2, 2 }, { 7, 7, 7, 7 } },
    { "full_like_dtype", function() return T.full_like(x, 2.5, {dtype = "float32"}) end,
        "float32", { 2, 2 }, { 2.5, 2.5, 2.5, 2.5 } },
    { "empty_like_dtype", function() return z(T.empty_like(x, {dtype = "bool"})) end,
        "bool", { 2, 2 }, { false, false, false, false } },
    { "arange_int", function() return T.arange(5) end,
        "int64", { 5 }, { 0, 1, 2, 3, 4 } },
    { "arange_start_end", function() return T.arange(1, 4) end,
        "int64", { 3 }, { 1, 2, 3 } },
    { "arange_float_step", function() return T.arange(0, 1, 0.1) end,
        "float32", { 10 }, { 0, 0.10000000149011612, 0.20000000298023224,
            0.30000001192092896, 0.4000000059604645, 0.5, 0.6000000238418579,
            0.699999988079071, 0.800000011920929, 0.8999999761581421 } },
    { "arange_neg", function() return T.arange(5, 0, -2) end,
        "int64", { 3 }, { 5, 3, 1 } },
    { "arange_neg_float", function() return T.arange(1, 0, -0.25) end,
        "float32", { 4 }, { 1, 0.75, 0.5, 0.25 } },
    { "arange_frac", function() return T.arange(0, 2.5, 0.5) end,
        "float32", { 5 }, { 0, 0.5, 1, 1.5, 2 } },
    { "arange_empty", function() return T.arange(0) end,
        "int64", { 0 }, {} },
    { "arange_dtype", function() return T.arange(0, 3, {dtype = "float64"}) end,
        "float64", { 3 }, { 0, 1, 2 } },
    { "range", function() return T.range(1, 4) end,
        "float32", { 4 }, { 1, 2, 3, 4 } },
    { "range_step", function() return T.range(0, 1, 0.25) end,
        "float32", { 5 }, { 0, 0.25, 0.5, 0.75, 1 } },
    { "range_int_dtype", function() return T.range(1, 4, {dtype = "int64"}) end,
        "int64", { 4 }, { 1, 2, 3, 4 } },
    { "linspace", function() return T.linspace(0, 1, 5) end,
        "float32", { 5 }, { 0, 0.25, 0.5, 0.75, 1 } },
    { "linspace_0", function() return T.linspace(0, 1, 0) end,
        "float32", { 0 }, {} },
    { "linspace_1", function() return T.linspace(2, 5, 1) end,
        "float32", { 1 }, { 2 } },
    { "linspace_int", function() return T.linspace(0, 10, 4, {dtype = "int64"}) end,
        "int64", { 4 }, { 0, 3, 6, 10 } },
    { "linspace_int_neg", function() return T.linspace(-5, 5, 4, {dtype = "int64"}) end,
        "int64", { 4 }, { -5, -1, 1, 5 } },
    { "linspace_f64", function() return T.linspace(0, 1, 3, {dtype = "float64"}) end,
        "float64", { 3 }, { 0, 0.5, 1 } },
    { "logspace", function() return T.logspace(0, 2, 3) end,
        "float32", { 3 }, { 1, 10, 100 } },
    { "logspace_base", function() return T.logspace(0, 3, 4, 2) end,
        "float32", { 4 }, { 1, 2, 4, 8 } },
    { "logspace_0", function() return T.logspace(0, 1, 0) end,
        "float32", { 0 }, {} },
    { "logspace_1", function() return T.logspace(2, 5, 1) end,
        "float32", { 1 }, { 100 } },
    { "logspace_int", function() return T.logspace(0, 2, 3, {dtype = "int64"}) end,
        "int64", { 3 }, { 1, 10, 100 } },
    { "logspace_int2", function() return T.logspace(0, 1, 3, 2, {dtype = "int64"}) end,
        "int64", { 3 }, { 1, 1, 2 } },
    { "eye", function() return T.eye(2, 3) end,
        "float32", { 2, 3 }, { 1, 0, 0, 0, 1, 0 } },
    { "eye_n", function() return T.eye(2) end,
        "float32", { 2, 2 }, { 1, 0, 0, 1 } },
    { "tril_indices", function() return T.tril_indices(3, 3) - 1 end,
        "int64", { 2, 6 }, { 0, 1, 1, 2, 2, 2, 0, 0, 1, 0, 1, 2 } },
    { "tril_indices_off", function() return T.tril_indices(3, 4, 1) - 1 end,
        "int64", { 2, 9 }, { 0, 0, 1, 1, 1, 2, 2, 2, 2, 0, 1, 0, 1, 2, 0, 1, 2, 3 } },
    { "tril_indices_neg", function() return T.tril_indices(3, 3, -1) - 1 end,
        "int64", { 2, 3 }, { 1, 2, 2, 0, 0, 1 } },
    { "triu_indices", function() return T.triu_indices(3, 3) - 1 end,
        "int64", { 2, 6 }, { 0, 0, 0, 1, 1, 2, 0, 1, 2, 1, 2, 2 } },
    { "triu_indices_off", function() return T.triu_indices(3, 4, 1) - 1 end,
        "int64", { 2, 6 }, { 0, 0, 0, 1, 1, 2, 1, 2, 3, 2, 3, 3 } },
    { "triu_indices_neg", function() return T.triu_indices(3, 3, -1) - 1 end,
        "int64", { 2, 8 }, { 0, 0, 0, 1, 1, 1, 2, 2, 0, 1, 2, 0, 1, 2, 1, 2 } },
    { "combinations", function() return T.combinations(v) end,
        "int64", { 3, 2 }, { 1, 2, 1, 3, 2, 3 } },
    { "combinations_r3", function() return T.combinations(v, 3) end,
        "int64", { 1, 3 }, { 1, 2, 3 } },
    { "combinations_wr", function() return T.combinations(v, 2, {with_replacement = true}) end,
        "int64", { 6, 2 }, { 1, 1, 1, 2, 1, 3, 2, 2, 2, 3, 3, 3 } },
    { "combinations_r0", function() return T.combinations(v, 0) end,
        "int64", { 0 }, {} },
    { "combinations_r4", function() return T.combinations(v, 4) end,
        "int64", { 0, 4 }, {} },
    { "cartesian_prod", function()
        return T.cartesian_prod(T.tensor({1, 2}), T.tensor({3, 4, 5}))
    end,
        "int64", { 6, 2 }, { 1, 3, 1, 4, 1, 5, 2, 3, 2, 4, 2, 5 } },
    { "cartesian_prod_1", function() return T.cartesian_prod(T.tensor({1, 2})) end,
        "int64", { 2 }, { 1, 2 } },
    { "vander", function() return T.vander(T.tensor({1, 2, 3})) end,
        "int64", { 3, 3 }, { 1, 1, 1, 4, 2, 1, 9, 3, 1 } },
    { "vander_N", function() return T.vander(T.tensor({1, 2, 3}), {N = 2}) end,
        "int64", { 3, 2 }, { 1, 1, 2, 1, 3, 1 } },
    { "vander_inc", function()
        return T.vander(T.tensor({1, 2, 3}, F32), {N = 4, increasing = true})
    end,
        "float32", { 3, 4 }, { 1, 1, 1, 1, 1, 2, 4, 8, 1, 3, 9, 27 } },
    { "vander_N0", function() return T.vander(T.tensor({1, 2, 3}), {N = 0}) end,
        "int64", { 3, 0 }, {} },
    { "diag_embed", function() return T.diag_embed(T.tensor({{1, 2}, {3, 4}})) end,
        "int64", { 2, 2, 2 }, { 1, 0, 0, 2, 3, 0, 0, 4 } },
    { "diag_embed_off", function() return T.diag_embed(T.tensor({1, 2}), 1) end,
        "int64", { 3, 3 }, { 0, 1, 0, 0, 0, 2, 0, 0, 0 } },
    { "block_diag", function()
        return T.block_diag(T.tensor({{1, 2}}), T.tensor({3}), T.tensor(4))
    end,
        "int64", { 3, 4 }, { 1, 2, 0, 0, 0, 0, 3, 0, 0, 0, 0, 4 } },
    { "block_diag_mixed", function() return T.block_diag(T.tensor({{1, 2}}), T.tensor({3.5})) end,
        "float32", { 2, 3 }, { 1, 2, 0, 0, 0, 3.5 } },
    { "atleast_1d", function() return T.atleast_1d(T.tensor(1)) end,
        "int64", { 1 }, { 1 } },
    { "atleast_2d", function() return T.atleast_2d(T.tensor({1, 2})) end,
        "int64", { 1, 2 }, { 1, 2 } },
    { "atleast_3d", function() return T.atleast_3d(T.tensor({{1, 2}})) end,
        "int64", { 1, 2, 1 }, { 1, 2 } },
    { "atleast_3d_1d", function() return T.atleast_3d(T.tensor({1, 2})) end,
        "int64", { 1, 2, 1 }, { 1, 2 } },
    { "atleast_3d_0d", function() return T.atleast_3d(T.tensor(1)) end,
        "int64", { 1, 1, 1 }, { 1 } },
    { "complex", function()
        return T.view_as_real(T.complex(T.tensor({1, 2}, F32), T.tensor({3, 4}, F32)))
    end,
        "float32", { 2, 2 }, { 1, 3, 2, 4 } },
    { "polar", function()
        return T.view_as_real(T.polar(T.tensor({2, 1}, F32), T.tensor({0, math.pi/2}, F32)))
    end,
        "float32", { 2, 2 }, { 2, 0, -4.371138828673793e-08, 1 } },
    { "heaviside", function() return T.heaviside(T.tensor({-1, 0, 2}, F32), T.tensor({0.5})) end,
        "float32", { 3 }, { 0, 0.5, 1 } },
    { "heaviside_int", function() return T.heaviside(T.tensor({-1, 0, 2}), T.tensor({7})) end,
        "int64", { 3 }, { 0, 7, 1 } },
    { "zeros0", function() return T.zeros(0) end,
        "float32", { 0 }, {} },
    { "zeros_scalar", function() return T.zeros({}) end,
        "float32", {}, { 0 } },
    { "randn_dtype", function() return z(T.randn(2, 3)) end,
        "float32", { 2, 3 }, { 0, 0, 0, 0, 0, 0 } },
    { "rand_f64", function() return z(T.rand(2, {dtype = "float64"})) end,
        "float64", { 2 }, { 0, 0 } },
    { "randint_dtype", function() return z(T.randint(3, 7, {4})) end,
        "int64", { 4 }, { 0, 0, 0, 0 } },
    { "randint_high", function() return z(T.randint(7, {2, 2})) end,
        "int64", { 2, 2 }, { 0, 0, 0, 0 } },
    { "randint_float", function() return z(T.randint(0, 7, {2}, {dtype = "float32"})) end,
        "float32", { 2 }, { 0, 0 } },
    { "randperm", function() return T.sort(T.randperm(4)) - 1 end,
        "int64", { 4 }, { 0, 1, 2, 3 } },
    { "randperm_0", function() return T.randperm(0) end,
        "int64", { 0 }, {} },
    { "randperm_dtype", function() return T.sort(T.randperm(3, {dtype = "float32"})) - 1 end,
        "float32", { 3 }, { 0, 1, 2 } },
    { "bernoulli", function() return z(T.bernoulli(T.full({3}, 0.5))) end,
        "float32", { 3 }, { 0, 0, 0 } },
    { "bernoulli_f64", function() return z(T.bernoulli(T.full({3}, 0.5, {dtype = "float64"}))) end,
        "float64", { 3 }, { 0, 0, 0 } },
    { "multinomial", function() return z(T.multinomial(T.tensor({0.2, 0.8}), 3, true)) end,
        "int64", { 3 }, { 0, 0, 0 } },
    { "multinomial_2d", function()
        return z(T.multinomial(T.tensor({{0.2, 0.8, 0.}, {1, 1, 1}}), 2))
    end,
        "int64", { 2, 2 }, { 0, 0, 0, 0 } },
    { "normal_tensor", function() return z(T.normal(T.zeros(2, 3), 1.0)) end,
        "float32", { 2, 3 }, { 0, 0, 0, 0, 0, 0 } },
    { "normal_tensor_std", function() return z(T.normal(0.0, T.ones(3))) end,
        "float32", { 3 }, { 0, 0, 0 } },
    { "normal_both", function()
        return z(T.normal(T.zeros(3, {dtype = "float64"}), T.ones(3, {dtype = "float64"})))
    end,
        "float64", { 3 }, { 0, 0, 0 } },
    { "normal_size", function() return z(T.normal(0.0, 1.0, {2, 2})) end,
        "float32", { 2, 2 }, { 0, 0, 0, 0 } },
    { "randint_like", function() return z(T.randint_like(x, 5)) end,
        "int64", { 2, 2 }, { 0, 0, 0, 0 } },
    { "rand_like", function() return z(T.rand_like(x:double())) end,
        "float64", { 2, 2 }, { 0, 0, 0, 0 } },
}

-- a whole float (5.0) is a float only on Lua 5.3+
local LUA53 = {
    { "arange_float_end", function() return T.arange(5.0) end,
        "float32", { 5 }, { 0, 1, 2, 3, 4 } },
    { "tensor_rg", function() return T.tensor({1.0, 2.0}, {requires_grad = true}) end,
        "float32", { 2 }, { 1, 2 } },
}

local DEFAULT64 = {
    { "dd_tensor", function() return T.tensor({1.5}) end,
        "float64", { 1 }, { 1.5 } },
    { "dd_tensor_int", function() return T.tensor({1}) end,
        "int64", { 1 }, { 1 } },
    { "dd_zeros", function() return T.zeros(1) end,
        "float64", { 1 }, { 0 } },
    { "dd_full", function() return T.full({1}, 1.5) end,
        "float64", { 1 }, { 1.5 } },
    { "dd_full_int", function() return T.full({1}, 2) end,
        "int64", { 1 }, { 2 } },
    { "dd_arange", function() return T.arange(0, 1, 0.5) end,
        "float64", { 2 }, { 0, 0.5 } },
    { "dd_arange_int", function() return T.arange(2) end,
        "int64", { 2 }, { 0, 1 } },
    { "dd_linspace", function() return T.linspace(0, 1, 2) end,
        "float64", { 2 }, { 0, 1 } },
    { "dd_logspace", function() return T.logspace(0, 1, 2) end,
        "float64", { 2 }, { 1, 10 } },
    { "dd_rand", function() return z(T.rand(1)) end,
        "float64", { 1 }, { 0 } },
    { "dd_randn", function() return z(T.randn(1)) end,
        "float64", { 1 }, { 0 } },
    { "dd_eye", function() return T.eye(1) end,
        "float64", { 1, 1 }, { 1 } },
    { "dd_range", function() return T.range(0, 1) end,
        "float64", { 2 }, { 0, 1 } },
    { "dd_normal", function() return z(T.normal(0.0, 1.0, {1})) end,
        "float64", { 1 }, { 0 } },
    { "dd_complex_polar", function()
        return T.view_as_real(T.polar(T.ones(1), T.zeros(1)))
    end,
        "float64", { 1, 2 }, { 1, 0 } },
}

local function check(name, t, dtype, shape, values, tol)
    assert.are.equal(dtype, t.dtype, name .. ": dtype")
    assert.are.same(shape, t.shape, name .. ": shape")
    local got = t:reshape(-1):tolist()
    assert.are.equal(#values, #got, name .. ": numel")
    for i = 1, #values do
        local w, g = values[i], got[i]
        if type(w) == "number" and math.type and math.type(w) == "float" or
            type(w) == "number" and w ~= math.floor(w) then
            assert(math.abs(w - g) <= (tol or 1e-7), ("%s: element %d is %.17g, PyTorch's %.17g")
                :format(name, i, g, w))
        else
            assert(w == g, ("%s: element %d is %s, PyTorch's %s"):format(name, i, tostring(g),
                tostring(w)))
        end
    end
end

local function run(cases)
    for _, c in ipairs(cases) do
        local name, fn, dtype, shape, values = c[1], c[2], c[3], c[4], c[5]
        local ok, t = pcall(fn)
        assert(ok, name .. ": " .. tostring(t))
        check(name, t, dtype, shape, values)
    end
end

describe("creation values as PyTorch 1.13's", function()
    it("tensor, zeros/ones/full, *_like, arange, range, linspace, logspace, eye, indices, joins",
        function()
            run(CASES)
        end)

    it("whole floats as floats, integers refuse requires_grad #lua53", function()
        run(LUA53)
        local ok, err = pcall(T.tensor, { 1, 2 }, { requires_grad = true })
        assert(not ok)
        assert.matches("tide: tensor: only floating-point tensors can require gradients", err,
            1, true)
    end)

    it("meshgrid ij and xy (a Lua list)", function()
        local a, b = T.tensor({ 1, 2 }), T.tensor({ 3, 4, 5 })
        local g = T.meshgrid(a, b, { indexing = "ij" })
        check("meshgrid ij 1", g[1], "int64", { 2, 3 }, { 1, 1, 1, 2, 2, 2 })
        check("meshgrid ij 2", g[2], "int64", { 2, 3 }, { 3, 4, 5, 3, 4, 5 })
        g = T.meshgrid(a, b, { indexing = "xy" })
        check("meshgrid xy 1", g[1], "int64", { 3, 2 }, { 1, 2, 1, 2, 1, 2 })
        check("meshgrid xy 2", g[2], "int64", { 3, 2 }, { 3, 3, 4, 4, 5, 5 })
    end)

    local function raises(pat, fn)
        local ok, err = pcall(fn)
        assert(not ok, pat .. ": no error")
        assert.matches(pat, tostring(err), 1, true)
    end
    it("raises where PyTorch raises", function()
        raises("tide: tensor: the nested table is ragged", function()
            return T.tensor({ { 1, 2 }, { 3 } })
        end)
        raises("tide: arange: step must not be zero", function() return T.arange(0, 5, 0) end)
        raises("tide: zeros: size -1 at position 2 is invalid", function()
            return T.zeros(2, -1)
        end)
        raises("tide: ones: size -1 at position 1 is invalid", function() return T.ones(-1) end)
        raises("tide: full: size -2 at position 1 is invalid", function()
            return T.full({ -2 }, 1)
        end)
        raises("tide: linspace: steps must be >= 0", function() return T.linspace(0, 1, -1) end)
        raises("tide: logspace: steps = -1", function() return T.logspace(0, 1, -1) end)
        raises("tide: eye: sizes -1 and -1 must be non-negative", function() return T.eye(-1) end)
        raises("tide: randperm: n = -1 is negative", function() return T.randperm(-1) end)
        raises("tide: randint: high (5) must be greater than low (5)", function()
            return T.randint(5, 5, { 2 })
        end)
        raises("tide: range: upper bound and larger bound inconsistent", function()
            return T.range(1, 3, -1)
        end)
        raises("tide: multinomial: cannot draw 3 samples without replacement", function()
            return T.multinomial(T.tensor({ 0.2, 0.8 }), 3)
        end)
        raises("tide: vander: x must be 1-D", function() return T.vander(T.tensor({ { 1 } })) end)
        raises("tide: hamming_window: takes at most 3 positional parameters", function()
            return T.hamming_window(5, true, 0.5, 0.3, 1)
        end)
        raises("tide: kaiser_window: beta given both by position and in the options table",
            function() return T.kaiser_window(5, true, 8, { beta = 8 }) end)
    end)

    it("arange's step sign and integer steps, booleans among numbers: PyTorch's", function()
        raises("tide: arange: end 5 lies on the other side of start 0 from step -1",
            function() return T.arange(0, 5, -1) end)
        raises("tide: arange: step 0.5 is 0 as int64",
            function() return T.arange(0, 2, 0.5, { dtype = "int64" }) end)
        -- torch.arange(0, 5, 1.5, dtype=torch.int64): start, end, step truncated first
        assert.are.same({ 0, 1, 2, 3, 4 }, T.arange(0, 5, 1.5, { dtype = "int64" }):totable())
        assert.are.same({ 0, 1, 2, 3, 4 }, T.arange(0.5, 5, 1, { dtype = "int64" }):totable())
        assert.are.equal(0, T.arange(5, 5, -1):numel())
        -- torch.tensor([True, 2]): int64 [1, 2]; torch.tensor([True, 2.5]): float [1, 2.5]
        local b = T.tensor({ true, 2 })
        assert.are.equal("int64", b.dtype)
        assert.are.same({ 1, 2 }, b:totable())
        assert.are.same({ 1, 2.5 }, T.tensor({ true, 2.5 }):totable())
    end)

    it("windows' positional periodic, alpha, beta as PyTorch's", function()
        -- torch.hamming_window(5, True, 0.5, 0.3), torch.kaiser_window(5, True, 8.0)
        check("hamming pos", T.hamming_window(5, true, 0.5, 0.3), "float32", { 5 },
            { 0.19999998807907104, 0.407294899225235, 0.7427051067352295, 0.7427051067352295,
                0.4072948694229126 })
        check("kaiser pos", T.kaiser_window(5, true, 8.0), "float32", { 5 },
            { 0.002338829915970564, 0.2267768234014511, 0.8598017692565918, 0.8598017692565918,
                0.2267768234014511 }, 1e-6) -- tide computes in float64, then rounds
        check("hann sym f64", T.hann_window(5, false, { dtype = "float64" }), "float64", { 5 },
            { 0, 0.5, 1, 0.5, 0 })
        check("block_diag()", T.block_diag(), "float32", { 1, 0 }, {})
    end)

    it("draws: dtypes, shapes, ranges; manual_seed repeats", function()
        T.manual_seed(0)
        local r = T.randint(3, 7, { 500 })
        assert.are.equal("int64", r.dtype)
        assert.are.same({ 3, 6 }, { r:min():item(), r:max():item() })
        r = T.randint(7, { 500 })
        assert.are.same({ 0, 6 }, { r:min():item(), r:max():item() })
        r = T.rand(500)
        assert(r:min():item() >= 0 and r:max():item() < 1)
        assert.are.same({ 1, 2, 3, 4, 5 }, T.sort(T.randperm(5)):tolist())
        r = T.bernoulli(T.full({ 500 }, 0.5))
        assert.are.same({ 0, 1 }, { r:min():item(), r:max():item() })
        r = T.multinomial(T.tensor({ 0.2, 0.8 }), 100, true)
        assert.are.same({ 1, 2, "int64" }, { r:min():item(), r:max():item(), r.dtype })
        -- row 1 never draws category 3 (probability 0): two distinct of {1, 2}
        r = T.multinomial(T.tensor({ { 0.2, 0.8, 0 }, { 1, 1, 1 } }), 2)
        assert.are.same({ 1, 2 }, T.sort(r[1]):tolist())
        r = T.normal(T.tensor({ 0, 100, 1000 }, F32), 0.001)
        assert.are.same({ 0, 100, 1000 }, r:round():abs():tolist())
        T.manual_seed(42)
        local a = { T.rand(4):tolist(), T.randint(0, 100, { 4 }):tolist(), T.randperm(6):tolist() }
        T.manual_seed(42)
        local b = { T.rand(4):tolist(), T.randint(0, 100, { 4 }):tolist(), T.randperm(6):tolist() }
        assert.are.same(a, b)
    end)

    it("set_default_dtype float64 then creation", function()
        T.set_default_dtype("float64")
        local ok, err = pcall(run, DEFAULT64)
        T.set_default_dtype("float32")
        assert(ok, err)
    end)
end)
