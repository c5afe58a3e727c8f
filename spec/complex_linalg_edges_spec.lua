-- complex_linalg_edges_spec.lua: tide.linalg.svdvals of complex matrices (wide, a tall batch, a
-- repeated value, a singular matrix, complex64, empty) and the edges of complex solve / inv /
-- det (empty batches, det of a singular matrix and its gradient), against PyTorch 1.13's values
-- (pasted from a throwaway script; complex128 to 1e-10, complex64 to 1e-5). A complex grad is
-- dL/dRe + i dL/dIm, PyTorch's for a real loss. spec/complex_linalg_spec.lua has the rest.
local tide = require("tide")
local LA = tide.linalg

local function Z(re, im, dt)
    local o = { dtype = dt or "float64" }
    return tide.complex(tide.tensor(re, o), tide.tensor(im, o))
end

local function zeros(dt, ...)
    local o = { dtype = dt or "float64" }
    return tide.complex(tide.zeros({ ... }, o), tide.zeros({ ... }, o))
end

local function close(got, want, tol, what)
    local t = tide.is_complex(got) and tide.view_as_real(got) or got
    local flat = t:detach():reshape(-1)
    local w = want
    if want.re then -- interleave as view_as_real's pairs
        w = {}
        for i = 1, #want.re do
            w[2 * i - 1], w[2 * i] = want.re[i], want.im[i]
        end
    end
    assert.are.equal(#w, flat:numel(), what .. ": size")
    for i = 1, #w do
        local g = flat[i]:item()
        assert(math.abs(g - w[i]) <= tol * math.max(1, math.abs(w[i])),
            ("%s [%d]: got %.17g, PyTorch %.17g"):format(what, i, g, w[i]))
    end
end

local function shape(t)
    return table.concat(t:size(), "x")
end

local function catch(f)
    local ok, e = pcall(f)
    assert.is_false(ok, "expected an error")
    return tostring(e)
end

local WIDE_RE, WIDE_IM = { { 1, 2, 0.5 }, { -1, 0.3, 2 } }, { { 0.5, -1, 1 }, { 2, 0, -0.5 } }

-- S and the gradient of (S * w):sum(), w = 1, 1.5, 2, ... over S's elements
local function svdvals_grad(A)
    A = A:detach():requires_grad_()
    local S = LA.svdvals(A)
    local w = (tide.arange(0, S:numel(), { dtype = S.dtype }) * 0.5 + 1):reshape(S.shape)
    local loss = (S * w):sum()
    loss:backward()
    return S, A.grad
end

describe("complex svdvals", function()
    it("a wide matrix: values and PyTorch's gradient, in complex64 too", function()
        local S, g = svdvals_grad(Z(WIDE_RE, WIDE_IM))
        assert.are.equal("float64", S.dtype)
        close(S, { 3.155292551941962, 2.62376235807658 }, 1e-10, "S")
        close(g, { re = { 0.5206177695297324, 1.0138653392909338, 0.10064938611510164,
            -0.43643367024167506, -0.1176825468249882, 0.7360163416406944 },
            im = { 0.032223886693773976, -0.5069326696454669, 0.6574687683723879,
                0.6447823424122576, 5.551115123125783e-17, -0.29804658444571963 } }, 1e-10,
            "grad")
        local S32 = LA.svdvals(Z(WIDE_RE, WIDE_IM, "float32"))
        assert.are.equal("float32", S32.dtype)
        close(S32, { 3.155292510986328, 2.6237621307373047 }, 1e-5, "S complex64")
    end)

    it("a batch of tall matrices: values and PyTorch's gradient", function()
        local A = Z({ { { 1, 0.2 }, { 0.5, -1 }, { 2, 1 } }, { { 0.3, 0.3 }, { -2, 1 }, { 0, 1.5 } } },
            { { { 0, 1 }, { 1, 0.5 }, { -0.5, 0.2 } }, { { 1, -1 }, { 0.4, 0 }, { 2, 0.7 } } })
        local S, g = svdvals_grad(A)
        assert.are.equal("2x2", shape(S))
        close(S, { 3.003203717929049, 0.900426248294182, 3.4428070104978463, 1.4923404063640704 },
            1e-10, "S")
        close(g, { re = { 0.16235292895495876, -0.0896400332934981, 0.4562769034205273,
            -0.9158014296890463, 1.0408066958920994, 0.3190507313705608, -0.14018639501900199,
            0.01055799197842322, -1.5819988799887077, 0.8540938101177107, 0.5758071795942374,
            1.1594993169207248 }, im = { -0.23870027932739396, 0.7453012301694788,
            0.060052809243218486, 0.03165021604560489, 0.07227371509013122, -0.6011406318522003,
            0.5687481001904575, -1.0712293901818752, -0.10400199105842622, -0.8408035341123365,
            1.1917232536220703, 1.3088425873553227 } }, 1e-10, "grad")
    end)

    it("a repeated value: the gradient of their sum is U V^H, no NaN", function()
        local A = Z({ { 2, 0 }, { 0, 0 } }, { { 0, 0 }, { 0, 2 } }):requires_grad_()
        local S = LA.svdvals(A)
        close(S, { 2, 2 }, 1e-12, "S")
        S:sum():backward()
        close(A.grad, { re = { 1, 0, 0, 0 }, im = { 0, 0, 0, 1 } }, 1e-10, "grad")
    end)

    it("a singular matrix: its smallest value is 0", function()
        -- rows r1, r2 and r1 + i r2
        local A = Z({ { 1, 2, 0.5 }, { -1, 0.3, 2 }, { -1, 2, 1 } },
            { { 0.5, -1, 1 }, { 2, 0, -0.5 }, { -0.5, -0.7, 3 } })
        local S = LA.svdvals(A)
        close(S:narrow(1, 1, 2), { 4.901011723264258, 2.925762138046481 }, 1e-10, "S")
        assert.is_true(S[3]:item() < 1e-14, "the zero value: " .. S[3]:item())
    end)

    it("empty: [..., 0] values of the batch's shape", function()
        assert.are.equal("2x0", shape(LA.svdvals(zeros(nil, 2, 0, 3))))
        assert.are.equal("0x3", shape(LA.svdvals(zeros(nil, 0, 3, 3))))
        assert.are.equal("0x3", shape(LA.svdvals(zeros(nil, 0, 3, 4):requires_grad_())))
    end)

    it("a vector raises", function()
        assert.matches("tide: linalg.svdvals: expected a matrix or a batch of matrices " ..
            "[..., m, n], got [3]", catch(function() return LA.svdvals(zeros(nil, 3)) end), 1,
            true)
    end)
end)

describe("complex solve, inv and det: edges", function()
    it("empty batches and 0 x 0 matrices", function()
        local d = LA.det(zeros(nil, 2, 0, 0))
        close(d, { re = { 1, 1 }, im = { 0, 0 } }, 0, "det of 0 x 0")
        assert.are.equal("2x0x0", shape(LA.inv(zeros(nil, 2, 0, 0))))
        assert.are.equal("2x0x1", shape(LA.solve(zeros(nil, 2, 0, 0), zeros(nil, 2, 0, 1))))
        assert.are.equal("0x3x2", shape(LA.solve(zeros(nil, 0, 3, 3), zeros(nil, 0, 3, 2))))
        assert.are.equal("0", shape(LA.det(zeros(nil, 0, 3, 3))))
    end)

    it("det of a singular matrix: 0, and PyTorch 1.13's zero gradient", function()
        local A = Z({ { 1, 2, 0.5 }, { -1, 0.3, 2 }, { -1, 2, 1 } },
            { { 0.5, -1, 1 }, { 2, 0, -0.5 }, { -0.5, -0.7, 3 } }):requires_grad_()
        local d = LA.det(A)
        close(d, { re = { 0 }, im = { 0 } }, 1e-14, "det")
        local loss = (d * Z({ 0.3 }, { -0.2 })).real:sum()
        loss:backward()
        close(A.grad, { re = { 0, 0, 0, 0, 0, 0, 0, 0, 0 }, im = { 0, 0, 0, 0, 0, 0, 0, 0, 0 } },
            1e-14, "grad")
    end)
end)
