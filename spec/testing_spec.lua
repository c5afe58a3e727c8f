-- testing_spec.lua: tide.testing, PyTorch 1.13's torch.testing for ported test code:
-- assert_close's tolerances, checks and messages (each expected message is PyTorch 1.13's for
-- the same call, with tide's 1-based indices and "tide: testing.assert_close: " before it), and
-- make_tensor's draws.
local tide = require("tide")
local T = tide.testing

local function message(f)
    local ok, err = pcall(f)
    assert.is_false(ok, "expected an error")
    return (tostring(err):gsub("^[^\n]-:%d+: ", ""))
end

local P = "tide: testing.assert_close: "

local function f32(values)
    return tide.tensor(values, { dtype = "float32" })
end

describe("tide.testing.assert_close", function()
    it("passes within PyTorch's default tolerances of each dtype, and raises past them", function()
        T.assert_close(f32({ 1, 2 }), f32({ 1 + 1e-6, 2 }))      -- float32: rtol 1.3e-6, atol 1e-5
        T.assert_close(f32({ 1, math.huge }), f32({ 1, math.huge })) -- equal infinities
        local wide = tide.tensor({ 1, 2 }, { dtype = "float64" })
        assert.matches("Tensor-likes are not close!", message(function()
            T.assert_close(wide, wide + 1e-6)                      -- float64: 1e-7, 1e-7
        end), 1, true)
        T.assert_close(tide.tensor({ 1, 2 }, { dtype = "float16" }),
            tide.tensor({ 1.0009765625, 2 }, { dtype = "float16" })) -- float16: rtol 1e-3
        T.assert_close(f32({ 1 }), f32({ 1.1 }), { rtol = 0.2, atol = 0 })
        T.assert_close(3, 3)
        T.assert_close(0.1 + 0.2, 0.3)
        T.assert_close(true, true)
        T.assert_close(nil, nil)
    end)

    it("reports the mismatched elements and the greatest differences, as PyTorch", function()
        assert.are.equal(P .. "Tensor-likes are not close!\n\n" ..
            "Mismatched elements: 1 / 3 (33.3%)\n" ..
            "Greatest absolute difference: 0.5 at index {2} (up to 1e-05 allowed)\n" ..
            "Greatest relative difference: 0.2 at index {2} (up to 1.3e-06 allowed)",
            message(function() T.assert_close(f32({ 1, 2, 3 }), f32({ 1, 2.5, 3 })) end))
        assert.are.equal(P .. "Tensor-likes are not close!\n\n" ..
            "Mismatched elements: 2 / 4 (50.0%)\n" ..
            "Greatest absolute difference: 2.0 at index {2, 1} (up to 1e-05 allowed)\n" ..
            "Greatest relative difference: inf at index {2, 1} (up to 1.3e-06 allowed)",
            message(function()
                T.assert_close(f32({ { 0, 1 }, { 2, 3 } }), f32({ { 0, 1 }, { 0, 3.5 } }))
            end))
        -- integers and bools compare exactly: "equal", no tolerance shown
        assert.are.equal(P .. "Tensor-likes are not equal!\n\n" ..
            "Mismatched elements: 1 / 3 (33.3%)\n" ..
            "Greatest absolute difference: 1 at index {2}\n" ..
            "Greatest relative difference: 0.3333333432674408 at index {2}",
            message(function()
                T.assert_close(tide.tensor({ 1, 2, 3 }, { dtype = "int64" }),
                    tide.tensor({ 1, 3, 3 }, { dtype = "int64" }))
            end))
        assert.are.equal(P .. "Scalars are not close!\n\n" ..
            "Absolute difference: 0.5 (up to 1e-05 allowed)\n" ..
            "Relative difference: 0.3333333333333333 (up to 1.3e-06 allowed)",
            message(function() T.assert_close(f32(1), f32(1.5)) end))
        assert.are.equal(P .. "Scalars are not close!\n\n" ..
            "Absolute difference: 0.5 (up to 1e-07 allowed)\n" ..
            "Relative difference: 0.5 (up to 1e-07 allowed)",
            message(function() T.assert_close(1.5, 1.0) end))
        -- NaN: unequal unless equal_nan
        assert.matches("Greatest absolute difference: nan at index {1}",
            message(function() T.assert_close(f32({ 0 / 0 }), f32({ 0 / 0 })) end), 1, true)
        T.assert_close(f32({ 0 / 0, 1 }), f32({ 0 / 0, 1 }), { equal_nan = true })
        -- complex tensors: the modulus of the difference
        assert.matches("Greatest absolute difference: 0.5 at index {2}", message(function()
            T.assert_close(tide.complex(f32({ 1, 2 }), f32({ 0, 1 })),
                tide.complex(f32({ 1, 2 }), f32({ 0, 1.5 })))
        end), 1, true)
    end)

    it("checks shape, dtype, device and (asked) strides first", function()
        assert.are.equal(P .. "The values for attribute 'shape' do not match: {2} != {3}.",
            message(function() T.assert_close(f32({ 1, 2 }), f32({ 1, 2, 3 })) end))
        local wide = tide.tensor({ 1, 2 }, { dtype = "float64" })
        assert.are.equal(P .. "The values for attribute 'dtype' do not match: float32 != float64.",
            message(function() T.assert_close(f32({ 1, 2 }), wide) end))
        T.assert_close(f32({ 1, 2 }), wide, { check_dtype = false })
        local far = f32({ 1, 2 }):to("cpu:1")
        assert.are.equal(P .. "The values for attribute 'device' do not match: cpu != cpu:1.",
            message(function() T.assert_close(f32({ 1, 2 }), far) end))
        T.assert_close(f32({ 1, 2 }), far, { check_device = false })
        T.assert_close(tide.ones(2, 3), tide.ones(3, 2):t())
        assert.are.equal(P .. "The values for attribute 'stride()' do not match: {3, 1} != {1, 2}.",
            message(function()
                T.assert_close(tide.ones(2, 3), tide.ones(3, 2):t(), { check_stride = true })
            end))
    end)

    it("compares lists and tables entry by entry, naming the failing entry", function()
        assert.are.equal(P .. "Tensor-likes are not close!\n\n" ..
            "Mismatched elements: 1 / 1 (100.0%)\n" ..
            "Greatest absolute difference: 0.5 at index {1} (up to 1e-05 allowed)\n" ..
            "Greatest relative difference: 0.2 at index {1} (up to 1.3e-06 allowed)\n\n" ..
            "The failure occurred for item [2][\"a\"]",
            message(function()
                T.assert_close({ f32({ 1 }), { a = f32({ 2 }) } }, { f32({ 1 }), { a = f32({ 2.5 }) } })
            end))
        assert.are.equal(P .. "The length of the sequences mismatch: 2 != 3",
            message(function() T.assert_close({ 1, 2 }, { 1, 2, 3 }) end))
        assert.are.equal(P .. "The keys of the tables do not match:\n" ..
            "Missing keys in the actual table: {\"b\"}\nAdditional keys in the actual table: {\"a\"}",
            message(function() T.assert_close({ a = 1 }, { b = 1 }) end))
        assert.are.equal(P .. "Booleans mismatch: true is not false",
            message(function() T.assert_close(true, false) end))
        assert.are.equal(P .. "None mismatch: nil is not 1",
            message(function() T.assert_close(nil, 1) end))
        if not require("tide._compat").is_integer(1.0) then -- 5.3+: 1 and 1.0, as Python's int and float
            assert.are.equal(P .. "The (d)types do not match: integer != float.",
                message(function() T.assert_close(1, 1.0) end))
        end
    end)

    it("takes msg: a string in place of the message, or a function of it", function()
        assert.are.equal("Argh", message(function()
            T.assert_close(f32({ 1, 2 }), f32({ 1, 3 }), { msg = "Argh" })
        end))
        assert.are.equal("H\nTensor-likes are not close!", message(function()
            T.assert_close(f32({ 1, 2 }), f32({ 1, 3 }), { msg = function(m)
                return "H\n" .. m:match("^[^\n]*")
            end })
        end))
    end)

    it("raises on misuse: one tolerance alone, unknown options, inputs it cannot compare", function()
        assert.are.equal(P .. "both rtol and atol must be given or both left out (as PyTorch's), " ..
            "got no atol; pass {rtol = r, atol = a}",
            message(function() T.assert_close(f32({ 1 }), f32({ 1 }), { rtol = 0.2 }) end))
        assert.matches('unknown option "rtool"',
            message(function() T.assert_close(1, 1, { rtool = 1 }) end), 1, true)
        assert.are.equal(P .. "no comparison for a tensor and a number (tensors, numbers, " ..
            "booleans, nil, and lists and tables of them); convert one, e.g. tide.tensor(x)",
            message(function() T.assert_close(f32({ 1 }), 1.0) end))
    end)
end)

