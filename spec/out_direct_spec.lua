-- out_direct_spec.lua: out= on the tide.X functions of the elementwise rows (add, mul, lt, exp,
-- isnan, clamp, ...) computes straight into out when the result has out's dtype and shape, as
-- the in-place twin computes into its tensor: no temporary result, the same values and errors
-- as the general path (compute, then copy: keywords_out_spec.lua), which every other call
-- still takes (lua/op_families.c, lua/keywords.c).
local tide = require("tide")
local unpack = table.unpack or unpack -- (5.1, LuaJIT)

-- the bytes of tensor storage f leaves held with the collector stopped: a temporary result
-- stays counted until it is collected, a result written into out adds nothing
local function held_by(f)
    collectgarbage("collect")
    collectgarbage("stop")
    local before = tide.memory_in_use()
    f()
    local held = tide.memory_in_use() - before
    collectgarbage("restart")
    return held
end

local function catch(f)
    local ok, err = pcall(f)
    assert.is_false(ok, "expected an error")
    return tostring(err)
end

local A = { { 0.5, -1.5, 2, 0 }, { 3, -0.25, 1, -2 }, { 0.75, 4, -3, 1.5 } }
local B = { { 1, 2, -1, 0.5 }, { -2, 0.5, 1, 3 }, { 2, -1, 0.25, -4 } }

local function a_(dtype)
    return tide.tensor(A, { dtype = dtype or "float32" })
end
local function b_(dtype)
    return tide.tensor(B, { dtype = dtype or "float32" })
end

-- fn(args..., {out = o}) against fn(args...): the same values, written into o with nothing held
local function straight(fn, dtype, shape, ...)
    local args = { ... }
    local n = select("#", ...)
    local expected = fn(unpack(args, 1, n))
    local o = tide.zeros(shape, { dtype = dtype })
    args[n + 1] = { out = o }
    local r
    assert.are.equal(0, held_by(function()
        r = fn(unpack(args, 1, n + 1))
    end))
    assert.are.equal(o, r)
    assert.are.same(expected:tolist(), o:tolist())
end

