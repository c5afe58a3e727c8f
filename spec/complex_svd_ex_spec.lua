-- complex_svd_ex_spec.lua: tide.linalg.svd, inv_ex and solve_ex of complex matrices against
-- PyTorch 1.13's values (pasted from /tmp/kw/parity_svd.py and parity_c.py). Singular vectors
-- are defined up to a phase e^(i phi) per pair, so U and Vh are checked through what PyTorch
-- guarantees: S, |U|, |Vh|, U diag(S) Vh = A, U^H U = I, and the gradient of a loss that does
-- not depend on the phase (S w + |U| W1 + |Vh| W3 + Re(U diag(S) Vh W4), summed); a loss that
-- does raises, as PyTorch's svd_backward. A complex grad is dL/dRe + i dL/dIm (PyTorch's).
local tide = require("tide")

local function C(re, im, dt)
    local o = { dtype = dt or "float64" }
    return tide.complex(tide.tensor(re, o), tide.tensor(im, o))
end
local function flat(z)
    local t = tide.is_complex(z) and tide.view_as_real(z) or z
    return t:reshape(-1)
end
local function close(z, want, tol, what)
    local got = flat(z)
    assert.are.equal(#want, got:numel(), what)
    for i = 1, #want do
        local g, w = got[i]:item(), want[i]
        assert(math.abs(g - w) <= tol * math.max(1, math.abs(w)),
            ("%s [%d]: got %.12g, want %.12g"):format(what or "", i, g, w))
    end
end
local function err(f)
    local ok, e = pcall(f)
    assert.is_false(ok)
    return tostring(e):match("(tide: .*)$")
end
local function maxdiff(x, y)
    return (flat(x) - flat(y)):abs():max():item()
end
local function diag_c(S, dt)
    local d = S:diag_embed()
    return tide.complex(d, d * 0):to(dt)
end
-- U diag(S) Vh - A and U^H U - I, the largest |.| of each
local function check_svd(A, U, S, Vh, tol)
    local R = U:matmul(diag_c(S, A.dtype)):matmul(Vh)
    assert.is_true(maxdiff(R, A) <= tol, "U diag(S) Vh = A")
    local k = U:size(-1)
    local I = tide.eye(k, { dtype = "float64" }):to(A.dtype)
    local UhU = U:conj():transpose(-2, -1):matmul(U)
    assert.is_true(maxdiff(UhU, I:expand(UhU:size())) <= tol, "U^H U = I")
    local VVh = Vh:matmul(Vh:conj():transpose(-2, -1))
    assert.is_true(maxdiff(VVh, I:expand(VVh:size())) <= tol, "Vh Vh^H = I")
end

local A_RE = { { 2, 1, 0.5 }, { 0.5, 3, -1 }, { 1, -2, 0.3 } }
local A_IM = { { 1, 0, 0.2 }, { -1, 0.5, 0.7 }, { 0.3, 0.1, -0.4 } }
local TALL_RE, TALL_IM = { { 1, 2 }, { 3, -1 }, { 0.5, 0.25 } }, { { 0.5, -1 }, { 0, 2 }, { 1, 0 } }

local function matrices()
    local A = C(A_RE, A_IM)
    local TALL = C(TALL_RE, TALL_IM)
    -- WIDE = TALL^H * 0.5 + 0.1
    local WIDE = TALL:conj():transpose(1, 2) * 0.5 + 0.1
    return { A = A, TALL = TALL, WIDE = WIDE }
end

local WANT = {
    A = {
        S = { 4.09440726740552, 2.57516644643108, 0.484093897702059 },
        U = { 0.210969018852702, 0.911928520000365, 0.351963701955576, 0.84326826176697,
            0.014105303075901, 0.537307806682213, 0.494358889654916, 0.410106589602121,
            0.76643451995854 },
        Vh = { 0.312607773256303, 0.905354757654191, 0.287418062919952, 0.926414244195688,
            0.272978771407881, 0.259305299814672, 0.209840482869891, 0.325292719183147,
            0.922036668791088 },
        grad = { 0.446971990929412, -0.752398241259245, 0.230981711830487, -0.929721441885161,
            0.758690786070099, -1.006153700857407, 0.666653970928209, -1.323024619473425,
            0.475178604930616, -1.052171359273478, -0.103586008223701, -0.628834689501033,
            1.325315106612371, -0.917775080631442, 0.113179475266874, -0.968253957668241,
            0.487664508325893, -0.509129809387579 },
    },
    TALL = {
        S = { 3.852212492702265, 2.592866928916446 },
        U = { 0.171534090129943, 0.929894034689444, 0.96834280202527, 0.112537132432749,
            0.181351243969105, 0.3501892032499 },
        Vh = { 0.76717226434083, 0.641441124988228, 0.641441124988228, 0.76717226434083 },
        grad = { 0.257877176023787, -0.956681593344758, 0.792790708647996, -1.296247113480369,
            0.428713511956557, -0.957560786650998, 0.178311972343037, -0.588603173935556,
            0.610863953378361, -0.615897356342602, 0.772623032545543, -0.889990923534276 },
    },
    WIDE = {
        S = { 1.996926736637359, 1.427553364502662 },
        U = { 0.821886895242222, 0.569650710022467, 0.569650710022467, 0.821886895242222 },
        Vh = { 0.227600376444011, 0.952846495047257, 0.200702828875686, 0.90684988621088,
            0.220948063382091, 0.358894465222045 },
        grad = { 0.83995983924701, -0.56415620455584, 0.059293438588693, -1.342054863753188,
            0.601472216666981, -1.309962716988207, 1.459332920980857, -0.890622997256197,
            0.838814288121387, -1.30688383467194, 0.785164157689377, -1.293639132943408 },
    },
}

describe("complex linalg.svd", function()
    it("S, |U|, |Vh| are PyTorch's; U diag(S) Vh = A with orthonormal U and Vh", function()
        for name, A in pairs(matrices()) do
            local U, S, Vh = tide.linalg.svd(A, { full_matrices = false })
            assert.are.equal("complex128", U.dtype)
            assert.are.equal("float64", S.dtype)
            close(S, WANT[name].S, 1e-12, name .. " S")
            close(U:abs(), WANT[name].U, 1e-10, name .. " |U|")
            close(Vh:abs(), WANT[name].Vh, 1e-10, name .. " |Vh|")
            check_svd(A, U, S, Vh, 1e-12)
        end
    end)

    it("full_matrices (the default) completes U and Vh to unitary matrices", function()
        for _, A in pairs(matrices()) do
            local m, n = A:size(1), A:size(2)
            local U, S, Vh = tide.linalg.svd(A)
            assert.are.same({ m, m }, U:size())
            assert.are.same({ n, n }, Vh:size())
            local k = math.min(m, n)
            check_svd(A, U:narrow(2, 1, k), S, Vh:narrow(1, 1, k), 1e-12)
            local I = tide.eye(m, { dtype = "float64" }):to("complex128")
            assert.is_true(maxdiff(U:conj():transpose(1, 2):matmul(U), I) <= 1e-12)
            I = tide.eye(n, { dtype = "float64" }):to("complex128")
            assert.is_true(maxdiff(Vh:matmul(Vh:conj():transpose(1, 2)), I) <= 1e-12)
        end
    end)

    it("batched complex64, rank-deficient and repeated singular values", function()
        local A = C(A_RE, A_IM)
        local B = tide.stack({ A, A * tide.complex(tide.tensor(0.5, { dtype = "float64" }),
            tide.tensor(1, { dtype = "float64" })) }):to("complex64")
        local U, S, Vh = tide.linalg.svd(B, { full_matrices = false })
        assert.are.equal("complex64", U.dtype)
        assert.are.equal("float32", S.dtype)
        -- torch.linalg.svdvals(B)
        close(S, { 4.094407081604004, 2.575166940689087, 0.484093993902206, 4.577686786651611,
            2.87912392616272, 0.541233539581299 }, 1e-5, "complex64 S")
        check_svd(B, U, S, Vh, 1e-5)
        -- [[1 + i, 2], [2 + 2i, 4]]: rank 1, S [5.47722557505166, 0]
        local R = C({ { 1, 2 }, { 2, 4 } }, { { 1, 0 }, { 2, 0 } })
        U, S, Vh = tide.linalg.svd(R)
        close(S, { 5.47722557505166, 0 }, 1e-12, "rank 1 S")
        check_svd(R, U, S, Vh, 1e-12)
        -- the identity: S all 1, U and Vh unitary (any phase pair)
        local E = tide.eye(4, { dtype = "float64" }):to("complex128")
        U, S, Vh = tide.linalg.svd(E)
        close(S, { 1, 1, 1, 1 }, 1e-15, "identity S")
        check_svd(E, U, S, Vh, 1e-14)
        -- an empty A [0, 3]: S empty, Vh the 3 x 3 identity (PyTorch's)
        local z = tide.zeros({ 0, 3 }, { dtype = "float64" })
        U, S, Vh = tide.linalg.svd(tide.complex(z, z))
        assert.are.same({ 0 }, S:size())
        assert.are.same({ 0, 0 }, U:size())
        close(Vh, { 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0 }, 0, "empty Vh")
    end)

    it("gradients of a phase-independent loss are PyTorch's; a phase-dependent one and bad " ..
        "arguments raise",
        function()
            for name, A0 in pairs(matrices()) do
                local A = A0:detach():requires_grad_()
                local U, S, Vh = tide.linalg.svd(A, { full_matrices = false })
                local f64 = { dtype = "float64" }
                local w = tide.arange(0, S:numel(), f64) * 0.3 + 0.5
                local W1 = (tide.arange(0, U:numel(), f64):reshape(U:size()) * 0.17):sin()
                local W3 = (tide.arange(0, Vh:numel(), f64):reshape(Vh:size()) * 0.23):cos()
                local R = U:matmul(diag_c(S, "complex128")):matmul(Vh)
                local k = tide.arange(0, R:numel(), f64):reshape(R:size())
                local W4 = tide.complex((k * 0.11):sin(), (k * 0.07):cos())
                local L = (S * w):sum() + (U:abs() * W1):sum() + (Vh:abs() * W3):sum() +
                    tide.real(R * W4):sum()
                L:backward()
                close(A.grad, WANT[name].grad, 1e-9, name .. " grad")
            end
            assert.are.equal("tide: linalg.svd: expected a matrix or a batch of matrices " ..
                "[..., m, n], got [3]", err(function()
                    return tide.linalg.svd(C({ 1, 2, 3 }, { 0, 1, 0 }))
                end))
            assert.are.equal("tide: linalg.svd: expected a tensor at argument #1, got table",
                err(function() return tide.linalg.svd({ 1, 2 }) end))
            local A = C(A_RE, A_IM):requires_grad_()
            local U = tide.linalg.svd(A)
            assert.matches("tide: linalg.svd: backward: the loss depends on the singular " ..
                "vectors' phase", err(function() tide.real(U):sum():backward() end), 1, true)
        end)
end)

describe("complex linalg.inv_ex and solve_ex", function()
    local function A2()
        return C({ { 2, 1 }, { 0.5, 3 } }, { { 1, 0 }, { -1, 0.5 } })
    end
    local function S2() -- [[1, i], [i, -1]]: singular
        return C({ { 1, 0 }, { 0, -1 } }, { { 0, 1 }, { 1, 0 } })
    end

    it("values and int32 info as PyTorch's, NaN for a singular matrix", function()
        local X, info = tide.linalg.inv_ex(tide.stack({ A2(), S2() }))
        assert.are.equal("int32", info.dtype)
        assert.are.same({ 0, 2 }, info:totable())
        -- torch.linalg.inv_ex(stack([A, S])): [[0.35-0.25j, -0.1+0.1j], [0.05+0.15j, 0.3-0.1j]],
        -- then all NaN
        close(X[1], { 0.35, -0.25, -0.1, 0.1, 0.05, 0.15, 0.3, -0.1 }, 1e-12, "inv_ex")
        assert.is_true(tide.view_as_real(X[2]):isnan():all():item())
        local B = C({ { 1, 2 }, { 0, 1 } }, { { 0.5, -1 }, { 1, 0 } })
        X, info = tide.linalg.solve_ex(tide.stack({ A2(), S2() }), B)
        assert.are.same({ 0, 2 }, info:totable())
        close(X[1], { 0.375, 0.225, 0.475, -0.325 }, 1e-12, "solve_ex")
        assert.is_true(tide.view_as_real(X[2]):isnan():all():item())
        -- PyTorch's info of a complex A is its own LU's (3 here; A^T's would be 2)
        local S3 = C({ { 1, 2, 3 }, { 2, 4, 6 }, { 1, 1, 1 } }, { { 0, 0, 0 }, { 0, 0, 0 },
            { 0, 0, 0 } })
        X, info = tide.linalg.inv_ex(S3)
        assert.are.equal(3, info:item())
        X = tide.linalg.solve_ex(A2(), C({ { 1, 2 } }, { { 0, 1 } }), { left = false })
        close(X, { 0.3, 0.1, 0.6, 0.2 }, 1e-12, "solve_ex left = false")
        local A64 = A2():to("complex64")
        X, info = tide.linalg.inv_ex(A64)
        assert.are.equal("complex64", X.dtype)
        assert.are.equal(0, info:item())
        close(X, { 0.35, -0.25, -0.1, 0.1, 0.05, 0.15, 0.3, -0.1 }, 1e-6, "complex64 inv_ex")
        X = tide.linalg.solve_ex(A64, C({ 1, 2 }, { 0.5, -1 }, "float32"))
        close(X, { 0.375, 0.225, 0.475, -0.325 }, 1e-6, "complex64 solve_ex")
    end)

    it("check_errors raises for the first singular matrix", function()
        local sing = "the matrix is singular (U's diagonal element 2 is zero after pivoting) " ..
            "(batch element 2); check the input, or regularise it (add a small multiple of " ..
            "the identity)"
        local batch = tide.stack({ A2(), S2() })
        assert.are.equal("tide: linalg.inv_ex: " .. sing, err(function()
            return tide.linalg.inv_ex(batch, { check_errors = true })
        end))
        assert.are.equal("tide: linalg.solve_ex: " .. sing, err(function()
            return tide.linalg.solve_ex(batch, C({ { 1, 2 }, { 0, 1 } }, { { 0, 0 }, { 0, 0 } }),
                { check_errors = true })
        end))
        assert.are.equal("tide: linalg.inv_ex: check_errors must be true or false, got 1",
            err(function() return tide.linalg.inv_ex(A2(), { check_errors = 1 }) end))
    end)

    it("gradients are PyTorch's", function()
        local A = A2():requires_grad_()
        local W = C({ { 0.3, -0.7 }, { 1.1, 0.2 } }, { { 0.5, 0.1 }, { -0.4, 0.9 } })
        local X = tide.linalg.inv_ex(A)
        tide.real(X * W):sum():backward()
        close(A.grad, { -0.188, -0.0635, 0.0945, 0.184, 0.027, -0.136, -0.128, 0.049 }, 1e-12,
            "inv_ex A.grad")
        A = A2():requires_grad_()
        local B = C({ { 1 }, { 2 } }, { { 0.5 }, { -1 } }):requires_grad_()
        X = tide.linalg.solve_ex(A, B)
        tide.real(X * W:narrow(2, 1, 1)):sum():backward()
        close(A.grad, { -0.07425, 0.1695, -0.2435, 0.00425, -0.135, -0.0465, -0.0185, -0.187 },
            1e-12, "solve_ex A.grad")
        close(B.grad, { 0.345, -0.245, 0.21, 0.25 }, 1e-12, "solve_ex B.grad")
    end)
end)
