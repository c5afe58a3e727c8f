-- linalg_lu_rect_spec.lua — linalg.lu, lu_factor and lu_unpack of rectangular [..., m, n] on the
-- device under test: A = P L U with L unit lower [m, k], U upper [k, n], k = min(m, n), for
-- tall, wide, batched and empty A in float32 and float64; the kernel (an unrecorded call) and
-- the ops (a recorded one) agree; a gradient against PyTorch 1.13's; the functions that need a
-- square A still refuse a rectangular one, and bad pivots raise. PyTorch's values of these
-- (float64) are in spec/linalg_values_spec.lua.
local tide = require("tide")
local D = require("spec.support.device")
local P = require("spec.support.porting")

local DEV = D.name
local LA = tide.linalg

local function catch(f)
    local ok, err = pcall(f)
    assert.is_false(ok, "expected an error")
    return tostring(err)
end

local function shape(t)
    return table.concat(t:size(), "x")
end

-- max |x - y| over all elements
local function maxdiff(x, y)
    return (x - y):abs():max():item()
end

describe("linalg.lu of rectangular matrices (" .. DEV .. ")", function()
    it("A = P L U: shapes, triangles and values, tall, wide and batched, both dtypes", function()
        tide.manual_seed(7)
        for _, dt in ipairs({ "float64", "float32" }) do
            local tol = dt == "float64" and 1e-12 or 1e-5
            for _, s in ipairs({ { 5, 3 }, { 3, 5 }, { 2, 4, 3 }, { 2, 3, 4 }, { 1, 6 }, { 6, 1 } })
            do
                local A = tide.randn(s, { dtype = dt, device = DEV })
                local m, n = s[#s - 1], s[#s]
                local k = math.min(m, n)
                local Pm, Lm, U = LA.lu(A)
                local b = #s == 3 and (s[1] .. "x") or ""
                local what = dt .. " " .. table.concat(s, "x")
                assert.are.equal(b .. m .. "x" .. m, shape(Pm), what)
                assert.are.equal(b .. m .. "x" .. k, shape(Lm), what)
                assert.are.equal(b .. k .. "x" .. n, shape(U), what)
                assert.is_true(maxdiff(Pm:matmul(Lm):matmul(U), A) <= tol, what .. ": P L U")
                assert.are.equal(0, maxdiff(Lm:triu(1), Lm:triu(1) * 0), what .. ": L's upper")
                assert.are.equal(0, maxdiff(Lm:diagonal(0, -2, -1), 1), what .. ": L's diagonal")
                assert.are.equal(0, maxdiff(U:tril(-1), U:tril(-1) * 0), what .. ": U's lower")
                -- partial pivoting: no multiplier above 1 in size
                assert.is_true(Lm:abs():max():item() <= 1, what .. ": |L| <= 1")
                local LU, piv = LA.lu_factor(A)
                assert.are.equal(b .. k, table.concat(piv:size(), "x"), what .. ": pivots")
                assert.are.equal("int64", piv.dtype)
                -- the recorded call runs the ops: the kernel's factors and pivots
                local LUr, pivr = LA.lu_factor(A:detach():requires_grad_())
                assert.is_true(maxdiff(LUr:detach(), LU) <= tol, what .. ": ops vs kernel")
                assert.are.equal(0, maxdiff(pivr, piv), what .. ": ops' pivots")
            end
        end
    end)

    it("empty: P the identity, L and U with no columns or rows", function()
        for _, dt in ipairs({ "float64", "float32" }) do
            local Pm, Lm, U = LA.lu(tide.zeros({ 2, 3, 0 }, { dtype = dt, device = DEV }))
            assert.are.equal("2x3x3", shape(Pm))
            assert.are.equal(0, maxdiff(Pm, tide.eye(3, { dtype = dt, device = DEV })))
            assert.are.equal("2x3x0", shape(Lm))
            assert.are.equal("2x0x0", shape(U))
            local LU, piv = LA.lu_factor(tide.zeros({ 0, 4 }, { dtype = dt, device = DEV })
                :requires_grad_())
            assert.are.equal("0x4", shape(LU))
            assert.are.equal("0", shape(piv))
        end
    end)

    it("lu_factor_ex and tide.lu take rectangular A too, with PyTorch 1.13's values", function()
        local A = tide.tensor({ { 1, 2, 3 }, { 4, 5, 6 } }, { dtype = "float64", device = DEV })
        local LU, piv, info = LA.lu_factor_ex(A)
        -- torch.linalg.lu_factor_ex(A): LU [[4, 5, 6], [0.25, 0.75, 1.5]], pivots [2, 2], info 0
        assert.is_true(maxdiff(LU, tide.tensor({ { 4, 5, 6 }, { 0.25, 0.75, 1.5 } },
            { dtype = "float64", device = DEV })) < 1e-15)
        assert.are.same({ 2, 2 }, piv:cpu():totable())
        assert.are.equal(0, info:item())
        -- torch.lu(A^T): LU [[3, 6], [1/3, 2], [2/3, 0.5]], pivots [3, 3]
        local LU2, piv2 = tide.lu(A:t():contiguous())
        assert.is_true(maxdiff(LU2, tide.tensor({ { 3, 6 }, { 1 / 3, 2 }, { 2 / 3, 0.5 } },
            { dtype = "float64", device = DEV })) < 1e-15)
        assert.are.same({ 3, 3 }, piv2:cpu():totable())
        assert.matches("linalg.lu_factor_ex: needs a floating-point tensor, got int64",
            catch(function() LA.lu_factor_ex(tide.ones({ 2, 3 }, { dtype = "int64" })) end),
            1, true)
    end)

    it("the gradient of a tall A's L and U is PyTorch's", function()
        local A = P.t64({ { 1, 2 }, { 3, 4 }, { 5, 6.5 }, { 7, 8 } }, DEV):requires_grad_()
        local _, Lm, U = LA.lu(A)
        local wl = P.t64({ { 0.5, -1 }, { 2, 0.25 }, { -0.75, 1.5 }, { 1, -2 } }, DEV)
        local wu = P.t64({ { 1.5, -0.5 }, { 0.25, 2 } }, DEV)
        local loss = (Lm * wl):sum() + (U * wu):sum()
        loss:backward()
        P.close({ { -1.9444444444444433, 1.951388888888888 }, { 2.809523809523809,
            -2.333333333333333 }, { -2.1071428571428568, 1.7499999999999998 },
            { 2.0787981859410425, -1.028769841269841 } }, A.grad, 1e-10, "A.grad")
    end)
end)

describe("linalg.lu of rectangular matrices: refusals (" .. DEV .. ")", function()
    local function f64(v)
        return P.t64(v, DEV)
    end

    it("det, slogdet, inv, solve, cholesky and lu_solve still need a square A", function()
        local W = f64({ { 1, 2, 3 }, { 4, 5, 6.5 } })
        local before = W:clone()
        for _, c in ipairs({
            { "linalg.det", function() return LA.det(W) end },
            { "linalg.slogdet", function() return LA.slogdet(W) end },
            { "linalg.inv", function() return LA.inv(W) end },
            { "linalg.solve", function() return LA.solve(W, f64({ 1, 2 })) end },
            { "linalg.cholesky", function() return LA.cholesky(W) end },
        }) do
            assert.matches("tide: " .. c[1] .. ": expected square matrices [..., n, n], got {2, 3}",
                catch(c[2]), 1, true)
        end
        local LU, piv = LA.lu_factor(W)
        assert.matches("tide: linalg.lu_solve: expected square matrices [..., n, n], got {2, 3}",
            catch(function() return LA.lu_solve(LU, piv, f64({ { 1 }, { 2 } })) end), 1, true)
        assert.are.equal(0, maxdiff(W, before))
    end)

    it("lu_unpack names pivots of the wrong length, dtype or rank and changes nothing", function()
        local LU, piv = LA.lu_factor(f64({ { 1, 2 }, { 3, 4 }, { 5, 6.5 } }))
        local saved, saved_piv = LU:clone(), piv:clone()
        assert.matches("tide: lu_unpack: pivots must be the int64 [..., 2] of lu_factor, got " ..
            "int64 {3}", catch(function()
                return LA.lu_unpack(LU, tide.tensor({ 1, 2, 3 }, { device = DEV }))
            end), 1, true)
        assert.matches("tide: lu_unpack: pivots must be the int64 [..., 2] of lu_factor, got " ..
            "float64 {2}", catch(function() return LA.lu_unpack(LU, piv:double()) end), 1, true)
        assert.matches("tide: linalg.lu: needs float32 or float64, got float16",
            catch(function() return LA.lu(LU:half()) end), 1, true)
        assert.matches("tide: linalg.lu_factor: expected a matrix or a batch of matrices " ..
            "[..., m, n], got {3}", catch(function() return LA.lu_factor(f64({ 1, 2, 3 })) end),
            1, true)
        assert.are.equal(0, maxdiff(LU, saved))
        assert.are.equal(0, maxdiff(piv, saved_piv))
    end)
end)
