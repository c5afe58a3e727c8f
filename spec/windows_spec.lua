-- windows_spec.lua — the window functions hann_window, hamming_window, blackman_window,
-- bartlett_window and kaiser_window against PyTorch 1.13's float64 values (periodic by default,
-- symmetric with periodic = false), float32 as the same rounded, on the device under test; the
-- options and their refusals.
local tide = require("tide")
local D = require("spec.support.device")

local function near(want, got, tol, what)
    assert.are.equal(#want, #got, what .. ": length")
    for i = 1, #want do
        assert(math.abs(want[i] - got[i]) <= tol, ("%s: element %d is %.17g, PyTorch's %.17g")
            :format(what, i, got[i], want[i]))
    end
end

local function values(t)
    return t:to("cpu"):totable()
end

local F64 = { dtype = "float64", device = D.name }

describe("window functions (" .. D.name .. ")", function()
    it("match PyTorch's periodic windows", function()
        near({ 0.0, 0.1464466094067262, 0.49999999999999994, 0.8535533905932737, 1.0,
            0.8535533905932738, 0.5000000000000001, 0.14644660940672632 },
            values(tide.hann_window(8, F64)), 1e-15, "hann_window(8)")
        near({ 5.2773441320097665e-05, 0.03276828844175176, 0.33089863665707414,
            0.8888676640466582, 0.8888676640466582, 0.33089863665707414, 0.03276828844175176 },
            values(tide.kaiser_window(7, F64)), 1e-14, "kaiser_window(7)")
        near({ 0.0, 0.09045342435412806, 0.4591829575459636, 0.9203636180999082,
            0.9203636180999082, 0.4591829575459638, 0.09045342435412812 },
            values(tide.blackman_window(7, F64)), 1e-15, "blackman_window(7)")
        near({ 0.0, 0.3333333333333333, 0.6666666666666666, 1.0, 0.6666666666666667,
            0.3333333333333335 }, values(tide.bartlett_window(6, F64)), 1e-15, "bartlett_window(6)")
        near({ 0.09999999999999998, 0.29999999999999993, 0.7, 0.9, 0.7000000000000002,
            0.30000000000000027 }, values(tide.hamming_window(6, { alpha = 0.5, beta = 0.4,
            dtype = "float64", device = D.name })), 1e-15, "hamming_window(6, 0.5, 0.4)")
    end)

    it("match PyTorch's symmetric windows, float32 by default", function()
        local sym = { periodic = false, device = D.name }
        local w = tide.hamming_window(5, sym)
        assert.are.equal("float32", w.dtype)
        assert.are.equal(D.name, tostring(w.device))
        near({ 0.08, 0.54, 1.0, 0.54, 0.08 }, values(w), 1e-7, "hamming_window(5, false)")
        near({ 0.0, 0.5, 1.0, 0.5, 0.0 }, values(tide.hann_window(5, sym)), 1e-7, "hann")
        near({ 0.0, 0.34, 1.0, 0.34, 0.0 }, values(tide.blackman_window(5, sym)), 1e-7,
            "blackman")
        near({ 0.036710892271286676, 0.4149036392433668, 0.9138124838692001, 0.9138124838692001,
            0.4149036392433668, 0.036710892271286676 },
            values(tide.kaiser_window(6, { periodic = false, beta = 5, device = D.name })), 1e-7,
            "kaiser_window(6, false, 5)")
        -- PyTorch's positional periodic
        near({ 0.0, 0.5, 1.0, 0.5, 0.0 }, values(tide.hann_window(5, false)), 1e-7, "hann false")
    end)

    it("give [] for 0 points and [1] for one, as PyTorch", function()
        assert.are.same({}, values(tide.hann_window(0)))
        assert.are.same({ 1 }, values(tide.kaiser_window(1)))
        assert.is_true(tide.bartlett_window(4, { requires_grad = true }).requires_grad)
    end)

    it("refuse a negative length, an integer dtype and unknown options", function()
        assert.has_error(function() tide.hann_window(-1) end,
            "tide: hann_window: window_length must be >= 0, got -1")
        assert.has_error(function() tide.blackman_window(3, { dtype = "int64" }) end,
            "tide: blackman_window: a window needs a floating-point dtype, got int64")
        local ok, err = pcall(tide.hann_window, 5, { periodc = true })
        assert.is_false(ok)
        assert.matches('tide: hann_window: unknown option "periodc"', err, 1, true)
        ok, err = pcall(tide.kaiser_window, 5, { beta = "big" })
        assert.is_false(ok)
        assert.matches("tide: kaiser_window: beta must be a number, got string", err, 1, true)
    end)
end)