describe("out= straight into out", function()
    it("binary rows: operands of out's shape, broadcast, or a number on either side", function()
        local a, b = a_(), b_()
        straight(tide.add, "float32", { 3, 4 }, a, b)
        straight(tide.mul, "float32", { 3, 4 }, a, tide.tensor({ 1, -1, 2, 0.5 }))
        straight(tide.mul, "float32", { 3, 4 }, tide.tensor({ { 2 }, { -1 }, { 0.5 } }), b)
        straight(tide.sub, "float32", { 3, 4 }, a, 2)
        straight(tide.sub, "float32", { 3, 4 }, 2, a) -- 2 - a
        straight(tide.div, "float32", { 3, 4 }, a, b)
        straight(tide.maximum, "float32", { 3, 4 }, a, b)
        straight(tide.atan2, "float32", { 3, 4 }, a, b)
        straight(tide.pow, "float64", { 3, 4 }, a_("float64"), 2)
        straight(tide.add, "float16", { 3, 4 }, a_("float16"), b_("float16"))
        -- integers: same-dtype operands, or an integer number
        local i, j = tide.tensor({ 7, -3, 5 }, { dtype = "int64" }), tide.tensor({ 2, 4, -5 }, { dtype = "int64" })
        straight(tide.add, "int64", { 3 }, i, j)
        straight(tide.mul, "int64", { 3 }, i, 3)
        straight(tide.floor_divide, "int64", { 3 }, i, j)
        straight(tide.bitwise_and, "int64", { 3 }, i, j)
        straight(tide.remainder, "int32", { 3 }, i:int(), 4)
        -- comparisons into a bool out
        straight(tide.lt, "bool", { 3, 4 }, a, b)
        straight(tide.eq, "bool", { 3, 4 }, a, 0.5)
        straight(tide.ge, "bool", { 3 }, i, 5)
    end)

    it("one-input rows and clamp with number bounds", function()
        local a = a_()
        straight(tide.exp, "float32", { 3, 4 }, a)
        straight(tide.sigmoid, "float32", { 3, 4 }, a)
        straight(tide.neg, "float64", { 3, 4 }, a_("float64"))
        straight(tide.abs, "int64", { 3 }, tide.tensor({ -2, 0, 5 }, { dtype = "int64" }))
        straight(tide.logical_not, "bool", { 3 }, tide.tensor({ 0 / 0, 1, 0 }))
        straight(tide.clamp, "float32", { 3, 4 }, a, -0.5, 0.5)
        straight(tide.clamp, "float32", { 3, 4 }, a, nil, 0.5)
        straight(tide.clamp, "int64", { 3 }, tide.tensor({ -2, 1, 5 }, { dtype = "int64" }), 0, 2)
    end)

    it("reads an input that is out, or shares out's memory in another layout, before writing",
        function()
            local a, b = a_(), b_()
            local sum = (a + b):tolist()
            tide.add(a, b, { out = a })
            assert.are.same(sum, a:tolist())
            -- out a transpose of the input: each element read before any is written
            local y = tide.tensor({ { 1, 2, 3 }, { 4, 5, 6 }, { 7, 8, 9 } }, { dtype = "float32" })
            local y0 = y:clone()
            tide.neg(y, { out = y:t() })
            assert.are.same((-y0):t():tolist(), y:tolist())
            y = y0:clone()
            tide.mul(y, 10, { out = y:t() })
            assert.are.same((y0 * 10):t():tolist(), y:tolist())
            y = y0:clone()
            tide.clamp(y, 2, 8, { out = y:t() })
            assert.are.same(y0:clamp(2, 8):t():tolist(), y:tolist())
            y = y0:clone()
            tide.sub(y, y0, { out = y:t() })
            assert.are.same((y0 - y0):t():tolist(), y:tolist())
        end)

    it("counts as a write of out: its version moves, as after an in-place op", function()
        local o = tide.zeros(3, 4)
        local v = o:_version()
        tide.add(a_(), b_(), { out = o })
        assert.are.equal(v + 1, o:_version())
    end)

    it("leaves a cast or a resize of out to the general path, with PyTorch's results", function()
        local a = a_()
        -- an int64 result into a float32 out: cast
        local f = tide.zeros(3)
        tide.add(tide.tensor({ 1, 2, 3 }, { dtype = "int64" }), 4, { out = f })
        assert.are.same({ "float32", { 5, 6, 7 } }, { f.dtype, f:tolist() })
        -- an integer tensor and a fraction: float32, as without out
        local g = tide.zeros(3)
        tide.mul(tide.tensor({ 1, 2, 3 }, { dtype = "int64" }), 0.5, { out = g })
        assert.are.same({ 0.5, 1, 1.5 }, g:tolist())
        -- out of another shape, smaller or larger than the result: resized to it
        for _, shape in ipairs({ { 7 }, { 2, 3, 4 } }) do
            local o = tide.zeros(shape)
            tide.add(a, 1, { out = o })
            assert.are.same({ 3, 4 }, { o:size(1), o:size(2) })
            assert.are.same((a + 1):tolist(), o:tolist())
        end
        -- alpha beside out: the general path
        local o = tide.zeros(3, 4)
        tide.add(a, a, { alpha = 2, out = o })
        assert.are.same((a * 3):tolist(), o:tolist())
    end)

    it("raises the general path's errors, leaving out as it was", function()
        local a, b = a_(), b_()
        local o = tide.full({ 3, 4 }, 9, { dtype = "float32" })
        local function unchanged()
            assert.are.same(tide.full({ 3, 4 }, 9, { dtype = "float32" }):tolist(), o:tolist())
        end
        local g = a:clone():requires_grad_()
        assert.matches("tide: add: out= takes no part in autograd, and an input requires grad",
            catch(function() tide.add(g, b, { out = o }) end), 1, true)
        unchanged()
        local og = tide.zeros(3, 4, { requires_grad = true })
        assert.matches("tide: exp: out requires grad, and out= takes no part in autograd",
            catch(function() tide.exp(a, { out = og }) end), 1, true)
        assert.are.same(tide.zeros(3, 4):tolist(), og:tolist())
        local far = tide.full({ 3, 4 }, 9, { dtype = "float32", device = "cpu:1" })
        assert.matches("tide: mul: out is on cpu:1, the inputs on cpu; out= moves no values",
            catch(function() tide.mul(a, b, { out = far }) end), 1, true)
        assert.are.same(tide.full({ 3, 4 }, 9, { dtype = "float32" }):tolist(), far:to("cpu"):tolist())
        -- an operand the op refuses: the op's own message, as without out
        local without = catch(function() tide.bitwise_and(a, b) end)
        assert.are.equal(without:gsub("^.-tide:", "tide:"),
            catch(function() tide.bitwise_and(a, b, { out = o }) end):gsub("^.-tide:", "tide:"))
        unchanged()
        -- an expanded out: several results would land on one element
        local e = tide.zeros(1, 4):expand(3, 4)
        assert.matches("the output tensor is an expanded view",
            catch(function() tide.add(a, b, { out = e }) end), 1, true)
        assert.are.same({ { 0, 0, 0, 0 } }, e:contiguous():narrow(1, 1, 1):tolist())
    end)
end)
