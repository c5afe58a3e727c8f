-- fast_paths_spec.lua — the CPU's fast paths give what the general loops gave, and PyTorch
-- 1.13's values: pow by 2, 3, -2, 0.5, -0.5 and -1 (products, a square root, a reciprocal,
-- as PyTorch's pow_tensor_scalar), a row's max / min / argmax / argmin (one SIMD reduction and a
-- NaN flag, then a scan for the first), full sums, means, maxima and minima of 65,536 elements
-- and more (chunks on the threads), and clamp's contiguous rows. Each case runs on a row long
-- enough for its fast path and on a strided view (the general loop), float32 and float64.
local tide = require("tide")
-- -0, made at run time: PUC 5.1 and LuaJIT keep one constant for 0 and -0 in a function
local NZ = -1 / math.huge

local function list(t)
    return t:to("float64"):totable()
end

-- equal, NaN to NaN and -0 to -0
local function same(want, got, what)
    assert.are.equal(#want, #got, what)
    for i = 1, #want do
        local w, g = want[i], got[i]
        local ok = (w ~= w and g ~= g) or (w == g and (w ~= 0 or 1 / w == 1 / g))
        assert(ok, ("%s[%d]: want %s, got %s"):format(what, i, tostring(w), tostring(g)))
    end
end

describe("CPU fast paths", function()
    it("pow by PyTorch's special exponents: its values at -0, -inf, 4, 0, -4", function()
        local inf, nan = math.huge, 0 / 0
        -- PyTorch 1.13: torch.tensor([-0., -inf, 4., 0., -4.]).pow(e)
        local want = {
            [0.5] = { NZ, nan, 2, 0, nan }, [-0.5] = { -inf, nan, 0.5, inf, nan },
            [-1] = { -inf, NZ, 0.25, inf, -0.25 }, [-2] = { inf, 0, 0.0625, inf, 0.0625 },
            [2] = { 0, inf, 16, 0, 16 }, [3] = { NZ, -inf, 64, 0, -64 },
        }
        for _, dt in ipairs({ "float32", "float64", "float16", "bfloat16" }) do
            local x = tide.tensor({ NZ, -inf, 4, 0, -4 }, { dtype = dt })
            -- the same values every 3rd element of a longer tensor: a strided row
            local strided = x:view(5, 1):expand(5, 3):contiguous():view(-1)
            strided = strided:as_strided({ 5 }, { 3 })
            for e, w in pairs(want) do
                same(w, list(x:pow(e)), dt .. " pow " .. e)
                same(w, list(strided:pow(e)), dt .. " strided pow " .. e)
            end
        end
        -- and the general path's values elsewhere: a million floats, pow(2) against x * x
        local x = tide.arange(1000000, { dtype = "float32" }):sin():mul(8)
        assert.is_true(tide.equal(x:pow(2), x * x))
        assert.is_true(tide.equal(x:pow(-1), x:reciprocal()))
        assert.is_true(tide.equal(x:abs():pow(0.5), x:abs():sqrt()))
    end)

    it("max and min of whole rows: NaN, -0 / +0 first wins, in the SIMD and chunked paths", function()
        for _, dt in ipairs({ "float32", "float64" }) do
            for _, n in ipairs({ 40, 100000 }) do
                local x = tide.arange(n, { dtype = dt }):sin()
                local mx, mn = x:max():item(), x:min():item()
                -- the values the index-keeping loop finds
                local vmx, imx = x:max(1)
                local vmn = x:min(1)
                assert.are.equal(vmx:item(), mx)
                assert.are.equal(vmn:item(), mn)
                assert.are.equal(mx, x[imx:item()]:item())
                -- a NaN anywhere wins
                local y = x:clone()
                y[n - 3] = 0 / 0
                assert.is_true(y:max():item() ~= y:max():item())
                assert.is_true(y:min():item() ~= y:min():item())
                -- all zeros of both signs: the first wins (-0 here, then +0)
                local z = tide.zeros(n, { dtype = dt })
                z:narrow(1, 1, 2):neg_()
                assert.are.equal(-math.huge, 1 / z:max():item(), dt .. " " .. n)
                assert.are.equal(-math.huge, 1 / z:min():item(), dt .. " " .. n)
                z:narrow(1, 1, 1):neg_()
                assert.are.equal(math.huge, 1 / z:max():item(), dt .. " " .. n)
                assert.are.equal(math.huge, 1 / z:min():item(), dt .. " " .. n)
            end
        end
    end)

    it("argmax / argmin and max / min along a dim: the first extreme's index", function()
        for _, dt in ipairs({ "float32", "float64" }) do
            for _, n in ipairs({ 40, 100000 }) do
                local x = tide.zeros(n, { dtype = dt })
                x[7], x[n - 1], x[9], x[n] = 5, 5, -5, -5 -- ties: the first wins
                assert.are.equal(7, x:argmax():item())
                assert.are.equal(9, x:argmin():item())
                local v, i = x:view(1, n):max(2)
                assert.are.same({ 5, 7 }, { v:item(), i:item() })
                v, i = x:view(1, n):min(2)
                assert.are.same({ -5, 9 }, { v:item(), i:item() })
                x[n - 2], x[n - 3] = 0 / 0, 0 / 0 -- a NaN wins, the first of them
                assert.are.equal(n - 3, x:argmax():item())
                assert.are.equal(n - 3, x:argmin():item())
                -- zeros of both signs: the first, and its sign
                local z = tide.zeros(n, { dtype = dt })
                z:narrow(1, 3, 2):neg_()
                z[1] = -1
                v, i = z:view(1, n):max(2)
                assert.are.equal(2, i:item())
                assert.are.equal(math.huge, 1 / v:item())
                z[2] = -1
                v, i = z:view(1, n):max(2)
                assert.are.equal(3, i:item())
                assert.are.equal(-math.huge, 1 / v:item())
            end
        end
    end)

    it("full sums and means in chunks: the double-precision sum, for any thread count", function()
        local n = 300001
        local x = tide.arange(n, { dtype = "float64" }):mul(0.37):sin()
        local exact = 0
        local v = x:totable()
        for i = 1, n do
            exact = exact + v[i]
        end
        assert.is_true(math.abs(x:sum():item() - exact) < 1e-9)
        assert.is_true(math.abs(x:mean():item() - exact / n) < 1e-14)
        local f = x:float()
        assert.is_true(math.abs(f:sum():item() - f:double():sum():item()) < 1e-3)
        -- a strided row (no chunks) agrees
        local s = tide.stack({ x, x }, 2)[{ {}, 1 }]
        assert.is_true(math.abs(s:sum():item() - x:sum():item()) < 1e-9)
    end)

    it("clamp of contiguous and strided rows", function()
        local x = tide.tensor({ -3, -1, 0, 0.5, 2, 0 / 0 }, { dtype = "float32" })
        same({ -1, -1, 0, 0.5, 1, 0 / 0 }, list(x:clamp(-1, 1)), "clamp")
        local w = tide.stack({ x, x }, 2)[{ {}, 2 }]
        same({ -1, -1, 0, 0.5, 1, 0 / 0 }, list(w:clamp(-1, 1)), "strided clamp")
    end)
end)

describe("pow by the special exponents: cuda against cpu #cuda", function()
    it("the same edges and values (-0, -inf, 0, 4, -4, a range)", function()
        if not tide.cuda.is_available() then
            pending("no CUDA device")
            return
        end
        local vals = { NZ, -math.huge, 0, 4, -4, 0.37, 1e-3, 123.5 }
        for _, dt in ipairs({ "float32", "float64" }) do
            local x = tide.tensor(vals, { dtype = dt })
            local xg = x:to("cuda")
            for _, e in ipairs({ 2, 0.5, -0.5, -1 }) do
                same(list(x:pow(e)), list(xg:pow(e):cpu()), dt .. " cuda pow " .. e)
            end
            -- 3 and -2: pow on the GPU, within its rounding of the CPU's products
            for _, e in ipairs({ 3, -2 }) do
                assert.is_true(tide.allclose(x:pow(e), xg:pow(e):cpu(), 1e-6, 0, true))
            end
        end
    end)
end)
