-- bitwise_spec.lua — bitwise_and, bitwise_or, bitwise_xor, bitwise_not, bitwise_left_shift,
-- bitwise_right_shift, gcd and lcm on integer (and bool) tensors, on the device under test:
-- values from PyTorch 1.13 on the same inputs, the Lua 5.3+ operators & | ~ << >>, promotion, shifts past
-- the width, the refusals with their messages, and failed calls that change nothing.
-- spec/opinfo_spec.lua walks the same rows over every dtype and layout.
local tide = require("tide")
local D = require("spec.support.device")
local host = require("spec.support.host")

local function T(x, dt)
    return tide.tensor(x, { dtype = dt or "int64", device = D.name })
end

local function values(t)
    return t:to("cpu"):totable()
end

local function catch(f)
    local ok, err = pcall(f)
    assert.is_false(ok, "expected an error")
    return tostring(err)
end

describe("bitwise ops (" .. D.name .. ")", function()
    it("and, or, xor and not of int32 match PyTorch, extremes included", function()
        local a = T({ 12, -7, 255, 0, 2147483647 }, "int32")
        local b = T({ 10, 3, 15, -1, 1 }, "int32")
        assert.are.same({ 8, 1, 15, 0, 1 }, values(a:bitwise_and(b)))
        assert.are.same({ 14, -5, 255, -1, 2147483647 }, values(a:bitwise_or(b)))
        assert.are.same({ 6, -6, 240, -1, 2147483646 }, values(tide.bitwise_xor(a, b)))
        assert.are.same({ -13, 6, -256, -1, -2147483648 }, values(a:bitwise_not()))
        assert.are.equal("int32", a:bitwise_and(b).dtype)
        assert.are.equal(D.name, tostring(a:bitwise_and(b).device))
    end)

    it("shifts match PyTorch, the sign kept by >>", function()
        local a = T({ 12, -7, 255, 0, 2147483647 }, "int32")
        local s = T({ 1, 2, 3, 4, 1 }, "int32")
        assert.are.same({ 24, -28, 2040, 0, -2 }, values(a:bitwise_left_shift(s)))
        assert.are.same({ 6, -2, 31, 0, 1073741823 }, values(tide.bitwise_right_shift(a, s)))
        assert.are.same({ 6, 12, 24 }, values(tide.bitwise_left_shift(3, T({ 1, 2, 3 }))))
        assert.are.same({ 50, 25, 12 }, values(tide.bitwise_right_shift(100, T({ 1, 2, 3 }))))
    end)

    it("shifts by the width or more, or by a negative amount, are defined (as PyTorch 2)",
        function()
            -- << gives 0, >> gives the sign (0 or -1); PyTorch 1.13 shifted by the amount
            -- modulo the width there (x86's shift instruction)
            local a = T({ 5, -7, 100, 1 }, "int32")
            local s = T({ 32, 40, -1, 70 }, "int32")
            assert.are.same({ 0, 0, 0, 0 }, values(a:bitwise_left_shift(s)))
            assert.are.same({ 0, -1, 0, 0 }, values(a:bitwise_right_shift(s)))
            local u = T({ 200, 3 }, "uint8")
            assert.are.same({ 0, 0 }, values(u:bitwise_left_shift(8)))
            assert.are.same({ 0, 0 }, values(u:bitwise_right_shift(8)))
            if host.integers then
                local big = T({ 4611686018427387904, math.mininteger })
                assert.are.same({ 1, -2 }, values(big:bitwise_right_shift(62)))
                assert.are.same({ math.mininteger }, values(T({ 1 }):bitwise_left_shift(63)))
                assert.are.same({ -1 }, values(T({ -1 }):bitwise_right_shift(1000)))
            end
        end)

    it("uint8 wraps a number outside its range, as PyTorch does", function()
        local u = T({ 12, 200, 255 }, "uint8")
        assert.are.same({ 12, 200, 254 }, values(u:bitwise_and(-2)))
        assert.are.same({ 12, 200, 255 }, values(u:bitwise_or(256)))
        assert.are.same({ 13, 201, 254 }, values(u:bitwise_xor(1)))
        assert.are.same({ 243, 55, 0 }, values(u:bitwise_not()))
        assert.are.same({ 24, 144, 254 }, values(u:bitwise_left_shift(1)))
        assert.are.same({ 1, 25, 31 }, values(u:bitwise_right_shift(3)))
        assert.are.equal("uint8", u:bitwise_and(-2).dtype)
    end)

    it("on bool masks gives bool, ~ is the logical not", function()
        local m = T({ true, false, true }, "bool")
        local n = T({ true, true, false }, "bool")
        assert.are.same({ true, false, false }, values(m:bitwise_and(n)))
        assert.are.same({ true, true, true }, values(m:bitwise_or(n)))
        assert.are.same({ false, true, true }, values(m:bitwise_xor(n)))
        assert.are.same({ false, true, false }, values(m:bitwise_not()))
        assert.are.equal("bool", m:bitwise_and(n).dtype)
        -- with an integer number or tensor: int64, as PyTorch promotes
        assert.are.same({ 1, 0, 1 }, values(m:bitwise_and(3)))
        assert.are.equal("int64", m:bitwise_and(3).dtype)
        assert.are.same({ 1, 0, 0 }, values(m:bitwise_and(T({ 1, 3, 4 }))))
        assert.are.same({ 2, 0, 2 }, values(m:bitwise_left_shift(1)))
    end)

    it("promotes mixed integer dtypes and broadcasts", function()
        local u = T({ 1, 2 }, "uint8")
        local r = u:bitwise_and(T({ 3, 3 }, "int32"))
        assert.are.equal("int32", r.dtype)
        assert.are.same({ 1, 2 }, values(r))
        local x = T({ { 1, 2 }, { 3, 4 } })
        assert.are.same({ { 1, 2 }, { 1, 4 } }, values(x:bitwise_and(T({ 1, 6 }))))
        assert.are.same({ 1, 0, 1 }, values(tide.bitwise_and(1, T({ 5, 6, 7 }))))
    end)

    it("has in-place twins that write into the tensor", function()
        local a = T({ 12, 10 }, "int32")
        local same = a:bitwise_and_(T({ 10, 6 }, "int32"))
        assert.are.equal(a, same)
        assert.are.same({ 8, 2 }, values(a))
        a:bitwise_or_(1)
        assert.are.same({ 9, 3 }, values(a))
        a:bitwise_xor_(T({ 1, 1 }, "int32"))
        assert.are.same({ 8, 2 }, values(a))
        a:bitwise_left_shift_(2)
        assert.are.same({ 32, 8 }, values(a))
        a:bitwise_right_shift_(T({ 1, 3 }, "int32"))
        assert.are.same({ 16, 1 }, values(a))
        a:bitwise_not_()
        assert.are.same({ -17, -2 }, values(a))
        local m = T({ true, false }, "bool")
        m:bitwise_not_()
        assert.are.same({ false, true }, values(m))
        -- an int64 result written into a uint8 tensor wraps into it, as add_ does
        local u = T({ 255, 1 }, "uint8")
        u:bitwise_and_(T({ 15, 3 }))
        assert.are.same({ 15, 1 }, values(u))
    end)

    it("refuses float tensors, naming the dtypes and the fix", function()
        local f = tide.tensor({ 1.5, 2 }, { device = D.name })
        local i = T({ 1, 2 })
        assert.matches("tide: bitwise_and: needs integer or bool tensors, got float32 and int64; " ..
            "convert with :long() first", catch(function() return f:bitwise_and(i) end), 1, true)
        assert.matches("tide: bitwise_not: needs an integer or bool tensor, got float32; " ..
            "convert with :long() first", catch(function() return f:bitwise_not() end), 1, true)
        assert.matches("tide: bitwise_or: needs integer or bool tensors, got float32",
            catch(function() return f:bitwise_or(1) end), 1, true)
        assert.matches("tide: bitwise_xor: needs integer or bool tensors, got float16",
            catch(function() return f:half():bitwise_xor(i:half()) end), 1, true)
    end)

    it("refuses a fractional number, and shifts of two bool tensors", function()
        local i = T({ 1, 2 })
        assert.matches("tide: bitwise_and: the number 1.5 is not an integer; bitwise ops take " ..
            "integers", catch(function() return i:bitwise_and(1.5) end), 1, true)
        local m = T({ true, false }, "bool")
        assert.matches("tide: bitwise_left_shift: needs integer tensors, got bool and bool; " ..
            "convert with :long() first", catch(function() return m:bitwise_left_shift(m) end),
            1, true)
    end)

    it("leaves the tensor as it was when an in-place call fails", function()
        local m = T({ true, false }, "bool")
        assert.matches("tide: bitwise_and_: the result has dtype int64, which cannot be written " ..
            "into a bool tensor in place", catch(function() return m:bitwise_and_(T({ 1, 0 })) end),
            1, true)
        assert.are.same({ true, false }, values(m))
        local i = T({ 6, 7 })
        catch(function() return i:bitwise_or_(0.5) end)
        catch(function() return i:bitwise_or_(tide.tensor({ 1.5, 2 }, { device = D.name })) end)
        assert.are.same({ 6, 7 }, values(i))
    end)

    it("needs its operands on one device", function()
        local a = T({ 1, 2 })
        local b = tide.tensor({ 1, 2 }, { dtype = "int64", device = D.other })
        assert.matches("tide: bitwise_and: ", catch(function() return a:bitwise_and(b) end), 1,
            true)
        assert.matches("move one with :to", catch(function() return a:bitwise_and(b) end), 1,
            true)
    end)
end)

describe("gcd and lcm (" .. D.name .. ")", function()
    it("take the magnitudes, as PyTorch does, 0 included", function()
        local a, b = T({ 12, -18, 0, 7, 0, -4 }), T({ 8, 12, 5, 0, 0, -6 })
        assert.are.same({ 4, 6, 5, 7, 0, 2 }, values(a:gcd(b)))
        assert.are.same({ 24, 36, 0, 0, 0, 12 }, values(tide.lcm(a, b)))
        assert.are.same({ 15, 25 }, values(T({ 255, 100 }, "uint8"):gcd(T({ 15, 75 }, "uint8"))))
        assert.are.equal("uint8", T({ 4 }, "uint8"):lcm(T({ 6 }, "uint8")).dtype)
    end)

    it("broadcast, promote as add, take a number on either side", function()
        local r = T({ 4, 6, 9 }, "int32"):gcd(T({ { 2 }, { 3 } }))
        assert.are.equal("int64", r.dtype)
        assert.are.same({ { 2, 2, 1 }, { 1, 3, 3 } }, values(r))
        assert.are.same({ 12, 6, 18 }, values(tide.lcm(6, T({ 4, 6, 9 }))))
        assert.are.equal("int32", T({ 4 }, "int32"):gcd(6).dtype)
    end)

    it("keep the low bits of a result past the dtype, the same on every device", function()
        local min = T({ -2147483648, -2147483648 }, "int32")
        assert.are.same({ -2147483648, 2 }, values(min:gcd(T({ 0, 6 }, "int32"))))
        -- 46341 * 46342 is past 2^31: PyTorch 1.13 gives its magnitude, 2147432674
        assert.are.same({ -2147432674 }, values(T({ 46341 }, "int32"):lcm(T({ 46342 }, "int32"))))
    end)

    it("have in-place twins", function()
        local a = T({ 12, 18 })
        assert.are.equal(a, a:gcd_(T({ 8, 12 })))
        assert.are.same({ 4, 6 }, values(a))
        a:lcm_(3)
        assert.are.same({ 12, 6 }, values(a))
    end)

    it("refuse float and bool tensors, naming the dtypes and the fix", function()
        local f = T({ 1.5 }, "float32")
        assert.matches("tide: gcd: needs integer tensors, got float32 and int64; convert with " ..
            ":long() first", catch(function() return f:gcd(T({ 2 })) end), 1, true)
        local m = T({ true }, "bool")
        assert.matches("tide: lcm: needs integer tensors, got bool and bool",
            catch(function() return m:lcm(m) end), 1, true)
        local a = T({ 12, 18 })
        catch(function() return a:gcd_(f) end)
        assert.are.same({ 12, 18 }, values(a))
    end)
end)

describe("bitwise operators & | ~ << >> (Lua 5.3+) #lua53", function()
    if not host.integers then
        return -- Lua 5.1 and LuaJIT have no such operators: the methods above stand for them
    end
    local ops = load([[return {
        band = function(a, b) return a & b end, bor = function(a, b) return a | b end,
        bxor = function(a, b) return a ~ b end, bnot = function(a) return ~a end,
        shl = function(a, b) return a << b end, shr = function(a, b) return a >> b end }]])()

    it("call the bitwise ops, a number on either side", function()
        local a = T({ 12, -7 })
        local b = T({ 10, 3 })
        assert.are.same({ 8, 1 }, values(ops.band(a, b)))
        assert.are.same({ 14, -5 }, values(ops.bor(a, b)))
        assert.are.same({ 6, -6 }, values(ops.bxor(a, b)))
        assert.are.same({ -13, 6 }, values(ops.bnot(a)))
        assert.are.same({ 24, -14 }, values(ops.shl(a, 1)))
        assert.are.same({ 3, -2 }, values(ops.shr(a, 2)))
        assert.are.same({ 0, 1 }, values(ops.band(5, b)))
        assert.are.same({ 1024, 8 }, values(ops.shl(1, b)))
    end)

    it("combine bool masks as PyTorch's & | ~ do", function()
        local x = tide.tensor({ -2, -0.5, 0.5, 2 }, { device = D.name })
        local inside = ops.band(x:gt(-1), x:lt(1))
        assert.are.equal("bool", inside.dtype)
        assert.are.same({ false, true, true, false }, values(inside))
        assert.are.same({ true, false, false, true }, values(ops.bnot(inside)))
        assert.are.same({ true, false, true, true }, values(ops.bor(x:lt(-1), x:gt(0))))
    end)

    it("refuse float tensors with the op's message", function()
        local f = tide.tensor({ 1.5 }, { device = D.name })
        assert.matches("tide: bitwise_and: needs integer or bool tensors, got float32",
            catch(function() return ops.band(f, f) end), 1, true)
        assert.matches("tide: bitwise_not: needs an integer or bool tensor, got float32",
            catch(function() return ops.bnot(f) end), 1, true)
    end)
end)
