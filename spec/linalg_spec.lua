-- linalg_spec.lua — tide.linalg (lua/tide/linalg.lua) against PyTorch 1.13's torch.linalg
-- (spec/fixtures/linalg_torch.lua, written by spec/fixtures/make_linalg.py): values and
-- gradients in float64 on the device under test, batches and broadcasting, LU's 1-based pivots,
-- singular and indefinite matrices, the Tensor methods and tide.X functions, and the errors.
local tide = require("tide")
local D = require("spec.support.device")
local P = require("spec.support.porting")

local T = dofile("spec/fixtures/linalg_torch.lua")
local L = tide.linalg
local DEV = D.name

local function t64(v)
    return P.t64(v, DEV)
end

local INF = math.huge
local unpack = table.unpack or unpack -- 5.1, LuaJIT

describe("tide.linalg, PyTorch's values and gradients (" .. DEV .. ")", function()
    local A, B3, BATCH, SPD = T.A, T.B3, T.BATCH, T.SPD
    local V1, V2, M23, M32 = T.V1, T.V2, T.M23, T.M32
    local function sym(a)
        return (a + a:transpose(-2, -1)) / 2
    end
    local CASES = {
        det = { function(a) return L.det(a) end, A },
        det_batch = { function(a) return a:det() end, BATCH },
        logabsdet = { function(a) local _, l = L.slogdet(a) return l end, BATCH },
        logdet = { function(a) return tide.logdet(a) end, SPD },
        inv = { function(a) return L.inv(a) end, A },
        inv_batch = { function(a) return a:inverse() end, { BATCH[1], BATCH[2] } },
        solve_vec = { function(a, b) return L.solve(a, b) end, A, V1 },
        solve_mat = { function(a, b) return L.solve(a, b) end, A, B3 },
        solve_bcast = { function(a, b) return L.solve(a, b) end, BATCH, { { 1, 2 }, { 0.5, -1 } } },
        solve_right = { function(a, b) return L.solve(a, b, { left = false }) end, A, M23 },
        tri_upper = { function(a, b)
            return L.solve_triangular(a:triu(), b, { upper = true })
        end, A, B3 },
        tri_lower_unit = { function(a, b)
            return L.solve_triangular(a:tril(), b, { upper = false, unitriangular = true })
        end, A, B3 },
        tri_right = { function(a, b)
            return L.solve_triangular(a:triu(), b, { upper = true, left = false })
        end, A, M23 },
        cholesky = { function(a) return L.cholesky(sym(a)) end, SPD },
        cholesky_upper = { function(a) return L.cholesky(sym(a), { upper = true }) end, SPD },
        lu = { function(a) return (L.lu_factor(a)) end, A },
        matrix_power3 = { function(a) return L.matrix_power(a, 3) end, A },
        matrix_power_neg = { function(a) return a:matrix_power(-2) end, A },
        multi_dot = { function(a, b, c) return L.multi_dot({ a, b, c }) end, V1, M32, { 1, -1 } },
        multi_dot_mats = { function(a, b, c) return L.multi_dot({ a, b, c }) end, M23, A, M32 },
        cross = { function(a, b) return L.cross(a, b) end, { V1, V2 }, { V2, V1 } },
        cross_dim1 = { function(a, b) return tide.cross(a, b, 1) end, B3, M32 },
        vnorm2 = { function(a) return L.vector_norm(a) end, A },
        vnorm1_dim = { function(a) return L.vector_norm(a, { ord = 1, dim = 2 }) end, A },
        vnorm3_keep = { function(a)
            return L.vector_norm(a, { ord = 3, dim = 1, keepdim = true })
        end, A },
        vnorm_inf = { function(a) return L.vector_norm(a, { ord = INF, dim = 2 }) end, A },
        vnorm_ninf = { function(a) return L.vector_norm(a, { ord = -INF }) end, A },
        mnorm_fro = { function(a) return L.matrix_norm(a) end, BATCH },
        mnorm_1 = { function(a) return L.matrix_norm(a, { ord = 1 }) end, A },
        mnorm_n1 = { function(a) return L.matrix_norm(a, { ord = -1 }) end, A },
        mnorm_inf = { function(a) return L.matrix_norm(a, { ord = INF, keepdim = true }) end,
            BATCH },
        mnorm_ninf = { function(a) return L.matrix_norm(a, { ord = -INF }) end, A },
        norm = { function(a) return L.norm(a) end, A },
        norm_vec_dim = { function(a) return L.norm(a, { ord = 2, dim = 2 }) end, A },
    }
    local names = {}
    for name in pairs(CASES) do
        names[#names + 1] = name
    end
    table.sort(names)
    for _, name in ipairs(names) do
        it(name, function()
            local c = CASES[name]
            P.check_case(T.cases[name], name, DEV, { out = 1e-12, grad = 1e-11 }, c[1],
                unpack(c, 2))
        end)
    end

    it("singular matrices, signs, pivots, ord 0 and k = 0 as PyTorch's", function()
        local V = T.values
        local singular = t64({ { 1, 2 }, { 2, 4 } })
        P.close(V.det_singular, L.det(singular):reshape(1), 0, "det of a singular matrix")
        local s, l = L.slogdet(singular)
        P.close(V.slogdet_singular[1], s, 0, "slogdet sign")
        P.close(V.slogdet_singular[2], l, 0, "slogdet logabsdet")
        P.close(V.slogdet_sign, (L.slogdet(t64(BATCH))), 0, "slogdet signs")
        local _, piv = L.lu_factor(t64(A))
        assert.are.equal("int64", piv.dtype)
        P.close(V.lu_pivots, piv, 0, "pivots")
        local _, pb = L.lu_factor(t64(BATCH))
        P.close(V.lu_pivots_batch, pb, 0, "batch pivots")
        P.close(V.vnorm0, L.vector_norm(t64(A), { ord = 0 }):reshape(1), 0, "ord 0")
        P.close(V.matrix_power0, L.matrix_power(t64(A), 0), 0, "k = 0")
        P.close(V.logdet_negative, t64(A):logdet():reshape(1), 0, "logdet of a negative det")
    end)

    it("float32 in, float32 out, on the input's device", function()
        local a = tide.tensor(A, { dtype = "float32", device = DEV })
        for _, r in ipairs({ L.det(a), L.inv(a), L.solve(a, a), L.cholesky(t64(SPD):float()),
            L.vector_norm(a), L.matrix_norm(a) }) do
            assert.are.equal("float32", r.dtype)
            assert.are.equal(tide.device(DEV), r.device)
        end
        P.close(L.inv(t64(A)):to("cpu"):totable(), L.inv(a):double(), 1e-6, "float32 inv")
    end)

    it("errors name the function, the values at fault and the fix", function()
        local sq = t64(A)
        assert.has_error(function() L.det(t64(M23)) end,
            "tide: linalg.det: expected square matrices [..., n, n], got {2, 3}")
        assert.has_error(function() L.inv(t64(V1)) end,
            "tide: linalg.inv: expected a matrix or a batch of matrices [..., m, n], got {3}")
        assert.has_error(function() L.det(tide.ones({ 2, 2 }, { dtype = "int64", device = DEV })) end,
            'tide: linalg.det: needs a floating-point tensor, got int64; convert with ' ..
            ':to("float64")')
        assert.has_error(function() L.inv(t64({ { 1, 2 }, { 2, 4 } })) end,
            "tide: linalg.inv: the matrix is singular (U's diagonal element 2 is zero after " ..
            "pivoting); check the input, or regularise it (add a small multiple of the identity)")
        assert.has_error(function() L.cholesky(t64({ { 1, 2 }, { 2, 1 } })) end,
            "tide: linalg.cholesky: the matrix is not positive-definite (its leading minor of " ..
            "order 2 is not positive)")
        assert.has_error(function() L.solve(sq, t64(M23)) end,
            "tide: linalg.solve: A is {3, 3}, B {2, 3}: B's rows must match A's size 3")
        assert.has_error(function() L.solve(sq, t64(B3), { lft = true }) end,
            'tide: linalg.solve: unknown option "lft" (did you mean "left"?)')
        assert.has_error(function() L.solve_triangular(sq, t64(B3)) end,
            "tide: linalg.solve_triangular: upper must be given, true or false, got nil")
        assert.has_error(function() L.matrix_norm(sq, { ord = "nuc" }) end,
            'tide: linalg.matrix_norm: ord = nuc needs singular values, which tide does not ' ..
            'compute yet; use "fro", 1, -1, inf or -inf')
        assert.has_error(function() L.matrix_power(sq, 1.5) end,
            "tide: linalg.matrix_power: k must be an integer, got 1.5")
        assert.has_error(function() L.cross(t64(M23), t64(M23), { dim = 1 }) end,
            "tide: linalg.cross: dim 1 must have size 3 in both, got {2, 3} and {2, 3}")
        local other = tide.tensor(B3, { dtype = "float64", device = D.other })
        local ok, err = pcall(L.solve, sq, other)
        assert.is_false(ok)
        assert.matches("same device", err, 1, true)
    end)

    it("a failed call leaves its inputs as they were", function()
        local a = t64({ { 1, 2 }, { 2, 4 } })
        local before = a:to("cpu"):totable()
        assert.has_error(function() L.inv(a) end)
        assert.are.same(before, a:to("cpu"):totable())
    end)
end)
