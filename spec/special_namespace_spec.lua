-- special_namespace_spec.lua — tide.special, PyTorch's torch.special names: the ones over
-- tide's functions give those functions' values, the four written anew (ndtr, entr, xlog1py,
-- multigammaln) PyTorch 1.13's values and gradients (spec/fixtures/special_namespace_torch.lua,
-- written by spec/fixtures/make_special_namespace.py).
local tide = require("tide")
local D = require("spec.support.device")
local P = require("spec.support.porting")

local T = dofile("spec/fixtures/special_namespace_torch.lua")
local DEV = D.name
local S = tide.special

local function t64(v)
    return P.t64(v, DEV)
end

describe("tide.special (" .. DEV .. ")", function()
    local CASES = {
        ndtr = { function(x) return S.ndtr(x) end, T.X },
        entr = { function(x) return S.entr(x) end, T.POS },
        xlog1py = { function(x, y) return S.xlog1py(x, y) end, T.XS, T.Y },
        multigammaln = { function(a) return S.multigammaln(a, 3) end, T.A },
    }
    P.run_cases(it, T, CASES, function(name, fn, ...)
        P.check_case(T.cases[name], name, DEV, { out = 1e-13, grad = 1e-12 }, fn, ...)
    end)

    it("gives PyTorch's values at the edges", function()
        P.close(T.values.entr_edges, S.entr(t64({ 0, -1 })), 0, "entr")
        P.close(T.values.xlog1py_zero, S.xlog1py(t64({ 0, 0 }), t64({ -1, 5 })), 0, "xlog1py")
    end)

    it("maps PyTorch's other names to tide's functions", function()
        local x = t64({ -1.5, 0.25, 2 })
        assert.is_true(S.expit(x):equal(x:sigmoid()))
        assert.is_true(S.gammaln(x:abs()):equal(x:abs():lgamma()))
        assert.is_true(S.psi(x:abs()):equal(x:abs():digamma()))
        assert.is_true(S.i0(x):equal(x:i0()))
        assert.is_true(S.logsumexp(x, 1):equal(x:logsumexp(1)))
        assert.is_true(S.softmax(x, 1):equal(x:softmax(1)))
    end)

    it("has the Bessel functions and polynomials as the op table's rows", function()
        local x = t64({ -1.5, 0.25, 2 })
        assert.is_true(S.bessel_j0(x):equal(x:bessel_j0()))
        assert.is_true(S.modified_bessel_k1(x:abs()):equal(x:abs():modified_bessel_k1()))
        assert.is_true(S.airy_ai(x):equal(tide.airy_ai(x)))
        assert.is_true(S.chebyshev_polynomial_t(x, 3):equal(x:chebyshev_polynomial_t(3)))
        assert.is_true(S.legendre_polynomial_p(0.5, x):equal(tide.legendre_polynomial_p(0.5, x)))
    end)

    it("checks multigammaln's domain, and has no name PyTorch lacks", function()
        local ok, err = pcall(S.multigammaln, t64({ 0.5 }), 3)
        assert.is_false(ok)
        assert.matches("tide: special.multigammaln: every element must be greater than " ..
            "(p - 1) / 2 = 1 (p = 3)", tostring(err), 1, true)
        assert.is_nil(S.not_a_torch_name)
    end)
end)
