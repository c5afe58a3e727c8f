-- tide.nn.utils.parametrize / parametrizations against PyTorch 1.13: names and values pasted from
-- torch 1.13 (torch.nn.utils.parametrize, torch.nn.utils.parametrizations) on the same inputs.
-- Children of a ParametrizationList are 1-based ("parametrizations.weight.1._u", PyTorch's
-- "...0._u") and spectral_norm's dim is 1-based, as docs/API.md documents.
local tide = require("tide")
local nn = tide.nn
local P = nn.utils.parametrize
local PZ = nn.utils.parametrizations

local F32 = { dtype = "float32" }
local W = { { 1, 2, 3 }, { 4, 5, 6 }, { 7, 8, 10 } }

local function lin()
    local m = nn.Linear(3, 3)
    tide.no_grad(function()
        m.weight:copy_(tide.tensor(W, F32))
        m.bias:copy_(tide.tensor({ 0.1, 0.2, 0.3 }, F32))
    end)
    return m
end

local Sym = nn.Module:extend("Sym")
function Sym:forward(X)
    return X:triu() + X:triu(1):transpose(1, 2)
end
local Double = nn.Module:extend("Double")
function Double:forward(X)
    return X * 2
end
function Double:right_inverse(X)
    return X / 2
end
local First2 = nn.Module:extend("First2")
function First2:forward(X)
    return X:narrow(2, 1, 2)
end
-- keeps the shape forward, but its right_inverse does not
local BadInverse = nn.Module:extend("BadInverse")
function BadInverse:forward(X)
    return X
end
function BadInverse:right_inverse(X)
    return X:narrow(2, 1, 2)
end
-- two originals (a right_inverse returning a list)
local Sum2 = nn.Module:extend("Sum2")
function Sum2:forward(a, b)
    return a + b
end
function Sum2:right_inverse(X)
    return { X / 2, X / 2 }
end

