-- tide.linalg.eig and eigvals (lua/tide/linalg_eig.lua, LAPACK's geev through the backend entry
-- eig): PyTorch 1.13's values, pasted from the reference virtualenv, on the device under test
-- (spec/support/device.lua: a device without the entry, the emulated GPU, runs it on the host)
local tide = require("tide")
local D = require("spec.support.device")

local function on(t)
    return t:to(D.name)
end

-- z's real and imaginary parts as flat Lua lists (through the host)
local function parts(z)
    local ri = tide.view_as_real(z):to("cpu"):contiguous():view(-1, 2)
    local re, im = {}, {}
    for i, pair in ipairs(ri:totable()) do
        re[i], im[i] = pair[1], pair[2]
    end
    return re, im
end

local function near(want, got, tol)
    assert.are.equal(#want, #got)
    for i = 1, #want do
        if math.abs(want[i] - got[i]) > tol then
            error(("at %d: want %.12g, got %.12g"):format(i, want[i], got[i]))
        end
    end
end

local function raises(pattern, f)
    local ok, err = pcall(f)
    assert.is_false(ok)
    assert.truthy(tostring(err):find(pattern, 1, true), tostring(err))
end

describe("linalg.eig", function()
    local A = { { 1, 2, 0, -1 }, { -3, 1, 2, 0 }, { 0.5, -1, 2, 1 }, { 1, 0, -2, 0.5 } }

    it("gives PyTorch's eigenvalues and eigenvectors, a conjugate pair first", function()
        local w, V = tide.linalg.eig(on(tide.tensor(A, { dtype = "float64" })))
        assert.are.equal("complex128", w.dtype)
        assert.are.same({ 4 }, w:size())
        assert.are.same({ 4, 4 }, V:size())
        assert.are.equal(D.name, tostring(w.device))
        assert.are.equal(D.name, tostring(V.device))
        local wr, wi = parts(w)
        near({ 0.96535505836, 0.96535505836, 1.56928988328, 1 }, wr, 1e-10)
        near({ 3.24626643355, -3.24626643355, 0, 0 }, wi, 1e-10)
        local vr, vi = parts(V)
        near({ 0.0102840286366, 0.0102840286366, 0.420830222354, -0.207390338946,
            0.693204840683, 0.693204840683, -0.216216454579, 0.414780677892,
            0.00341802232998, 0.00341802232998, 0.569700413435, -0.311085508419,
            -0.35516245699, -0.35516245699, -0.672007297322, 0.829561355784 }, vr, 1e-10)
        near({ -0.536594411945, 0.536594411945, 0, 0, 0, 0, 0, 0, 0.320272185023,
            -0.320272185023, 0, 0, -0.0519749790506, 0.0519749790506, 0, 0 }, vi, 1e-10)
    end)

    it("satisfies A V = V diag(w) in float32, batched", function()
        tide.manual_seed(3)
        local M = on(tide.randn(2, 3, 5, 5))
        local w, V = tide.linalg.eig(M)
        assert.are.equal("complex64", w.dtype)
        assert.are.same({ 2, 3, 5 }, w:size())
        -- with real and imaginary parts apart: A (Vr + i Vi) = (Vr + i Vi)(wr + i wi)
        local Vri, wri = tide.view_as_real(V), tide.view_as_real(w)
        local Vr, Vi = Vri:select(-1, 1), Vri:select(-1, 2)
        local wr, wi = wri:select(-1, 1):unsqueeze(-2), wri:select(-1, 2):unsqueeze(-2)
        local re = M:matmul(Vr) - (Vr * wr - Vi * wi)
        local im = M:matmul(Vi) - (Vr * wi + Vi * wr)
        assert.is_true(re:abs():max():item() < 1e-4)
        assert.is_true(im:abs():max():item() < 1e-4)
        -- each eigenvector of norm 1
        local norms = (Vr * Vr + Vi * Vi):sum(-2):sqrt()
        assert.is_true((norms - 1):abs():max():item() < 1e-5)
    end)

    it("eigvals gives eig's eigenvalues alone", function()
        local B = on(tide.tensor({ { { 0, -2 }, { 2, 0 } }, { { 3, 1 }, { 0, 2 } } },
            { dtype = "float32" }))
        local w = tide.linalg.eigvals(B)
        assert.are.equal("complex64", w.dtype)
        local wr, wi = parts(w)
        near({ 0, 0, 3, 2 }, wr, 1e-6)
        near({ 2, -2, 0, 0 }, wi, 1e-6)
    end)

    it("gives empty results for empty matrices and batches", function()
        local w, V = tide.linalg.eig(on(tide.zeros(0, 0)))
        assert.are.same({ 0 }, w:size())
        assert.are.same({ 0, 0 }, V:size())
        w, V = tide.linalg.eig(on(tide.zeros(2, 0, 3, 3)))
        assert.are.same({ 2, 0, 3 }, w:size())
        assert.are.same({ 2, 0, 3, 3 }, V:size())
    end)

    it("raises for bad input, naming the fix", function()
        raises("tide: linalg.eig: expected square matrices [..., n, n], got {2, 3}",
            function() tide.linalg.eig(on(tide.zeros(2, 3))) end)
        raises("tide: linalg.eig: needs a floating-point tensor, got int64",
            function() tide.linalg.eig(on(tide.zeros({ 2, 2 }, { dtype = "int64" }))) end)
        raises("tide: linalg.eig: the input has NaN or inf", -- PyTorch names eig too
            function() tide.linalg.eigvals(on(tide.tensor({ { 0 / 0, 1 }, { 0, 1 } }))) end)
        local P = on(tide.eye(3)):requires_grad_()
        raises("tide: linalg.eig: no gradient yet (PyTorch's is complex); call it on " ..
            "A:detach() or under tide.no_grad() for the values",
            function() tide.linalg.eig(P) end)
        local w = tide.no_grad(function() return tide.linalg.eigvals(P) end)
        near({ 1, 1, 1 }, (parts(w)), 0)
        raises("tide: linalg.eig: takes one matrix",
            function() tide.linalg.eig(on(tide.eye(2)), {}) end)
        local z = tide.complex(tide.eye(2), tide.zeros(2, 2))
        raises("tide: linalg.eig: expected a real float32 or float64 matrix, got a complex tensor",
            function() tide.linalg.eig(z) end)
    end)
end)
