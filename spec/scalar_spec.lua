-- scalar_spec.lua — numbers mixed with tensors stay exact: a Lua integer reaches an int64
-- tensor's kernels without going through a double (which rounds beyond 2^53), in tide.full,
-- fill_, t[i] = k, scalar arithmetic, comparisons, clamp bounds and where. Device-rule spec
-- (spec/support/device.lua): run_all.sh runs it on cpu, cpu:1 and the emulated cuda:0.
local tide = require("tide")
local D = require("spec.support.device")

local function catch(f)
    local ok, err = pcall(f)
    assert.is_false(ok, "expected an error")
    return err
end

-- a tensor on the device under test
local function T(x, dt)
    return tide.tensor(x, { dtype = dt, device = D.name })
end

local function values(t)
    assert.are.equal(D.name, tostring(t.device))
    return t:cpu():totable()
end

describe("int64 scalars stay exact beyond 2^53 on " .. D.name, function()
    -- Lua integers; 2^62 + 1 would be a float (2^62) in Lua
    local big = (1 << 62) + 1
    local odd = 9007199254740993 -- 2^53 + 1: the first integer a double cannot hold

    it("tide.full, fill_, t[i] = k and item", function()
        local opts = { dtype = "int64", device = D.name }
        assert.are.same({ big, big }, values(tide.full({ 2 }, big, opts)))
        assert.are.same({ big }, values(tide.full({ 1 }, big, { device = D.name }))) -- int64
        assert.are.same({ odd }, values(tide.full(1, odd, { device = D.name })))
        local m = tide.zeros(3, opts)
        m[1] = big
        m[2] = math.maxinteger
        m[3] = math.mininteger
        assert.are.same({ big, math.maxinteger, math.mininteger }, values(m))
        local t = tide.zeros(3, opts):fill_(odd)
        assert.are.same({ odd, odd, odd }, values(t))
        t:narrow(1, 2, 1):fill_(big) -- a strided view
        assert.are.same({ odd, big, odd }, values(t))
        assert.are.equal(odd, tide.full({}, odd, opts):item())
        assert.are.equal("integer", math.type(tide.full({}, odd, opts):item()))
        assert.are.equal(big, T({ big }):sum():item())
        -- float tensors round as a float of that value would
        assert.are.same({ 2.0 ^ 62 },
            values(tide.full({ 1 }, big, { dtype = "float64", device = D.name })))
        -- past int32's range fill_ raises, as PyTorch's checked conversion, and changes nothing
        local small = tide.zeros(1, { dtype = "int32", device = D.name })
        assert.has_error(function() small:fill_(big) end, "tide: fill_: the value " ..
            "4.6116860184273879e+18 cannot be converted to int32 without overflow (its range " ..
            "is -2.14748365e+09 to 2.14748365e+09); give a value in range or another dtype")
        assert.are.same({ 0 }, values(small))
    end)

    it("scalar arithmetic: t + k, k - t, t * k, t:add_(k), %, //", function()
        local t = T({ 1, 2 })
        assert.are.same({ odd + 1, odd + 2 }, values(t + odd))
        assert.are.same({ odd + 1, odd + 2 }, values(odd + t))
        assert.are.same({ big - 1, big - 2 }, values(big - t))
        assert.are.same({ 1 - big, 2 - big }, values(t - big))
        assert.are.same({ big, big * 2 }, values(t * big)) -- big * 2 wraps, as in Lua
        assert.are.same({ big + 1, big + 2 }, values(t:add(big)))
        assert.are.same({ 1 + 2 * odd, 2 + 2 * odd }, values(t:add(odd, 2))) -- alpha
        assert.are.same({ 1 + big, 2 + big }, values(t:add(T({ 1, 1 }), big)))
        assert.are.same({ math.maxinteger % big }, values(T({ math.maxinteger }) % big))
        assert.are.same({ -5 // odd }, values(T({ -5 }) // odd))
        assert.are.same({ big }, values(T({ 1 }):maximum(big)))
        local u = T({ 1, 2 })
        assert.is_true(rawequal(u, u:add_(big)))
        assert.are.same({ big + 1, big + 2 }, values(u))
        u:sub_(big):mul_(odd)
        assert.are.same({ odd, 2 * odd }, values(u))
        -- bool tensors compute in int64
        assert.are.same({ big + 1, big }, values(T({ true, false }) + big))
        -- int32 wraps modulo 2^32 from the exact integer: (2^62 + 1) mod 2^32 = 1
        assert.are.same({ 6 }, values(T({ 5 }, "int32"):add(big)))
        assert.are.same({ 4 }, values(T({ 5 }, "int32"):sub(big)))
        assert.are.same({ 6 }, values(T({ 5 }, "uint8"):add(big)))
    end)

    it("comparisons with a scalar", function()
        local t = T({ big - 1, big, big + 1 })
        assert.are.same({ false, true, false }, values(t:eq(big)))
        assert.are.same({ true, false, true }, values(t:ne(big)))
        assert.are.same({ true, false, false }, values(t:lt(big)))
        assert.are.same({ true, true, false }, values(t:le(big)))
        assert.are.same({ false, false, true }, values(t:gt(big)))
        assert.are.same({ false, true, true }, values(t:ge(big)))
        assert.are.same({ false, true }, values(T({ odd - 1, odd }):eq(odd)))
    end)

    it("clamp bounds", function()
        local t = T({ 0, big, big + 5, math.maxinteger })
        assert.are.same({ big, big, big + 2, big + 2 }, values(t:clamp(big, big + 2)))
        assert.are.same({ big, big, big + 5, math.maxinteger }, values(t:clamp(big)))
        assert.are.same({ 0, big, big + 1, big + 1 }, values(t:clamp(nil, big + 1)))
        assert.are.same({ 0, 2, 2, 2 }, values(t:clamp(0, 2)))
        assert.are.same({ 0, 2 ^ 53, 2 ^ 53, 2 ^ 53 }, values(t:clamp(nil, 2.0 ^ 53)))
        t:clamp_(odd, big)
        assert.are.same({ odd, big, big, big }, values(t))
        -- min above max: max everywhere, exactly, as PyTorch's
        assert.are.same({ big + 1, big + 1, big + 1, big + 1 },
            values(t:clamp(big + 2, big + 1)))
        assert.are.same({ odd, big, big, big }, values(t))
    end)

    it("where with a number", function()
        local c = T({ true, false })
        assert.are.same({ 1, big }, values(tide.where(c, T({ 1, 2 }), big)))
        assert.are.same({ odd, big }, values(tide.where(c, odd, big)))
    end)

    it("counts no transfer for the scalar", function()
        local t = T({ 1, 2 })
        tide.reset_transfer_stats()
        local r = t + odd
        r:add_(big)
        local _ = r:eq(big), r:clamp(odd, big), r:fill_(odd)
        local s = tide.transfer_stats()
        assert.are.equal(0, s.h2d_count + s.d2h_count + s.d2d_count)
    end)
end)
