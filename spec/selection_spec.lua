-- selection_spec.lua — topk, kthvalue, median and nanmedian by the core's selection
-- (src/ops_select.c, src/cpu/select.c) instead of a full sort: PyTorch 1.13's values and
-- indices (pasted), NaN largest, every dtype, other dims, strided input, empty dims; among equal
-- values the index a stable sort gives (tide's choice, as its sort's: PyTorch's index among
-- equal values is unspecified, and noted where it differs); and on long rows (the threaded
-- path, the heap and the quickselect) the very answer of sort, narrowed or picked.
local tide = require("tide")

local function norm(v) -- NaN == NaN for comparing tables
    if type(v) == "table" then
        local r = {}
        for i, x in ipairs(v) do
            r[i] = norm(x)
        end
        return r
    end
    return v ~= v and "nan" or v
end
local function same(expect, got)
    assert.are.same(norm(expect), norm(got))
end
local function F(v, dt)
    return tide.tensor(v, { dtype = dt or "float32" })
end
-- v and i (tensors) hold the expected values and 1-based indices
local function pair(ev, ei, v, i)
    same(ev, v:totable())
    same(ei, i:totable())
end
local nan = 0 / 0

describe("topk, kthvalue, median, nanmedian against PyTorch", function()
    it("NaN is the largest value", function()
        local y = F({ 1, nan, 3, nan, -1 })
        -- torch.tensor([1., nan, 3, nan, -1]).topk(3): [nan, nan, 3], indices [1, 3, 2]
        pair({ nan, nan, 3 }, { 2, 4, 3 }, y:topk(3))
        pair({ -1, 1, 3 }, { 5, 1, 3 }, y:topk(3, 1, false))
        pair(nan, 2, y:kthvalue(4))
        pair(nan, 2, y:median(1)) -- the first NaN
        pair(1, 1, y:nanmedian(1))
        assert.is_true(y:median():isnan():item())
        assert.are.equal(1, y:nanmedian():item())
        -- torch.tensor([inf, -inf, nan, 0.]).topk(4): [nan, inf, 0, -inf], [2, 0, 3, 1]
        pair({ nan, math.huge, 0, -math.huge }, { 3, 1, 4, 2 },
            F({ math.huge, -math.huge, nan, 0 }):topk(4))
    end)

    it("rows of NaN: median the first NaN, nanmedian NaN at index 1", function()
        local x = F({ { nan, nan }, { 1, nan } })
        pair({ nan, 1 }, { 1, 1 }, x:nanmedian(2))
        pair({ nan, nan }, { 1, 2 }, x:median(2))
    end)

    it("equal values: the stable sort's index", function()
        local x = F({ 1, 3, 3, 2, 3, 1 })
        pair({ 3, 3 }, { 2, 3 }, x:topk(2)) -- PyTorch 1.13: indices [2, 4] (0-based)
        pair({ 1, 1 }, { 1, 6 }, x:topk(2, 1, false)) -- PyTorch: [5, 0]
        pair(1, 6, x:kthvalue(2)) -- PyTorch: 0
        pair(3, 3, x:kthvalue(5)) -- PyTorch: 4
        pair(2, 4, x:median(1)) -- PyTorch: 3, the same
        -- -0 and 0 are equal: PyTorch's values [0, -0] (indices [2, 3], 0-based)
        local z = F({ 0, -1 / math.huge, 0, -1 / math.huge })
        local v, i = z:topk(2)
        same({ 1, 2 }, i:totable())
        assert.are.equal(math.huge, 1 / v[1]:item())
        assert.are.equal(-math.huge, 1 / v[2]:item())
    end)

    it("int64, int32, uint8 and bool", function()
        local x = tide.tensor({ { 5, -3, 7, 2 ^ 40, -2 ^ 52 }, { 0, 0, -1, 9, 9 } },
            { dtype = "int64" })
        -- PyTorch: [[2^40, 7], [9, 9]], [[3, 2], [4, 3]] (0-based; the stable [3, 4] on ties)
        pair({ { 2 ^ 40, 7 }, { 9, 9 } }, { { 4, 3 }, { 4, 5 } }, x:topk(2, 2))
        pair({ { -2 ^ 52, -3, 5 }, { -1, 0, 0 } }, { { 5, 2, 1 }, { 3, 1, 2 } },
            x:topk(3, 2, false)) -- PyTorch: [[4, 1, 0], [2, 1, 0]]
        pair({ 5, 0 }, { 1, 2 }, x:kthvalue(3, 2))
        pair({ 5, 0 }, { 1, 2 }, x:median(2))
        local i32 = tide.tensor({ { -5, 100, 3 }, { 2, -2, 0 } }, { dtype = "int32" })
        local v, i = i32:topk(2, 1)
        assert.are.equal("int32", v.dtype)
        pair({ { 2, 100, 3 }, { -5, -2, 0 } }, { { 2, 1, 1 }, { 1, 2, 2 } }, v, i)
        pair({ -5, -2, 0 }, { 1, 2, 2 }, i32:kthvalue(1, 1))
        pair({ -5, -2, 0 }, { 1, 2, 2 }, i32:median(1))
        local u = tide.tensor({ 200, 3, 255, 0, 7 }, { dtype = "uint8" })
        pair({ 255, 200 }, { 3, 1 }, u:topk(2))
        pair({ 0, 3 }, { 4, 2 }, u:topk(2, 1, false))
        pair(3, 2, u:kthvalue(2))
        assert.are.equal(7, u:median():item())
        -- PyTorch 1.13 has no bool topk ("topk_cpu" not implemented for 'Bool'); sort's order
        local b = tide.tensor({ true, false, true, false }, { dtype = "bool" })
        pair({ true, true }, { 1, 3 }, b:topk(2))
        pair({ false, false, true }, { 2, 4, 1 }, b:topk(3, 1, false))
    end)

    it("int64 at its ends #lua53", function()
        local x = tide.tensor({ math.mininteger, math.maxinteger, 0 }, { dtype = "int64" })
        pair({ math.maxinteger, 0, math.mininteger }, { 2, 3, 1 }, x:topk(3))
        pair({ math.mininteger, 0, math.maxinteger }, { 1, 3, 2 }, x:topk(3, 1, false))
        pair(0, 3, x:median(1))
    end)

    it("float16 and bfloat16 (through float32)", function()
        for _, dt in ipairs({ "float16", "bfloat16" }) do
            local h = F({ 1.5, -2, 3.25, 0.5 }, dt)
            local v, i = h:topk(2)
            assert.are.equal(dt, v.dtype)
            pair({ 3.25, 1.5 }, { 3, 1 }, v, i)
            pair({ -2, 0.5 }, { 2, 4 }, h:topk(2, 1, false))
            pair(0.5, 4, h:kthvalue(2))
            assert.are.equal(0.5, h:median():item()) -- PyTorch: 0.5 (float16 and bfloat16)
        end
    end)

    it("a dim other than the last, and strided input", function()
        local a = tide.arange(24, { dtype = "float32" }):reshape(2, 3, 4):sin()
        -- torch.arange(24.).reshape(2, 3, 4).sin().topk(2, 1).indices + 1
        local v, i = a:topk(2, 2)
        same({ { { 3, 1, 1, 2 }, { 1, 3, 2, 1 } }, { { 3, 3, 1, 1 }, { 2, 1, 3, 2 } } },
            i:totable())
        same(a:gather(2, i):totable(), v:totable())
        local kv, ki = a:kthvalue(2, 2)
        same({ { 1, 3, 2, 1 }, { 2, 1, 3, 2 } }, ki:totable())
        same(a:gather(2, ki:unsqueeze(2)):squeeze(2):totable(), kv:totable())
        local mv, mi = a:median(2, true)
        same({ { { 1, 3, 2, 1 } }, { { 2, 1, 3, 2 } } }, mi:totable())
        same(kv:unsqueeze(2):totable(), mv:totable())
        -- .transpose(0, 2).topk(1, 2): a strided input
        local t = a:transpose(1, 3)
        assert.is_false(t:is_contiguous())
        local _, ti = t:topk(1, 3)
        same({ { { 1 }, { 2 }, { 1 } }, { { 1 }, { 1 }, { 2 } }, { { 2 }, { 1 }, { 2 } },
            { { 2 }, { 1 }, { 2 } } }, ti:totable())
    end)

    it("k = n, k = 0, empty dims, a 0-d tensor", function()
        local f = F({ 4, 1, 3, 2 }, "float64")
        pair({ 4, 3, 2, 1 }, { 1, 3, 4, 2 }, f:topk(4))
        local v, i = f:topk(0)
        same({ 0 }, v:size())
        same({ 0 }, i:size())
        -- torch.zeros(0, 5).topk(2, 1): [0, 2]; torch.zeros(3, 0).topk(0, 1): [3, 0]
        v, i = tide.zeros(0, 5):topk(2, 2)
        same({ 0, 2 }, v:size())
        same({ 0, 2 }, i:size())
        v = tide.zeros(3, 0):topk(0, 2)
        same({ 3, 0 }, v:size())
        assert.has_error(function() tide.zeros(3, 0):kthvalue(1, 2) end)
        local s = tide.tensor(2.5)
        pair(2.5, 1, s:topk(1))
        pair(2.5, 1, s:kthvalue(1))
        pair(2.5, 1, s:median(1))
        pair(2.5, 1, s:nanmedian(1))
    end)

    it("bad k: the core's message", function()
        local x = F({ 1, 2, 3 })
        local ok, err = pcall(function() return tide._kthvalue(x, 4) end)
        assert.is_false(ok)
        assert.matches("tide: kthvalue: k = 4 is out of range for dim 1 of size 3", err, 1, true)
    end)

    it("gradients reach the element taken", function()
        local x = F({ { 1, 5, 3, 5 }, { 2, 2, 0, 4 } }):requires_grad_()
        local v = x:topk(2, 2)
        v:sum():backward() -- PyTorch 1.13: [[0, 1, 0, 1], [0, 1, 0, 1]] (the other 2)
        same({ { 0, 1, 0, 1 }, { 1, 0, 0, 1 } }, x.grad:totable())
        x.grad = nil
        x:kthvalue(2, 2):sum():backward()
        -- PyTorch 1.13: [[0, 0, 1, 0], [0, 1, 0, 0]] (the other 2)
        same({ { 0, 0, 1, 0 }, { 1, 0, 0, 0 } }, x.grad:totable())
        x.grad = nil
        x:median(2):sum():backward() -- PyTorch 1.13's
        same({ { 0, 0, 1, 0 }, { 1, 0, 0, 0 } }, x.grad:totable())
        x.grad = nil
        x:nanmedian():backward() -- 2, shared by its two equal elements, as PyTorch 1.13's
        same({ { 0, 0, 0, 0 }, { 0.5, 0.5, 0, 0 } }, x.grad:totable())
    end)
end)

