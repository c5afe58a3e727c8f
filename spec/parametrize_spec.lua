-- parametrize_spec.lua — nn.utils.parametrize and nn.utils.parametrizations against PyTorch
-- 1.13's values and gradients (spec/fixtures/parametrize_torch.lua, written by
-- spec/fixtures/make_parametrize.py): a symmetric and a scaling parametrization, chained,
-- assigned through right_inverse, removed both ways; spectral_norm with known u and v;
-- orthogonal's three maps and its first value; the module's class, state_dict keys, cached(),
-- the errors (and that a refused call changes nothing), and a move to another device.
local tide = require("tide")
local nn = tide.nn
local D = require("spec.support.device")
local PT = require("spec.support.porting")

local T = dofile("spec/fixtures/parametrize_torch.lua")
local P = nn.utils.parametrize
local PS = nn.utils.parametrizations
local DEV = D.name

local function t64(v)
    return PT.t64(v, DEV)
end

local function catch(f)
    local ok, err = pcall(f)
    assert.is_false(ok, "expected an error")
    return tostring(err)
end

local Symmetric = nn.Module:extend("Symmetric")
function Symmetric:forward(X)
    return X:triu() + X:triu(1):transpose(1, 2)
end

local Scale = nn.Module:extend("Scale")
function Scale:forward(X)
    return X * 2
end
function Scale:right_inverse(X)
    return X / 2
end

-- a float64 Linear on the device under test with the fixture's weight and bias
local function linear(w, n_in, n_out)
    local l = nn.Linear(n_in, n_out):to("float64"):to(DEV)
    tide.no_grad(function()
        l.weight:copy_(t64(w):reshape(n_out, n_in))
        l.bias:copy_(t64(T.B3):narrow(1, 1, n_out))
    end)
    return l
end

-- the layer on the fixture's X, then the gradients of sum(out * G), against case `name`
local function check(name, l, x, tol)
    tol = tol or 1e-12
    local c = T.cases[name]
    x = t64(x):reshape(2, -1):requires_grad_(true)
    local out = l(x)
    PT.close(c.out, out, tol, name .. " out")
    PT.close(c.weight, l.weight, tol, name .. " weight")
    out:mul(PT.weight_like(out)):sum():backward()
    PT.close(c.grad_original, l.parametrizations.weight.original.grad, tol, name .. " grad")
    PT.close(c.grad_x, x.grad, tol, name .. " grad x")
end

