-- nn3d_spec.lua — the 3-D layers (video, medical volumes) against PyTorch 1.13's values and
-- gradients (spec/fixtures/nn3d_torch.lua, written by spec/fixtures/make_nn3d.py): conv3d and
-- conv_transpose3d (stride, padding, output_padding, dilation, groups), max_pool3d (and its
-- 1-based indices, ties included), avg_pool3d (ceil_mode, count_include_pad,
-- divisor_override), adaptive_avg_pool3d / adaptive_max_pool3d, BatchNorm3d, InstanceNorm3d,
-- the 3-D pads and Conv3d's padding_mode; dropout3d by its properties; errors, printing and
-- devices.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local D = require("spec.support.device")
local P = require("spec.support.porting")

local T = dofile("spec/fixtures/nn3d_torch.lua")
local DEV = D.name

local function t64(v)
    return P.t64(v, DEV)
end

local function catch(f)
    local ok, err = pcall(f)
    assert.is_false(ok, "expected an error")
    return tostring(err)
end

local function r(x, ...)
    return x:reshape(...)
end

-- a module of float64 on the device under test whose parameters are the case's inputs w, b
local function with_params(m, w, b)
    m = m:to("float64"):to(DEV)
    m.weight, m.bias = w, b
    return m
end

describe("nn 3-D layers, PyTorch's values (" .. DEV .. ")", function()
    local CASES = {
        conv3d = { function(x, w, b)
            return F.conv3d(r(x, 1, 2, 4, 5, 4), r(w, 3, 2, 2, 3, 2), b)
        end, T.X160, T.W72, { 0.25, -0.5, 0.75 } },
        conv3d_geom = { function(x, w, b)
            return F.conv3d(r(x, 2, 2, 5, 2, 5), r(w, 4, 1, 2, 2, 3), b, { stride = { 2, 1, 2 },
                padding = { 1, 2, 0 }, dilation = { 2, 1, 1 }, groups = 2 })
        end, T.X200, T.W48, T.B4 },
        conv3d_nobias = { function(x, w)
            return F.conv3d(r(x, 1, 2, 4, 5, 4), r(w, 3, 2, 2, 3, 2), nil,
                { stride = 2, padding = 1 })
        end, T.X160, T.W72 },
        conv3d_reflect = { function(x, w, b) -- Conv3d's padding_mode, PyTorch's pad first
            local m = with_params(nn.Conv3d(2, 3, { 2, 3, 2 }, { padding = { 1, 0, 1 },
                padding_mode = "reflect" }), r(w, 3, 2, 2, 3, 2), b)
            return m(r(x, 1, 2, 4, 5, 4))
        end, T.X160, T.W72, { 0.25, -0.5, 0.75 } },
        conv_transpose3d = { function(x, w, b)
            return F.conv_transpose3d(r(x, 1, 2, 3, 3, 2), r(w, 2, 3, 2, 2, 3), b)
        end, T.X36, T.W72T, { 0.25, -0.5, 0.75 } },
        conv_transpose3d_geom = { function(x, w, b)
            local m = with_params(nn.ConvTranspose3d(2, 4, { 3, 2, 2 }, { stride = { 2, 1, 2 },
                padding = { 1, 0, 1 }, output_padding = { 1, 0, 1 }, dilation = { 1, 2, 1 },
                groups = 2 }), r(w, 2, 2, 3, 2, 2), b)
            return m(r(x, 2, 2, 3, 2, 3))
        end, T.X72, T.W48T, T.B4 },
        conv_transpose3d_dilated = { function(x, w)
            return F.conv_transpose3d(r(x, 1, 2, 3, 3, 2), r(w, 2, 3, 2, 2, 3), nil,
                { padding = { 2, 1, 0 }, output_padding = { 1, 0, 0 }, dilation = { 2, 1, 1 } })
        end, T.X36, T.W72T },
        max_pool3d = { function(x) return F.max_pool3d(r(x, 1, 2, 4, 5, 6), 2) end, T.X240 },
        max_pool3d_geom = { function(x)
            return nn.MaxPool3d({ 3, 2, 3 }, { stride = { 2, 1, 2 }, padding = 1,
                dilation = { 1, 2, 1 }, ceil_mode = true })(r(x, 2, 4, 5, 6))
        end, T.X240 },
        max_pool3d_ties = { function(x)
            return F.max_pool3d(r(x, 1, 2, 4, 5, 6), { 2, 3, 2 }, { stride = 1,
                padding = { 1, 1, 0 } })
        end, T.TIES },
        avg_pool3d = { function(x) return nn.AvgPool3d(2)(r(x, 1, 2, 4, 5, 6)) end, T.X240 },
        avg_pool3d_geom = { function(x)
            return F.avg_pool3d(r(x, 1, 2, 4, 5, 6), { 3, 2, 3 }, { stride = { 2, 2, 1 },
                padding = 1, ceil_mode = true, count_include_pad = false })
        end, T.X240 },
        avg_pool3d_ceil_pad = { function(x)
            return nn.AvgPool3d(3, { stride = 2, padding = 1, ceil_mode = true })(
                r(x, 2, 4, 5, 6))
        end, T.X240 },
        avg_pool3d_divisor = { function(x)
            return F.avg_pool3d(r(x, 1, 2, 4, 5, 6), { 2, 2, 3 }, { padding = { 1, 0, 1 },
                divisor_override = 3 })
        end, T.X240 },
        adaptive_avg_pool3d = { function(x)
            return F.adaptive_avg_pool3d(r(x, 1, 2, 4, 5, 6), { 3, 2, 4 })
        end, T.X240 },
        adaptive_avg_pool3d_keep = { function(x)
            return nn.AdaptiveAvgPool3d({ nil, 3, 4 })(r(x, 2, 4, 5, 6))
        end, T.X240 },
        adaptive_max_pool3d = { function(x)
            return F.adaptive_max_pool3d(r(x, 1, 2, 4, 5, 6), { 3, 2, 4 })
        end, T.X240 },
        adaptive_max_pool3d_ties = { function(x)
            return nn.AdaptiveMaxPool3d(3)(r(x, 2, 4, 5, 6))
        end, T.TIES },
        batch_norm3d = { function(x)
            return nn.BatchNorm3d(3):to("float64"):to(DEV)(r(x, 2, 3, 1, 3, 3))
        end, T.X54 },
        instance_norm3d = { function(x)
            return nn.InstanceNorm3d(3, { affine = true }):to("float64"):to(DEV)(
                r(x, 1, 3, 3, 3, 4))
        end, T.X108 },
        instance_norm3d_unbatched = { function(x)
            return nn.InstanceNorm3d(3)(r(x, 3, 3, 3, 4))
        end, T.X108 },
        constant_pad3d = { function(x)
            return nn.ConstantPad3d({ 1, 0, 2, 1, 0, 1 }, 2.5)(r(x, 2, 3, 1, 3, 3))
        end, T.X54 },
        reflection_pad3d = { function(x)
            return nn.ReflectionPad3d({ 1, 2, 2, 0, 1, 1 })(r(x, 1, 3, 3, 3, 4))
        end, T.X108 },
        replication_pad3d = { function(x)
            return nn.ReplicationPad3d(2)(r(x, 3, 2, 3, 3))
        end, T.X54 },
    }
    P.run_cases(it, T, CASES, function(name, fn, ...)
        P.check_case(T.cases[name], name, DEV, {}, fn, ...)
    end)

    it("max_pool3d and adaptive_max_pool3d give PyTorch's indices plus one", function()
        local W = T.values.indices
        local x, ties = t64(T.X240), t64(T.TIES)
        local function idx(want, got, what)
            assert.are.equal("int64", got.dtype)
            P.close(want, got, 0, what)
        end
        idx(W.max_pool3d, select(2, F.max_pool3d(r(x, 1, 2, 4, 5, 6), 2,
            { return_indices = true })), "max_pool3d")
        idx(W.max_pool3d_geom, select(2, nn.MaxPool3d({ 3, 2, 3 }, { stride = { 2, 1, 2 },
            padding = 1, dilation = { 1, 2, 1 }, ceil_mode = true, return_indices = true })(
            r(x, 2, 4, 5, 6))), "max_pool3d_geom")
        idx(W.max_pool3d_ties, select(2, F.max_pool3d(r(ties, 1, 2, 4, 5, 6), { 2, 3, 2 },
            { stride = 1, padding = { 1, 1, 0 }, return_indices = true })), "max_pool3d_ties")
        idx(W.adaptive_max_pool3d, select(2, F.adaptive_max_pool3d(r(x, 1, 2, 4, 5, 6),
            { 3, 2, 4 }, { return_indices = true })), "adaptive_max_pool3d")
        idx(W.adaptive_max_pool3d_ties, select(2, nn.AdaptiveMaxPool3d(3,
            { return_indices = true })(r(ties, 2, 4, 5, 6))), "adaptive_max_pool3d_ties")
    end)

    it("BatchNorm3d updates its running statistics as PyTorch's", function()
        local m = nn.BatchNorm3d(3):to("float64"):to(DEV)
        m(r(t64(T.X54), 2, 3, 1, 3, 3))
        P.close(T.values.batch_norm3d_running.mean, m.running_mean, 1e-13, "running_mean")
        P.close(T.values.batch_norm3d_running.var, m.running_var, 1e-13, "running_var")
        m:eval()
        local y = m(r(t64(T.X54), 2, 3, 1, 3, 3))
        assert.are.same({ 2, 3, 1, 3, 3 }, y.shape)
    end)
end)

