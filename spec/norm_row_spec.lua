-- norm_row_spec.lua — x:norm(2, dim) over the last dim by the row_norm2 kernel row (one pass,
-- no squared copy of x), on the device under test (docs/testing.md): values in each float
-- dtype, keepdim, the gradient (0 at a zero row, as PyTorch's), F.normalize, and the other dims
-- by the ops, with the same values.
local tide = require("tide")
local D = require("spec.support.device")

local function on(v, dtype)
    return tide.tensor(v, { dtype = dtype or "float32", device = D.name })
end

local function host(t)
    return t:to("cpu"):to("float64"):totable()
end

local ROWS = { { 3, 4 }, { 6, -8 }, { 0, 0 } }

describe("norm(2, dim) over the last dim (" .. D.name .. ")", function()
    for _, dt in ipairs({ "float32", "float64", "float16", "bfloat16" }) do
        it("gives each row's 2-norm in " .. dt, function()
            local x = on(ROWS, dt)
            assert.are.same({ 5, 10, 0 }, host(x:norm(2, 2)))
            assert.are.same({ { 5 }, { 10 }, { 0 } }, host(x:norm(2, -1, true)))
            assert.are.same({ 5, 10, 0 }, host(tide.norm(x, 2, 2)))
            assert.are.equal(dt, x:norm(2, 2).dtype)
        end)
    end

    it("runs one kernel, and agrees with the sum of squares on random rows", function()
        tide.manual_seed(5)
        local x = tide.randn(37, 300):to(D.name)
        local want = (x:double() * x:double()):sum(2):sqrt()
        assert.is_true(tide.allclose(x:norm(2, 2):double(), want, 1e-6, 0))
        local x64 = x:double()
        assert.is_true(tide.allclose(x64:norm(2, 2), want, 1e-14, 0))
        local names = {}
        local prof = tide.profiler.profile({}, function() return x:norm(2, 2) end)
        for _, e in ipairs(prof:events()) do
            names[e.name] = true
        end
        assert.is_nil(names.mul)
        assert.is_nil(names.sum)
        -- a 3-D tensor's last dim; the first dim by the ops, with the same values
        local y = on({ { { 1, 2, 2 } }, { { 0, 3, 4 } } })
        assert.are.same({ { 3 }, { 5 } }, host(y:norm(2, 3)))
        assert.is_true(tide.allclose(on(ROWS):norm(2, 1), on({ math.sqrt(45), math.sqrt(80) }),
            1e-6, 0))
    end)

    it("keeps the gradient x / norm, 0 at a zero row; F.normalize", function()
        local x = on(ROWS):requires_grad_()
        x:norm(2, 2):sum():backward()
        assert.are.same({ { 0.6, 0.8 }, { 0.6, -0.8 }, { 0, 0 } }, host(x.grad:double():mul(10)
            :round():div(10)))
        local n = tide.nn.functional.normalize(on(ROWS), 2, 2)
        assert.is_true(tide.allclose(n, on({ { 0.6, 0.8 }, { 0.6, -0.8 }, { 0, 0 } }), 1e-6, 0))
    end)
end)
