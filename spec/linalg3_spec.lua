-- linalg3_spec.lua — linalg.vecdot, diagonal, vander, cholesky_ex, inv_ex, solve_ex (their
-- results and int32 info, for failing inputs too), tensorinv, tensorsolve and
-- householder_product, against PyTorch 1.13's values and gradients
-- (spec/fixtures/linalg3_torch.lua, written by spec/fixtures/make_linalg3.py), on the device
-- under test; their errors, options and devices.
local tide = require("tide")
local D = require("spec.support.device")
local P = require("spec.support.porting")

local T = dofile("spec/fixtures/linalg3_torch.lua")
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

local function ints(t)
    assert.are.equal("int32", t.dtype)
    assert.are.equal(tide.device(DEV), t.device)
    return t:to("cpu"):totable()
end

describe("linalg III, PyTorch's values (" .. DEV .. ")", function()
    local CASES = {
        vecdot = { function(x, y) return LA.vecdot(x, y) end, T.X23, T.Y3 },
        vecdot_dim = { function(x, y) return LA.vecdot(x, y, { dim = 1 }) end, T.X23, T.Y23 },
        diagonal = { function(a) return LA.diagonal(a) end, T.BATCH3 },
        diagonal_offset = { function(a) return LA.diagonal(a, { offset = 1 }) end, T.A34 },
        diagonal_dims = { function(a)
            return LA.diagonal(a, { offset = -1, dim1 = 1, dim2 = 3 })
        end, T.BATCH3 },
        vander = { function(x) return LA.vander(x) end, T.X4 },
        vander_batch_n = { function(x) return LA.vander(x, { N = 3 }) end, T.XB },
        cholesky_ex = { function(a) return (LA.cholesky_ex(a)) end, T.SPD },
        cholesky_ex_upper = { function(a)
            return (LA.cholesky_ex(a, { upper = true }))
        end, T.SPD },
        inv_ex = { function(a) return (LA.inv_ex(a)) end, T.A },
        inv_ex_batch = { function(a) return (LA.inv_ex(a, { check_errors = true })) end,
            T.BATCH3 },
        solve_ex = { function(a, b) return (LA.solve_ex(a, b)) end, T.A, T.B3 },
        solve_ex_vector = { function(a, b) return (LA.solve_ex(a, b)) end, T.A, T.V3 },
        solve_ex_right = { function(a, b)
            return (LA.solve_ex(a, b, { left = false }))
        end, T.A, T.B23 },
        tensorinv = { function(a) return LA.tensorinv(a) end, T.T224 },
        tensorinv_ind1 = { function(a)
            return LA.tensorinv(a:reshape(4, 2, 2), { ind = 1 })
        end, T.T224 },
        tensorsolve = { function(a, b) return LA.tensorsolve(a, b) end, T.T236, T.B23S },
        tensorsolve_dims = { function(a, b)
            return LA.tensorsolve(a:permute(3, 1, 2), b, { dims = { 1 } })
        end, T.T236, T.B23S },
        householder_product = { function(a, tau) return LA.householder_product(a, tau) end,
            T.HA, T.HTAU },
        householder_product_k2 = { function(a, tau) return LA.householder_product(a, tau) end,
            T.HA, T.HTAU2 },
        householder_product_batch = { function(a, tau)
            return LA.householder_product(a, tau)
        end, T.HBA, T.HBTAU },
    }
    P.run_cases(it, T, CASES, function(name, fn, ...)
        P.check_case(T.cases[name], name, DEV, { out = 1e-12, grad = 1e-10 }, fn, ...)
    end)

    it("householder_product of geqrf's reflectors is qr's Q", function()
        P.close(T.values.householder_q, LA.householder_product(t64(T.HA), t64(T.HTAU)), 1e-12,
            "Q")
    end)
end)

