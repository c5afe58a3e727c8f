-- window_rows_spec.lua — the WINDOW kernel rows (include/tide_kernels.def): max_pool2d,
-- max_pool2d_backward, unfold2d (im2col) and fold2d (col2im), called through their generic
-- binding tide.core._internal.<row>. The dispatch sizes every output from input 1 and the window
-- (PyTorch's pooling sizes, ceil_mode and dilation included), and refuses a bad window with its
-- own message; the C API (K.maxpool2d, K.im2col, ...) runs the same rows. Values: PyTorch 1.13.
local tide = require("tide")
local core = require("tide.core")
local K = core._internal
local D = require("spec.support.device")

local dev = D.name
local X = { { { { 1, 3, 2, 0, 5 }, { 4, 2, 8, 1, -1 }, { 0, 0, 5, 6, 2 }, { 9, 1, 7, 5, 3 },
    { 2, 2, 6, 0, 4 } } } }

-- a tensor's values on the host, as float64 numbers
local function list(t)
    return t:cpu():double():tolist()
end

local function err(f, ...)
    local ok, e = pcall(f, ...)
    assert.is_false(ok)
    return e
end

describe("the WINDOW rows on " .. dev, function()
    it("list their tensors' classes and the window's parameters", function()
        local mp = core._kernels.max_pool2d
        assert.are.equal("window", mp.kind)
        assert.are.same({ "image" }, mp.inputs_shape)
        assert.are.same({ "pooled", "pooled" }, mp.outputs_shape)
        assert.are.same({ false, true }, mp.outputs_index)
        assert.are.same({ "kh", "kw", "sh", "sw", "ph", "pw", "dh", "dw", "ceil_mode" }, mp.params)
        assert.are.same({ "pooled", "pooled" }, core._kernels.max_pool2d_backward.inputs_shape)
        assert.are.same({ "H", "W" }, core._kernels.max_pool2d_backward.params)
        assert.are.same({ "columns" }, core._kernels.unfold2d.outputs_shape)
        assert.are.same({ "kh", "kw", "sh", "sw", "ph", "pw", "dh", "dw", "folded", "C", "H",
            "W" }, core._kernels.fold2d.params)
    end)

    it("max_pool2d: PyTorch's values and 0-based positions, ceil_mode and dilation", function()
        for _, dt in ipairs({ "float32", "float64", "float16", "bfloat16" }) do
            local x = tide.tensor(X, { dtype = dt, device = dev })
            -- F.max_pool2d(x, 3, 2, 1, ceil_mode=True, return_indices=True)
            local y, i = K.max_pool2d(x, 3, 3, 2, 2, 1, 1, 1, 1, true)
            assert.are.same({ 1, 1, 3, 3 }, y.shape)
            assert.are.equal(dt, y.dtype)
            assert.are.same({ { { { 4, 8, 5 }, { 9, 8, 6 }, { 9, 7, 5 } } } }, list(y))
            assert.are.same({ { { { 5, 7, 4 }, { 15, 7, 13 }, { 15, 17, 18 } } } }, list(i))
            -- F.max_pool2d(x, 2, 1, 0, dilation=2, return_indices=True)
            y, i = K.max_pool2d(x, 2, 2, 1, 1, 0, 0, 2, 2, false)
            assert.are.same({ { { { 5, 6, 5 }, { 9, 5, 8 }, { 6, 6, 6 } } } }, list(y))
            assert.are.same({ { { { 12, 13, 4 }, { 15, 18, 7 }, { 22, 13, 22 } } } }, list(i))
            -- the C API runs the same row
            local y2, i2 = K.maxpool2d(x, 2, 2, 1, 1, 0, 0, 2, 2, false)
            assert.is_true(y2:eq(y):all():item() and i2:eq(i):all():item())
            -- the gradient scatters at the positions, overlaps summed
            local g = K.max_pool2d_backward(tide.ones({ 1, 1, 3, 3 }, { dtype = dt, device = dev }),
                i, 5, 5)
            assert.are.same({ 1, 1, 5, 5 }, g.shape)
            assert.are.same({ { { { 0, 0, 0, 0, 1 }, { 0, 0, 1, 0, 0 }, { 0, 0, 1, 2, 0 },
                { 1, 0, 0, 1, 0 }, { 0, 0, 2, 0, 0 } } } }, list(g))
        end
    end)

    it("unfold2d and fold2d: F.unfold's columns and F.fold's sums, folded or not", function()
        local x = tide.tensor(X, { dtype = "float64", device = dev })
        -- F.unfold(x, (2, 3), dilation=(1, 2), padding=(1, 0), stride=(2, 1))
        local u = K.unfold2d(x, 2, 3, 2, 1, 1, 0, 1, 2, false)
        assert.are.same({ { { 0, 4, 9 }, { 0, 8, 7 }, { 0, -1, 3 }, { 1, 0, 2 }, { 2, 5, 6 },
            { 5, 2, 4 } } }, list(u))
        local folded = K.unfold2d(x, 2, 3, 2, 1, 1, 0, 1, 2, true) -- [C kh kw, N, L]
        assert.are.same({ 6, 1, 3 }, folded.shape)
        assert.is_true(folded:permute(2, 1, 3):eq(u):all():item())
        -- F.fold(arange(1, 19).view(1, 6, 3), (5, 5), (2, 3), dilation=(1, 2), padding=(1, 0),
        -- stride=(2, 1))
        local c = tide.arange(1, 19, { dtype = "float64", device = dev }):view(1, 6, 3)
        local want = { { { { 10, 0, 13, 0, 16 }, { 2, 0, 5, 0, 8 }, { 11, 0, 14, 0, 17 },
            { 3, 0, 6, 0, 9 }, { 12, 0, 15, 0, 18 } } } }
        assert.are.same(want, list(K.fold2d(c, 2, 3, 2, 1, 1, 0, 1, 2, false, 1, 5, 5)))
        local cf = c:permute(2, 1, 3):contiguous()
        assert.are.same(want, list(K.fold2d(cf, 2, 3, 2, 1, 1, 0, 1, 2, true, 1, 5, 5)))
    end)

    it("refuses a bad window with the tide: message, before anything runs", function()
        local x = tide.tensor(X, { dtype = "float32", device = dev })
        assert.are.equal("tide: max_pool2d: kernel 4x4 (dilation 2x2) is larger than the padded " ..
            "input 5x5; use a smaller kernel or more padding",
            err(K.max_pool2d, x, 4, 4, 1, 1, 0, 0, 2, 2, false):match("tide: .*"))
        assert.are.equal("tide: max_pool2d: padding 2x1 must be at most half the kernel 3x3",
            err(K.max_pool2d, x, 3, 3, 1, 1, 2, 1, 1, 1, false):match("tide: .*"))
        assert.are.equal("tide: max_pool2d: input must be 4-d [N, C, H, W], got shape [5, 5]",
            err(K.max_pool2d, x[1][1], 2, 2, 1, 1, 0, 0, 1, 1, false):match("tide: .*"))
        assert.are.equal("tide: max_pool2d: sh = 0 must be in 1..2147483647",
            err(K.max_pool2d, x, 2, 2, 0, 1, 0, 0, 1, 1, false):match("tide: .*"))
        assert.are.equal("tide: fold2d: cols of shape [1, 6, 4] must be [1, 6, 3] for C, H, W " ..
            "and the window", err(K.fold2d, tide.zeros({ 1, 6, 4 }, { device = dev }), 2, 3, 2, 1,
            1, 0, 1, 2, false, 1, 5, 5):match("tide: .*"))
        assert.are.equal("tide: max_pool2d_backward: indices of shape [1, 1, 3, 2] must be " ..
            "[1, 1, 3, 3], as grad_out", err(K.max_pool2d_backward,
            tide.ones({ 1, 1, 3, 3 }, { device = dev }),
            tide.zeros({ 1, 1, 3, 2 }, { dtype = "int64", device = dev }), 5, 5):match("tide: .*"))
        -- the C API's own words stay
        assert.are.equal("tide: maxpool2d: kernel 4x4 (dilation 2x2) is larger than the padded " ..
            "input 5x5; use a smaller kernel or more padding",
            err(K.maxpool2d, x, 4, 4, 1, 1, 0, 0, 2, 2):match("tide: .*"))
    end)
end)