describe("nn 3-D layers: modules, dropout and errors (" .. DEV .. ")", function()
    it("Conv3d and ConvTranspose3d have PyTorch's parameter shapes and init bounds", function()
        tide.manual_seed(1)
        local c = nn.Conv3d(4, 6, { 1, 2, 3 }, { groups = 2 })
        assert.are.same({ 6, 2, 1, 2, 3 }, c.weight.shape)
        assert.are.same({ 6 }, c.bias.shape)
        local bound = 1 / math.sqrt(2 * 6)
        assert.is_true(c.weight:abs():max():item() <= bound)
        assert.is_true(c.bias:abs():max():item() <= bound)
        local t = nn.ConvTranspose3d(4, 6, 2, { groups = 2, bias = false })
        assert.are.same({ 4, 3, 2, 2, 2 }, t.weight.shape)
        assert.is_nil(t.bias)
        assert.is_true(t.weight:abs():max():item() <= 1 / math.sqrt(3 * 8))
        local x = tide.randn({ 2, 4, 3, 4, 5 }):to(DEV)
        assert.are.same({ 2, 6, 3, 3, 3 }, c:to(DEV)(x).shape)
        assert.are.same({ 2, 6, 4, 5, 6 }, t:to(DEV)(x).shape)
    end)

    it("dropout3d zeroes whole channels and scales the rest", function()
        tide.manual_seed(3)
        local x = tide.ones({ 4, 50, 2, 2, 3 }, { dtype = "float64", device = DEV })
        local y = F.dropout3d(x, 0.4)
        local per = y:reshape(200, 12)
        local lo, hi = per:min(2), per:max(2)
        assert.is_true(lo:eq(hi):all():item()) -- each channel all dropped or all kept
        local kept = hi:gt(0):sum():item()
        assert.is_true(kept > 90 and kept < 150, "kept " .. kept)
        assert.is_true(math.abs(hi:max():item() - 1 / 0.6) < 1e-12)
        assert.are.equal(x, F.dropout3d(x, { p = 0.4, training = false }))
        local m = nn.Dropout3d(0.5)
        m:eval()
        assert.are.equal(x, m(x))
        m:train()
        assert.are.same({ 50, 2, 2, 3 }, m(x[1]).shape) -- unbatched {C, D, H, W}
        assert.are.equal(0, F.dropout3d(x, 1):abs():sum():item())
    end)

    it("print as PyTorch's modules", function()
        local function shows(want, m)
            assert.matches(want, tostring(m), 1, true)
        end
        shows("Conv3d(2, 4, kernel_size={3, 3, 3}, stride={1, 1, 1})  [", nn.Conv3d(2, 4, 3))
        shows("Conv3d(2, 4, kernel_size={1, 2, 3}, stride={2, 2, 2}, padding={1, 1, 1}, " ..
            "dilation={2, 2, 2}, groups=2, bias=false, padding_mode=reflect)",
            nn.Conv3d(2, 4, { 1, 2, 3 }, { stride = 2, padding = 1, dilation = 2, groups = 2,
                bias = false, padding_mode = "reflect" }))
        shows("ConvTranspose3d(2, 4, kernel_size={3, 3, 3}, stride={2, 2, 2}, " ..
            "output_padding={1, 1, 1})", nn.ConvTranspose3d(2, 4, 3, { stride = 2,
                output_padding = 1 }))
        shows("MaxPool3d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=false)",
            nn.MaxPool3d(2))
        shows("MaxPool3d(kernel_size={1, 2, 2}, stride={1, 2, 1}, padding=0, dilation=1, " ..
            "ceil_mode=false)", nn.MaxPool3d({ 1, 2, 2 }, { 1, 2, 1 }))
        shows("AvgPool3d(kernel_size=2, stride=2, padding=0)", nn.AvgPool3d(2))
        shows("AdaptiveAvgPool3d(output_size={2, nil, 3})", nn.AdaptiveAvgPool3d({ 2, nil, 3 }))
        shows("AdaptiveMaxPool3d(output_size=2)", nn.AdaptiveMaxPool3d(2,
            { return_indices = true }))
        shows("BatchNorm3d(4, eps=1e-05, momentum=0.1, affine=true, track_running_stats=true)",
            nn.BatchNorm3d(4))
        shows("InstanceNorm3d(4, eps=1e-05, momentum=0.1, affine=false, " ..
            "track_running_stats=false)", nn.InstanceNorm3d(4))
        shows("Dropout3d(p=0.5, inplace=false)", nn.Dropout3d())
        shows("ConstantPad3d(padding={1, 1, 1, 1, 1, 1}, value=2.5)", nn.ConstantPad3d(1, 2.5))
        shows("ReflectionPad3d({1, 1, 1, 1, 1, 1})", nn.ReflectionPad3d(1))
        shows("ReplicationPad3d({1, 2, 0, 1, 1, 0})", nn.ReplicationPad3d({ 1, 2, 0, 1, 1, 0 }))
    end)

    it("name the function, the value at fault and the fix", function()
        local x = tide.zeros({ 1, 2, 3, 4, 4 }, { dtype = "float64", device = DEV })
        local w = tide.zeros({ 3, 2, 2, 2, 2 }, { dtype = "float64", device = DEV })
        local function says(want, f)
            assert.matches(want, catch(f), 1, true)
        end
        says("tide: conv3d: expected 5-D input {N, C, D, H, W} or unbatched {C, D, H, W}, got " ..
            "{3, 4, 4}", function() return F.conv3d(x[1][1], w) end)
        says("tide: conv3d: expected input with 4 channels (dim 2, as weight {3, 4, 2, 2, 2})" ..
            ", got 2", function()
                return F.conv3d(x, tide.zeros({ 3, 4, 2, 2, 2 }, { dtype = "float64",
                    device = DEV }))
            end)
        says("tide: conv3d: input 3x4x4 (padding 0,0,0) is smaller than the kernel 4x2x2",
            function() return F.conv3d(x, tide.zeros({ 3, 2, 4, 2, 2 }, { dtype = "float64",
                device = DEV })) end)
        says("tide: conv3d: expected stride to be an integer or {d, h, w}, got {1, 2}",
            function() return F.conv3d(x, w, nil, { stride = { 1, 2 } }) end)
        says("tide: conv3d: expected padding to be an integer >= 0, got {0, -1, 0}",
            function() return F.conv3d(x, w, nil, { padding = { 0, -1, 0 } }) end)
        says("tide: conv3d: unknown option", function()
            return F.conv3d(x, w, nil, { strides = 2 })
        end)
        says("tide: conv_transpose3d: output_padding 2,0,0 must be smaller than the stride " ..
            "2,1,1 or the dilation 1,1,1", function()
                return F.conv_transpose3d(x, w:narrow(1, 1, 2), nil, { stride = { 2, 1, 1 },
                    output_padding = { 2, 0, 0 } })
            end)
        says("tide: conv_transpose3d: expected input {N, Cin, D, H, W} (or unbatched {Cin, D, " ..
            "H, W}) and weight {Cin, Cout / groups, kd, kh, kw} with the same Cin, got " ..
            "{1, 2, 3, 4, 4} and " ..
            "{3, 2, 2, 2, 2}", function() return F.conv_transpose3d(x, w) end)
        says("tide: max_pool3d: expected input {N, C, D, H, W} or {C, D, H, W}, got {4, 4}",
            function() return F.max_pool3d(x[1][1][1], 2) end)
        says("tide: max_pool3d: padding 2,0,0 should be at most half the kernel 2x2x2",
            function() return F.max_pool3d(x, 2, { padding = { 2, 0, 0 } }) end)
        says("tide: avg_pool3d: kernel 4x2x2 is larger than the padded input 3x4x4; use a " ..
            "smaller kernel or more padding", function() return F.avg_pool3d(x, { 4, 2, 2 }) end)
        says("tide: max_pool3d: kernel 2x2x2 with dilation 3,1,1 spans 4x2x2, larger than " ..
            "the padded input 3x4x4", function()
                return F.max_pool3d(x, 2, { dilation = { 3, 1, 1 } })
            end)
        says("tide: avg_pool3d: expected divisor_override to be a non-zero integer, got 0",
            function() return F.avg_pool3d(x, 2, { divisor_override = 0 }) end)
        says("tide: avg_pool3d: unknown option", function()
            return F.avg_pool3d(x, 2, { dilation = 2 })
        end)
        says("tide: adaptive_avg_pool3d: expected output_size to be an integer >= 0 or " ..
            "{d, h, w} of them (nil keeps a size), got -1",
            function() return F.adaptive_avg_pool3d(x, -1) end)
        says("tide: adaptive_max_pool3d: unknown option", function()
            return F.adaptive_max_pool3d(x, 2, { indices = true })
        end)
        says("tide: dropout3d: expected input {N, C, D, H, W} or {C, D, H, W} (channels of " ..
            "three spatial dims), got {3, 4, 4}", function() return F.dropout3d(x[1][1]) end)
        says("tide: Conv3d: expected input {N, C, D, H, W} or unbatched {C, D, H, W}, got " ..
            "{3, 4, 4}", function() return nn.Conv3d(2, 3, 2)(x[1][1]) end)
        says("tide: Conv3d: unknown option", function()
            return nn.Conv3d(2, 3, 2, { stride = 1, bias = false, pad = 1 })
        end)
        says("tide: ConvTranspose3d: only padding_mode \"zeros\" is supported (as in PyTorch)",
            function() return nn.ConvTranspose3d(2, 3, 2, { padding_mode = "reflect" }) end)
        says("tide: MaxPool3d: expected kernel_size to be an integer or {d, h, w}, got {2, 2}",
            function() return nn.MaxPool3d({ 2, 2 }) end)
        says("tide: BatchNorm3d: expected {N, C, D, H, W} input, got {2, 3, 4, 4}",
            function() return nn.BatchNorm3d(2)(x[1]) end)
        says("tide: InstanceNorm3d: expected {N, C, D, H, W} or {C, D, H, W} input, got {4, 4}",
            function() return nn.InstanceNorm3d(2)(x[1][1][1]) end)
        says("tide: ReflectionPad3d: expected padding to be an integer or a table of 6 " ..
            "integers {left, right, top, bottom, front, back}, got 4 values",
            function() return nn.ReflectionPad3d({ 1, 1, 1, 1 }) end)
    end)

    it("need their tensors on one device", function()
        local x = tide.zeros({ 1, 2, 3, 4, 4 }, { dtype = "float64", device = DEV })
        local w = tide.zeros({ 3, 2, 2, 2, 2 }, { dtype = "float64", device = D.other })
        assert.matches("tide: conv3d: ", catch(function() return F.conv3d(x, w) end), 1, true)
        assert.matches("tide: conv_transpose3d: ", catch(function()
            return F.conv_transpose3d(x, w:narrow(1, 1, 2))
        end), 1, true)
        assert.matches("tide: Conv3d: ", catch(function()
            return nn.Conv3d(2, 3, 2):to("float64"):to(D.other)(x)
        end), 1, true)
    end)
end)
