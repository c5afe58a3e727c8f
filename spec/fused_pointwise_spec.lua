-- fused_pointwise_spec.lua — addcmul, addcdiv and lerp (and their in-place forms) in one pass:
-- the kernel rows of include/tide_kernels.def, run where nothing records and the operands share
-- x's shape, float dtype and device; the compositions of mul, add, sub and div everywhere else.
-- PyTorch's formulas in its order of operations, on the device under test (docs/testing.md).
local tide = require("tide")
local D = require("spec.support.device")

local function on(v, dtype)
    return tide.tensor(v, { dtype = dtype or "float32", device = D.name })
end

local function host(t)
    return t:to("cpu"):to("float64"):totable()
end

-- the names of the ops f ran, from the profiler (a fused call shows no mul, add, sub or div)
local function ops_of(f)
    local names = {}
    local prof = tide.profiler.profile({}, f)
    for _, e in ipairs(prof:events()) do
        names[e.name] = (names[e.name] or 0) + 1
    end
    return names
end

local X, T1, T2 = { 1, 2, 3, -4 }, { 2, 0.5, -1, 8 }, { 0.25, 4, -2, 0.5 }

describe("addcmul, addcdiv and lerp in one pass (" .. D.name .. ")", function()
    for _, dt in ipairs({ "float32", "float64", "float16", "bfloat16" }) do
        it("give PyTorch's values in " .. dt, function()
            local x, a, b = on(X, dt), on(T1, dt), on(T2, dt)
            -- x + (0.5 t1) t2; x + (2 t1) / t2; x + w (end - x) below |w| = 0.5, end - (end -
            -- x)(1 - w) above (every value exact in each dtype)
            assert.are.same({ 1.25, 3, 4, -2 }, host(x:addcmul(a, b, { value = 0.5 })))
            assert.are.same({ 17, 2.25, 4, 28 }, host(x:addcdiv(a, b, { value = 2 })))
            assert.are.same({ 1.25, 1.625, 2, -1 }, host(x:lerp(a, 0.25)))
            assert.are.same({ 1.75, 0.875, 0, 5 }, host(x:lerp(a, 0.75)))
            local w = on({ 0, 0.25, 1, 2 }, dt)
            assert.are.same({ 1, 1.625, -1, 20 }, host(x:lerp(a, w)))
            assert.are.same({ 1.25, 3, 4, -2 }, host(tide.addcmul(x, a, b, { value = 0.5 })))
        end)
    end

    it("run as one kernel each, the in-place forms writing into x", function()
        local x, a, b = on(X), on(T1), on(T2)
        local w = on({ 0, 0.25, 1, 2 })
        local calls = {
            addcmul = function() return x:addcmul(a, b) end,
            addcdiv = function() return x:addcdiv(a, b, { value = 3 }) end,
            lerp = function() return x:lerp(a, 0.3) end,
            lerp_w = function() return x:lerp(a, w) end,
            addcmul_ = function() return x:clone():addcmul_(a, a) end,
            addcdiv_ = function() return x:clone():addcdiv_(a, b) end,
            lerp_ = function() return x:clone():lerp_(a, w) end,
        }
        for name, f in pairs(calls) do
            local ops = ops_of(f)
            for _, composed in ipairs({ "mul", "add", "sub", "div", "where", "copy_" }) do
                assert.is_nil(ops[composed], name .. " ran " .. composed)
            end
        end
        local y = x:clone()
        assert.are.equal(y, y:addcmul_(a, b, { value = 0.5 }))
        assert.are.same({ 1.25, 3, 4, -2 }, host(y))
        local s = tide.zeros(4, { device = D.name }) -- Adam's exp_avg_sq.addcmul_(grad, grad)
        s:addcmul_(a, a, { value = 0.5 })
        assert.are.same({ 2, 0.125, 0.5, 32 }, host(s))
    end)

    it("agree with the compositions on random values (addcdiv's order of operations aside)",
        function()
            tide.manual_seed(7)
            local n = 5000
            local x = tide.randn(n):to(D.name)
            local a, b = tide.randn(n):to(D.name), tide.rand(n):add(0.5):to(D.name)
            local w = tide.rand(n):mul(2):sub(0.5):to(D.name)
            local function close(got, want)
                assert.is_true(tide.allclose(got, want, 1e-6, 1e-6))
            end
            close(x:addcmul(a, b, { value = 0.3 }), x + a * 0.3 * b)
            close(x:addcdiv(a, b, { value = 0.3 }), x + a * 0.3 / b)
            close(x:lerp(a, 0.3), x + (a - x) * 0.3)
            close(x:lerp(a, 0.8), a - (a - x) * (1 - 0.8))
            close(x:lerp(a, w), tide.where(w:abs():lt(0.5), x + w * (a - x), a - (a - x) * (1 - w)))
        end)

    it("fall back to the compositions where the row does not apply, with the same values",
        function()
            local x, a = on(X), on(T1)
            -- broadcasting, a NaN value, an integer x, a mixed dtype
            assert.are.same({ 3, 2.5, 2, 4 }, host(x:addcmul(a, on({ 1 }))))
            assert.is_true(x:addcmul(a, a, { value = 0 / 0 }):isnan():all():item())
            assert.are.same({ 5, 3, 1, 12 }, host(on(X, "int64"):addcmul(on(T1), on({ 2 }))))
            assert.are.equal("float64", x:addcmul(a, on(T2, "float64")).dtype)
            -- in place into a non-contiguous x, and from an operand overlapping x's memory: the
            -- result computed whole, then written (x's old values read throughout)
            local m = on({ { 1, 2 }, { 3, 4 } }):t()
            m:addcmul_(on({ { 1, 1 }, { 1, 1 } }), on({ { 1, 1 }, { 1, 1 } }))
            assert.are.same({ { 2, 4 }, { 3, 5 } }, host(m))
            local base = on({ 0, 1, 2, 3, 4 })
            local v, shifted = base:narrow(1, 1, 4), base:narrow(1, 2, 4)
            v:addcmul_(shifted, on({ 1, 1, 1, 1 }))
            assert.are.same({ 1, 3, 5, 7, 4 }, host(base))
        end)

    it("record their gradients through the compositions", function()
        local x = on(X):requires_grad_()
        local a, b = on(T1):requires_grad_(), on(T2)
        x:addcmul(a, b, { value = 0.5 }):sum():backward()
        assert.are.same({ 1, 1, 1, 1 }, host(x.grad))
        assert.are.same({ 0.125, 2, -1, 0.25 }, host(a.grad))
        local y = on(X):requires_grad_()
        y:lerp(on(T1), 0.25):sum():backward()
        assert.are.same({ 0.75, 0.75, 0.75, 0.75 }, host(y.grad))
    end)

    it("raise the compositions' errors for operands on two devices", function()
        local x = on(X)
        local elsewhere = tide.tensor(T1, { device = D.other })
        assert.has_error(function() x:addcmul(elsewhere, elsewhere) end)
        local ok, err = pcall(x.addcmul, x, elsewhere, elsewhere)
        assert.is_false(ok)
        assert.truthy(tostring(err):find("tide: addcmul:", 1, true))
        assert.are.same(X, host(x))
    end)
end)
