-- matrix_rows_spec.lua — the MATRIX kernel rows (include/tide_kernels.def): tide.linalg's
-- decompositions, each a row named linalg.<op>, called through their generic binding
-- tide.core._internal["linalg.<op>"] on the device under test. The one dispatch sizes every
-- output from input 1's batch dims and the row's extents (m, n, k = min(m, n), rhs from the
-- first input that has it, a count, a parameter), refuses a tensor out of its class with its
-- own message, and runs no kernel for matrices without elements; the kernels refuse pivots
-- their solvers would read out of bounds. The C API (tide.linalg, K.eigh, ...) runs the same
-- rows. Values: PyTorch 1.13.
local tide = require("tide")
local core = require("tide.core")
local K = core._internal
local D = require("spec.support.device")

local dev = D.name
local A = { { 4, 1, 2 }, { 1, 3, 0 }, { 2, 0, 5 } } -- symmetric positive-definite
local B = { { 1, 2 }, { 0, 1 }, { 3, -1 } }
local M = { { 1, 2, 3 }, { 4, 5, 6 } }

local function t(v, dtype)
    return tide.tensor(v, { dtype = dtype or "float64", device = dev })
end

-- x's values on the host as float64 numbers, checked against want within tol
local function near(want, x, tol, what)
    local got = x:cpu():double():view(-1):tolist()
    local flat = {}
    local function walk(v)
        if type(v) == "table" then
            for _, e in ipairs(v) do
                walk(e)
            end
        else
            flat[#flat + 1] = v
        end
    end
    walk(want)
    assert.are.equal(#flat, #got, what)
    for i = 1, #flat do
        assert.is_true(math.abs(flat[i] - got[i]) <= tol, ("%s [%d]: %.17g, want %.17g"):format(
            what, i, got[i], flat[i]))
    end
end

local function err(f, ...)
    local ok, e = pcall(f, ...)
    assert.is_false(ok)
    return e
end

-- a batch [2] of the matrix v (the same twice): the batch dims reach every output
local function twice(v)
    return t(v):unsqueeze(1):expand(2, #v, #v[1]):contiguous()
end

describe("the MATRIX rows on " .. dev, function()
    it("list their tensors' classes and extents, beside the C API's own bindings", function()
        local svd = core._kernels["linalg.svd"]
        assert.are.equal("matrix", svd.kind)
        assert.are.same({ "matrix" }, svd.inputs_shape)
        assert.are.same({ "m, n" }, svd.inputs_dims)
        assert.are.same({ "m, k", "k", "k, n" }, svd.outputs_dims)
        local ldl = core._kernels["linalg.ldl_factor"]
        assert.are.same({ "matrix", "matrix", "info" }, ldl.outputs_shape)
        assert.are.same({ false, true, false }, ldl.outputs_index)
        assert.are.same({ "n, n, 2" }, { core._kernels["linalg.eig"].outputs_dims[2] })
        assert.are.same({ false, true }, core._kernels["linalg.eig"].outputs_optional)
        assert.are.same({ "c" }, core._kernels["linalg.qr"].params)
        assert.are.same({ "n, n", "n", "n, rhs" }, core._kernels["linalg.lu_solve"].inputs_dims)
        for _, op in ipairs({ "eigh", "eig", "svd", "qr", "lu_factor", "lu_solve", "cholesky",
            "solve_triangular", "ldl_factor", "ldl_solve" }) do
            assert.are.equal("function", type(K["linalg." .. op]), op)
            assert.are.equal("function", type(K[op]), op) -- lua/linalg.c's, tide.linalg's callee
        end
    end)

    it("give PyTorch's values, in input 1's batch", function()
        if D.kind == "cuda" then -- no CUDA kernel: the one answer, nil (tide.linalg's own then)
            assert.is_nil(K["linalg.cholesky"](twice(A)))
            assert.is_nil(K["linalg.eigh"](twice(A), false))
            assert.is_nil(K.cholesky(twice(A)))
            return
        end
        local w, v = K["linalg.eigh"](twice(A), false)
        assert.are.same({ 2, 3 }, w.shape)
        assert.are.same({ 2, 3, 3 }, v.shape)
        near({ 1.85489730879957704, 3.47602360291813417, 6.66907908828228813 }, w[2], 1e-14, "w")
        -- the vectors' signs are the LAPACK build's (OpenBLAS here, MKL in PyTorch's wheel)
        near({ { 0.67931306198633667, 0.37436195478307160, 0.63117896877648316 },
            { 0.59323331191738471, 0.78643569875137842, 0.17202653679290791 },
            { 0.43198148275855291, 0.49129626351156841, 0.75632002486599093 } }, v[1]:abs(), 1e-14,
            "|v|")
        near(A, v[1]:matmul(tide.diag(w[1])):matmul(v[1]:t()), 1e-14, "v diag(w) v^T")
        local l = K["linalg.cholesky"](twice(A))
        near({ { 2, 0, 0 }, { 0.5, 1.65831239517769990, 0 },
            { 1, -0.30151134457776363, 1.97714210644832233 } }, l[2], 1e-14, "l")
        -- solve_triangular(l, b): x [2, 3, 2], rhs = 2 from b
        local x = K["linalg.solve_triangular"](l, twice(B), false, false)
        assert.are.same({ 2, 3, 2 }, x.shape)
        near({ { 0.5, 1 }, { -0.15075567228888181, 0.30151134457776363 },
            { 1.24146132265359777, -0.96558102873057616 } }, x[1], 1e-14, "solve_triangular")
        local lu, piv = K["linalg.lu_factor"](twice(A))
        assert.are.equal("int64", piv.dtype)
        assert.are.same({ { 1, 2, 3 }, { 1, 2, 3 } }, piv:cpu():tolist())
        near({ { 4, 1, 2 }, { 0.25, 2.75, -0.5 }, { 0.5, -0.18181818181818182, 3.90909090909090917 } },
            lu[1], 1e-14, "lu")
        near({ { -0.06976744186046512, 0.72093023255813948 },
            { 0.02325581395348838, 0.09302325581395350 },
            { 0.62790697674418605, -0.48837209302325585 } },
            K["linalg.lu_solve"](lu, piv, twice(B))[2], 1e-14, "lu_solve")
        local u, s, vh = K["linalg.svd"](t(M))
        assert.are.same({ { 2, 2 }, { 2 }, { 2, 3 } }, { u.shape, s.shape, vh.shape })
        near({ 9.50803200069572441, 0.77286963567348443 }, s, 1e-14, "s")
        near({ { -0.38631770311861147, -0.92236578007705849 },
            { -0.92236578007705849, 0.38631770311861147 } }, u, 1e-14, "u")
        -- qr of M^T [3, 2]: c = k = 2 (reduced) or m = 3 (complete)
        local q, r = K["linalg.qr"](t(M):t():contiguous(), 2)
        assert.are.same({ { 3, 2 }, { 2, 2 } }, { q.shape, r.shape })
        near({ { -3.74165738677394133, -8.55235974119758069 }, { 0, 1.96396101212393304 } }, r,
            1e-14, "r")
        q, r = K["linalg.qr"](t(M):t():contiguous(), 3)
        assert.are.same({ { 3, 3 }, { 3, 2 } }, { q.shape, r.shape })
        near({ 0.40824829046386285, -0.81649658092772603, 0.40824829046386313 }, q:select(2, 3),
            1e-14, "q's third column")
        -- eig of a rotation: i and -i as (real, imaginary) pairs, v [n, n, 2]; or w alone
        local ew, ev = K["linalg.eig"](t({ { 0, -1 }, { 1, 0 } }))
        near({ { 0, 1 }, { 0, -1 } }, ew, 0, "eig w")
        near({ { { 0.70710678118654746, 0 }, { 0.70710678118654746, 0 } },
            { { 0, -0.70710678118654746 }, { 0, 0.70710678118654746 } } }, ev, 1e-15, "eig v")
        local ew2, none = K["linalg.eig"](t({ { 0, -1 }, { 1, 0 } }), false)
        assert.is_nil(none)
        assert.is_true(ew2:equal(ew))
        -- ldl_factor of [[1, 2], [2, 1]]: one 2x2 block, info int32 0
        local ld, lpiv, info = K["linalg.ldl_factor"](t({ { 1, 2 }, { 2, 1 } }))
        near({ { 1, 0 }, { 2, 1 } }, ld, 0, "ld")
        assert.are.same({ -2, -2 }, lpiv:cpu():tolist())
        assert.are.equal("int32", info.dtype)
        assert.are.same({}, info.shape)
        assert.are.equal(0, info:item())
        near({ { 1 / 3 }, { 1 / 3 } }, K["linalg.ldl_solve"](ld, lpiv, t({ { 1 }, { 1 } })), 1e-15,
            "ldl_solve")
        -- the C API runs the same rows
        local w2 = K.eigh(twice(A), false)
        assert.is_true(w2:equal(w))
    end)

    it("run no kernel for matrices without elements: empty outputs, info 0", function()
        local ld, piv, info = K["linalg.ldl_factor"](t({}):view(2, 0, 0))
        if D.kind == "cuda" then
            assert.is_nil(ld)
            return
        end
        assert.are.same({ { 2, 0, 0 }, { 2, 0 }, { 2 } }, { ld.shape, piv.shape, info.shape })
        assert.are.same({ 0, 0 }, info:cpu():tolist())
        local q, r = K["linalg.qr"](t({}):view(3, 0), 3) -- the complete Q of no columns: I
        assert.are.same({ { 3, 3 }, { 3, 0 } }, { q.shape, r.shape })
        near({ { 1, 0, 0 }, { 0, 1, 0 }, { 0, 0, 1 } }, q, 0, "q")
        local x = K["linalg.lu_solve"](t({}):view(0, 3, 3), tide.ones({ 0, 3 },
            { dtype = "int64", device = dev }), t({}):view(0, 3, 4))
        assert.are.same({ 0, 3, 4 }, x.shape)
    end)

    it("give the one dispatch's errors", function()
        local a, b = twice(A), twice(B)
        local piv = tide.ones({ 2, 3 }, { dtype = "int64", device = dev })
        assert.matches("tide: linalg.cholesky: a must be float32 or float64, got int64; convert " ..
            "it with :float()", err(K["linalg.cholesky"], a:long()), 1, true)
        assert.matches("tide: linalg.cholesky: a of shape [3] must be a matrix or a batch of " ..
            "matrices [..., n, n]", err(K["linalg.cholesky"], t({ 1, 2, 3 })), 1, true)
        assert.matches("tide: linalg.cholesky: a of shape [2, 3] must be [..., n, n]",
            err(K["linalg.cholesky"], t(M)), 1, true)
        assert.matches("tide: linalg.lu_solve: expected all tensors on the same device",
            err(K["linalg.lu_solve"], a, piv, b:to(D.other)), 1, true)
        assert.matches("tide: linalg.lu_solve: b must have lu's dtype float64, got float32",
            err(K["linalg.lu_solve"], a, piv, b:float()), 1, true)
        assert.matches("tide: linalg.lu_solve: pivots must be an int64 tensor of indices, got " ..
            "int32", err(K["linalg.lu_solve"], a, piv:int(), b), 1, true)
        assert.matches("tide: linalg.lu_solve: pivots of shape [2, 2] must be [2, 3]: [..., n] " ..
            "with lu's batch dims", err(K["linalg.lu_solve"], a, piv:narrow(2, 1, 2), b), 1, true)
        assert.matches("tide: linalg.lu_solve: b of shape [1, 3, 2] must be [2, 3, rhs]: " ..
            "[..., n, rhs] with lu's batch dims", err(K["linalg.lu_solve"], a, piv, b:narrow(1, 1, 1)),
            1, true)
        assert.matches("tide: linalg.solve_triangular: b of shape [2, 2, 2] must be [2, 3, rhs]",
            err(K["linalg.solve_triangular"], a, b:narrow(2, 1, 2), false, false), 1, true)
        assert.matches("tide: linalg.solve_triangular: upper = 2 must be in 0..1",
            err(K["linalg.solve_triangular"], a, b, 2, false), 1, true)
        assert.matches("tide: linalg.qr: c = -1 must be >= 0", err(K["linalg.qr"], t(M), -1), 1,
            true)
        -- the C API's own checks first, with its own messages
        assert.matches("tide: linalg.cholesky: expected square matrices, got 2 x 3",
            err(K.cholesky, t(M)), 1, true)
    end)

    it("refuse pivots and sizes their solvers cannot take", function()
        if D.kind == "cuda" then -- (no kernel there: nil before any value is read)
            return
        end
        local a, b = twice(A), twice(B)
        local piv = tide.tensor({ { 1, 2, 3 }, { 1, 4, 3 } }, { dtype = "int64", device = dev })
        assert.matches("tide: linalg.lu_solve: pivots hold 4 at 2 (matrix 2 of the batch), which " ..
            "lu_factor does not give; pass lu_factor's own pivots",
            err(K["linalg.lu_solve"], a, piv, b), 1, true)
        assert.matches("tide: linalg.lu_solve: pivots hold 0 at 1 (matrix 1 of the batch)",
            err(K["linalg.lu_solve"], a, piv:mul(0), b), 1, true)
        local half = tide.tensor({ { -2, 2, 3 }, { 1, 2, 3 } }, { dtype = "int64", device = dev })
        assert.matches("tide: linalg.ldl_solve: pivots hold -2 at 1 (matrix 1 of the batch), " ..
            "which ldl_factor does not give; pass ldl_factor's own pivots",
            err(K["linalg.ldl_solve"], a, half, b), 1, true)
        -- q's columns: k = 2 or m = 3 for a [3, 2]; orgqr has no other
        assert.matches("tide: linalg.qr: c = 1 must be in min(m, n)..m = 2..3",
            err(K["linalg.qr"], t(M):t():contiguous(), 1), 1, true)
        assert.matches("tide: linalg.qr: c = 4 must be in min(m, n)..m = 2..3",
            err(K["linalg.qr"], t(M):t():contiguous(), 4), 1, true)
    end)
end)