describe("linalg III: the _ex functions' info (" .. DEV .. ")", function()
    it("is 0 where fine, int32 of the batch's shape", function()
        local Lm, info = LA.cholesky_ex(t64(T.SPD))
        assert.are.same({}, info.shape)
        assert.are.equal(0, ints(info))
        local _, binfo = LA.inv_ex(t64(T.BATCH3))
        assert.are.same({ 0, 0 }, ints(binfo))
        assert.are.same({ 3, 3 }, Lm.shape)
    end)

    it("cholesky_ex: the order of the first leading minor that is not positive", function()
        local Lm, info = LA.cholesky_ex(t64(T.NOT_PD))
        assert.are.equal(T.values.cholesky_ex_info, ints(info))
        assert.is_true(Lm:isnan():any():item())
        local batch = tide.stack({ t64(T.NOT_PD), t64(T.SPD) })
        local Lb, binfo = LA.cholesky_ex(batch)
        assert.are.same(T.values.cholesky_ex_batch_info, ints(binfo))
        P.close(T.values.cholesky_ex_batch_L2, Lb[2], 1e-12, "the PD matrix's L")
    end)

    it("inv_ex and solve_ex: the first zero pivot of the LU", function()
        local X, info = LA.inv_ex(t64(T.SING))
        assert.are.equal(T.values.inv_ex_info, ints(info))
        assert.is_true(X:isnan():all():item())
        local batch = tide.stack({ t64(T.A), t64(T.SING) })
        local Xb, binfo = LA.inv_ex(batch)
        assert.are.same(T.values.inv_ex_batch_info, ints(binfo))
        P.close(T.values.inv_ex_batch_first, Xb[1], 1e-12, "the invertible one")
        local S, sinfo = LA.solve_ex(batch, t64(T.B3))
        assert.are.same(T.values.solve_ex_batch_info, ints(sinfo))
        P.close(T.values.solve_ex_batch_first, S[1], 1e-12, "the solvable one")
        assert.is_true(S[2]:isnan():all():item())
        local v, vinfo = LA.solve_ex(t64(T.SING), t64(T.V3))
        assert.are.same({ 3 }, v.shape)
        assert.are.equal(2, ints(vinfo))
    end)

    it("the gradient reaches the fine matrices of a failing batch", function()
        local batch = tide.stack({ t64(T.A), t64(T.SING) }):requires_grad_(true)
        local X = LA.inv_ex(batch)
        X[1]:sum():backward()
        local want = t64(T.A):requires_grad_(true)
        LA.inv(want):sum():backward()
        P.close(want.grad:to("cpu"):totable(), batch.grad[1], 1e-12, "grad")
        assert.are.same({ { 0, 0, 0 }, { 0, 0, 0 }, { 0, 0, 0 } },
            batch.grad[2]:to("cpu"):totable())
    end)

    it("check_errors = true raises for the first failing matrix", function()
        assert.matches("tide: linalg.cholesky_ex: the matrix is not positive-definite (its " ..
            "leading minor of order 2 is not positive)", catch(function()
                return LA.cholesky_ex(t64(T.NOT_PD), { check_errors = true })
            end), 1, true)
        local batch = tide.stack({ t64(T.A), t64(T.SING) })
        assert.matches("tide: linalg.inv_ex: the matrix is singular (U's diagonal element 2 " ..
            "is zero after pivoting) (batch element 2)", catch(function()
                return LA.inv_ex(batch, { check_errors = true })
            end), 1, true)
        assert.matches("tide: linalg.solve_ex: the matrix is singular (U's diagonal element 2",
            catch(function()
                return LA.solve_ex(t64(T.SING), t64(T.B3), { check_errors = true })
            end), 1, true)
    end)
end)

