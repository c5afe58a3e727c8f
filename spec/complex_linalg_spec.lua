-- complex_linalg_spec.lua: tide.linalg.solve / inv / det / slogdet (and tide.det, z:det(),
-- z:inverse(), z:logdet()) of complex matrices, batched, with gradients, and the function forms
-- tide.dot / vdot / outer / cumsum / sgn of complex tensors, against PyTorch 1.13's values
-- (pasted from /tmp/complex_linalg/ref.py). A complex grad is dL/dRe + i dL/dIm (PyTorch's, for a
-- real loss): the grad of view_as_real(z). torch.dot / vdot of complex return 0 in the venv (its
-- BLAS): their references are (z * w).sum() and (z.conj() * w).sum().
local tide = require("tide")

local F64 = { dtype = "float64" }
local function C(re, im, dt)
    local o = { dtype = dt or "float64" }
    return tide.complex(tide.tensor(re, o), tide.tensor(im, o))
end
local function close(z, want, tol, what)
    local t = tide.is_complex(z) and tide.view_as_real(z) or z
    local got = t:reshape(-1)
    assert.are.equal(#want, got:numel(), what)
    for i = 1, #want do
        local g, w = got[i]:item(), want[i]
        assert(math.abs(g - w) <= (tol or 1e-10) * math.max(1, math.abs(w)),
            ("%s [%d]: got %.12g, want %.12g"):format(what or "", i, g, w))
    end
end
local function err(f)
    local ok, e = pcall(f)
    assert.is_false(ok)
    return tostring(e):match("(tide: .*)$")
end

describe("complex linalg", function()
    it("solve and inv: batched values and PyTorch's gradients", function()
        local A = C({ { { 2, 1 }, { 0.5, 3 } }, { { 1, -1 }, { 2, 0.5 } } },
            { { { 1, 0 }, { -1, 0.5 } }, { { 0.5, 2 }, { 0, -1 } } }):requires_grad_()
        local B = C({ { { 1 }, { 2 } }, { { 0 }, { 1 } } },
            { { { 0.5 }, { -1 } }, { { 1 }, { 0 } } }):requires_grad_()
        local X = tide.linalg.solve(A, B)
        assert.are.same({ 2, 2, 1 }, X:size())
        close(X, { 0.375, 0.225, 0.475, -0.325, 0.4158415841584159, 0.1584158415841584,
            0.32079207920792074, 0.007920792079207928 }, 1e-10, "X")
        ;(X:abs() ^ 2):sum():backward()
        close(A.grad, { -0.07575, -0.04125, 0.00775, -0.11325, -0.0705, 0.1545, -0.2235, 0.0005,
            -0.0558376629742182, -0.10696990491128318, -0.012296833643760425,
            -0.08614057445348491, -0.14335849426526814, 0.03952553671208704,
            -0.10696990491128322, -0.007528673659445158 }, 1e-10, "A.grad")
        close(B.grad, { 0.1, 0.17, 0.32, -0.22, 0.03168316831683171, 0.2693069306930692,
            0.33267326732673275, 0.03168316831683171 }, 1e-10, "B.grad")
        A = A:detach():requires_grad_()
        local Ai = tide.linalg.inv(A)
        close(Ai, { 0.35, -0.25, -0.1, 0.1, 0.05, 0.15, 0.3, -0.1, 0.198019801980198,
            -0.019801980198019792, 0.39603960396039606, -0.039603960396039604,
            -0.19009900990099007, -0.300990099009901, 0.019801980198019792, 0.198019801980198 },
            1e-10, "inv")
        close(tide.inverse(A:detach()), tide.view_as_real(Ai):reshape(-1):totable(), 1e-12,
            "tide.inverse")
        ;(Ai:abs() ^ 2):sum():backward()
        close(A.grad, { -0.151, -0.125, 0.007, 0.099, 0.086, 0.026, -0.078, -0.046,
            -0.08093324183903537, 0.017253210469561818, 0.07516125870012742,
            -0.09260268601117536, -0.1618664836780708, -0.028859915694539752,
            0.017253210469561815, 0.08093324183903539 }, 1e-10, "inv A.grad")
        -- a vector right-hand side, and left = false (X A = B)
        local A3 = C({ { 1, 2, 0.5 }, { 3, -1, 2 }, { 0, 1, 4 } },
            { { 0.5, -1, 1 }, { 2, 1, 0 }, { -1, 0.5, 2 } })
        close(tide.linalg.solve(A3, C({ 1, 2, -1 }, { 0, 1, 0.5 })), { 0.6204232448773935,
            -0.30836412495801147, 0.22642825766776048, 0.08578589700524536,
            -0.08289191493759852, 0.2718017622283662 }, 1e-10, "vector")
        local B2 = C({ { 1, 2, -1 }, { 0, 1, 1 } }, { { 0, 1, 0.5 }, { 1, 0, 0 } })
        close(tide.linalg.solve(A3, B2, { left = false }), { 0.5996227487661817,
            0.6155138110126354, -0.01970233327304205,
            -0.32676158238805203, -0.10436422831451383, 0.1137179917831581, 0.3605591586780702,
            0.29590966641688843, 0.1045451021937418, 0.13911785225187984, 0.10263300689904656,
            -0.2480039275470918 }, 1e-10, "left = false")
    end)

    it("det, slogdet, logdet: values and gradients; batched; complex64", function()
        local A3 = C({ { 1, 2, 0.5 }, { 3, -1, 2 }, { 0, 1, 4 } },
            { { 0.5, -1, 1 }, { 2, 1, 0 }, { -1, 0.5, 2 } }):requires_grad_()
        local D = tide.linalg.det(A3)
        close(D, { -42.5, -24.75 }, 1e-12, "det")
        close(A3:det(), { -42.5, -24.75 }, 1e-12, "z:det()")
        D.real:backward()
        close(A3.grad, { -8, -1, -8, 16, 1, -2.5, -10, -1.25, 2, -4.5, -1.75, 3, 5.5, 1.5, -2.5,
            -3, -9.5, 0.5 }, 1e-10, "det grad")
        A3 = A3:detach():requires_grad_()
        local s, l = tide.linalg.slogdet(A3)
        close(s, { -0.8641474005951175, -0.5032387803465684 }, 1e-12, "sign")
        close(l, { 3.895515998118766 }, 1e-12, "logabsdet")
        ;(l + s.imag):backward()
        close(A3.grad, { 0.2162538228337772, -0.013197578579410705, 0.13208173552648383,
            -0.4622154411877756, -0.014034567314125388, 0.0709833378722474, 0.27031727854222154,
            -0.01649697322426335, -0.03054478425493586, 0.12876026802071933,
            0.031368529273103456, -0.08790322003605049, -0.15269743384158513,
            -0.01238707727779026, 0.08088593637898779, 0.06686019820922713, 0.24844609712504828,
            -0.06024375063079229 }, 1e-10, "slogdet grad")
        close(A3:logdet(), { 3.895515998118766, -2.6142500015933576 }, 1e-12, "logdet")
        local Ab = C({ { { 2, 1 }, { 0.5, 3 } }, { { 1, -1 }, { 2, 0.5 } } },
            { { { 1, 0 }, { -1, 0.5 } }, { { 0.5, 2 }, { 0, -1 } } })
        close(tide.det(Ab), { 5, 5, 3, -4.75 }, 1e-12, "batched det")
        local A64 = C({ { 1, 2 }, { 3, 4 } }, { { 1, 0 }, { 0, 1 } }, "float32")
        local d64 = tide.linalg.det(A64)
        assert.are.equal("complex64", d64.dtype)
        close(d64, { -3, 5 }, 1e-6, "complex64 det")
        close(tide.linalg.inv(A64), { -0.2058823109, -0.6764705181, 0.1764706075, 0.2941176295,
            0.2647058368, 0.4411764145, 0.0588235334, -0.2352941036 }, 1e-5, "complex64 inv")
    end)

    it("0 x 0 matrices: det 1, slogdet (1, 0), logdet 0, as PyTorch's (fuzz seed 45089)",
        function()
            local E = tide.zeros(3, 0, 0):to(tide.cdouble)
            close(tide.linalg.det(E), { 1, 0, 1, 0, 1, 0 }, 0, "empty det")
            local s, l = tide.linalg.slogdet(E)
            close(s, { 1, 0, 1, 0, 1, 0 }, 0, "empty sign")
            assert.are.equal("float64", l.dtype)
            assert.are.same({ 0, 0, 0 }, l:totable())
            close(tide.zeros(0, 0):to(tide.cfloat):logdet(), { 0, 0 }, 0, "empty logdet")
        end)

    it("singular matrices and argument errors", function()
        -- [[1, i], [i, -1]]: det 0; PyTorch's det 0, slogdet (0, -inf), logdet -inf + nan i
        local S = C({ { 1, 0 }, { 0, -1 } }, { { 0, 1 }, { 1, 0 } })
        close(tide.linalg.det(S), { 0, 0 }, 0, "singular det")
        local s, l = tide.linalg.slogdet(S)
        close(s, { 0, 0 }, 0, "singular sign")
        assert.are.equal(-math.huge, l:item())
        local ld = tide.view_as_real(S:logdet())
        assert.are.equal(-math.huge, ld[1]:item())
        assert.is_true(ld[2]:item() ~= ld[2]:item())
        -- PyTorch: "linalg.inv: The diagonal element 2 is zero, ... singular."
        local sing = "the matrix is singular (U's diagonal element 2 is zero after pivoting); " ..
            "check the input, or regularise it (add a small multiple of the identity)"
        assert.are.equal("tide: linalg.inv: " .. sing,
            err(function() return tide.linalg.inv(S) end))
        assert.are.equal("tide: linalg.solve: " .. sing,
            err(function() return tide.linalg.solve(S, C({ 1, 1 }, { 0, 0 })) end))
        local A = C({ { 1, 2 }, { 3, 4 } }, { { 1, 0 }, { 0, 1 } })
        assert.are.equal("tide: linalg.det: expected square matrices [..., n, n], got [2, 3]",
            err(function() return tide.linalg.det(C({ { 1, 2, 3 }, { 4, 5, 6 } },
                { { 0, 0, 0 }, { 0, 0, 0 } })) end))
        assert.are.equal("tide: linalg.solve: A is [2, 2], B [3, 1]: B's rows must match A's " ..
            "size 2", err(function() return tide.linalg.solve(A, C({ { 1 }, { 2 }, { 3 } },
                { { 0 }, { 0 }, { 0 } })) end))
        assert.are.equal("tide: linalg.solve: B must be complex with a complex A, got float64 " ..
            "tensor; convert it with :to(\"complex128\")",
            err(function() return tide.linalg.solve(A, tide.ones(2, F64)) end))
        assert.are.equal("tide: linalg.solve: A is complex128, B complex64; convert one with " ..
            ":to(\"complex128\")",
            err(function() return tide.linalg.solve(A, A:to("complex64")) end))
    end)

    it("the function forms dot, vdot, outer, cumsum, sgn, gather of complex tensors", function()
        local z, w = C({ 1, 2, 3 }, { 0.5, -1, 2 }), C({ 0, 1, -1 }, { 2, 0.5, 1 })
        close(tide.dot(z, w), { -3.5, 3 }, 1e-12, "dot")
        close(tide.vdot(z, w), { 1.5, 9 }, 1e-12, "vdot")
        close(tide.outer(z, w)[2], { 2, 4, 2.5, 0, -1, 3 }, 1e-12, "outer")
        close(tide.cumsum(z, 1), { 1, 0.5, 3, -0.5, 6, 1.5 }, 1e-12, "cumsum")
        close(tide.sgn(z), { 0.8944271910, 0.4472135955, 0.8944271910, -0.4472135955,
            0.8320502943, 0.5547001962 }, 1e-9, "sgn")
        local zg = z:detach():requires_grad_()
        ;(tide.cumsum(zg, 1):abs() ^ 2):sum():backward()
        close(zg.grad, { 20, 3, 18, 2, 12, 3 }, 1e-12, "cumsum grad")
        -- torch.gather(z, 0, torch.tensor([2, 0])) -> [3+2j, 1+0.5j]
        close(tide.gather(z, 1, tide.tensor({ 3, 1 })), { 3, 2, 1, 0.5 }, 0, "gather")
    end)

end)
