-- linalg_check_errors_spec.lua — linalg.lu_factor raises on a zero on U's diagonal, as PyTorch
-- 1.13's (its check_errors), naming U's element (1-based, as PyTorch's U[3,3]) and the batch
-- element (1-based; PyTorch's "(Batch element 1)" counts from 0), while lu_factor_ex, lu and
-- the deprecated tide.lu return the factors; on the device under test, recorded or not.
-- PyTorch 1.13's messages, for the matrices below:
--   torch.linalg.lu_factor(SING): "torch.linalg.lu_factor: U[3,3] is zero and using it on
--     lu_solve would result in a division by zero. If you still want to perform the
--     factorization, consider calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)"
--   torch.linalg.lu_factor(stack([eye(3), SING, SING])): "... (Batch element 1): U[3,3] ..."
--   torch.linalg.lu_factor(WIDE): "... U[2,2] is zero ..."; of zeros(2, 2): "... U[1,1] ..."
--   torch.linalg.lu_factor(TALL): no error (U's diagonal 2, -1)
--   torch.linalg.lu_factor_ex(SING): info 3, no error; with check_errors = True the message
--     above under torch.linalg.lu_factor_ex's name
-- The other solvers with PyTorch's check_errors (cholesky, inv, solve, ldl_factor) raise in
-- both, their _ex twins return info (spec/linalg3_spec.lua, spec/tensor_gaps_spec.lua); here
-- their batch element, and cholesky_inverse, which PyTorch's potri check makes raise:
--   torch.linalg.inv(stack([eye(3), SING])): "linalg.inv: (Batch element 1): The diagonal
--     element 2 is zero, the inversion could not be completed because the input matrix is
--     singular."
--   torch.linalg.cholesky(stack([eye(2), eye(2), NOT_PD])): "linalg.cholesky: (Batch element
--     2): ... (the leading minor of order 2 is not positive-definite)."
--   torch.cholesky_inverse(FZ): "cholesky_inverse: The diagonal element 2 is zero, ..."; of
--     stack([eye(2), FZ]): "cholesky_inverse: (Batch element 1): The diagonal element 2 ..."
local tide = require("tide")
local D = require("spec.support.device")

local DEV = D.name
local LA = tide.linalg

local SING = { { 1, 2, 3 }, { 2, 4, 6 }, { 1, 1, 1 } }
local WIDE = { { 1, 2, 3 }, { 2, 4, 6 } }
local TALL = { { 1, 2 }, { 2, 4 }, { 1, 1 } }
local NOT_PD = { { 1, 2 }, { 2, 1 } }
local FZ = { { 2, 0 }, { 1, 0 } }

local function t64(v)
    return tide.tensor(v, { dtype = "float64", device = DEV })
end

local function catch(f, ...)
    local ok, err = pcall(f, ...)
    assert.is_false(ok, "expected an error")
    return tostring(err):match("(tide: .*)$")
end

local function says(op, where, at)
    return ("tide: %s: U[%d,%d] is zero%s and using it on lu_solve would divide by zero; " ..
        "to factor such a matrix anyway, call linalg.lu_factor_ex(A) (its info names the " ..
        "zero) or linalg.lu(A)"):format(op, at, at, where)
end

describe("linalg.lu_factor's check_errors (" .. DEV .. ")", function()
    it("a zero on U's diagonal raises, naming it as PyTorch's U[k,k] and the fix", function()
        assert.are.equal(says("linalg.lu_factor", "", 3), catch(LA.lu_factor, t64(SING)))
        assert.are.equal(says("linalg.lu_factor", "", 2), catch(LA.lu_factor, t64(WIDE)))
        assert.are.equal(says("linalg.lu_factor", "", 1),
            catch(LA.lu_factor, tide.zeros({ 2, 2 }, { dtype = "float32", device = DEV })))
        -- recorded (the ops' path) too
        assert.are.equal(says("linalg.lu_factor", "", 3),
            catch(LA.lu_factor, t64(SING):requires_grad_()))
    end)

    it("names the first failing batch element (1-based; flattened over the batch)", function()
        local eye = tide.eye(3, { dtype = "float64", device = DEV })
        local B = tide.stack({ eye, t64(SING), t64(SING) })
        assert.are.equal(says("linalg.lu_factor", " (batch element 2)", 3),
            catch(LA.lu_factor, B))
        assert.are.equal(says("linalg.lu_factor", " (batch element 2)", 3),
            catch(LA.lu_factor, tide.stack({ B, B })))
    end)

    it("a tall matrix with U's diagonal nonzero, and NaN, do not raise", function()
        local LU, piv = LA.lu_factor(t64(TALL))
        -- torch.linalg.lu_factor(TALL): LU [[2, 4], [0.5, -1], [0.5, -0]], pivots [2, 3]
        assert.are.same({ { 2, 4 }, { 0.5, -1 }, { 0.5, 0 } }, LU:to("cpu"):totable())
        assert.are.same({ 2, 3 }, piv:to("cpu"):totable())
        local N = LA.lu_factor(tide.tensor({ { 0 / 0, 1 }, { 1, 1 } }, { device = DEV }))
        assert.is_true(N[1][1]:isnan():item())
    end)

    it("lu_factor_ex returns info, raising only with check_errors", function()
        local LU, piv, info = LA.lu_factor_ex(t64(SING))
        -- torch.linalg.lu_factor_ex(SING): LU [[2, 4, 6], [0.5, -1, -2], [0.5, -0, 0]],
        -- pivots [2, 3, 3], info 3
        assert.are.same({ { 2, 4, 6 }, { 0.5, -1, -2 }, { 0.5, 0, 0 } }, LU:to("cpu"):totable())
        assert.are.same({ 2, 3, 3 }, piv:to("cpu"):totable())
        assert.are.equal(3, info:item())
        assert.are.equal(says("linalg.lu_factor_ex", "", 3),
            catch(LA.lu_factor_ex, t64(SING), { check_errors = true }))
        local eye = tide.eye(3, { dtype = "float64", device = DEV })
        assert.are.equal(says("linalg.lu_factor_ex", " (batch element 2)", 3),
            catch(LA.lu_factor_ex, tide.stack({ eye, t64(SING) }), { check_errors = true }))
    end)

    it("linalg.lu, tide.lu, det and inv_ex still factor a singular matrix", function()
        local _, _, U = LA.lu(t64(SING))
        assert.are.equal(0, U[3][3]:item())
        local _, _, info = tide.lu(t64(SING), { get_infos = true })
        assert.are.equal(3, info:item())
        assert.are.equal(0, LA.det(t64(SING)):item())
        local _, inv_info = LA.inv_ex(t64(SING))
        assert.are.equal(2, inv_info:item()) -- torch.linalg.inv_ex(SING).info: 2
    end)

    it("inv, solve and cholesky name the failing batch element", function()
        local eye3 = tide.eye(3, { dtype = "float64", device = DEV })
        local sing = "the matrix is singular (U's diagonal element 2 is zero after pivoting) " ..
            "(batch element 2); check the input, or regularise it (add a small multiple of " ..
            "the identity)"
        assert.are.equal("tide: linalg.inv: " .. sing,
            catch(LA.inv, tide.stack({ eye3, t64(SING) })))
        local eye2 = tide.eye(2, { dtype = "float64", device = DEV })
        assert.are.equal("tide: linalg.cholesky: the matrix is not positive-definite (its " ..
            "leading minor of order 2 is not positive) (batch element 3)",
            catch(LA.cholesky, tide.stack({ eye2, eye2, t64(NOT_PD) })))
        assert.are.equal("tide: linalg.cholesky: the matrix is not positive-definite (its " ..
            "leading minor of order 2 is not positive)", catch(LA.cholesky, t64(NOT_PD)))
    end)

    it("cholesky_inverse of a factor with a zero on its diagonal raises", function()
        local says_ci = "tide: cholesky_inverse: the factor's diagonal element 2 is zero%s, " ..
            "so the matrix it factors is singular and has no inverse; check the factor " ..
            "(linalg.cholesky_ex's info names where a factorisation failed)"
        assert.are.equal(says_ci:format(""), catch(tide.cholesky_inverse, t64(FZ)))
        assert.are.equal(says_ci:format(""), catch(function()
            return t64(FZ):transpose(1, 2):cholesky_inverse(true)
        end))
        local eye2 = tide.eye(2, { dtype = "float64", device = DEV })
        assert.are.equal(says_ci:format(" (batch element 2)"),
            catch(tide.cholesky_inverse, tide.stack({ eye2, t64(FZ) })))
        -- a nonzero diagonal still inverts: torch.cholesky_inverse([[2, 0], [1, 3]])
        -- = [[0.2777777777777778, -0.05555555555555555],
        --    [-0.05555555555555555, 0.1111111111111111]]
        local X = tide.cholesky_inverse(t64({ { 2, 0 }, { 1, 3 } }))
        local want = { { 0.2777777777777778, -0.05555555555555555 },
            { -0.05555555555555555, 0.1111111111111111 } }
        for i = 1, 2 do
            for j = 1, 2 do
                assert.is_true(math.abs(X[i][j]:item() - want[i][j]) < 1e-12)
            end
        end
    end)
end)
