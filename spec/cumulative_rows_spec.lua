-- cumulative_rows_spec.lua — cumprod, cummax, cummin and logcumsumexp through their kernel rows
-- (include/tide_kernels.def) on the device under test (spec/support/device.lua), against
-- PyTorch 1.13's values: along a dim with columns after it (inner > 1) and along the last,
-- integer products wrapping in int64, the NaN and tie rules of cummax and cummin, bool and uint8
-- inputs, logcumsumexp's infinities and NaN, its gradient (PyTorch's logcumsumexp_backward),
-- and the Hillis-Steele scans they replace giving the same values.
local tide = require("tide")
local core = require("tide.core")
local D = require("spec.support.device")
local inf, nan = math.huge, 0 / 0

local dev = D.name
local function host(t)
    return t:to("cpu"):totable()
end

-- a and b agree elementwise to tol (NaN where NaN, infinities equal)
local function close(want, got, tol, what)
    if type(want) == "table" then
        assert.are.equal(#want, #got, what)
        for i = 1, #want do
            close(want[i], got[i], tol, (what or "") .. "[" .. i .. "]")
        end
        return
    end
    if want ~= want then
        assert.is_true(got ~= got, what .. ": expected NaN, got " .. tostring(got))
    elseif want == inf or want == -inf then
        assert.are.equal(want, got, what)
    else
        assert.is_true(math.abs(want - got) <= tol * math.max(1, math.abs(want)),
            ("%s: %.17g, PyTorch %.17g"):format(what, got, want))
    end
end

describe("cumulative kernel rows on " .. dev, function()
    local X = { { 0.5, -2.0, 3.0 }, { 1.5, 0.0, -1.0 }, { 2.0, 4.0, 0.25 }, { -1.0, 1.0, 2.0 } }

    it("cumprod along each dim, and integers in int64", function()
        local x = tide.tensor(X, { device = dev })
        close({ { 0.5, -2.0, 3.0 }, { 0.75, 0, -3.0 }, { 1.5, 0, -0.75 }, { -1.5, 0, -1.5 } },
            host(x:cumprod(1)), 1e-7, "dim 1")
        close({ { 0.5, -1, -3 }, { 1.5, 0, 0 }, { 2, 8, 2 }, { -1, -1, -2 } }, host(x:cumprod(2)),
            1e-7, "dim 2")
        local i = tide.tensor({ 65536, 65536, 3, -7 }, { dtype = "int32", device = dev })
        local p = i:cumprod(1)
        assert.are.equal("int64", p.dtype)
        assert.are.same({ 65536, 4294967296, 12884901888, -90194313216 }, host(p))
        -- float16 runs in float32, rounded once
        local h = tide.tensor({ 0.5, 1.5, 2.5 }, { dtype = "float16", device = dev }):cumprod(1)
        assert.are.equal("float16", h.dtype)
        close({ 0.5, 0.75, 1.875 }, host(h:float()), 0, "float16")
    end)

    it("cummax and cummin: a NaN takes over, the later index among equals", function()
        local y = tide.tensor({ { 2.0, nan, 1.0 }, { 2.0, 1.0, nan }, { 1.0, 3.0, 0.0 },
            { 2.0, 3.0, 5.0 } }, { device = dev })
        local v, i = y:cummax(1)
        close({ { 2, nan, 1 }, { 2, nan, nan }, { 2, nan, nan }, { 2, nan, nan } }, host(v), 0, "max")
        assert.are.same({ { 1, 1, 1 }, { 2, 1, 2 }, { 2, 1, 2 }, { 4, 1, 2 } }, host(i))
        v, i = y:cummin(1)
        close({ { 2, nan, 1 }, { 2, nan, nan }, { 1, nan, nan }, { 1, nan, nan } }, host(v), 0, "min")
        assert.are.same({ { 1, 1, 1 }, { 2, 1, 2 }, { 3, 1, 2 }, { 3, 1, 2 } }, host(i))
        -- along the last dim, float64 and int64
        local z = tide.tensor({ { 1, 3, 2, 3 }, { 5, 4, 5, 1 } }, { dtype = "float64", device = dev })
        v, i = z:cummax(2)
        assert.are.same({ { 1, 3, 3, 3 }, { 5, 5, 5, 5 } }, host(v))
        assert.are.same({ { 1, 2, 2, 4 }, { 1, 1, 3, 3 } }, host(i))
        v, i = z:to("int64"):cummin(-1)
        assert.are.equal("int64", v.dtype)
        assert.are.same({ { 1, 1, 1, 1 }, { 5, 4, 4, 1 } }, host(v))
        assert.are.same({ { 1, 1, 1, 1 }, { 1, 2, 2, 4 } }, host(i))
    end)

    it("cummax and cummin of bool and uint8 keep their dtype", function()
        local b = tide.tensor({ false, true, false, true }, { device = dev })
        local v, i = b:cummax(1)
        assert.are.equal("bool", v.dtype)
        assert.are.same({ false, true, true, true }, host(v))
        assert.are.same({ 1, 2, 2, 4 }, host(i))
        local u = tide.tensor({ 3, 1, 3, 2 }, { dtype = "uint8", device = dev })
        v, i = u:cummin(1)
        assert.are.equal("uint8", v.dtype)
        assert.are.same({ 3, 1, 1, 1 }, host(v))
        assert.are.same({ 1, 2, 2, 2 }, host(i))
    end)

    it("cummax's gradient reaches the element taken", function()
        -- float32 spelled out: 1.0 is an integer to Lua 5.1 and LuaJIT
        local F32 = { dtype = "float32", device = dev }
        local x = tide.tensor({ 1.0, 3.0, 2.0, 3.0 }, { dtype = "float32", requires_grad = true,
            device = dev })
        local v = x:cummax(1)
        v:backward(tide.tensor({ 1.0, 2.0, 4.0, 8.0 }, F32))
        assert.are.same({ 1, 6, 0, 8 }, host(x.grad))
    end)

    it("logcumsumexp: infinities and NaN as PyTorch's", function()
        local z = tide.tensor({ { -inf, -inf, 1.0, inf, inf, 2.0 },
            { 1000.0, 1000.0, -1000.0, nan, 0.0, 3.0 } }, { dtype = "float64", device = dev })
        close({ { -inf, -inf, 1.0, inf, inf, inf },
            { 1000.0, 1000.6931471805599, 1000.6931471805599, nan, nan, nan } },
            host(z:logcumsumexp(2)), 1e-15, "float64")
        close({ { -inf, -inf, 1.0, inf, inf, inf },
            { 1000.0, 1000.6931471805599, 1000.6931471805599, nan, nan, nan } },
            host(z:float():logcumsumexp(-1)), 1e-7, "float32")
    end)

    it("logcumsumexp's gradient is PyTorch's", function()
        local w = tide.tensor({ { 0.3, -1.2, 2.0 }, { 0.7, 0.1, -0.4 } },
            { requires_grad = true, device = dev })
        local out = w:logcumsumexp(1)
        close({ { 0.30000001192092896, -1.2000000476837158, 2.0 },
            { 1.2130151987075806, 0.3410084545612335, 2.086836099624634 } }, host(out), 1e-6, "out")
        out:backward(tide.tensor({ { 1.0, -2.0, 0.5 }, { 0.0, 3.0, -1.0 } },
            { dtype = "float32", device = dev }))
        close({ { 1.0, -1.357504963874817, -0.41682732105255127 },
            { 0.0, 2.3575050830841064, -0.08317269384860992 } }, host(w.grad), 1e-5, "grad")
        -- and its second derivative through the recorded formula (create_graph)
        local x = tide.tensor({ 0.2, -0.5, 1.0 }, { dtype = "float64", requires_grad = true,
            device = dev })
        local ok, bad = require("tide.autograd").gradcheck(function(t)
            return t:logcumsumexp(1)
        end, { x })
        assert.is_true(ok, tostring(bad))
    end)

    it("give the scans' values on a long row and on many columns", function()
        local x = tide.arange(5000, { dtype = "float64", device = dev }):mul(0.37):sin()
        local m = x:view(50, 100)
        for _, case in ipairs({ { x, 1 }, { m, 1 }, { m, 2 } }) do
            local t, d = case[1], case[2]
            local v, i = t:cummax(d)
            assert.are.equal(0, v:sub(t:gather(d, i)):abs():max():item())
            -- the running max never falls, and ends at the max along d
            local len = t:size(d)
            assert.is_true(v:narrow(d, 2, len - 1):ge(v:narrow(d, 1, len - 1)):all():item())
            local top = (t:max(d, true))
            assert.are.equal(0, v:narrow(d, len, 1):sub(top):abs():max():item())
            local lse = t:logcumsumexp(d)
            local direct = t:exp():cumsum(d):log()
            assert.is_true(lse:sub(direct):abs():max():item() < 1e-12)
            local p = t:mul(0.01):add(1):cumprod(d)
            local viaexp = t:mul(0.01):add(1):log():cumsum(d):exp()
            assert.is_true(p:sub(viaexp):abs():div(viaexp:abs()):max():item() < 1e-12)
        end
    end)

    it("lists the rows with an int64 index output", function()
        local r = core._kernels.cummax
        assert.are.same({ "values", "indices" }, r.outputs)
        assert.are.same({ false, true }, r.outputs_index)
        assert.are.same({ true, false }, r.outputs_optional)
    end)
end)