-- the selection against sort (stable, NaN largest), on rows long enough for the threads, with
-- many equal values and some NaN, every dtype, both ends and strided
describe("the selection gives sort's answer", function()
    local DTYPES = { "float32", "float64", "float16", "bfloat16", "int32", "int64", "uint8",
        "bool" }
    local function data(shape, dt)
        tide.manual_seed(7)
        local x = (tide.rand(shape) * 50):floor()
        if dt == "bool" then
            return x:gt(25)
        end
        if dt:find("^float") or dt == "bfloat16" then
            x = x:masked_fill(tide.rand(shape):lt(0.01), nan)
        end
        return x:sub(dt == "uint8" and 0 or 25):to(dt)
    end
    -- equal tensors, NaN == NaN (whole tensors: totable on each would take seconds)
    local function same_t(a, b)
        if a.dtype:find("float") then
            a, b = a:nan_to_num(12345), b:nan_to_num(12345)
        end
        assert.are.same(a:size(), b:size())
        assert.is_true(a:equal(b))
    end
    local function check_rows(x, dim)
        local n = x:size(dim)
        for _, k in ipairs({ 1, 10, math.floor(n / 3), n }) do
            for _, largest in ipairs({ true, false }) do
                local sv, si = x:sort(dim, largest)
                local v, i = x:topk(k, dim, largest)
                same_t(sv:narrow(dim, 1, k), v)
                same_t(si:narrow(dim, 1, k), i)
            end
            local sv, si = x:sort(dim)
            local v, i = x:kthvalue(k, dim, true)
            same_t(sv:narrow(dim, k, 1), v)
            same_t(si:narrow(dim, k, 1), i)
        end
    end
    for _, dt in ipairs(DTYPES) do
        it("topk and kthvalue on [64, 1500] rows, along both dims: " .. dt, function()
            local x = data({ 64, 1500 }, dt)
            check_rows(x, 2)
            check_rows(x:t(), 1) -- strided rows
        end)
    end

    it("one long row: the heap and the quickselect, median and nanmedian", function()
        local x = data({ 100000 }, "float32")
        check_rows(x, 1)
        local sv, si = x:sort()
        local nans = x:isnan():sum():item()
        local v, i = x:median(1)
        -- the first NaN (sorted last, in their order)
        same(sv[100000 - nans + 1]:totable(), v:totable())
        same(si[100000 - nans + 1]:totable(), i:totable())
        local ok = 100000 - nans
        v, i = x:nanmedian(1)
        local at = math.floor((ok - 1) / 2) + 1
        same(sv[at]:totable(), v:totable())
        same(si[at]:totable(), i:totable())
        local y = x:nan_to_num(0)
        same(y:sort()[50000]:totable(), y:median():totable())
    end)
end)

