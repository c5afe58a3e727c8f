-- porting_nn_spec.lua — the nn layers a ported script reaches for that tide lacked, against
-- PyTorch 1.13's values and gradients (spec/fixtures/porting_nn_torch.lua, written by
-- spec/fixtures/make_porting_nn.py): PReLU, InstanceNorm1d/2d, the adaptive max pools,
-- AvgPool1d, AdaptiveAvgPool1d, the padding modules, CELU, Softmin, Threshold, Hardshrink,
-- Softshrink, Tanhshrink (each at its kinks), Softmax2d, ChannelShuffle, Bilinear,
-- ConvTranspose1d, Unfold / Fold; Dropout1d and AlphaDropout by their statistics; errors,
-- devices and modules.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local D = require("spec.support.device")

local T = dofile("spec/fixtures/porting_nn_torch.lua")
local unpack = table.unpack or unpack -- 5.1, LuaJIT
local DEV = D.name

local P = require("spec.support.porting")
local close = P.close

local function t64(v)
    return P.t64(v, DEV)
end

local function check_case(name, fn, ...)
    P.check_case(T.cases[name], name, DEV, {}, fn, ...)
end

-- a float64 module on the device under test
local function on_dev(m)
    return m:to("float64"):to(DEV)
end

describe("nn layers, PyTorch's values (" .. DEV .. ")", function()
    local X, ACT, S24, S70, S36 = T.X, T.ACT, T.S24, T.S70, T.S36
    local function r(x, ...)
        return x:reshape(...)
    end
    local CASES = {
        prelu_one = { function(x, w) return F.prelu(x, w) end, ACT, { 0.25 } },
        prelu_channels = { function(x, w) return F.prelu(r(x, 2, 3, 2), w) end, X, T.PW },
        prelu_2d = { function(x, w) return F.prelu(x, w) end, X, { 0.1, -0.2, 0.3, 2.0 } },
        instance_norm = { function(x) return F.instance_norm(r(x, 2, 3, 4)) end, S24 },
        instance_norm_affine = { function(x, w, b)
            return F.instance_norm(r(x, 2, 3, 4), { weight = w, bias = b, eps = 1e-3 })
        end, S24, T.IW, T.IB },
        instance_norm_2d = { function(x)
            return nn.InstanceNorm2d(3)(r(x, 2, 3, 2, 2))
        end, S24 },
        instance_norm_eval = { function(x)
            return F.instance_norm(r(x, 2, 3, 4), t64(T.RM), t64(T.RV),
                { use_input_stats = false })
        end, S24 },
        adaptive_max2d = { function(x)
            return F.adaptive_max_pool2d(r(x, 1, 2, 5, 7), { 3, 4 })
        end, S70 },
        adaptive_max2d_up = { function(x)
            return nn.AdaptiveMaxPool2d({ 7, 9 })(r(x, 2, 5, 7))
        end, S70 },
        adaptive_max2d_ties = { function(x)
            return F.adaptive_max_pool2d(r(x, 1, 1, 2, 7), { 1, 3 })
        end, T.TIES },
        adaptive_max1d = { function(x)
            return nn.AdaptiveMaxPool1d(3)(r(x, 2, 5, 7))
        end, S70 },
        avg_pool1d = { function(x) return nn.AvgPool1d(3)(r(x, 2, 5, 7)) end, S70 },
        avg_pool1d_opts = { function(x)
            return F.avg_pool1d(r(x, 2, 5, 7), 3, { stride = 2, padding = 1, ceil_mode = true,
                count_include_pad = false })
        end, S70 },
        avg_pool1d_pad = { function(x)
            return nn.AvgPool1d(4, 3, 2)(r(x, 5, 14))
        end, S70 },
        adaptive_avg1d = { function(x) return F.adaptive_avg_pool1d(r(x, 2, 5, 7), 3) end, S70 },
        adaptive_avg1d_up = { function(x)
            return nn.AdaptiveAvgPool1d(9)(r(x, 10, 7))
        end, S70 },
        zero_pad2d = { function(x) return nn.ZeroPad2d({ 1, 0, 2, 1 })(r(x, 1, 2, 3, 4)) end, S24 },
        constant_pad1d = { function(x) return nn.ConstantPad1d(2, 3.5)(r(x, 2, 3, 4)) end, S24 },
        constant_pad2d = { function(x)
            return nn.ConstantPad2d({ 1, -1, 0, 2 }, -1)(r(x, 2, 3, 4))
        end, S24 },
        reflection_pad1d = { function(x)
            return nn.ReflectionPad1d({ 3, 1 })(r(x, 2, 3, 4))
        end, S24 },
        reflection_pad2d = { function(x) return nn.ReflectionPad2d(1)(r(x, 1, 2, 3, 4)) end, S24 },
        replication_pad1d = { function(x) return nn.ReplicationPad1d(3)(r(x, 6, 4)) end, S24 },
        replication_pad2d = { function(x)
            return nn.ReplicationPad2d({ 0, 2, 3, 1 })(r(x, 2, 3, 4))
        end, S24 },
        celu = { function(x) return F.celu(x) end, ACT },
        celu_alpha = { function(x) return nn.CELU(1.5)(x) end, ACT },
        softmin = { function(x) return F.softmin(x, 2) end, X },
        softmin_dim1 = { function(x) return nn.Softmin(1)(x) end, X },
        threshold = { function(x) return nn.Threshold(1, 20)(x) end, ACT },
        hardshrink = { function(x) return F.hardshrink(x) end, ACT },
        hardshrink_1 = { function(x) return nn.Hardshrink(1)(x) end, ACT },
        softshrink = { function(x) return nn.Softshrink()(x) end, ACT },
        softshrink_1 = { function(x) return F.softshrink(x, { lambd = 1 }) end, ACT },
        tanhshrink = { function(x) return nn.Tanhshrink()(x) end, (function()
            local v = { unpack(ACT) }
            v[#v + 1], v[#v + 2] = 1e-4, -3e-3
            return v
        end)() },
        softmax2d = { function(x) return nn.Softmax2d()(r(x, 2, 3, 2, 2)) end, S24 },
        softmax2d_3d = { function(x) return nn.Softmax2d()(r(x, 3, 2, 4)) end, S24 },
        channel_shuffle = { function(x) return nn.ChannelShuffle(3)(r(x, 2, 6, 2)) end, S24 },
        channel_shuffle_2 = { function(x)
            return F.channel_shuffle(r(x, 1, 4, 3, 2), 2)
        end, S24 },
        bilinear = { function(a, b, w, c)
            return F.bilinear(r(a, 3, 2), r(b, 3, 4), r(w, 2, 2, 4), c)
        end, T.B1, T.B2, T.BW, T.BB },
        bilinear_nobias = { function(a, b, w)
            return F.bilinear(r(a, 3, 1, 2), r(b, 3, 1, 4), r(w, 2, 2, 4))
        end, T.B1, T.B2, T.BW },
        conv_transpose1d = { function(x, w, b)
            return F.conv_transpose1d(r(x, 1, 2, 5), r(w, 2, 3, 3), b, { stride = 2, padding = 1,
                output_padding = 1 })
        end, T.CT, T.CW, T.CB },
        conv_transpose1d_groups = { function(x, w)
            return F.conv_transpose1d(r(x, 1, 2, 5), r(w, 2, 3, 3), nil, { groups = 2,
                dilation = 2 })
        end, T.CT, T.CW },
        unfold = { function(x) return nn.Unfold({ 2, 3 })(r(x, 1, 2, 3, 6)) end, S36 },
        unfold_opts = { function(x)
            return F.unfold(r(x, 2, 3, 6):unsqueeze(1), { 2, 2 }, { dilation = { 1, 2 },
                padding = 1, stride = { 2, 1 } }):squeeze(1)
        end, S36 },
        fold = { function(x) return nn.Fold({ 4, 4 }, 2)(r(x, 1, 4, 9)) end, S36 },
        fold_opts = { function(x)
            return F.fold(r(x, 1, 6, 6), { 2, 5 }, { 1, 3 }, { padding = { 1, 0 },
                stride = { 2, 1 } })
        end, S36 },
    }
    P.run_cases(it, T, CASES, function(name, fn, ...)
        if T.cases[name].grads == nil then -- PyTorch 1.13 has no gradient for it: values only
            local xs = {}
            for i, v in ipairs({ ... }) do
                xs[i] = t64(v)
            end
            close(T.cases[name].out, fn(unpack(xs)), 0, name)
        else
            check_case(name, fn, ...)
        end
    end)

    it("adaptive max pools: PyTorch's indices (first of ties, last NaN)", function()
        local function idx(name, y, i)
            close(T.values[name][1], y, 0, name)
            close(T.values[name][2], i, 0, name .. " indices")
            assert.are.equal("int64", i.dtype)
        end
        idx("adaptive_max2d_idx", F.adaptive_max_pool2d(t64(S70):reshape(1, 2, 5, 7), { 3, 4 },
            { return_indices = true }))
        idx("adaptive_max2d_up_idx", nn.AdaptiveMaxPool2d({ 7, 9 }, { return_indices = true })(
            t64(S70):reshape(2, 5, 7)))
        idx("adaptive_max2d_ties_idx", F.adaptive_max_pool2d(t64(T.TIES):reshape(1, 1, 2, 7),
            { 1, 3 }, { return_indices = true }))
        idx("adaptive_max1d_idx", F.adaptive_max_pool1d(t64(S70):reshape(2, 5, 7), 3,
            { return_indices = true }))
        local nan = t64({ { { 0 / 0, 1, 0 / 0, 0 / 0, 2, 5 } } })
        idx("adaptive_max_nan", nn.AdaptiveMaxPool1d(2, { return_indices = true })(nan))
        -- the gradient reaches the NaN the index names
        local x = t64({ { { 0 / 0, 1, 0 / 0, 0 / 0, 2, 5 } } }):requires_grad_(true)
        F.adaptive_max_pool1d(x, 2):sum():backward()
        assert.are.same({ 0, 0, 1, 1, 0, 0 }, x.grad:cpu():reshape(6):totable())
        -- nil in {nil, w} keeps the height
        assert.are.same({ 1, 2, 5, 3 }, F.adaptive_max_pool2d(t64(S70):reshape(1, 2, 5, 7),
            { nil, 3 }).shape)
    end)

    it("instance_norm updates the running estimates as PyTorch (the batch's mean of each)",
        function()
            for _, c in ipairs({ { "instance_norm_running", { 2, 3, 4 }, 0.1 },
                { "instance_norm_running_2d", { 2, 3, 2, 2 }, 0.3 } }) do
                local want = T.values[c[1]]
                local rm, rv = t64(T.RM), t64(T.RV)
                local y = F.instance_norm(t64(S24):reshape(c[2]), rm, rv, { momentum = c[3] })
                close(want.out, y, 1e-13, c[1])
                close(want.mean, rm, 1e-13, c[1] .. " running_mean")
                close(want.var, rv, 1e-13, c[1] .. " running_var")
            end
            -- the module: training updates its buffers, eval uses them
            local m = on_dev(nn.InstanceNorm1d(3, { track_running_stats = true, momentum = 0.1 }))
            m.running_mean:copy_(t64(T.RM))
            m.running_var:copy_(t64(T.RV))
            local x = t64(S24):reshape(2, 3, 4)
            close(T.values.instance_norm_running.out, m(x), 1e-13, "InstanceNorm1d")
            close(T.values.instance_norm_running.mean, m.running_mean, 1e-13, "module mean")
            assert.are.equal(0, m.num_batches_tracked:item()) -- PyTorch 1.13 leaves it
            m:eval()
            local want = F.instance_norm(x, m.running_mean, m.running_var,
                { use_input_stats = false })
            close(want:cpu():totable(), m(x), 0, "InstanceNorm1d eval")
            local keys = {}
            for k in pairs(m:state_dict()) do
                keys[#keys + 1] = k
            end
            table.sort(keys)
            assert.are.same({ "num_batches_tracked", "running_mean", "running_var" }, keys)
            assert.are.same({}, nn.InstanceNorm1d(3):state_dict())
            -- unbatched: a batch of one
            local u = nn.InstanceNorm2d(3, { affine = true }):to("float64"):to(DEV)
            local one = t64(S24):reshape(3, 2, 4)
            close(u(one:unsqueeze(1)):squeeze(1):cpu():totable(), u(one), 0, "unbatched")
            assert.are.same({ "bias", "weight" }, (function()
                local keys = {}
                for k in pairs(u:state_dict()) do
                    keys[#keys + 1] = k
                end
                table.sort(keys)
                return keys
            end)())
        end)

    it("channel_shuffle's gradient is the inverse permutation", function()
        local x = t64(S24):reshape(2, 6, 2):requires_grad_(true)
        local y = F.channel_shuffle(x, 3)
        local g = P.weight_like(y)
        local loss = (y * g):sum()
        loss:backward()
        -- channel j of y is channel (j - 1) % 3 * 2 + (j - 1) // 3 + 1 of x (6 read as 3 x 2)
        local want = tide.zeros_like(x)
        for j = 1, 6 do
            local src = (j - 1) % 3 * 2 + math.floor((j - 1) / 3) + 1
            want:narrow(2, src, 1):copy_(g:narrow(2, j, 1))
        end
        close(want:cpu():totable(), x.grad, 0, "channel_shuffle grad")
        assert.are.same({ 0, 4, 3 }, F.channel_shuffle(tide.zeros(0, 4, 3), 2).shape)
    end)

    it("PReLU's weight is a parameter: one or per channel, init, moved by to()", function()
        local m = nn.PReLU()
        assert.are.same({ 1 }, m.weight.shape)
        assert.are.equal(0.25, m.weight:item())
        local mc = nn.PReLU(3, 0.5)
        assert.are.same({ 0.5, 0.5, 0.5 }, mc.weight:totable())
        assert.are.same({ 3 }, nn.PReLU({ num_parameters = 3 }).weight.shape)
        on_dev(mc)
        assert.are.equal(tide.device(DEV), mc.weight.device)
        assert.is_true(mc.weight.requires_grad)
        local x = t64(X):reshape(2, 3, 2)
        close(F.prelu(x, t64({ 0.5, 0.5, 0.5 })):cpu():totable(), mc(x), 0, "PReLU module")
        mc(x):sum():backward()
        assert.are.same({ 3 }, mc.weight.grad.shape)
        assert.are.equal(1, #mc:parameters())
    end)

    it("Bilinear draws its weight and bias from PyTorch's bounds", function()
        tide.manual_seed(1)
        local m = nn.Bilinear(4, 3, 5)
        assert.are.same({ 5, 4, 3 }, m.weight.shape)
        assert.are.same({ 5 }, m.bias.shape)
        for _, p in ipairs({ m.weight, m.bias }) do
            assert.is_true(p:abs():max():item() <= 0.5) -- 1 / sqrt(in1 = 4)
            assert.is_true(p:abs():max():item() > 0.3)
        end
        assert.is_nil(nn.Bilinear(4, 3, 5, { bias = false }).bias)
        on_dev(m)
        local y = m(t64(X):reshape(3, 4), t64(X):reshape(4, 3):narrow(1, 1, 3))
        assert.are.same({ 3, 5 }, y.shape)
        assert.are.equal(tide.device(DEV), y.device)
    end)

    it("ConvTranspose1d: PyTorch's weight layout, the functional's values", function()
        local m = on_dev(nn.ConvTranspose1d(2, 4, 3, { stride = 2, groups = 2 }))
        assert.are.same({ 2, 2, 3 }, m.weight.shape)
        assert.are.same({ 4 }, m.bias.shape)
        local x = t64(T.CT):reshape(1, 2, 5)
        local want = F.conv_transpose1d(x, m.weight, m.bias, { stride = 2, groups = 2 })
        close(want:cpu():totable(), m(x), 0, "ConvTranspose1d")
        -- unbatched {Cin, L}
        close(want:squeeze(1):cpu():totable(), m(x:squeeze(1)), 0, "unbatched")
        -- against conv_transpose2d on a height of 1
        local w = t64(T.CW):reshape(2, 3, 3)
        local two = F.conv_transpose2d(x:unsqueeze(3), w:unsqueeze(3), nil,
            { stride = { 1, 3 }, padding = { 0, 1 } }):squeeze(3)
        close(two:cpu():totable(), F.conv_transpose1d(x, w, nil, { stride = 3, padding = 1 }), 0,
            "conv_transpose1d")
    end)

    it("fold is unfold's adjoint: <unfold(x), c> = <x, fold(c)>", function()
        local x = t64(S36):reshape(1, 2, 3, 6)
        local opts = { padding = 1, stride = { 1, 2 }, dilation = { 2, 1 } }
        local u = F.unfold(x, { 2, 2 }, opts)
        local c = u:mul(0):add(t64(S36):narrow(1, 1, 1):reshape(1, 1, 1):expand(u.shape))
        c = c + tide.arange(1, u:numel() + 1, { dtype = "float64", device = DEV }):reshape(u.shape)
        local lhs = (u * c):sum():item()
        local rhs = (x * F.fold(c, { 3, 6 }, { 2, 2 }, opts)):sum():item()
        assert.is_true(math.abs(lhs - rhs) <= 1e-12 * math.abs(lhs))
    end)

    it("the padding modules are F.pad's modes", function()
        local x = t64(S24):reshape(2, 3, 4)
        close(F.pad(x, { 2, 2, 2, 2 }):cpu():totable(), nn.ZeroPad2d(2)(x), 0, "ZeroPad2d")
        close(F.pad(x, { 1, 2 }, { mode = "reflect" }):cpu():totable(),
            nn.ReflectionPad1d({ 1, 2 })(x), 0, "ReflectionPad1d")
        close(F.pad(x, { 1, 1, 1, 1 }, { mode = "replicate" }):cpu():totable(),
            nn.ReplicationPad2d(1)(x), 0, "ReplicationPad2d")
        close(F.pad(x, { 1, 1, 2, 0 }, { value = 7 }):cpu():totable(),
            nn.ConstantPad2d({ 1, 1, 2, 0 }, 7)(x), 0, "ConstantPad2d")
    end)

    it("the activations' modules and in-place forms", function()
        local x = t64(ACT)
        local want = F.celu(x, 2)
        local y = t64(ACT)
        assert.are.equal(y, nn.CELU({ alpha = 2, inplace = true })(y))
        close(want:cpu():totable(), y, 0, "CELU inplace")
        local z = t64(ACT)
        assert.are.equal(z, F.threshold(z, 0.25, -1, { inplace = true }))
        close(F.threshold(x, 0.25, -1):cpu():totable(), z, 0, "threshold inplace")
        close(F.softmax(x:neg(), -1):cpu():totable(), nn.Softmin()(x), 0, "Softmin default dim")
        -- NaN: threshold and hardshrink keep it, softshrink gives 0 (PyTorch's kernels), and
        -- each passes its gradient on
        for _, c in ipairs({ { F.threshold, { 0.5, 9 }, true }, { F.hardshrink, {}, true },
            { F.softshrink, {}, false } }) do
            local a = t64({ 0 / 0, 0.5, -0.5 }):requires_grad_(true)
            local out = c[1](a, unpack(c[2]))
            local v = out:cpu():totable()[1]
            assert.are.equal(c[3], v ~= v)
            out:sum():backward()
            assert.are.same({ 1, 0, c[1] == F.threshold and 0 or 0 }, a.grad:cpu():totable())
        end
    end)
end)

describe("dropout1d and alpha_dropout (" .. DEV .. ")", function()
    it("dropout1d zeroes whole channels, scales the rest, and is the input in eval", function()
        tide.manual_seed(7)
        local x = tide.ones({ 64, 32, 10 }, { dtype = "float64", device = DEV })
        local y = F.dropout1d(x, 0.25)
        local per = y:amax(3):cpu()
        local mins = y:amin(3):cpu()
        assert.is_true(per:eq(mins):all():item()) -- each channel all zeros or all kept
        local kept = per:ne(0):double():mean():item()
        assert.is_true(math.abs(kept - 0.75) < 0.05, "kept " .. kept)
        assert.is_true(per:ne(0):logical_and(per:ne(1 / 0.75)):sum():item() == 0)
        assert.are.equal(x, F.dropout1d(x, { p = 0.25, training = false }))
        local m = nn.Dropout1d(0.25)
        m:eval()
        assert.are.equal(x, m(x))
        assert.are.equal(x, F.dropout1d(x, 0))
        assert.are.equal(0, F.dropout1d(x, 1):abs():sum():item())
        -- unbatched {C, L}; a seeded run repeats
        tide.manual_seed(3)
        local a = F.dropout1d(x[1], 0.5)
        tide.manual_seed(3)
        assert.is_true(a:equal(F.dropout1d(x[1], 0.5)))
        assert.are.equal(tide.device(DEV), a.device)
    end)

    it("alpha_dropout keeps mean 0 and variance 1, two values per input, PyTorch's a and b",
        function()
            tide.manual_seed(11)
            local x = tide.randn({ 200000 }, { dtype = "float64", device = DEV })
            local p = 0.2
            local y = F.alpha_dropout(x, { p = p, training = true })
            assert.is_true(math.abs(y:mean():item()) < 0.02)
            assert.is_true(math.abs(y:var():item() - 1) < 0.03)
            local alpha = 1.7580993408473766
            local a = 1 / math.sqrt((alpha * alpha * p + 1) * (1 - p))
            local dropped = alpha * a * (p - 1)
            local kept = y:sub(x:mul(a):add(alpha * a * p)):abs():lt(1e-12)
            local gone = y:sub(dropped):abs():lt(1e-12)
            assert.is_true(kept:logical_or(gone):all():item())
            local frac = gone:double():mean():item()
            assert.is_true(math.abs(frac - p) < 0.01, "dropped " .. frac)
            -- eval (F's default, as PyTorch's) and p = 0: the input; p = 1: zeros
            assert.are.equal(x, F.alpha_dropout(x, p))
            assert.are.equal(x, F.alpha_dropout(x, { p = 0, training = true }))
            local xs = t64(T.X)
            close(T.values.alpha_dropout_p1, F.alpha_dropout(xs, { p = 1, training = true }), 0,
                "p = 1")
            local m = nn.AlphaDropout(p)
            assert.are_not.equal(x, m(x)) -- a module trains by default
            m:eval()
            assert.are.equal(x, m(x))
            tide.manual_seed(5)
            local r1 = nn.AlphaDropout(0.5)(xs)
            tide.manual_seed(5)
            assert.is_true(r1:equal(nn.AlphaDropout(0.5)(xs)))
            -- the gradient is the kept elements' scale a
            local g = t64({ 1, 2, 3, 4 }):requires_grad_(true)
            tide.manual_seed(2)
            local out = F.alpha_dropout(g, { p = 0.5, training = true })
            out:sum():backward()
            local a5 = 1 / math.sqrt((alpha * alpha * 0.5 + 1) * 0.5)
            for i, v in ipairs(g.grad:cpu():totable()) do
                assert.is_true(v == 0 or math.abs(v - a5) < 1e-15, "grad " .. i .. " " .. v)
            end
        end)
end)

describe("nn layers: errors and devices (" .. DEV .. ")", function()
    local x = tide.zeros({ 2, 3, 4 }, { dtype = "float64", device = DEV })

    it("refuses what PyTorch refuses, naming the function and the values", function()
        assert.has_error(function() F.prelu(x, tide.zeros(4, { dtype = "float64", device = DEV }))
        end, "tide: prelu: weight {4} has 4 elements; expected 1 or one per channel (dim 2 of " ..
            "input {2, 3, 4}: 3)")
        assert.has_error(function() F.celu(x, 0) end,
            "tide: celu: alpha must not be 0 (it divides the input); use a non-zero alpha")
        assert.has_error(function() F.threshold(x, 1) end,
            "tide: threshold: expected the numbers threshold and value, got number and nil; " ..
            "call F.threshold(x, threshold, value)")
        assert.has_error(function() F.softshrink(x, -1) end,
            "tide: softshrink: lambd must be >= 0, got -1")
        assert.has_error(function() F.hardshrink(x, { lamda = 1 }) end,
            'tide: hardshrink: unknown option "lamda" (did you mean "lambd"?)')
        assert.has_error(function() F.instance_norm(tide.zeros(2, 3)) end,
            "tide: instance_norm: expected input {N, C, ...} with at least one spatial dim, " ..
            "got {2, 3}")
        assert.has_error(function() F.instance_norm(tide.zeros(2, 3, 1)) end,
            "tide: instance_norm: expected more than 1 spatial element when using the input's " ..
            "statistics, got input {2, 3, 1}")
        assert.has_error(function() nn.InstanceNorm1d(4, { affine = true })(x) end,
            "tide: InstanceNorm1d: expected input with 4 channels (dim 2), got 3")
        assert.has_error(function() nn.InstanceNorm2d(3, { afine = true }) end,
            'tide: InstanceNorm2d: unknown option "afine" (did you mean "affine"?)')
        assert.has_error(function() F.adaptive_max_pool2d(x, -1) end,
            "tide: adaptive_max_pool2d: expected output_size to be an integer >= 0, got -1")
        assert.has_error(function() F.adaptive_max_pool1d(x:reshape(24), 2) end,
            "tide: adaptive_max_pool1d: expected input {N, C, L} or {C, L}, got {24}")
        assert.has_error(function() nn.AdaptiveMaxPool2d(2, { return_indice = true }) end,
            'tide: AdaptiveMaxPool2d: unknown option "return_indice" (did you mean ' ..
            '"return_indices"?)')
        assert.has_error(function() F.avg_pool1d(x, 3, { padding = 2 }) end,
            "tide: avg_pool1d: padding 2 should be at most half the kernel 3")
        assert.has_error(function() F.avg_pool1d(x, 5) end,
            "tide: avg_pool1d: kernel 5 is larger than the padded input 4; use a smaller " ..
            "kernel or more padding")
        assert.has_error(function() F.avg_pool1d(x, 2, { ceil_mode = 1 }) end,
            "tide: avg_pool1d: expected ceil_mode to be a boolean, got number")
        assert.has_error(function() nn.Softmin(1.5) end,
            "tide: Softmin: expected dim to be an integer, got 1.5")
        assert.has_error(function() F.adaptive_avg_pool1d(x:reshape(1, 2, 3, 4), 2) end,
            "tide: adaptive_avg_pool1d: expected input {N, C, L} or {C, L}, got {1, 2, 3, 4}")
        assert.has_error(function() nn.ZeroPad2d({ 1, 2 }) end,
            "tide: ZeroPad2d: expected padding to be an integer or a table of 4 integers " ..
            "{left, right, top, bottom}, got 2 values")
        assert.has_error(function() nn.ConstantPad1d(2) end,
            "tide: ConstantPad1d: expected the fill value to be a number, got nil; call " ..
            "nn.ConstantPad1d(padding, value)")
        assert.has_error(function() nn.ReflectionPad1d(4)(x) end,
            'tide: pad: mode "reflect" needs each size smaller than its dim, got 4, 4 for ' ..
            "dim 3 of size 4 (input {2, 3, 4})")
        assert.has_error(function() F.dropout1d(x:reshape(2, 3, 2, 2)) end,
            "tide: dropout1d: expected input {N, C, L} or {C, L} (channels of one spatial " ..
            "dim), got {2, 3, 2, 2}")
        assert.has_error(function() F.alpha_dropout(x, 1.5) end,
            "tide: alpha_dropout: expected a probability p in [0, 1], got 1.5")
        assert.has_error(function() F.channel_shuffle(x, 2) end,
            "tide: channel_shuffle: 3 channels (input {2, 3, 4}) are not divisible by groups 2")
        assert.has_error(function() F.channel_shuffle(x:reshape(6, 4), 2) end,
            "tide: channel_shuffle: expected input {N, C, *} with at least 3 dims, got {6, 4}")
        local w = tide.zeros({ 5, 4, 3 }, { dtype = "float64", device = DEV })
        assert.has_error(function() F.bilinear(x, x, w) end,
            "tide: bilinear: expected input1 {..., 4} and input2 {..., 3} with the same " ..
            "leading dims (weight {5, 4, 3}), got {2, 3, 4} and {2, 3, 4}")
        assert.has_error(function() nn.Bilinear(4, 3, 5, { bais = false }) end,
            'tide: Bilinear: unknown option "bais" (did you mean "bias"?)')
        local cw = tide.zeros({ 3, 2, 3 }, { dtype = "float64", device = DEV })
        assert.has_error(function() F.conv_transpose1d(x, cw, nil, { output_padding = 1 }) end,
            "tide: conv_transpose1d: output_padding 1 must be smaller than the stride 1 or " ..
            "the dilation 1")
        assert.has_error(function() F.conv_transpose1d(x, cw:narrow(1, 1, 2)) end,
            "tide: conv_transpose1d: expected input {N, Cin, L} (or unbatched {Cin, L}) and " ..
            "weight {Cin, Cout / groups, k} with the same Cin, got {2, 3, 4} and {2, 2, 3}")
        local img = tide.zeros({ 1, 2, 3, 4 }, { dtype = "float64", device = DEV })
        assert.has_error(function() F.unfold(img, 4) end,
            "tide: unfold: the kernel 4x4 (dilation 1,1) does not fit in the padded input " ..
            "3x4; use a smaller kernel or more padding")
        assert.has_error(function() F.unfold(img, 2, { strides = 1 }) end,
            'tide: unfold: unknown option "strides" (did you mean "stride"?)')
        assert.has_error(function() F.fold(tide.zeros(1, 8, 5), { 3, 4 }, 2) end,
            "tide: fold: expected dim 3 of input {1, 8, 5} to be the number of blocks 2 x 3 " ..
            "= 6 (output_size 3x4)")
        assert.has_error(function() F.fold(tide.zeros(1, 7, 6), { 3, 4 }, 2) end,
            "tide: fold: expected dim 2 of input {1, 7, 6} to be divisible by the kernel's " ..
            "2 x 2 = 4 cells")
    end)

    it("a failed call leaves the running estimates as they were", function()
        local rm = tide.zeros(3, { dtype = "float64", device = DEV })
        local rv = tide.ones(3, { dtype = "float64", device = DEV })
        assert.has_error(function()
            F.instance_norm(x, rm, rv, { weight = tide.ones(4, { dtype = "float64",
                device = DEV }) })
        end, "tide: instance_norm: expected weight with 3 elements (the input's channels), " ..
            "got {4}")
        assert.are.same({ 0, 0, 0 }, rm:cpu():totable())
        assert.are.same({ 1, 1, 1 }, rv:cpu():totable())
    end)

    it("mixing devices raises tide's device error; results stay on the inputs' device",
        function()
            local o = tide.zeros({ 3 }, { dtype = "float64", device = D.other })
            assert.has_error(function() F.prelu(x, o) end,
                string.format("tide: prelu: expected all tensors on the same device, found " ..
                    "%s (input) and %s (weight); move the input with x:to(\"%s\")",
                    tostring(x.device), tostring(o.device), tostring(o.device)))
            local function device_error(who, fn)
                local ok, err = pcall(fn)
                assert.is_false(ok)
                assert.is_truthy(tostring(err):find("tide: " .. who .. ": expected all tensors " ..
                    "on the same device, found", 1, true), tostring(err))
            end
            device_error("instance_norm", function() F.instance_norm(x, o, o) end)
            device_error("bilinear", function()
                F.bilinear(x, x:to(D.other), tide.zeros({ 2, 4, 4 }, { dtype = "float64",
                    device = DEV }))
            end)
            device_error("conv_transpose1d", function()
                F.conv_transpose1d(x, tide.zeros({ 3, 2, 3 }, { dtype = "float64",
                    device = D.other }))
            end)
            local m = nn.PReLU(3):to("float64")
            m:to(D.other)
            device_error("PReLU", function() m(x) end)
            local norm = nn.InstanceNorm1d(3, { track_running_stats = true }):to("float64")
            norm:to(D.other)
            assert.are.equal(tide.device(D.other), norm.running_mean.device)
            device_error("InstanceNorm1d", function() norm(x) end)
            for _, y in ipairs({ F.adaptive_max_pool2d(x, 2), F.avg_pool1d(x, 2),
                F.adaptive_avg_pool1d(x, 3), F.celu(x), F.softshrink(x), F.dropout1d(x),
                F.alpha_dropout(x, { training = true }), F.channel_shuffle(x, 3),
                nn.ReplicationPad1d(1)(x), F.unfold(x:unsqueeze(1), 2) }) do
                assert.are.equal(tide.device(DEV), y.device)
            end
            -- float32 stays float32
            local f = x:float()
            for _, y in ipairs({ F.adaptive_max_pool2d(f, 2), F.instance_norm(f), F.prelu(f,
                tide.ones(3, { device = DEV })), F.softshrink(f), F.fold(F.unfold(f:unsqueeze(1),
                2), { 3, 4 }, 2), F.bilinear(f, f, tide.ones({ 2, 4, 4 }, { device = DEV })) }) do
                assert.are.equal("float32", y.dtype)
            end
        end)
end)

describe("nn.utils.parameters_to_vector and vector_to_parameters (" .. DEV .. ")", function()
    it("flatten the parameters in order and write them back", function()
        local m = on_dev(nn.Sequential(nn.Linear(3, 2), nn.PReLU(2)))
        local ps = m:parameters()
        local v = nn.utils.parameters_to_vector(m)
        assert.are.same({ 3 * 2 + 2 + 2 }, v.shape)
        assert.are.equal(tide.device(DEV), v.device)
        local want = tide.cat({ ps[1]:reshape(-1), ps[2], ps[3] }, 1)
        close(want:cpu():totable(), v, 0, "parameters_to_vector")
        -- differentiable, as PyTorch's
        v:pow(2):sum():backward()
        close(ps[1]:mul(2):cpu():totable(), ps[1].grad, 0, "gradient")
        local new = tide.arange(1, 11, { dtype = "float64", device = DEV })
        local w1 = ps[1]
        nn.utils.vector_to_parameters(new, ps)
        assert.are.equal(w1, m:parameters()[1]) -- the same tensors, new values
        assert.are.same({ { 1, 2, 3 }, { 4, 5, 6 } }, ps[1]:cpu():totable())
        assert.are.same({ 9, 10 }, ps[3]:cpu():totable())
        assert.is_true(ps[1].requires_grad)
        close(new:cpu():totable(), nn.utils.parameters_to_vector(ps), 0, "round trip")
    end)

    it("refuse parameters on two devices, a vector elsewhere or of the wrong length", function()
        local a = tide.zeros({ 2 }, { device = DEV })
        local b = tide.zeros({ 3 }, { device = D.other })
        assert.has_error(function() nn.utils.parameters_to_vector({ a, b }) end,
            string.format("tide: parameters_to_vector: parameter 2 is on %s and parameter 1 " ..
                "on %s; all parameters must be on one device (move the model with " ..
                "model:to(\"%s\"))", tostring(b.device), tostring(a.device),
                tostring(a.device)))
        assert.has_error(function() nn.utils.vector_to_parameters(tide.zeros({ 5 },
            { device = DEV }), { a, b }) end)
        assert.has_error(function()
            nn.utils.vector_to_parameters(tide.ones({ 2 }, { device = D.other }), { a })
        end, string.format("tide: vector_to_parameters: expected vec on the parameters' " ..
            "device, found %s (vec) and %s (parameters); move it with vec:to(\"%s\")",
            tostring(tide.device(D.other)), tostring(a.device), tostring(a.device)))
        local c = tide.zeros({ 3 }, { device = DEV })
        assert.has_error(function()
            nn.utils.vector_to_parameters(tide.ones({ 4 }, { device = DEV }), { a, c })
        end, "tide: vector_to_parameters: vec has 4 elements, the parameters 5; pass a " ..
            "vector of parameters_to_vector's length")
        assert.are.same({ 0, 0 }, a:cpu():totable()) -- nothing written
        assert.has_error(function() nn.utils.parameters_to_vector({}) end,
            "tide: parameters_to_vector: no parameters given")
        assert.has_error(function() nn.utils.vector_to_parameters({ 1, 2 }, { a }) end,
            "tide: vector_to_parameters: expected vec to be a tensor, got table")
    end)
end)
