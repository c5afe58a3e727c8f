-- conv2d by the device's own convolution (oneDNN for float32 on the CPU, when tide is built
-- with it: src/cpu/conv_dnnl.c) against the im2col + gemm path, forward and every gradient,
-- over strides, paddings, dilations, groups, with and without bias. Without oneDNN the core has
-- no such kernel (tide._internal.conv2d gives nil) and nn runs im2col + gemm.
local tide = require("tide")
local core = require("tide.core")
local K = core._internal -- the internal kernels (tide._internal in docs/API.md)
local nn = tide.nn
local F = nn.functional
local fused = require("tide.nn._fused")

local function max_rel(a, b)
    local d = a:sub(b):abs():max():item()
    return d / (1 + b:abs():max():item())
end

-- forward and gradients of F.conv2d with fused.native_conv set to native
local function run(native, x, w, b, opts, gy, need)
    fused.native_conv = native
    local xs = x:clone():requires_grad_(need.x)
    local ws = w:clone():requires_grad_(need.w)
    local bs = b and b:clone():requires_grad_(need.b)
    local y = F.conv2d(xs, ws, bs, opts)
    y:mul(gy):sum():backward()
    fused.native_conv = true
    return y, xs.grad, ws.grad, bs and bs.grad
end

local CASES = {
    { n = 4, c = 1, o = 8, h = 12, w = 12, k = { 3, 3 }, opts = {} },
    { n = 3, c = 6, o = 4, h = 9, w = 11, k = { 3, 2 }, opts = { stride = 2, padding = 1 } },
    { n = 2, c = 4, o = 6, h = 10, w = 9, k = { 3, 3 },
        opts = { dilation = { 2, 3 }, padding = 2 } },
    { n = 2, c = 6, o = 9, h = 8, w = 8, k = { 3, 3 }, opts = { groups = 3, padding = 1 } },
    { n = 2, c = 4, o = 4, h = 9, w = 9, k = { 3, 3 },
        opts = { groups = 4, stride = { 2, 1 }, dilation = 2 } },
    { n = 1, c = 3, o = 5, h = 7, w = 6, k = { 1, 1 }, opts = { stride = 3 }, nobias = true },
    { n = 5, c = 2, o = 3, h = 6, w = 6, k = { 4, 4 }, opts = { padding = { 0, 2 } } },
}

