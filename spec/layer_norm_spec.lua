-- layer_norm_spec.lua — the fused layer norm (one kernel forward, one autograd node whose
-- gradient is one kernel) and the one-pass softmax / log_softmax gradient, on the device under
-- test (spec/support/device.lua): values and gradients equal to the composites tide ran before
-- (kept here as the reference) and to PyTorch's, float64 gradchecks, double backward
-- (create_graph falls back to the composites), strided inputs, and the errors.
local tide = require("tide")
local nn = require("tide.nn")
local F = require("tide.nn.functional")
local autograd = require("tide.autograd")
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

-- the composite layer norm tide ran before the kernel: the reference
local function composite(x, d, w, b, eps)
    local xr = x:reshape(-1, d)
    local xc = xr:sub(xr:mean(2, true))
    local var = xc:mul(xc):mean(2, true)
    local y = xc:mul(var:add(eps):rsqrt()):view(x.shape)
    if w then
        y = y:mul(w)
    end
    if b then
        y = y:add(b)
    end
    return y
end

local function numel(ns)
    local d = 1
    for _, v in ipairs(ns) do
        d = d * v
    end
    return d
end

-- x, weight, bias (each nil when absent) through F.layer_norm and the composite: the results
-- and the gradients of all three for one random output gradient
local function compare(shape, ns, dtype, with_w, with_b, tol)
    local x = leaf(randn(shape, dtype):mul(3):add(2))
    local w = with_w and leaf(randn(ns, dtype)) or nil
    local b = with_b and leaf(randn(ns, dtype)) or nil
    local gy = randn(shape, dtype)
    local y = F.layer_norm(x, ns, { weight = w, bias = b })
    assert.are.equal("layer_norm", y.grad_fn.name) -- one node
    y:mul(gy):sum():backward()
    local x2, w2, b2 = leaf(x), w and leaf(w), b and leaf(b)
    local y2 = composite(x2, numel(ns), w2, b2, 1e-5)
    y2:mul(gy):sum():backward()
    close(y, y2, tol)
    close(x.grad, x2.grad, tol)
    if w then
        close(w.grad, w2.grad, tol)
    end
    if b then
        close(b.grad, b2.grad, tol)
    end
end