describe("linalg III errors (" .. DEV .. ")", function()
    it("name the function and the value at fault", function()
        local A = t64(T.A)
        assert.matches("tide: linalg.vecdot: x is float64, y float32",
            catch(function() return LA.vecdot(A, A:float()) end), 1, true)
        assert.matches("tide: linalg.diagonal: expected A with at least 2 dims, got {3}",
            catch(function() return LA.diagonal(t64(T.Y3)) end), 1, true)
        assert.matches("tide: linalg.vander: N must be an integer greater than 1, got 1",
            catch(function() return LA.vander(t64(T.Y3), { N = 1 }) end), 1, true)
        assert.matches("tide: linalg.vander: x must have at least 1 dim",
            catch(function() return LA.vander(t64(2)) end), 1, true)
        assert.matches("tide: linalg.cholesky_ex: expected square matrices",
            catch(function() return LA.cholesky_ex(t64(T.A34)) end), 1, true)
        assert.matches("tide: linalg.inv_ex: check_errors must be true or false, got 1",
            catch(function() return LA.inv_ex(A, { check_errors = 1 }) end), 1, true)
        assert.matches("tide: linalg.solve_ex: A is {3, 3}, B {2, 3}: B's rows must match",
            catch(function() return LA.solve_ex(A, t64(T.B23)) end), 1, true)
        assert.matches("tide: linalg.tensorinv: A {3, 4}: the product of its first 1 dims (3) " ..
            "must equal that of the others (4)",
            catch(function() return LA.tensorinv(t64(T.A34), { ind = 1 }) end), 1, true)
        assert.matches("tide: linalg.tensorinv: ind must be a positive integer, got 0",
            catch(function() return LA.tensorinv(A, { ind = 0 }) end), 1, true)
        assert.matches("tide: linalg.tensorinv: the matrix is singular",
            catch(function() return LA.tensorinv(t64(T.SING), { ind = 1 }) end), 1, true)
        assert.matches("tide: linalg.tensorsolve: A {3, 3} must be B's shape {2, 3} followed",
            catch(function() return LA.tensorsolve(A, t64(T.B23)) end), 1, true)
        assert.matches("tide: linalg.tensorsolve: dims[1] = 4 is not a dim of A {3, 3}",
            catch(function() return LA.tensorsolve(A, t64(T.V3), { dims = { 4 } }) end), 1,
            true)
        assert.matches("tide: linalg.householder_product: A {3, 4} must have at least as " ..
            "many rows as columns",
            catch(function() return LA.householder_product(t64(T.A34), t64(T.Y3)) end), 1, true)
        assert.matches("tide: linalg.householder_product: tau must be [..., k] with A's batch " ..
            "dims {} and k <= 3, got {2, 3}",
            catch(function() return LA.householder_product(t64(T.HA), t64(T.X23)) end), 1, true)
    end)

    it("unknown options raise", function()
        local A = t64(T.SPD)
        local calls = {
            function() return LA.vecdot(A, A, { axis = 1 }) end,
            function() return LA.diagonal(A, { dim = 1 }) end,
            function() return LA.vander(A, { n = 2 }) end,
            function() return LA.cholesky_ex(A, { lower = true }) end,
            function() return LA.inv_ex(A, { check = true }) end,
            function() return LA.solve_ex(A, A, { right = true }) end,
            function() return LA.tensorinv(A, { index = 1 }) end,
            function() return LA.tensorsolve(A, t64(T.V3), { dim = { 1 } }) end,
        }
        for i, f in ipairs(calls) do
            local err = catch(f)
            assert.matches("tide: linalg%.[%w_]+: .*", err, nil, false, "call " .. i)
            assert.truthy(err:find("unknown", 1, true) or err:find("option", 1, true),
                "call " .. i .. ": " .. err)
        end
    end)

    it("tensors on two devices raise", function()
        local a, b = t64(T.A), tide.tensor(T.B3, { dtype = "float64", device = D.other })
        local msg = "expected all tensors on the same device"
        assert.matches(msg, catch(function() return LA.vecdot(a, a:to(D.other)) end), 1, true)
        assert.matches(msg, catch(function() return LA.solve_ex(a, b) end), 1, true)
        assert.matches(msg, catch(function() return LA.tensorsolve(a, b) end), 1, true)
        assert.matches(msg, catch(function()
            return LA.householder_product(t64(T.HA), tide.tensor(T.HTAU, { dtype = "float64",
                device = D.other }))
        end), 1, true)
    end)
end)