describe("nn.utils.parametrize (" .. DEV .. ")", function()
    it("computes the weight from the original on each read, with PyTorch's gradients", function()
        local l = linear(T.W33, 3, 3)
        local w = l.weight
        assert.are.equal(l, P.register_parametrization(l, "weight", Symmetric()))
        assert.are.equal(w, l.parametrizations.weight.original) -- the same tensor object
        check("symmetric", l, T.X)
    end)

    it("chains parametrizations in registration order", function()
        local l = linear(T.W33, 3, 3)
        P.register_parametrization(l, "weight", Symmetric())
        P.register_parametrization(l, "weight", Scale())
        assert.are.equal(2, #l.parametrizations.weight)
        check("chain", l, T.X)
    end)

    it("stores right_inverse(value) in the original, on registration and on assignment", function()
        local l = linear(T.W33, 3, 3)
        P.register_parametrization(l, "weight", Scale())
        local orig = l.parametrizations.weight.original
        PT.close(T.values.scale_original, orig, 1e-15, "original")
        l.weight = t64(T.ORIG):reshape(3, 3)
        assert.are.equal(orig, l.parametrizations.weight.original)
        PT.close(T.values.assigned_original, orig, 1e-15, "assigned original")
        PT.close(T.values.assigned_weight, l.weight, 1e-15, "assigned weight")
        P.remove_parametrizations(l, "weight", false)
        assert.are.equal(orig, l.weight) -- the original is the parameter again
        PT.close(T.values.removed_original, l.weight, 1e-15, "removed")
    end)

    it("removes a parametrization, keeping its value and the parameter object", function()
        local l = linear(T.W33, 3, 3)
        local w = l.weight
        P.register_parametrization(l, "weight", Scale())
        P.remove_parametrizations(l, "weight", { leave_parametrized = true })
        assert.are.equal(w, l.weight)
        assert.is_true(l.weight.requires_grad)
        PT.close(T.values.removed_leave, l.weight, 1e-15, "removed")
        assert.are.equal("Linear", l.__name)
        assert.is_nil(rawget(l, "parametrizations"))
        assert.is_false(P.is_parametrized(l))
        local keys = {}
        for k in pairs(l:state_dict()) do
            keys[#keys + 1] = k
        end
        table.sort(keys)
        assert.are.same({ "bias", "weight" }, keys)
    end)

    it("gives the module a class of its own, its state_dict keys as PyTorch's", function()
        local l = linear(T.W33, 3, 3)
        P.register_parametrization(l, "weight", Symmetric())
        assert.are.equal("ParametrizedLinear", l.__name)
        assert.are.equal(nn.Linear, P.type_before_parametrizations(l))
        assert.is_true(P.is_parametrized(l))
        assert.is_true(P.is_parametrized(l, "weight"))
        assert.is_false(P.is_parametrized(l, "bias"))
        local keys = {}
        for k in pairs(l:state_dict()) do
            keys[#keys + 1] = k
        end
        table.sort(keys)
        assert.are.same({ "bias", "parametrizations.weight.original" }, keys)
        assert.are.equal(12, l:num_parameters())
        assert.matches("^ParametrizedLinear", tostring(l))
        assert.matches("1: Symmetric", tostring(l), 1, true)
    end)

    it("parametrizes a buffer", function()
        local m = nn.Module()
        m:register_buffer("table_", t64(T.W33):reshape(3, 3))
        P.register_parametrization(m, "table_", Symmetric())
        local v = m.table_
        assert.are.same(v:transpose(1, 2):to("cpu"):totable(), v:to("cpu"):totable())
        assert.are.equal(0, #m:parameters())
        assert.is_not_nil(m:state_dict()["parametrizations.table_.original"])
    end)

    it("computes each tensor once inside cached()", function()
        local Counting = nn.Module:extend("Counting")
        local calls = 0
        function Counting:forward(X)
            calls = calls + 1
            return X * 1
        end
        local l = linear(T.W33, 3, 3)
        P.register_parametrization(l, "weight", Counting())
        calls = 0
        local a, b = P.cached(function()
            return l.weight, l.weight
        end)
        assert.are.equal(1, calls)
        assert.are.equal(a, b)
        local _ = l.weight
        assert.are.equal(2, calls) -- the cache ends with the call
        assert.matches("tide: parametrize.cached: boom",
            catch(function() P.cached(function() error("tide: parametrize.cached: boom") end) end),
            1, true)
        _ = l.weight
        assert.are.equal(3, calls) -- an error ends the cache too
    end)

    it("moves with the module", function()
        local l = linear(T.W33, 3, 3)
        P.register_parametrization(l, "weight", Symmetric())
        l:to(D.other)
        assert.are.equal(D.other, tostring(l.weight.device))
        assert.are.equal(D.other, tostring(l.parametrizations.weight.original.device))
    end)

    it("refuses what PyTorch refuses, and a refused call changes nothing", function()
        local l = linear(T.W33, 3, 3)
        local w = l.weight
        assert.matches("tide: register_parametrization: Linear has no parameter, buffer or " ..
            "parametrized tensor named 'wieght'",
            catch(function() P.register_parametrization(l, "wieght", Symmetric()) end), 1, true)
        local Shrink = nn.Module:extend("Shrink")
        function Shrink:forward(X)
            return X:narrow(1, 1, 2)
        end
        assert.matches("tide: register_parametrization: the parametrization changes weight's " ..
            "shape ({3, 3} -> {2, 3}); pass {unsafe = true} to allow it",
            catch(function() P.register_parametrization(l, "weight", Shrink()) end), 1, true)
        assert.are.equal(w, l.weight)
        assert.is_false(P.is_parametrized(l))
        assert.are.equal("Linear", l.__name)
        assert.matches("tide: register_parametrization: the parametrization must be a Module " ..
            "with a forward(X) (PyTorch's nn.Module), got function",
            catch(function() P.register_parametrization(l, "weight", function(x) return x end) end),
            1, true)
        assert.matches('tide: register_parametrization: unknown option "unsave"',
            catch(function() P.register_parametrization(l, "weight", Symmetric(), { unsave = 1 }) end),
            1, true)
        assert.matches("tide: remove_parametrizations: Linear has no parametrization on 'weight'",
            catch(function() P.remove_parametrizations(l, "weight") end), 1, true)
        P.register_parametrization(l, "weight", Symmetric())
        local before = l.parametrizations.weight.original:clone()
        assert.matches("tide: parametrize: parametrization Symmetric does not implement " ..
            "right_inverse; define Symmetric:right_inverse(X)",
            catch(function() l.weight = t64(T.ORIG):reshape(3, 3) end), 1, true)
        PT.close(before:to("cpu"):totable(), l.parametrizations.weight.original, 0, "unchanged")
    end)
end)

describe("nn.utils.parametrizations (" .. DEV .. ")", function()
    for _, name in ipairs({ "sn", "sn_wide" }) do
        it("spectral_norm divides by sigma after a power iteration, as PyTorch (" .. name .. ")",
            function()
                local n_in = name == "sn" and 3 or 4
                local l = linear(name == "sn" and T.W33 or T.W43, n_in, 3)
                assert.are.equal(l, PS.spectral_norm(l))
                local sn = l.parametrizations.weight[1]
                tide.no_grad(function()
                    sn._u:copy_(t64(T.values[name .. "_u0"]))
                    sn._v:copy_(t64(T.values[name .. "_v0"]))
                end)
                check(name, l, n_in == 3 and T.X or T.X4, 1e-11)
                PT.close(T.values[name .. "_u"], sn._u, 1e-12, "u")
                PT.close(T.values[name .. "_v"], sn._v, 1e-12, "v")
                l:eval()
                PT.close(T.values[name .. "_eval"], l.weight, 1e-12, "eval weight")
                assert.is_not_nil(l:state_dict()["parametrizations.weight.1._u"])
            end)
    end

    for _, map in ipairs({ "matrix_exp", "cayley", "householder" }) do
        it("orthogonal (" .. map .. ") starts from the weight's Q and follows PyTorch", function()
            local l = linear(T.W33, 3, 3)
            PS.orthogonal(l, { orthogonal_map = map })
            PT.close(T.values["orth_first_" .. map], l.weight, 1e-12, "first value")
            PT.close(T.values["orth_base_" .. map], l.parametrizations.weight[1].base, 1e-12,
                "base")
            PT.close(T.values["orth_original_" .. map], l.parametrizations.weight.original, 0,
                "original")
            tide.no_grad(function()
                l.parametrizations.weight.original:copy_(t64(T.ORIG):reshape(3, 3) * 0.5)
            end)
            check("orth_" .. map, l, T.X, 1e-10)
            if map ~= "householder" then -- PyTorch's householder map signs by int(diag): not Q
                local q = l.weight
                PT.close({ { 1, 0, 0 }, { 0, 1, 0 }, { 0, 0, 1 } }, q:transpose(1, 2):matmul(q),
                    1e-12, "Q^T Q")
            end
        end)
    end

    it("orthogonal keeps a tall weight's columns orthonormal (householder by default)", function()
        local l = nn.Linear(4, 3):to("float64"):to(DEV)
        PS.orthogonal(l, { name = "weight" })
        local q = l.weight -- {3, 4}: wide, orthonormal rows
        PT.close({ { 1, 0, 0 }, { 0, 1, 0 }, { 0, 0, 1 } }, q:matmul(q:transpose(1, 2)), 1e-12,
            "Q Q^T")
    end)

    it("refuse bad options with the fix", function()
        local l = linear(T.W33, 3, 3)
        assert.matches('tide: parametrizations.orthogonal: orthogonal_map must be "matrix_exp", ' ..
            '"cayley" or "householder", got qr',
            catch(function() PS.orthogonal(l, { orthogonal_map = "qr" }) end), 1, true)
        assert.matches("tide: parametrizations.orthogonal: expected a matrix or batch of " ..
            "matrices, got a 1-D tensor", catch(function() PS.orthogonal(l, { name = "bias" }) end),
            1, true)
        assert.matches("tide: parametrizations.spectral_norm: Linear has no parameter or buffer " ..
            "named 'w'", catch(function() PS.spectral_norm(l, { name = "w" }) end), 1, true)
        assert.matches('tide: parametrizations.spectral_norm: unknown option "iters"',
            catch(function() PS.spectral_norm(l, { iters = 2 }) end), 1, true)
        assert.is_false(P.is_parametrized(l))
    end)
end)