describe("layer norm (fused) on " .. dev, function()
    it("equals the composite, forward and gradients, float32 and float64", function()
        local cases = {
            { { 4, 6 }, { 6 } }, { { 2, 3, 4 }, { 3, 4 } }, { { 7, 1 }, { 1 } },
            { { 3, 127 }, { 127 } }, { { 1, 1000 }, { 1000 } }, { { 300, 3 }, { 3 } },
            { { 2, 1500 }, { 1500 } }, -- past 1024: a block per row on cuda
        }
        tide.manual_seed(13)
        for _, dtype in ipairs({ "float32", "float64" }) do
            -- float32: the composite's own rounding over rows of 1500 reaches ~1e-4 (the two
            -- sum in different orders; an unseeded run once saw 7.8e-5 on the emulated GPU)
            local tol = dtype == "float32" and 2e-4 or 1e-10
            for k, c in ipairs(cases) do
                -- weight and bias alone on the small cases; the long rows (their own kernel
                -- paths) with neither and with both
                for affine = 0, 3, k <= 3 and 1 or 3 do
                    compare(c[1], c[2], dtype, affine % 2 == 1, affine >= 2, tol)
                end
            end
        end
    end)

    it("matches PyTorch 1.13 (torch.nn.functional.layer_norm, float64)", function()
        local x = leaf(tide.tensor({ { 0.5, -1.25, 2.0, 3.5, -0.75 },
            { 10.0, 10.5, 9.25, 11.0, 10.125 } }, { dtype = "float64", device = dev }))
        local w = leaf(tide.tensor({ 1.5, -0.5, 0.25, 2.0, 1.0 }, { dtype = "float64", device = dev }))
        local b = leaf(tide.tensor({ 0.1, 0.2, -0.3, 0.0, 0.5 }, { dtype = "float64", device = dev }))
        local g = tide.tensor({ { 1.0, -2.0, 0.5, 0.25, 3.0 }, { -1.0, 0.5, 2.0, -0.5, 1.5 } },
            { dtype = "float64", device = dev })
        local y = F.layer_norm(x, 5, { weight = w, bias = b })
        y:mul(g):sum():backward()
        local function t(v, shape)
            return tide.tensor(v, { dtype = "float64" }):view(shape)
        end
        close(y, t({ -0.156203008799759, 0.783573520043896, -0.129197994133494, 3.07443610559711,
            -0.382477030310282, -0.353524154463497, -0.080753048001213, -0.699533183694033,
            2.8507232566277, 0.413614446768858 }, { 2, 5 }), 1e-12)
        close(x.grad, t({ 0.0940058988936477, -0.555612648707096, -0.376023595574591,
            0.150291944178456, 0.687338401209583, -2.54562761530419, 0.223204581369639,
            -0.00399553490139581, -0.463385351202229, 2.78980392003817 }, { 2, 5 }), 1e-12)
        close(w.grad, t({ 0.131547430442492, 2.6150471281768, -2.85466145781925,
            -0.328376300957286, -2.77700942077756 }, { 5 }), 1e-12)
        close(b.grad, t({ 0, -1.5, 2.5, -0.25, 4.5 }, { 5 }), 1e-12)
    end)

    it("passes gradcheck in float64 (x, weight, bias)", function()
        local x = leaf(randn({ 3, 2, 4 }, "float64"))
        local w = leaf(randn({ 2, 4 }, "float64"))
        local b = leaf(randn({ 2, 4 }, "float64"))
        assert.is_true(gradcheck(function(a, ww, bb)
            return F.layer_norm(a, { 2, 4 }, { weight = ww, bias = bb, eps = 1e-3 })
        end, { x, w, b }))
        assert.is_true(gradcheck(function(a)
            return F.layer_norm(a, 4)
        end, { leaf(randn({ 5, 4 }, "float64")) }))
    end)

    it("differentiates twice (create_graph takes the composite formula)", function()
        local x = leaf(randn({ 3, 5 }, "float64"))
        local w = leaf(randn({ 5 }, "float64"))
        local b = leaf(randn({ 5 }, "float64"))
        local gy, v = randn({ 3, 5 }, "float64"), randn({ 3, 5 }, "float64")
        local function second(fn)
            local xx, ww, bb = leaf(x), leaf(w), leaf(b)
            local y = fn(xx, ww, bb)
            local gs = autograd.grad(y:mul(gy):sum(), { xx, ww }, { create_graph = true })
            local s = gs[1]:mul(v):sum():add(gs[2]:mul(gs[2]):sum())
            return autograd.grad(s, { xx, ww, bb }, { allow_unused = true })
        end
        local got = second(function(a, ww, bb)
            return F.layer_norm(a, 5, { weight = ww, bias = bb })
        end)
        local want = second(function(a, ww, bb)
            return composite(a, 5, ww, bb, 1e-5)
        end)
        close(got[1], want[1], 1e-10)
        close(got[2], want[2], 1e-10)
    end)

    it("keeps nn.LayerNorm, elementwise_affine = false, weight without bias and group_norm", function()
        local x = randn({ 4, 3, 5 })
        local ln = nn.LayerNorm({ 3, 5 }):to(dev)
        close(ln(x), composite(x, 15, ln.weight, ln.bias, 1e-5), 2e-5)
        local plain = nn.LayerNorm(5, { elementwise_affine = false }):to(dev)
        close(plain(x), composite(x, 5, nil, nil, 1e-5), 2e-5)
        local w = randn({ 5 })
        close(F.layer_norm(x, 5, { weight = w, eps = 1e-3 }), composite(x, 5, w, nil, 1e-3), 2e-5)
        local g = F.group_norm(x, 3)
        close(g, composite(x:reshape(4, 3, -1), 5, nil, nil, 1e-5):view(x.shape), 2e-5)
        -- a negative eps (which the kernel refuses): the composite, as before
        local yn = F.layer_norm(leaf(x), 5, { eps = -1e-6 })
        assert.are_not.equal("layer_norm", yn.grad_fn.name)
        close(yn, composite(x, 5, nil, nil, -1e-6), 2e-5)
        -- a float64 weight on a float32 input raises, as PyTorch's (spec/layer_dtypes_spec.lua)
        local w64 = randn({ 5 }, "float64")
        assert.has_error(function() F.layer_norm(x, 5, { weight = w64 }) end,
            "tide: layer_norm: the input is float32 and the weight float64; convert the " ..
            "input (x:to(\"float64\")) or the weight (weight:to(\"float32\"))")
    end)

    it("raises the core's errors at the caller's line, tensors unchanged", function()
        local x = randn({ 3, 4 })
        local ok, err = pcall(K.layer_norm, x, nil, nil, 5, 1e-5)
        assert.is_false(ok)
        assert.are.equal("spec/layer_norm_spec.lua:" .. (debug.getinfo(1, "l").currentline - 2) ..
            ": tide: layer_norm: x of shape [3, 4] does not split into rows of d = 5 elements",
            err)
        local xg = leaf(x)
        ok, err = pcall(K.layer_norm, xg, nil, nil, 4, 1e-5)
        assert.is_false(ok)
        assert.matches("tide: layer_norm: not differentiable: argument #1 requires grad", err,
            1, true)
        local m, r = randn({ 3 }), randn({ 3 })
        ok, err = pcall(K.layer_norm_backward, x, randn({ 4, 3 }), m, r, nil, 4, true)
        assert.is_false(ok)
        assert.matches("tide: layer_norm_backward: dy of shape [4, 3] must have x's shape [3, 4]",
            err, 1, true)
        assert.are.same({ 3, 4 }, x.shape)
    end)
end)

-- the composite gradients softmax and log_softmax had before the kernel: the reference
local function softmax_grad(y, g, dim, log)
    if log then
        return g:sub(y:exp():mul(g:sum(dim, true)))
    end
    return y:mul(g:sub(g:mul(y):sum(dim, true)))