describe("conv2d by the device's own convolution", function()
    local native = K.conv2d(tide.zeros({ 1, 1, 3, 3 }), tide.zeros({ 1, 1, 1, 1 }), nil,
        1, 1, 1, 1, 0, 0, 1, 1, 1) ~= nil

    it("exists on the CPU for float32 exactly when tide has oneDNN, never for float64", function()
        local dnnl = os.getenv("TIDE_EXPECT_DNNL")
        if dnnl then
            assert.are.equal(dnnl == "1", native)
        end
        assert.is_nil(K.conv2d(tide.zeros({ 1, 1, 3, 3 }, { dtype = "float64" }),
            tide.zeros({ 1, 1, 1, 1 }, { dtype = "float64" }), nil, 1, 1, 1, 1, 0, 0, 1, 1, 1))
    end)

    for i, c in ipairs(CASES) do
        it("matches im2col + gemm, case " .. i, function()
            tide.manual_seed(i)
            local x = tide.randn(c.n, c.c, c.h, c.w)
            local w = tide.randn(c.o, c.c / (c.opts.groups or 1), c.k[1], c.k[2])
            local b = not c.nobias and tide.randn(c.o) or nil
            local yref = F.conv2d(x, w, b, c.opts)
            if native then -- oneDNN takes the case: the comparison below is not gemm vs gemm
                local function pair(v, d)
                    v = v or d
                    return type(v) == "table" and v or { v, v }
                end
                local s, p, d = pair(c.opts.stride, 1), pair(c.opts.padding, 0),
                    pair(c.opts.dilation, 1)
                assert.is_not_nil(K.conv2d(x, w, b, c.k[1], c.k[2], s[1], s[2], p[1], p[2],
                    d[1], d[2], c.opts.groups or 1))
            end
            local gy = tide.randn(yref.shape)
            for _, need in ipairs({ { x = true, w = true, b = true }, { x = true },
                { w = true }, b and { b = true } or { w = true } }) do
                local y1, gx1, gw1, gb1 = run(true, x, w, b, c.opts, gy, need)
                local y2, gx2, gw2, gb2 = run(false, x, w, b, c.opts, gy, need)
                assert.is_true(max_rel(y1, y2) < 1e-5)
                assert.are.equal(need.x == true, gx1 ~= nil)
                assert.are.equal(need.w == true, gw1 ~= nil)
                assert.are.equal(need.b == true and b ~= nil, gb1 ~= nil)
                if gx1 then assert.is_true(max_rel(gx1, gx2) < 1e-5) end
                if gw1 then assert.is_true(max_rel(gw1, gw2) < 1e-5) end
                if gb1 then assert.is_true(max_rel(gb1, gb2) < 1e-5) end
            end
        end)
    end

    it("trains nn.Conv2d the same both ways, and repeats its shape from its cache", function()
        local function train(native_conv)
            tide.manual_seed(7)
            fused.native_conv = native_conv
            local m = nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(),
                nn.Conv2d(4, 2, 3, { groups = 2 }))
            local opt = tide.optim.SGD(m:parameters(), { lr = 0.05 })
            local x = tide.randn(3, 1, 8, 8)
            local loss
            for _ = 1, 4 do
                opt:zero_grad()
                loss = m(x):pow(2):mean()
                loss:backward()
                opt:step()
            end
            fused.native_conv = true
            return loss:item()
        end
        local a, b = train(true), train(false)
        assert.is_true(math.abs(a - b) <= 1e-5 * (1 + math.abs(b)), a .. " vs " .. b)
    end)

    it("gives the weight's second-order graph through the gemm path (create_graph)", function()
        local x = tide.randn(2, 2, 5, 5)
        local function grad2(native_conv)
            fused.native_conv = native_conv
            local w = tide.ones({ 3, 2, 3, 3 }):mul(0.1):requires_grad_(true)
            local y = F.conv2d(x, w):pow(2):sum()
            local gw = tide.autograd.grad({ y }, { w }, { create_graph = true })[1]
            gw:pow(2):sum():backward()
            fused.native_conv = true
            return gw:detach(), w.grad
        end
        local gw1, gg1 = grad2(true)
        local gw2, gg2 = grad2(false)
        assert.is_true(max_rel(gw1, gw2) < 1e-5)
        assert.is_true(max_rel(gg1, gg2) < 1e-5)
    end)

    it("gives the same values past its cache of 64 shapes", function()
        local w = tide.randn(2, 1, 2, 2)
        local function both(h)
            local x = tide.randn(1, 1, h, 3)
            fused.native_conv = false
            local y2 = F.conv2d(x, w)
            fused.native_conv = true
            return F.conv2d(x, w), y2
        end
        for h = 2, 75 do -- 74 shapes evict the first ones, which then come back
            local y1, y2 = both(h <= 70 and h or h - 68)
            assert.is_true(max_rel(y1, y2) < 1e-5)
        end
    end)

    it("leaves mixed dtypes to the gemm path's promotion", function()
        local x, w = tide.randn(2, 2, 5, 5), tide.randn(3, 2, 3, 3)
        local b = tide.randn(3):double()
        local y1 = F.conv2d(x, w, b)
        fused.native_conv = false
        local y2 = F.conv2d(x, w, b)
        fused.native_conv = true
        assert.are.equal(y2.dtype, y1.dtype)
        assert.is_true(max_rel(y1, y2) < 1e-6)
    end)

    it("checks its tensors in the core", function()
        local ok, err = pcall(K.conv2d, tide.zeros({ 1, 2, 5, 5 }), tide.zeros({ 3, 1, 3, 3 }),
            nil, 3, 3, 1, 1, 0, 0, 1, 1, 1)
        assert.is_false(ok)
        assert.truthy(err:find("conv2d: weight [3, 1, 3, 3] does not fit input [1, 2, 5, 5], " ..
            "kernel 3x3 and groups 1", 1, true), err)
    end)
end)
