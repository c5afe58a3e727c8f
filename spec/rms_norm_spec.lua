-- rms_norm_spec.lua — nn.RMSNorm and F.rms_norm (PyTorch 2's semantics), the first op made
-- through the kernel rows (include/tide_kernels.def): values by hand, the composite of plain ops
-- as the reference, float64 gradchecks, double backward, eps defaults, the errors of the one
-- dispatch, on the device under test (spec/support/device.lua), and CPU against CUDA.
local tide = require("tide")
local nn = require("tide.nn")
local F = require("tide.nn.functional")
local core = require("tide.core")
local K = core._internal -- the internal kernels (tide._internal in docs/API.md)
local gradcheck = require("spec.support.gradcheck")
local D = require("spec.support.device")

local dev = D.name

local function randn(shape, dtype)
    return tide.randn(shape, { device = dev, dtype = dtype or "float32" })
end

local function leaf(t)
    return t:detach():requires_grad_(true)
end

-- the largest |a - b| relative to 1 + |b|, on the host in float64
local function maxdiff(a, b)
    assert.are.same(b.shape, a.shape)
    local ad, bd = a:detach():cpu():double(), b:detach():cpu():double()
    if ad:numel() == 0 then
        return 0
    end
    return ad:sub(bd):abs():div(bd:abs():add(1)):max():item()
end

local function close(a, b, tol)
    local d = maxdiff(a, b)
    assert(d <= tol, string.format("max relative difference %.3g > %.3g", d, tol))
end

-- PyTorch 2's definition in plain ops: the reference
local function composite(x, d, w, eps)
    local xr = x:reshape(-1, d)
    local y = xr:mul(xr:mul(xr):mean(2, true):add(eps):rsqrt()):view(x.shape)
    return w and y:mul(w) or y
end

local function t(v, dtype)
    return tide.tensor(v, { dtype = dtype or "float64" }):to(dev)
end

describe("rms norm (kernel row) on " .. dev, function()
    it("gives the values computed by hand", function()
        -- mean of squares of {1, 2, 3, 4} = 7.5, of {3, 4} = 12.5
        local y = F.rms_norm(t({ { 1, 2, 3, 4 }, { 0, 0, 3, 4 } }), 4, nil, 0)
        local r1, r2 = 1 / math.sqrt(7.5), 1 / math.sqrt(6.25)
        close(y, t({ { r1, 2 * r1, 3 * r1, 4 * r1 }, { 0, 0, 3 * r2, 4 * r2 } }), 1e-15)
        local w = t({ 1, -1 })
        y = F.rms_norm(t({ { 3, 4 } }), { 2 }, { weight = w, eps = 0 })
        close(y, t({ { 3 / math.sqrt(12.5), -4 / math.sqrt(12.5) } }), 1e-15)
        -- an all-zero row with eps: 0 / sqrt(eps) = 0
        y = F.rms_norm(t({ { 0, 0 } }), 2, nil, 1e-6)
        close(y, t({ { 0, 0 } }), 0)
    end)

    it("equals the composite, forward and gradients, float32 and float64, d over two dims", function()
        for _, dtype in ipairs({ "float32", "float64" }) do
            local tol = dtype == "float32" and 1e-5 or 1e-12
            for _, case in ipairs({ { { 6, 10 }, { 10 } }, { { 2, 3, 4, 5 }, { 4, 5 } },
                { { 3, 1100 }, { 1100 } } }) do
                local shape, ns = case[1], case[2]
                local d = 1
                for _, s in ipairs(ns) do
                    d = d * s
                end
                local x, w = leaf(randn(shape, dtype)), leaf(randn(ns, dtype))
                local g = randn(shape, dtype)
                local y = F.rms_norm(x, ns, w, 1e-5)
                assert.are.equal("rms_norm", y.grad_fn.name)
                y:backward(g)
                local xr, wr = leaf(x), leaf(w)
                local yr = composite(xr, d, wr, 1e-5)
                yr:backward(g)
                close(y, yr, tol)
                close(x.grad, xr.grad, tol * 10)
                close(w.grad, wr.grad, tol * 10)
            end
        end
    end)

    it("passes gradcheck in float64 (x, weight) and without weight", function()
        local x, w = leaf(randn({ 4, 6 }, "float64")), leaf(randn({ 6 }, "float64"))
        assert.is_true(gradcheck(function(a, ww)
            return F.rms_norm(a, 6, ww, 1e-3)
        end, { x, w }))
        assert.is_true(gradcheck(function(a)
            return F.rms_norm(a, { 2, 3 }, nil, 1e-3)
        end, { leaf(randn({ 3, 2, 3 }, "float64")) }))
    end)

    it("differentiates twice (create_graph takes the composite formula)", function()
        local autograd = require("tide.autograd")
        local x, w = leaf(randn({ 3, 5 }, "float64")), leaf(randn({ 5 }, "float64"))
        local gy, v = randn({ 3, 5 }, "float64"), randn({ 3, 5 }, "float64")
        local function second(fn)
            local xx, ww = leaf(x), leaf(w)
            local gs = autograd.grad(fn(xx, ww):mul(gy):sum(), { xx, ww }, { create_graph = true })
            local s = gs[1]:mul(v):sum():add(gs[2]:mul(gs[2]):sum())
            return autograd.grad(s, { xx, ww })
        end
        local got = second(function(a, ww)
            return F.rms_norm(a, 5, ww, 1e-3)
        end)
        local want = second(function(a, ww)
            return composite(a, 5, ww, 1e-3)
        end)
        close(got[1], want[1], 1e-10)
        close(got[2], want[2], 1e-10)
    end)

    it("nn.RMSNorm: weight ones, no bias, eps nil is the dtype's machine epsilon", function()
        local m = nn.RMSNorm({ 2, 3 }):to(dev)
        assert.are.same({ 2, 3 }, m.weight.shape)
        assert.is_nil(m.bias)
        local n = 0
        for _ in pairs(m:state_dict()) do
            n = n + 1
        end
        assert.are.equal(1, n)
        local x = randn({ 4, 2, 3 })
        -- float32's machine epsilon, 2^-23
        close(m(x), composite(x, 6, nil, 2 ^ -23), 1e-6)
        local x64 = randn({ 4, 2, 3 }, "float64")
        close(F.rms_norm(x64, { 2, 3 }), composite(x64, 6, nil, 2 ^ -52), 1e-14)
        local plain = nn.RMSNorm(3, { eps = 0.5, elementwise_affine = false })
        assert.is_nil(plain.weight)
        local x3 = randn({ 2, 3 })
        close(plain:to(dev)(x3), composite(x3, 3, nil, 0.5), 1e-6)
        -- a weight of another dtype takes the composite (and its promotion)
        local w64 = randn({ 3 }, "float64")
        local y = F.rms_norm(x3, 3, w64, 0.5)
        assert.are.equal("float64", y.dtype)
        close(y, composite(x3, 3, nil, 0.5):double():mul(w64), 1e-6)
    end)

    it("raises the row's errors at the caller's line", function()
        local x = randn({ 3, 4 })
        local ok, err = pcall(K.rms_norm, x, nil, 5, 1e-5)
        assert.is_false(ok)
        assert.are.equal("spec/rms_norm_spec.lua:" .. (debug.getinfo(1, "l").currentline - 2) ..
            ": tide: rms_norm: x of shape [3, 4] does not split into rows of d = 5 elements", err)
        ok, err = pcall(K.rms_norm, x, randn({ 3 }), 4, 1e-5)
        assert.matches("tide: rms_norm: weight of shape [3] must hold d = 4 elements", err, 1, true)
        ok, err = pcall(K.rms_norm, x, nil, 4, -1)
        assert.matches("tide: rms_norm: eps = -1 must be >= 0", err, 1, true)
        ok, err = pcall(K.rms_norm, x:long(), nil, 4, 0)
        assert.matches("tide: rms_norm: x must be float32 or float64, got int64", err, 1, true)
        ok, err = pcall(K.rms_norm, x, tide.ones({ 4 }, { device = D.other }), 4, 0)
        assert.is_false(ok)
        assert.matches("same device", err, 1, true)
        ok, err = pcall(K.rms_norm, leaf(x), nil, 4, 0)
        assert.matches("tide: rms_norm: not differentiable: argument #1 requires grad", err, 1, true)
        ok, err = pcall(K.rms_norm_backward, x, randn({ 4, 3 }), randn({ 3 }), nil, 4)
        assert.matches("tide: rms_norm_backward: dy of shape [4, 3] must have x's shape [3, 4]",
            err, 1, true)
        ok, err = pcall(F.rms_norm, x, 5)
        assert.matches("tide: rms_norm: expected input ending in {5}, got {3, 4}", err, 1, true)
        -- no rows: empty results, a zero weight gradient
        local e = randn({ 0, 4 })
        local y, r = K.rms_norm(e, nil, 4, 1e-5)
        assert.are.same({ 0, 4 }, y.shape)
        assert.are.same({ 0 }, r.shape)
        local dx, dw = K.rms_norm_backward(e, e, r, randn({ 4 }), 4, true, true)
        assert.are.same({ 0, 4 }, dx.shape)
        close(dw, tide.zeros({ 4 }, { device = dev }), 0)
        local dx2, dw2 = K.rms_norm_backward(x, x, randn({ 3 }), nil, 4, false, true)
        assert.is_nil(dx2)
        assert.are.same({ 4 }, dw2.shape)
    end)

    it("is listed in core._kernels with its row", function()
        local row = core._kernels.rms_norm
        assert.are.same({ "x", "weight" }, row.inputs)
        assert.are.same({ "y", "rstd" }, row.outputs)
        assert.are.same({ "d", "eps" }, row.params)
    end)
end)

describe("rms norm CPU against CUDA #cuda", function()
    it("gives the CPU's values and gradients on cuda", function()
        if not tide.cuda.is_available() then
            pending("no CUDA device")
            return
        end
        for _, dtype in ipairs({ "float32", "float64" }) do
            local tol = dtype == "float32" and 1e-5 or 1e-12
            for _, shape in ipairs({ { 7, 33 }, { 3, 1500 } }) do
                local d = shape[2]
                local x = tide.randn(shape, { dtype = dtype })
                local w = tide.randn({ d }, { dtype = dtype })
                local g = tide.randn(shape, { dtype = dtype })
                local res = {}
                for _, where in ipairs({ "cpu", "cuda" }) do
                    local xl, wl = leaf(x:to(where)), leaf(w:to(where))
                    local y = F.rms_norm(xl, d, wl, 1e-5)
                    assert.are.equal("rms_norm", y.grad_fn.name)
                    y:backward(g:to(where))
                    res[where] = { y, xl.grad, wl.grad }
                end
                for i = 1, 3 do
                    close(res.cuda[i]:cpu(), res.cpu[i], tol * 10)
                end
            end
        end
    end)
end)
