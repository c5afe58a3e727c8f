-- GELU on the device under test: the float32 forward (vec_math.h's on the CPU) and the one-pass
-- gradient kernel (tide._internal.gelu_backward, autograd's BW.gelu) against float64 references
-- built from erfc, its values at +-inf, NaN and 0, and the second derivative under create_graph,
-- which records the gradient's ops instead of calling the kernel.
local tide = require("tide")
local autograd = require("tide.autograd")
local core = require("tide.core")
local K = core._internal -- the internal kernels (tide._internal in docs/API.md)
local D = require("spec.support.device")

-- xs from -8 to 8 (and the tails at +-12), as a float64 CPU tensor
local function points()
    local xs = {}
    for i = -800, 800 do
        xs[#xs + 1] = i / 100
    end
    xs[#xs + 1], xs[#xs + 2] = -12, 12
    return tide.tensor(xs, { dtype = "float64" })
end

-- Phi(x) and phi(x) in float64 on the CPU
local function cdf(x)
    return x:mul(-1 / math.sqrt(2)):erfc():mul(0.5)
end
local function pdf(x)
    return x:mul(x):mul(-0.5):exp():mul(1 / math.sqrt(2 * math.pi))
end

local function worst(got, want, floor)
    local err = got:cpu():to("float64"):sub(want):abs():div(want:abs():clamp(floor or 1e-30, nil))
    return err:max():item()
end

describe("GELU on " .. D.name, function()
    it("float32 forward within 2e-6 of x Phi(x) where |x| < 4, 2e-5 in the tails", function()
        local x = points()
        local want = x:mul(cdf(x))
        local got = x:to("float32"):to(D.name):gelu()
        local near = x:abs():lt(4)
        assert.is_true(worst(got, want, 1e-30) < 2e-5)
        local g32 = got:cpu():to("float64")
        local rel = g32:sub(want):abs():div(want:abs():clamp(1e-30, nil))
        assert.is_true(rel:masked_select(near):max():item() < 2e-6)
    end)

    for _, dtype in ipairs({ "float32", "float64" }) do
        it("its gradient is g (Phi(x) + x phi(x)) in one pass, " .. dtype, function()
            local x = points()
            local g = tide.linspace(-2, 3, x:numel(), { dtype = "float64" })
            local want = g:mul(cdf(x):add(x:mul(pdf(x))))
            local xd = x:to(dtype):to(D.name):clone():requires_grad_(true)
            xd:gelu():backward(g:to(dtype):to(D.name))
            local tol = dtype == "float32" and 1e-6 or 1e-12
            assert.is_true(xd.grad:cpu():to("float64"):sub(want):abs():max():item() < tol)
            local direct = K.gelu_backward(g:to(dtype):to(D.name), x:to(dtype):to(D.name))
            assert.are.equal(0, direct:sub(xd.grad):abs():max():item())
        end)
    end

    -- half tensors take the same one-pass kernels (autocast's bfloat16 GELU and ReLU): the
    -- gradient of the half inputs, computed wide and rounded once to the half dtype
    for _, dtype in ipairs({ "float16", "bfloat16" }) do
        it("its gradient and ReLU's in one pass, " .. dtype .. ", rounded once", function()
            local x = points():to(dtype):to("float64") -- the half inputs, exactly
            local g = tide.linspace(-2, 3, x:numel(), { dtype = "float64" }):to(dtype)
                :to("float64")
            local want = g:mul(cdf(x):add(x:mul(pdf(x))))
            local xd = x:to(dtype):to(D.name):requires_grad_(true)
            xd:gelu():backward(g:to(dtype):to(D.name))
            assert.are.equal(dtype, xd.grad.dtype)
            -- within one rounding to the dtype (2^-8 relative for bfloat16, 2^-11 for float16)
            local ulp = dtype == "bfloat16" and 2 ^ -8 or 2 ^ -11
            local err = xd.grad:cpu():to("float64"):sub(want):abs()
            assert.is_true(err:le(want:abs():mul(ulp):add(1e-7)):all():item(),
                dtype .. " gelu gradient off by " .. err:max():item())
            local direct = K.gelu_backward(g:to(dtype):to(D.name), x:to(dtype):to(D.name))
            assert.are.equal(0, direct:sub(xd.grad):abs():max():item())
            local xr = x:to(dtype):to(D.name):requires_grad_(true)
            xr:relu():backward(g:to(dtype):to(D.name))
            local rwant = tide.where(x:gt(0), g, 0):to(dtype)
            assert.are.same(rwant:totable(), xr.grad:cpu():totable())
        end)
    end

    it("keeps the limits: gradient 1 at +inf, 0 at -inf, 0.5 at 0, NaN at NaN", function()
        for _, dtype in ipairs({ "float32", "float64" }) do
            local x = tide.tensor({ math.huge, -math.huge, 0, 0 / 0 }, { dtype = dtype })
                :to(D.name):requires_grad_(true)
            x:gelu():sum():backward()
            local gr = x.grad:cpu():totable()
            assert.are.same({ 1, 0, 0.5 }, { gr[1], gr[2], gr[3] })
            assert.is_true(gr[4] ~= gr[4])
            assert.are.equal(math.huge, x:detach():gelu():cpu():totable()[1])
        end
    end)

    it("gives the second derivative phi(x) (2 - x^2) under create_graph", function()
        local x = tide.tensor({ -2.5, -0.7, 0, 0.3, 1.9 }, { dtype = "float64" })
        local xd = x:to(D.name):clone():requires_grad_(true)
        local g1 = autograd.grad(xd:gelu():sum(), xd, { create_graph = true })[1]
        local g2 = autograd.grad(g1:sum(), xd)[1]
        local want = pdf(x):mul(x:mul(x):neg():add(2))
        assert.is_true(g2:cpu():sub(want):abs():max():item() < 1e-12)
    end)

    it("refuses mixed dtypes with the fix", function()
        local ok, err = pcall(K.gelu_backward, tide.ones(2, { device = D.name }),
            tide.ones(2, { dtype = "float64", device = D.name }))
        assert.is_false(ok)
        assert.is_truthy(err:find("tide: gelu_backward: input must have grad_out's dtype float32, "
            .. "got float64", 1, true), err)
    end)
end)
