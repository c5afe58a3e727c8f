-- reduce_paths_spec.lua — the CPU reductions' faster paths give the values of the plain ones:
-- float32 sums in blocks (float32 lanes, double across blocks: src/cpu/reduce.c), max / min
-- without indices (amax, amin, logsumexp: _internal.max_values), column maxima read row by row,
-- and amax over every dim as one reduction.
local tide = require("tide")

local NAN = 0 / 0

-- a and b equal, NaN where the other has NaN
local function same(a, b)
    assert.are.same(a:isnan():tolist(), b:isnan():tolist())
    assert.are.same(a:nan_to_num():tolist(), b:nan_to_num():tolist())
end

describe("the CPU reductions' fast paths", function()
    it("sum float32 rows of every length within a few float32 roundings of the float64 sum",
        function()
        tide.manual_seed(3)
        for _, n in ipairs({ 1, 31, 32, 255, 256, 257, 1000, 4096 + 17, 100003, 1000000 }) do
            local x = tide.rand(n) * 2 - 0.9
            local exact = x:double():sum():item()
            local got = x:sum():item()
            -- float32's spacing at the sum: lanes of 8 float32 partials, then double, err by
            -- about one spacing whatever n (PyTorch's float32 cascade sum: more with n)
            local ulp = 2 ^ (math.floor(math.log(math.abs(exact)) / math.log(2)) - 23)
            assert.is_true(math.abs(got - exact) <= 4 * ulp,
                ("n = %d: %.9g against %.9g"):format(n, got, exact))
        end
        -- along rows (dim 2) and a mean, each row's own
        local r = tide.rand(7, 1000)
        local want = r:double():sum(2):float()
        assert.is_true((r:sum(2) - want):abs():max():item() <= 1e-4)
        assert.is_true((r:mean(2) - r:double():mean(2):float()):abs():max():item() <= 1e-7)
        -- a NaN or an infinity anywhere in a block: PyTorch's result
        local z = tide.ones(1000)
        z[700] = NAN
        assert.is_true(z:sum():isnan():item())
        z[700] = math.huge
        assert.are.equal(math.huge, z:sum():item())
    end)

    it("amax and amin over one dim are max's and min's values, NaN and all", function()
        tide.manual_seed(4)
        for _, dtype in ipairs({ "float32", "float64" }) do
            local x = tide.randn(37, 53, 3, { dtype = dtype })
            x[{ 5, 7, 2 }], x[{ 1, 1, 1 }], x[{ 2, 3, 1 }], x[{ 9, 3, 1 }] = NAN, NAN, 1e30, 1e30
            for d = 1, 3 do
                same(x:amax(d), (x:max(d)))
                same(x:amin(d), (x:min(d)))
                same(x:amax(d, true), (x:max(d, true)))
            end
            -- columns read row by row: contiguous rows, and a transposed (strided) input
            local y = tide.randn(64, 300, { dtype = dtype })
            y[{ 10, 200 }] = NAN
            same(y:amax(1), (y:max(1)))
            same(y:amin(1), (y:min(1)))
            same(y:t():amax(2), (y:t():max(2)))
            assert.are.equal(1, y:amax(1):isnan():sum():item())
        end
    end)

    it("max and min of a long row: the extreme, a NaN anywhere, the first of -0.0 and 0.0",
        function()
            tide.manual_seed(5)
            for _, dtype in ipairs({ "float32", "float64" }) do
                for _, n in ipairs({ 16, 33, 100, 1000, 70001 }) do
                    local x = tide.randn(n, { dtype = dtype })
                    local sorted = x:sort()
                    assert.are.equal(sorted[n]:item(), x:max():item())
                    assert.are.equal(sorted[1]:item(), x:min():item())
                    for _, at in ipairs({ 1, math.floor(n / 2), n }) do
                        local y = x:clone()
                        y[at] = NAN
                        assert.is_true(y:max():isnan():item() and y:amin():isnan():item())
                    end
                end
                local z = tide.zeros(100, { dtype = dtype })
                z[1] = -1 / math.huge -- -0.0 first: the first of the equal extremes
                assert.are.equal(-math.huge, 1 / z:max():item())
                assert.are.equal(-math.huge, 1 / z:min():item())
            end
            local i = tide.randint(-1000, 1000, { 5000 })
            assert.are.equal(i:sort()[5000]:item(), i:max():item())
            assert.are.equal(i:sort()[1]:item(), i:amin():item())
        end)

    it("prod of float rows in 32 chains: the product, zeros, infinities and NaN as one chain",
        function()
            local y = tide.arange(1, 36, { dtype = "float64" }):view(1, 35)
            assert.are.equal(1.0333147966386144e40, y:prod(2):item()) -- 35!, exactly as in order
            local f = tide.full({ 4, 100 }, 1.01, { dtype = "float32" })
            f[{ 2, 70 }], f[{ 3, 5 }], f[{ 3, 90 }], f[{ 4, 33 }] = 0, 0, math.huge, 0 / 0
            local p = f:prod(2)
            assert.is_true(math.abs(p[1]:item() - 1.01 ^ 100) < 1e-4)
            assert.are.equal(0, p[2]:item())
            assert.is_true(p[3]:isnan():item() and p[4]:isnan():item()) -- 0 * inf, NaN
        end)

    it("amax over every dim is one reduction, shaped as asked", function()
        local x = tide.tensor({ { 1, 5, -2 }, { 4, NAN, 0 } }, { dtype = "float32" })
        local y = tide.tensor({ { 1, 5, -2 }, { 4, 7, 0 } }, { dtype = "float32" })
        assert.are.same({ 7 }, { y:amax():item() })
        assert.are.same({ { 7 } }, y:amax({ 1, 2 }, true):tolist())
        assert.are.same({ -2 }, { y:amin({ 2, 1 }):item() })
        assert.is_true(x:amax():isnan():item())
        assert.are.same({ 1, 1 }, { y:amax({ 1, 2 }, true):size(1), y:amax({ 1, 2 }, true):size(2) })
        -- its gradient: split between the ties, as PyTorch's
        local g = tide.tensor({ { 3, 1 }, { 3, 0 } }, { dtype = "float32", requires_grad = true })
        g:amax():backward()
        assert.are.same({ { 0.5, 0 }, { 0.5, 0 } }, g.grad:tolist())
    end)

    it("logsumexp keeps its values", function()
        local x = tide.tensor({ { 0, 1, 2 }, { -1000, -1000, -1000 }, { 1000, 0, NAN } },
            { dtype = "float64" })
        local got = x:logsumexp(2)
        local e = math.exp
        assert.is_true(math.abs(got[1]:item() - math.log(e(0) + e(1) + e(2))) < 1e-12)
        assert.is_true(math.abs(got[2]:item() - (-1000 + math.log(3))) < 1e-9)
        assert.is_true(got[3]:isnan():item())
        assert.is_true(math.abs(x[{ { 1, 2 } }]:logsumexp(1)[3]:item() - math.log(e(2) + e(-1000))) <
            1e-12)
    end)
end)

-- adjacent dims of a contiguous tensor reduce in one pass over their product (reductions.lua's
-- over): the values, shapes and gradients of the dim-by-dim reduction
describe("a reduction over adjacent dims", function()
    local x = tide.arange(2 * 3 * 4 * 5, { dtype = "float64" }):view(2, 3, 4, 5):sin()
    local function dim_by_dim(t, how, dims, keep) -- descending dims
        for _, d in ipairs(dims) do
            t = t[how](t, d, true)
        end
        if not keep then
            for _, d in ipairs(dims) do
                t = t:squeeze(d)
            end
        end
        return t
    end
    for _, how in ipairs({ "sum", "mean", "amax", "amin", "nansum", "logsumexp" }) do
        for _, dims in ipairs({ { 3, 4 }, { 2, 3 }, { 2, 3, 4 }, { 1, 2 } }) do
            for _, keep in ipairs({ false, true }) do
                it(("%s over {%s}, keepdim %s"):format(how, table.concat(dims, ", "),
                    tostring(keep)), function()
                    local got = x[how](x, dims, keep)
                    local desc = {}
                    for i = #dims, 1, -1 do
                        desc[#desc + 1] = dims[i]
                    end
                    local want = dim_by_dim(x, how, desc, keep)
                    assert.are.same(want:size(), got:size())
                    assert.is_true(tide.allclose(want, got, 1e-12, 1e-12))
                end)
            end
        end
    end
    it("gradients, and a non-contiguous tensor (dim by dim)", function()
        local a = x:clone():requires_grad_()
        local m = a:mean({ 3, 4 })
        m:sum():backward()
        assert.is_true(tide.allclose(a.grad, tide.full({ 2, 3, 4, 5 }, 1 / 20,
            { dtype = "float64" }), 0, 1e-15))
        local t = x:transpose(1, 4) -- [5, 3, 4, 2], not contiguous
        local got = t:sum({ 2, 3 })
        local want = t:sum(3):sum(2)
        assert.is_true(tide.allclose(want, got, 1e-12, 1e-12))
    end)
end)
