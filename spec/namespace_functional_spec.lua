-- namespace_functional_spec.lua: torch.nn.functional's and torch.nn.init's public callables
-- (PyTorch 1.13's dir(), no underscore, classes and typing helpers left out) against tide's.
-- Each one tide has was called with PyTorch's defaults on one small input and compared to
-- 1e-5 (the random ones by their bounds and moments): all matched. The names tide lacked are
-- below: the thin ones added (values pasted from PyTorch 1.13), the rest pending with why.
local tide = require("tide")
local F = tide.nn.functional

local function mk(f, ...)
    local s, n, v = { ... }, 1, {}
    for _, d in ipairs(s) do
        n = n * d
    end
    for i = 0, n - 1 do
        v[#v + 1] = f(i)
    end
    return tide.tensor(v):reshape(table.unpack(s))
end
local function r(...)
    return mk(function(i) return math.sin(i * 0.7 + 0.3) * 2 end, ...)
end

-- PyTorch 1.13: F.conv_tbc(r(5,2,4), r(3,4,3), r(3)) (pad 0, then 1) and
-- F.native_channel_shuffle(r(1,4,2,2), 2), flattened
local TBC = {2.04903, 2.26798, 1.42026, -0.452913, 0.995262, 1.97535, 1.10033, 2.3938, 2.56143,
    0.675268, 1.03105, 0.901906, -0.0769707, 2.20055, 3.44311, 1.76564, 1.35944, 0.313878}
local TBC_PAD = {1.29117, 1.14482, 0.460053, -0.77331, 1.61985, 3.25118, 2.04903, 2.26798,
    1.42026, -0.452913, 0.995262, 1.97535, 1.10033, 2.3938, 2.56143, 0.675268, 1.03105, 0.901906,
    -0.0769707, 2.20055, 3.44311, 1.76564, 1.35944, 0.313878, -0.976602, 1.03459, 2.5592, 2.19585,
    2.84317, 2.1533}
local SHUF = {0.59104, 1.68294, 1.98333, 1.35093, -0.747753, 0.623083, 1.70087, 1.97872,
    0.0831613, -1.22372, -1.95506, -1.76691, 1.32594, 0.0495508, -1.25014, -1.96187}

local function close(want, got, shape)
    assert.are.same(shape, got.shape)
    local g = got:contiguous():view(-1):tolist()
    assert.are.equal(#want, #g)
    for i, w in ipairs(want) do
        assert.is_true(math.abs(g[i] - w) <= 1e-4 * math.max(1, math.abs(w)),
            ("[%d] %g vs PyTorch %g"):format(i, g[i], w))
    end
end

describe("torch.nn.functional names tide lacked", function()
    it("conv_tbc(input {T, B, C_in}, weight {K, C_in, C_out}, bias[, pad]) is PyTorch's", function()
        local x, w, b = r(5, 2, 4), r(3, 4, 3), r(3)
        close(TBC, F.conv_tbc(x, w, b), { 3, 2, 3 })
        close(TBC_PAD, F.conv_tbc(x, w, b, 1), { 5, 2, 3 })
        close(TBC_PAD, F.conv_tbc(x, w, b, { pad = 1 }), { 5, 2, 3 })
        close(TBC, F.conv_tbc(x, { weight = w, bias = b }), { 3, 2, 3 })
        local xg = x:clone():requires_grad_(true)
        F.conv_tbc(xg, w, b):sum():backward()
        assert.are.same({ 5, 2, 4 }, xg.grad.shape)
        assert.has_error(function() F.conv_tbc(x:view(10, 4), w, b) end,
            "tide: conv_tbc: expected input {T, B, C_in}, weight {K, C_in, C_out} and bias " ..
            "{C_out}, got {10, 4}, {3, 4, 3} and {3}")
    end)

    it("native_channel_shuffle is channel_shuffle under PyTorch's second name", function()
        close(SHUF, F.native_channel_shuffle(r(1, 4, 2, 2), 2), { 1, 4, 2, 2 })
        close(SHUF, F.native_channel_shuffle(r(1, 4, 2, 2), { groups = 2 }), { 1, 4, 2, 2 })
        assert.has_error(function() F.native_channel_shuffle(r(2, 3, 2), 2) end,
            "tide: native_channel_shuffle: 3 channels (input {2, 3, 2}) are not divisible by " ..
            "groups 2")
    end)

    for _, n in ipairs({ "handle_torch_function", "has_torch_function",
        "has_torch_function_unary", "has_torch_function_variadic" }) do
        pending("F." .. n .. ": Python's __torch_function__ override protocol; tide has none")
    end
    pending("F.boolean_dispatch: a Python helper building a function that picks one of two "
        .. "by a boolean keyword (max_pool's return_indices); not a user-facing op")
    pending("F.assert_int_or_pair: a TorchScript argument-check helper, not a user-facing op")
end)

describe("torch.nn.init names", function()
    it("tide has every public callable of torch.nn.init", function()
        for _, n in ipairs({ "calculate_gain", "constant", "constant_", "dirac", "dirac_", "eye",
            "eye_", "kaiming_normal", "kaiming_normal_", "kaiming_uniform", "kaiming_uniform_",
            "normal", "normal_", "ones_", "orthogonal", "orthogonal_", "sparse", "sparse_",
            "trunc_normal_", "uniform", "uniform_", "xavier_normal", "xavier_normal_",
            "xavier_uniform", "xavier_uniform_", "zeros_" }) do
            assert.is_function(tide.nn.init[n], n)
        end
    end)
end)
