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

describe("tide.linalg, PyTorch's values and gradients (" .. DEV .. ")", function()
    local A, B3, BATCH, SPD = T.A, T.B3, T.BATCH, T.SPD
    local V1, V2, M23, M32, A4, SYM4 = T.V1, T.V2, T.M23, T.M32, T.A4, T.SYM4
    -- S, U^2 and Vh^2 of the reduced SVD in one result: the vectors' signs are arbitrary
    local function svd_parts(a)
        local u, s, vh = L.svd(a, { full_matrices = false })
        return tide.cat({ s, (u * u):reshape(-1), (vh * vh):reshape(-1) })
    end
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
        qr_q = { function(a) return (L.qr(a)) end, A4 },
        qr_r = { function(a) local _, r = a:qr() return r end, A4 },
        qr_wide_r = { function(a) local _, r = L.qr(a:transpose(-2, -1)) return r end, A4 },
        qr_complete_q = { function(a)
            return tide.no_grad(function() return (L.qr(a, { mode = "complete" })) end)
        end, A4 },
        eigh_w = { function(a) return (L.eigh(a)) end, SYM4 },
        eigh_vv = { function(a) local _, v = L.eigh(a) return v * v end, SYM4 },
        eigh_upper_vv = { function(a)
            local _, v = L.eigh(a, { UPLO = "U" })
            return v * v
        end, SYM4 },
        eigh_odd = { function(a)
            local w, v = L.eigh(a)
            return tide.cat({ w, (v * v):reshape(-1) })
        end, SPD },
        eigvalsh_batch = { function(a) return L.eigvalsh(a) end, BATCH },
        svdvals = { function(a) return L.svdvals(a) end, A4 },
        svdvals_wide = { function(a) return L.svdvals(a:transpose(-2, -1)) end, A4 },
        svd_tall = { function(a) return svd_parts(a) end, A4 },
        svd_wide = { function(a) return svd_parts(a:transpose(-2, -1)) end, A4 },
        svd_square = { function(a) return svd_parts(a) end, A },
        pinv = { function(a) return L.pinv(a) end, A4 },
        pinv_wide = { function(a) return tide.pinverse(a:transpose(-2, -1)) end, A4 },
        lstsq = { function(a, b) return L.lstsq(a, b) end, A4, { 1, 2, 3, 4 } },
        mnorm_nuc = { function(a) return L.matrix_norm(a, { ord = "nuc" }) end, A4 },
        mnorm_2 = { function(a) return L.matrix_norm(a, { ord = 2 }) end, BATCH },
        mnorm_n2 = { function(a) return L.matrix_norm(a, { ord = -2 }) end, A4 },
        cond = { function(a) return L.cond(a):reshape(1) end, A4 },
        cond_fro = { function(a) return L.cond(a, "fro"):reshape(1) end, A },
    }
    P.run_cases(it, T, CASES, function(name, fn, ...)
        P.check_case(T.cases[name], name, DEV, { out = 1e-12, grad = 1e-11 }, fn, ...)
    end)

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
        if math.mininteger then -- (fuzz: -k wrapped and the call recursed without end)
            local i2 = tide.eye(2, { dtype = "float64" })
            assert.are.same(i2:totable(), L.matrix_power(i2, math.mininteger):totable())
        end
        P.close(V.logdet_negative, t64(A):logdet():reshape(1), 0, "logdet of a negative det")
    end)

    it("eigh and svd: larger matrices, orthonormal vectors, rank deficiency, full U", function()
        local V = T.values
        local S = t64(T.BIG_SYM)
        local w, Q = L.eigh(S)
        P.close(V.big_eigvalsh, w, 1e-12, "eigenvalues of a 12 x 12")
        local n = 12
        local eye = tide.eye(n, { dtype = "float64", device = DEV })
        assert.is_true((Q:transpose(-2, -1):matmul(Q) - eye):abs():max():item() < 1e-13)
        assert.is_true((Q:matmul(w:diag_embed()):matmul(Q:transpose(-2, -1)) - S):abs():max()
            :item() < 1e-12)
        P.close(V.eigh_abs_v, (select(2, L.eigh(t64(SYM4)))):abs(), 1e-12, "|eigenvectors|")
        local R = t64(T.BIG_RECT)
        P.close(V.big_svdvals, L.svdvals(R), 1e-12, "singular values of a 9 x 6")
        local low = t64({ { 1, 2 }, { 2, 4 }, { 3, 6 } }) -- rank 1
        local U, s, Vh = L.svd(low, { full_matrices = false })
        assert.is_true(s[2]:item() < 1e-14)
        assert.is_true((U:transpose(-2, -1):matmul(U) - tide.eye(2, { dtype = "float64",
            device = DEV })):abs():max():item() < 1e-14)
        assert.is_true((U:matmul(s:diag_embed()):matmul(Vh) - low):abs():max():item() < 1e-14)
        local Uf, _, Vhf = L.svd(t64(A4))
        assert.are.same(V.svd_full_u_shape, Uf:size())
        assert.are.same({ 3, 3 }, Vhf:size())
        assert.is_true((Uf:transpose(-2, -1):matmul(Uf) - tide.eye(4, { dtype = "float64",
            device = DEV })):abs():max():item() < 1e-14)
        local ones = L.eigh(tide.eye(5, { dtype = "float64", device = DEV }))
        P.close({ 1, 1, 1, 1, 1 }, ones, 0, "eigenvalues of I")
        local ranks = { L.matrix_rank(t64(A4)):item(),
            L.matrix_rank(t64({ { 1, 2 }, { 2, 4 } })):item(),
            L.matrix_rank(S, { atol = 3.5 }):item() }
        assert.are.same(V.matrix_rank, ranks)
        assert.are.equal("int64", L.matrix_rank(S).dtype)
    end)

    it("qr: Q R = A with orthonormal Q and upper R, every shape and mode; LAPACK's on the CPU",
        function()
        local K = require("tide.core")._internal
        local function check(shape, dtype, tol)
            local a = tide.randn(shape, { dtype = dtype, device = DEV })
            local m, n = shape[#shape - 1], shape[#shape]
            for _, mode in ipairs({ "reduced", "complete" }) do
                local q, r = L.qr(a, { mode = mode })
                local c = (mode == "complete" or m < n) and m or n
                assert.are.same(m, q:size(-2))
                assert.are.same(c, q:size(-1))
                assert.are.same(c, r:size(-2))
                if a:numel() > 0 then
                    local eye = tide.eye(c, { dtype = dtype, device = DEV })
                    assert.is_true((q:transpose(-2, -1):matmul(q) - eye):abs():max():item() < tol)
                    assert.is_true((q:matmul(r) - a):abs():max():item() < tol)
                    assert.are.equal(0, (r - r:triu()):abs():max():item())
                end
            end
            local _, r_only = L.qr(a, { mode = "r" })
            assert.are.same(r_only:size(), (select(2, L.qr(a))):size())
        end
        tide.manual_seed(7)
        for _, shape in ipairs({ { 6, 4 }, { 4, 6 }, { 5, 5 }, { 3, 5, 2 }, { 2, 3, 4 } }) do
            check(shape, "float64", 1e-13)
            check(shape, "float32", 1e-5)
        end
        local q, r = L.qr(tide.zeros({ 3, 0 }, { dtype = "float64", device = DEV }),
            { mode = "complete" })
        P.close(tide.eye(3, { dtype = "float64" }):totable(), q, 0, "complete Q of a 3 x 0")
        assert.are.same({ 3, 0 }, r:size())
        -- the device's own QR where it has one (LAPACK on the CPU); tensor ops elsewhere
        if D.name:match("^cpu") then
            assert.is_not_nil(K.qr(t64(A4), false))
        end
        -- an exactly rank-deficient R records the reflections' ops (no R^-1): still a gradient
        local low = t64({ { 1, 0 }, { 0, 0 }, { 0, 0 } }):requires_grad_(true)
        local ql, rl = L.qr(low)
        assert.is_true((ql:matmul(rl) - low):abs():max():item() < 1e-15)
        rl:sum():backward()
        assert.are.same({ 3, 2 }, low.grad:size())
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
        assert.has_error(function() L.solve(sq, t64(B3):float()) end,
            'tide: linalg.solve: A is float64, B float32; convert one with :to("float64")')
        assert.has_error(function() L.solve(sq, t64(B3), { lft = true }) end,
            'tide: linalg.solve: unknown option "lft" (did you mean "left"?)')
        assert.has_error(function() L.solve_triangular(sq, t64(B3)) end,
            "tide: linalg.solve_triangular: upper must be given, true or false, got nil")
        assert.has_error(function() L.matrix_norm(sq, { ord = 3 }) end,
            'tide: linalg.matrix_norm: ord = 3; expected "fro", "nuc", 1, -1, 2, -2, inf or -inf')
        assert.has_error(function() L.matrix_power(sq, 1.5) end,
            "tide: linalg.matrix_power: k must be an integer, got 1.5")
        assert.has_error(function() L.cross(t64(M23), t64(M23), { dim = 1 }) end,
            "tide: linalg.cross: dim 1 must have size 3 in both, got {2, 3} and {2, 3}")
        assert.has_error(function() L.eigh(sq, { UPLO = "X" }) end,
            'tide: linalg.eigh: UPLO = X; expected "L" or "U"')
        assert.has_error(function() L.qr(sq, { mode = "full" }) end,
            'tide: linalg.qr: mode = full; expected "reduced", "complete" or "r"')
        local needs = t64(A4):requires_grad_(true)
        -- the full U and Vh record as PyTorch 1.13's: the extra columns get no gradient
        local U = L.svd(needs)
        U:select(2, 1):square():sum():backward()
        assert.are.same({ 4, 3 }, needs.grad:size())
        needs.grad = nil
        assert.has_error(function() L.qr(needs, { mode = "complete" }) end,
            'tide: linalg.qr: not differentiable with mode = "complete" when A has more rows ' ..
            'than columns (Q\'s extra columns are arbitrary; nor in PyTorch); use "reduced" or ' ..
            'call it on a detach()ed A')
        assert.has_error(function() L.det(sq:to("float16")) end,
            'tide: linalg.det: needs float32 or float64 (as PyTorch\'s), got float16; convert ' ..
            'with :to("float32")')
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