end

describe("softmax backward (one pass) on " .. dev, function()
    it("equals the composite over dims 1, -1 and a middle dim, on non-contiguous input", function()
        for _, log in ipairs({ false, true }) do
            local op = log and "log_softmax" or "softmax"
            for _, dtype in ipairs({ "float32", "float64" }) do
                local tol = dtype == "float32" and 1e-5 or 1e-12
                for _, dim in ipairs({ 1, -1, 2 }) do
                    local x0 = leaf(randn({ 5, 4, 3 }, dtype))
                    local x = x0:transpose(1, 3) -- [3, 4, 5], strided
                    local y = x[op](x, dim)
                    local gy = randn({ 5, 4, 3 }, dtype):transpose(1, 3)
                    y:mul(gy):sum():backward()
                    local want = softmax_grad(y:detach(), gy, dim, log):transpose(1, 3)
                    close(x0.grad, want, tol)
                end
            end
        end
        -- rows past 1024 (a block per row on cuda)
        local xl = leaf(randn({ 2, 1100 }))
        local yl = xl:softmax(2)
        local gl = randn({ 2, 1100 })
        yl:mul(gl):sum():backward()
        close(xl.grad, softmax_grad(yl:detach(), gl, 2, false), 1e-5)
        -- an expanded gradient (stride 0 along the dim: sum's)
        local x = leaf(randn({ 3, 6 }))
        x:log_softmax(2):sum():backward()
        local y = x:detach():log_softmax(2)
        close(x.grad, softmax_grad(y, tide.ones({ 3, 6 }, { device = dev }), 2, true), 1e-5)
    end)

    it("over a dim with lines 8 and more apart (the CPU's blocks of columns) equals the softmax " ..
        "along the last dim, and its gradient the composite", function()
        for _, log in ipairs({ false, true }) do
            local op = log and "log_softmax" or "softmax"
            for _, shape in ipairs({ { 2, 5, 17 }, { 3, 4, 70 }, { 1, 9, 8 } }) do
                local x = randn(shape)
                x:select(1, 1):select(1, 2):select(1, 3):fill_(-math.huge) -- a masked entry
                local y = x[op](x, 2)
                local want = x:transpose(2, 3):contiguous()[op](x:transpose(2, 3):contiguous(), 3)
                want = want:transpose(2, 3)
                if log then -- (the masked entry's -inf compared as exp's 0)
                    y, want = y:exp(), want:exp()
                end
                close(y, want, 1e-6)
                y = x[op](x, 2)
                local xl = leaf(x)
                local gy = randn(shape)
                xl[op](xl, 2):mul(gy):sum():backward()
                close(xl.grad, softmax_grad(y, gy, 2, log), 1e-5)
            end
            -- a NaN makes its line NaN, and only its line
            local x = randn({ 2, 3, 9 })
            x:select(1, 2):select(1, 1):select(1, 4):fill_(0 / 0)
            local y = x[op](x, 2):cpu()
            for i = 1, 3 do
                local v = y[2][i][4]:item()
                assert.is_true(v ~= v, op .. " NaN line " .. i)
                assert.is_true(y[2][i][5]:item() == y[2][i][5]:item(), op .. " next line")
            end
        end
    end)

    it("differentiates twice (create_graph takes the composite formula)", function()
        for _, op in ipairs({ "softmax", "log_softmax" }) do
            local x = leaf(randn({ 3, 4 }, "float64"))
            local gy, v = randn({ 3, 4 }, "float64"), randn({ 3, 4 }, "float64")
            local function second(fn)
                local xx = leaf(x)
                local g = autograd.grad(fn(xx):mul(gy):sum(), xx, { create_graph = true })[1]
                return autograd.grad(g:mul(v):sum(), xx)[1]
            end
            local got = second(function(a)
                return a[op](a, 2)
            end)
            local want = second(function(a)
                local e = a:exp()
                local p = e:div(e:sum(2, true))
                return op == "softmax" and p or p:log()
            end)
            close(got, want, 1e-10)
        end
    end)

    it("passes gradcheck in float64", function()
        for _, op in ipairs({ "softmax", "log_softmax" }) do
            assert.is_true(gradcheck(function(a)
                return a[op](a, 2)
            end, { leaf(randn({ 2, 5, 3 }, "float64")) }))
        end
    end)

    it("raises the core's errors at the caller's line", function()
        local a, b = randn({ 3, 4 }), randn({ 4, 3 })
        local ok, err = pcall(K.softmax_backward, a, b, 4, 1, 0)
        assert.is_false(ok)
        assert.are.equal("spec/layer_norm_spec.lua:" .. (debug.getinfo(1, "l").currentline - 2) ..
            ": tide: softmax_backward: g of shape [4, 3] must have y's shape [3, 4]", err)
        ok, err = pcall(K.softmax_backward, a, a, 4, 3, 1)
        assert.is_false(ok)
        assert.matches("tide: softmax_backward: inner 3 does not divide the row's 4", err, 1, true)
    end)
end)
