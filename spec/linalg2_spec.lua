-- linalg2_spec.lua — linalg.lu, lu_unpack, lu_solve (left, right, adjoint, batched),
-- matrix_exp (inside and past the Taylor radius, batched), vander and cumulative_trapezoid,
-- against PyTorch 1.13's values and gradients (spec/fixtures/linalg2_torch.lua, written by
-- spec/fixtures/make_linalg2.py), on the device under test; their errors.
local tide = require("tide")
local D = require("spec.support.device")
local P = require("spec.support.porting")

local T = dofile("spec/fixtures/linalg2_torch.lua")
local DEV = D.name
local LA = tide.linalg

local function t64(v)
    return P.t64(v, DEV)
end

local function catch(f)
    local ok, err = pcall(f)
    assert.is_false(ok, "expected an error")
    return tostring(err)
end

local function flat(...)
    local parts = {}
    for i, t in ipairs({ ... }) do
        parts[i] = t:reshape(-1)
    end
    return tide.cat(parts, 1)
end

local function lu_solve(A, B, opts)
    local LU, piv = LA.lu_factor(A)
    return LA.lu_solve(LU, piv, B, opts)
end

describe("linalg II, PyTorch's values (" .. DEV .. ")", function()
    local CASES = {
        lu = { function(a) return flat(LA.lu(a)) end, T.A },
        lu_batch = { function(a) return flat(LA.lu(a)) end, T.BATCH },
        lu_unpack = { function(a) return flat(LA.lu_unpack(LA.lu_factor(a))) end, T.A },
        lu_solve = { function(a, b) return lu_solve(a, b) end, T.A, T.B3 },
        lu_solve_adjoint = { function(a, b) return lu_solve(a, b, { adjoint = true }) end, T.A,
            T.B3 },
        lu_solve_right = { function(a, b) return lu_solve(a, b, { left = false }) end, T.A,
            T.B23 },
        lu_solve_batch = { function(a, b) return lu_solve(a, b) end, T.BATCH, { { 1 }, { 2 } } },
        matrix_exp_small = { function(a) return LA.matrix_exp(a) end, T.SMALL },
        matrix_exp_large = { function(a) return a:matrix_exp() end, T.LARGE },
        matrix_exp_batch = { function(a) return tide.matrix_exp(a) end, T.BATCH },
        cholesky_raw = { function(a) return LA.cholesky(a) end, T.SPD },
        vander = { function(x) return tide.vander(x) end, T.X4 },
        vander_grad = { function(x) return tide.vander(x) end, T.X4 },
        vander_n_increasing = { function(x)
            return tide.vander(x, { N = 3, increasing = true })
        end, T.X4 },
        cumulative_trapezoid = { function(y) return tide.cumulative_trapezoid(y) end, T.Y },
        cumulative_trapezoid_dx = { function(y)
            return tide.cumulative_trapezoid(y, { dx = 0.5, dim = 1 })
        end, T.Y },
        cumulative_trapezoid_x = { function(y, x) return tide.cumulative_trapezoid(y, x) end,
            T.Y, T.XS },
    }
    P.run_cases(it, T, CASES, function(name, fn, ...)
        P.check_case(T.cases[name], name, DEV, { out = 1e-12, grad = 1e-10 }, fn, ...)
    end)

    it("lu_factor's pivots are PyTorch's", function()
        local _, piv = LA.lu_factor(t64(T.A))
        assert.are.same(T.values.lu_factor_pivots, piv:to("cpu"):totable())
    end)
end)

describe("linalg II errors (" .. DEV .. ")", function()
    it("name the function and the value at fault", function()
        local A = t64(T.A)
        local LU, piv = LA.lu_factor(A)
        assert.matches("tide: linalg.lu_solve: pivots must be the int64 [..., 3] of lu_factor, " ..
            "got int64 {2}", catch(function() return LA.lu_solve(LU, piv:narrow(1, 1, 2), A) end),
            1, true)
        assert.matches("tide: linalg.lu_solve: LU is {3, 3}, B {2, 2}: B must be [..., 3, k]",
            catch(function() return LA.lu_solve(LU, piv, t64({ { 1, 2 }, { 3, 4 } })) end), 1,
            true)
        assert.matches("tide: linalg.lu: pivot = false is not supported",
            catch(function() return LA.lu(A, { pivot = false }) end), 1, true)
        assert.matches("tide: linalg.matrix_exp: expected square matrices",
            catch(function() return LA.matrix_exp(t64({ { 1, 2, 3 } })) end), 1, true)
        assert.matches("tide: vander: x must be 1-D, got {3, 3}",
            catch(function() return tide.vander(A) end), 1, true)
        assert.matches("tide: cumulative_trapezoid: x has 2 points but dim 2 of y has 5",
            catch(function() return tide.cumulative_trapezoid(t64(T.Y), t64({ 1, 2 })) end), 1,
            true)
    end)

    it("matrix_exp of 0 is the identity, of a diagonal its exponentials, in float32 too", function()
        local z = LA.matrix_exp(tide.zeros({ 2, 2 }, { device = DEV }))
        assert.are.same({ { 1, 0 }, { 0, 1 } }, z:to("cpu"):totable())
        local d = LA.matrix_exp(tide.tensor({ { 3, 0 }, { 0, -2 } }, { dtype = "float32",
            device = DEV }))
        P.close({ { math.exp(3), 0 }, { 0, math.exp(-2) } }, d, 1e-6, "diag float32")
    end)
end)