local function keys(m)
    local t = {}
    for k in pairs(m:state_dict()) do
        t[#t + 1] = k
    end
    table.sort(t)
    return t
end
local function sorted(t)
    table.sort(t)
    return t
end
local function param_names(m)
    local t = {}
    for n in m:named_parameters() do
        t[#t + 1] = n
    end
    return sorted(t)
end

local function close(a, b, tol)
    return (a - tide.tensor(b, F32)):abs():max():item() <= (tol or 1e-6)
end

local function raises(fn, msg)
    local ok, err = pcall(fn)
    assert.is_false(ok, msg)
    assert.is_truthy(tostring(err):find("tide: ", 1, true), msg .. ": " .. tostring(err))
    return tostring(err)
end

describe("parametrize against PyTorch 1.13", function()
    it("register_parametrization, is_parametrized, the list's attributes", function()
        local m = lin()
        assert.are.equal(m, P.register_parametrization(m, "weight", Sym()))
        assert.are.equal("ParametrizedLinear", m.__name)
        assert.are.equal("Linear", P.type_before_parametrizations(m).__name)
        local L = m.parametrizations.weight
        assert.are.equal("ParametrizationList", L.__name)
        -- PyTorch: unsafe False, is_tensor True, ntensors 1, len 1
        assert.are.equal(false, L.unsafe)
        assert.are.equal(true, L.is_tensor)
        assert.are.equal(1, L.ntensors)
        assert.are.equal(1, #L)
        assert.are.same({ "bias", "parametrizations.weight.original" }, keys(m))
        assert.are.same({ "bias", "parametrizations.weight.original" }, param_names(m))
        assert.is_true(L.original.requires_grad)
        assert.is_true(m.weight.requires_grad)
        assert.is_true(close(m.weight, { { 1, 2, 3 }, { 2, 5, 6 }, { 3, 6, 10 } }))
        assert.is_true(P.is_parametrized(m))
        assert.is_true(P.is_parametrized(m, "weight"))
        assert.is_false(P.is_parametrized(m, "bias"))
        assert.is_false(P.is_parametrized(lin()))
        assert.is_false(P.is_parametrized(lin(), "weight"))

        -- right_inverse runs on registration and on assignment
        m = lin()
        P.register_parametrization(m, "weight", Double())
        assert.is_true(close(m.parametrizations.weight.original,
            { { 0.5, 1, 1.5 }, { 2, 2.5, 3 }, { 3.5, 4, 5 } }), "ri original")
        assert.is_true(close(m.weight, W), "ri weight")
        m.weight = tide.eye(3, F32)
        assert.is_true(close(m.parametrizations.weight.original,
            { { 0.5, 0, 0 }, { 0, 0.5, 0 }, { 0, 0, 0.5 } }), "ri assign")

        -- unsafe: another shape; without it, an error
        m = lin()
        P.register_parametrization(m, "weight", First2(), { unsafe = true })
        assert.are.same({ 3, 2 }, m.weight.shape)
        assert.are.equal(true, m.parametrizations.weight.unsafe)
        raises(function()
            P.register_parametrization(lin(), "weight", First2())
        end, "shape change")
        raises(function()
            P.register_parametrization(lin(), "foo", Sym())
        end, "no such tensor")

        -- several originals: is_tensor false, ntensors 2 (PyTorch's len(right_inverse(X)))
        m = lin()
        P.register_parametrization(m, "weight", Sum2())
        L = m.parametrizations.weight
        assert.are.equal(false, L.is_tensor)
        assert.are.equal(2, L.ntensors)
        assert.are.same({ "bias", "parametrizations.weight.original0",
            "parametrizations.weight.original1" }, keys(m))
        assert.is_true(close(m.weight, W), "sum2 weight")
        m.weight = tide.eye(3, F32)
        assert.is_true(close(L.original1, { { 0.5, 0, 0 }, { 0, 0.5, 0 }, { 0, 0, 0.5 } }))
        raises(function()
            P.remove_parametrizations(m, "weight", false)
        end, "several originals, leave false")
    end)

    it("chains, remove_parametrizations and cached", function()
        local m = lin()
        P.register_parametrization(m, "weight", Sym())
        P.register_parametrization(m, "weight", Double())
        assert.are.equal(2, #m.parametrizations.weight)
        assert.is_true(close(m.weight, { { 2, 4, 6 }, { 4, 10, 12 }, { 6, 12, 20 } }), "chain")
        assert.is_true(close(m.parametrizations.weight.original, W), "chain original")
        assert.are.same({ "bias", "parametrizations.weight.original" }, keys(m))
        -- PyTorch checks the new parametrization's right_inverse too (ValueError)
        local err = raises(function()
            P.register_parametrization(m, "weight", BadInverse())
        end, "chained right_inverse shape")
        assert.is_truthy(err:find("right_inverse changes weight", 1, true), err)
        assert.are.equal(2, #m.parametrizations.weight)
        P.register_parametrization(m, "weight", BadInverse(), { unsafe = true })
        assert.are.equal(true, m.parametrizations.weight.unsafe)

        m = lin()
        P.register_parametrization(m, "weight", Double())
        P.register_parametrization(m, "weight", Sym())
        assert.are.equal(m, P.remove_parametrizations(m, "weight", { leave_parametrized = true }))
        assert.are.equal("Linear", m.__name)
        assert.is_nil(m.parametrizations)
        assert.is_true(close(m.weight, { { 1, 2, 3 }, { 2, 5, 6 }, { 3, 6, 10 } }), "rm weight")
        assert.are.same({ "bias", "weight" }, keys(m))
        assert.are.same({ "bias", "weight" }, param_names(m))

        m = lin()
        P.register_parametrization(m, "weight", Double())
        P.remove_parametrizations(m, "weight", { leave_parametrized = false })
        assert.is_true(close(m.weight, { { 0.5, 1, 1.5 }, { 2, 2.5, 3 }, { 3.5, 4, 5 } }), "rmF")

        m = lin()
        P.register_parametrization(m, "weight", Double())
        P.register_parametrization(m, "bias", Double())
        P.remove_parametrizations(m, "weight")
        assert.are.equal("ParametrizedLinear", m.__name)
        assert.is_true(P.is_parametrized(m))
        assert.is_false(P.is_parametrized(m, "weight"))
        assert.is_true(P.is_parametrized(m, "bias"))
        raises(function()
            P.remove_parametrizations(lin(), "weight")
        end, "remove unparametrized")

        local calls = 0
        local Count = nn.Module:extend("Count")
        function Count:forward(X)
            calls = calls + 1
            return X
        end
        m = lin()
        P.register_parametrization(m, "weight", Count())
        calls = 0
        local a, b
        P.cached(function()
            a, b = m.weight, m.weight
        end)
        assert.are.equal(1, calls) -- PyTorch: 1 call, the same tensor
        assert.are.equal(a, b)
        calls = 0
        a, b = m.weight, m.weight
        assert.are.equal(2, calls)
    end)

    local function orth_err(Q)
        local n, k = Q:size(-2), Q:size(-1)
        if n < k then
            Q = Q:transpose(-2, -1)
            k = n
        end
        return (Q:transpose(-2, -1):matmul(Q) - tide.eye(k, F32)):abs():max():item()
    end

    it("orthogonal", function()
        -- PyTorch: map matrix_exp for square, householder otherwise; unsafe True; base buffer
        local cases = { { 3, 3, "matrix_exp" }, { 5, 3, "householder" }, { 3, 5, "householder" } }
        for _, c in ipairs(cases) do
            local msg = c[1] .. "x" .. c[2]
            local m = nn.Linear(c[2], c[1])
            PZ.orthogonal(m)
            local o = m.parametrizations.weight[1]
            assert.are.equal(c[3], o.orthogonal_map, msg)
            assert.are.same({ c[1], c[2] }, o.shape, msg)
            assert.are.same({ c[1], c[2] }, m.weight.shape, msg)
            assert.are.equal(true, m.parametrizations.weight.unsafe, msg)
            assert.are.same({ "bias", "parametrizations.weight.1.base",
                "parametrizations.weight.original" }, keys(m), msg)
            assert.is_true(orth_err(m.weight) < 1e-5, msg)
        end
        for _, map in ipairs({ "matrix_exp", "cayley", "householder" }) do
            local m = nn.Linear(3, 4)
            PZ.orthogonal(m, { orthogonal_map = map })
            assert.is_true(orth_err(m.weight) < 1e-5, map)
        end
        local m = nn.Linear(3, 3)
        PZ.orthogonal(m, { use_trivialization = false })
        assert.are.same({ "bias", "parametrizations.weight.original" }, keys(m))
        assert.is_nil(m.parametrizations.weight[1].base)
        assert.is_true(orth_err(m.weight) < 1e-5, "no trivialization")
        raises(function()
            PZ.orthogonal(nn.Linear(3, 3), { orthogonal_map = "foo" })
        end, "bad map")
        raises(function()
            PZ.orthogonal(nn.BatchNorm1d(3))
        end, "1-D")
    end)

    it("spectral_norm", function()
        local m = nn.Linear(4, 3)
        PZ.spectral_norm(m)
        local s = m.parametrizations.weight[1]
        assert.are.equal("_SpectralNorm", s.__name)
        assert.are.equal(1, s.dim) -- PyTorch 0
        assert.are.equal(1e-12, s.eps)
        assert.are.equal(1, s.n_power_iterations)
        assert.are.same({ "bias", "parametrizations.weight.1._u", "parametrizations.weight.1._v",
            "parametrizations.weight.original" }, keys(m))
        assert.are.same({ 3 }, s._u.shape)
        assert.are.same({ 4 }, s._v.shape)
        for _ = 1, 5 do
            local _ = m.weight
        end
        -- PyTorch: 1.0 (to 4 places)
        assert.is_true(math.abs(tide.linalg.matrix_norm(m.weight, 2):item() - 1) < 1e-4)

        m = nn.Linear(4, 3)
        PZ.spectral_norm(m, { n_power_iterations = 3, dim = 2 })
        s = m.parametrizations.weight[1]
        assert.are.equal(2, s.dim) -- PyTorch 1
        assert.are.equal(3, s.n_power_iterations)
        assert.are.same({ 4 }, s._u.shape)
        m = nn.ConvTranspose1d(2, 3, 2)
        PZ.spectral_norm(m)
        assert.are.equal(2, m.parametrizations.weight[1].dim) -- PyTorch 1
        m = nn.BatchNorm1d(3)
        PZ.spectral_norm(m)
        assert.are.same(sorted({ "bias", "running_mean", "running_var", "num_batches_tracked",
            "parametrizations.weight.original" }), keys(m))
        raises(function()
            PZ.spectral_norm(nn.Linear(3, 3), { n_power_iterations = 0 })
        end, "n_power_iterations 0")
        raises(function()
            PZ.spectral_norm(nn.Linear(3, 3), { dim = 3 })
        end, "dim 3")
    end)
end)