describe("tide.testing.make_tensor", function()
    it("draws uniform values in [low, high) of the dtype on the device", function()
        tide.manual_seed(7)
        local x = T.make_tensor(200, { dtype = "float32", device = "cpu", low = -1, high = 1 })
        assert.are.same({ "float32", 200 }, { x.dtype, x:numel() })
        assert.is_true(x:min():item() >= -1 and x:max():item() < 1)
        local d = T.make_tensor(2, 3, { dtype = "float64", device = "cpu:1" })
        assert.are.same({ "float64", "cpu:1", 2, 3 }, { d.dtype, tostring(d.device), d:size(1), d:size(2) })
        assert.is_true(d:abs():max():item() <= 9) -- floats default to [-9, 9)
        local i = T.make_tensor({ 500 }, { dtype = "int64", device = "cpu" })
        assert.are.same({ -9, 9 }, { i:min():item(), i:max():item() }) -- [-9, 10)
        local u = T.make_tensor(300, { dtype = "uint8", device = "cpu" })
        assert.are.same({ 0, 9 }, { u:min():item(), u:max():item() })
        local b = T.make_tensor(50, { dtype = "bool", device = "cpu" })
        assert.are.equal("bool", b.dtype)
        -- the same seed, the same draws
        tide.manual_seed(7)
        assert.are.same(x:tolist(), T.make_tensor(200, { dtype = "float32", device = "cpu", low = -1,
            high = 1 }):tolist())
    end)

    it("takes noncontiguous, exclude_zero and requires_grad", function()
        local n = T.make_tensor(3, 4, { dtype = "float32", device = "cpu", noncontiguous = true })
        assert.are.same({ false, { 8, 2 } }, { n:is_contiguous(), n:stride() })
        local z = T.make_tensor(400, { dtype = "int64", device = "cpu", low = -1, high = 1,
            exclude_zero = true })
        assert.are.equal(0, z:eq(0):sum():item())
        assert.are.equal(400, z:eq(-1):logical_or(z:eq(1)):sum():item())
        local g = T.make_tensor(2, { dtype = "float32", device = "cpu", requires_grad = true })
        assert.is_true(g.requires_grad)
        local c = T.make_tensor(3, { dtype = "complex64", device = "cpu" })
        assert.are.equal("complex64", c.dtype)
    end)

    it("raises PyTorch's refusals", function()
        assert.matches("requires_grad must be false for the integral dtype int64",
            message(function()
                T.make_tensor(2, { dtype = "int64", device = "cpu", requires_grad = true })
            end), 1, true)
        assert.matches("testing.make_tensor: device is required",
            message(function() T.make_tensor(2, { dtype = "int64" }) end), 1, true)
        assert.matches("testing.make_tensor: low (2.0) must be at most high (1.0)",
            message(function()
                T.make_tensor(2, { dtype = "float32", device = "cpu", low = 2.0, high = 1.0 })
            end), 1, true)
        assert.matches("testing.make_tensor: low or high is NaN",
            message(function()
                T.make_tensor(2, { dtype = "float32", device = "cpu", low = 0 / 0 })
            end), 1, true)
    end)
end)