-- sort's own order on rows long enough for its radix sort, against table.sort of (value,
-- position) pairs: NaN largest, -0 equal to 0, equal values in their order, both directions
describe("sort of long rows (the radix sort)", function()
    local function order(vals, desc)
        local p = {}
        for j = 1, #vals do
            p[j] = j
        end
        local function key(v) -- NaN largest
            return v ~= v and math.huge or v
        end
        table.sort(p, function(a, b)
            local x, y = vals[a], vals[b]
            local xn, yn = x ~= x, y ~= y
            if xn ~= yn then
                return (xn and desc) or (yn and not desc)
            end
            if not xn and key(x) ~= key(y) then
                return (key(x) > key(y)) == desc
            end
            return a < b
        end)
        return p
    end
    for _, dt in ipairs({ "float32", "float64", "int32", "int64", "uint8" }) do
        it(dt, function()
            tide.manual_seed(11)
            local x = (tide.rand({ 3, 700 }) * 40):floor()
            if dt:find("^float") then
                x = x:sub(20):mul(1.5):masked_fill(tide.rand({ 3, 700 }):lt(0.05), nan)
                x[1][3] = -1 / math.huge
                x[1][4] = 0
                x[2][9] = -math.huge
            elseif dt ~= "uint8" then
                x = x:sub(20)
            end
            x = x:to(dt)
            if dt == "int64" then
                x[3][1] = math.floor(-2 ^ 53)
                x[3][2] = math.floor(2 ^ 53)
            end
            for _, desc in ipairs({ false, true }) do
                local _, i = x:sort(2, desc)
                for r = 1, 3 do
                    same(order(x[r]:totable(), desc), i[r]:totable())
                end
            end
        end)
    end
end)

-- a backend without the topk and kthvalue entries (CUDA): the core sorts, narrows and gathers
describe("topk, kthvalue, median, nanmedian: cuda against cpu #cuda", function()
    it("the same values and indices", function()
        if not tide.cuda.is_available() then
            pending("no CUDA device")
            return
        end
        tide.manual_seed(3)
        local xc = (tide.rand({ 5, 301 }) * 20):floor()
        xc[2][7] = nan
        xc[2][200] = nan
        xc[4]:fill_(nan)
        local xg = xc:to("cuda")
        local function check(a, b)
            same(a:totable(), b:cpu():totable())
        end
        for _, f in ipairs({
            function(t) return t:topk(7, 2) end,
            function(t) return t:topk(7, 2, false) end,
            function(t) return t:topk(3, 1) end,
            function(t) return t:kthvalue(150, 2) end,
            function(t) return t:median(2) end,
            function(t) return t:nanmedian(2) end,
            function(t) return t:median(1) end,
        }) do
            local v1, i1 = f(xc)
            local v2, i2 = f(xg)
            check(v1, v2)
            check(i1, i2)
        end
        check(xc:nanmedian(), xg:nanmedian())
    end)
end)
