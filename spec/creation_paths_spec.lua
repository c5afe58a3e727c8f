-- creation_paths_spec.lua — the CPU's typed loops of arange and fill (contiguous rows; the
-- generic per-element path for strided and other dtypes) and linspace built in place on the
-- halves of one arange: the values of the general formulas.
local tide = require("tide")

describe("creation's fast paths", function()
    it("arange: int64 counted in integers, floats from start + i * step, every dtype", function()
        local n = 3000001
        local a = tide.arange(0, 7 * n, 7)
        assert.are.same({ "int64", n, 0, 7 * (n - 1) }, { a.dtype, a:numel(), a[1]:item(), a[n]:item() })
        assert.are.equal(0, a:diff():ne(7):sum():item())
        assert.are.same({ 10, 7, 4, 1 }, tide.arange(10, 0, -3):tolist())
        assert.are.same({ -3, 1, 5, 9 }, tide.arange(-3, 10, 4):tolist())
        -- floats: each value start + i * step in double, rounded once to the dtype
        local f = tide.arange(0.5, 100000, 0.25, { dtype = "float32" })
        for _, i in ipairs({ 1, 2, 1000, f:numel() }) do
            assert.are.equal(tide.tensor(0.5 + (i - 1) * 0.25, { dtype = "float32" }):item(), f[i]:item())
        end
        local d = tide.arange(0, 1, 0.1, { dtype = "float64" })
        assert.are.same({ 10, 0.1 * 3 }, { d:numel(), d[4]:item() })
        for _, dtype in ipairs({ "int32", "uint8", "float16", "bfloat16" }) do
            assert.are.same({ 0, 1, 2, 3 }, tide.arange(4, { dtype = dtype }):tolist())
        end
    end)

    it("fill: contiguous and strided outs, every dtype", function()
        for _, dtype in ipairs({ "float32", "float64", "int64", "int32", "uint8", "float16" }) do
            local x = tide.full({ 300, 7 }, 3, { dtype = dtype })
            assert.are.equal(2100, x:eq(3):sum():item())
            local y = tide.zeros(7, 300, { dtype = dtype })
            y:t():fill_(5) -- strided: every element still
            assert.are.equal(2100, y:eq(5):sum():item())
            y:narrow(2, 1, 100):fill_(0)
            assert.are.equal(1400, y:eq(5):sum():item())
        end
    end)

    it("linspace: the first half up from start, the second down from end, ends exact", function()
        for _, n in ipairs({ 2, 3, 10, 11, 262145 }) do
            for _, dtype in ipairs({ "float32", "float64" }) do
                local r = tide.linspace(-2, 5, n, { dtype = dtype })
                assert.are.same({ -2, 5 }, { r[1]:item(), r[n]:item() })
                local step = 7 / (n - 1)
                local h = math.floor(n / 2)
                -- (float32: the kernel's rounded step; compare loosely there)
                local tol = dtype == "float32" and 1e-5 or 1e-14
                for _, i in ipairs({ 1, h, h + 1, n }) do
                    local want = i <= h and -2 + (i - 1) * step or 5 - (n - i) * step
                    assert.is_true(math.abs(r[i]:item() - want) <= tol, ("n %d i %d"):format(n, i))
                end
            end
        end
    end)
end)

describe("a transposing copy", function()
    it("gives the input's values in every layout, dtype and size (tiles and their edges)", function()
        tide.manual_seed(6)
        for _, dtype in ipairs({ "float32", "float64", "float16", "uint8", "int64", "bool" }) do
            for _, shape in ipairs({ { 8, 8 }, { 37, 45 }, { 3, 9, 17 }, { 2, 64, 5, 33 } }) do
                local x = (tide.rand(shape) * 100):to(dtype)
                local n = #shape
                local t = x:transpose(n - 1, n):contiguous()
                assert.is_true(t:is_contiguous())
                assert.are.same(x:transpose(n - 1, n):tolist(), t:tolist())
                -- into a given output (copy_), and a permute that ends in a transpose
                local o = tide.empty(t:size(), { dtype = dtype })
                o:copy_(x:transpose(n - 1, n))
                assert.is_true(o:equal(t))
            end
        end
        local img = tide.randn(2, 16, 9, 11)
        local nhwc = img:permute(1, 3, 4, 2):contiguous()
        assert.is_true(nhwc:equal(img:permute(1, 3, 4, 2)))
        assert.is_true(nhwc:permute(1, 4, 2, 3):contiguous():equal(img))
    end)
end)

describe("eye", function()
    it("is zeros with its main diagonal filled, every shape and dtype", function()
        for _, nm in ipairs({ { 1, 1 }, { 3, 3 }, { 2, 5 }, { 5, 2 }, { 0, 3 }, { 3, 0 } }) do
            local n, m = nm[1], nm[2]
            for _, dtype in ipairs({ "float32", "float64", "int64", "bool", "float16" }) do
                local e = tide.eye(n, m, { dtype = dtype })
                assert.are.same({ n, m, dtype }, { e:size(1), e:size(2), e.dtype })
                for i = 1, n do
                    for j = 1, m do
                        local v = e[{ i, j }]:item()
                        assert.are.equal(i == j, v == true or v == 1)
                    end
                end
            end
        end
        assert.is_true(tide.eye(2, { requires_grad = true }).requires_grad)
    end)
end)
