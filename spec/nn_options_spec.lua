-- the nn options of issue 13 that were "not supported yet" (docs/API.md, nn.functional): pooling
-- ceil_mode / dilation / return_indices / divisor_override, pad's reflect / replicate /
-- circular modes, binary_cross_entropy_with_logits' weight / pos_weight, embedding's
-- padding_idx / max_norm, and inplace. Values and gradients against PyTorch 1.13
-- (spec/fixtures/nn_options_torch.lua, made by spec/fixtures/make_nn_options.py) on the device
-- under test (spec/support/device.lua), then the rules and the exact errors.
local tide = require("tide")
local fx = require("spec.support.fixtures")
local D = require("spec.support.device")
local nn = tide.nn
local F = nn.functional
local REF = require("spec.fixtures.nn_options_torch")

local T = fx.tensor

local function close(t, r, tol, what)
    fx.close(t, r, tol, what)
end

-- f(...) must fail with msg at the line that called it (here, the pcall's), never inside tide
local function raises_here(msg, f, ...)
    local line = debug.getinfo(1, "l").currentline + 1
    local ok, err = pcall(f, ...)
    assert.is_false(ok)
    assert.are.equal("spec/nn_options_spec.lua:" .. line .. ": tide: " .. msg, err)
end

-- tide's call for each fixture case (PyTorch's, in make_nn_options.py); ids 1-based
local CALLS = {
    max_pool2d_ceil = function(i)
        return F.max_pool2d(i.x, 3, { stride = 2, padding = 1, ceil_mode = true,
            return_indices = true })
    end,
    max_pool2d_dilation = function(i)
        return F.max_pool2d(i.x, { 3, 2 }, { stride = { 2, 1 }, padding = { 1, 1 },
            dilation = { 2, 3 }, return_indices = true })
    end,
    max_pool2d_dilation_ceil = function(i)
        return F.max_pool2d(i.x, 2, { stride = 3, padding = 1, dilation = 2, ceil_mode = true,
            return_indices = true })
    end,
    max_pool2d_2x2_odd_ceil = function(i)
        return F.max_pool2d(i.x, 2, { ceil_mode = true, return_indices = true })
    end,
    MaxPool2d_module = function(i)
        return nn.MaxPool2d(3, { stride = 1, dilation = 2, return_indices = true })(i.x)
    end,
    max_pool1d_all = function(i)
        return F.max_pool1d(i.x, 3, { stride = 2, padding = 1, dilation = 2, ceil_mode = true,
            return_indices = true })
    end,
    MaxPool1d_module = function(i)
        return nn.MaxPool1d(2, { stride = 2, ceil_mode = true })(i.x)
    end,
    avg_pool2d_ceil = function(i)
        return F.avg_pool2d(i.x, 3, { stride = 2, padding = 1, ceil_mode = true })
    end,
    avg_pool2d_ceil_nopad_count = function(i)
        return F.avg_pool2d(i.x, 3, { stride = 2, padding = 1, ceil_mode = true,
            count_include_pad = false })
    end,
    avg_pool2d_ceil_nopadding = function(i)
        return F.avg_pool2d(i.x, 2, { ceil_mode = true })
    end,
    avg_pool2d_divisor = function(i)
        return F.avg_pool2d(i.x, 3, { stride = 2, padding = 1, divisor_override = 5 })
    end,
    AvgPool2d_module = function(i)
        return nn.AvgPool2d({ 2, 3 }, { stride = { 2, 2 }, padding = { 1, 1 }, ceil_mode = true,
            divisor_override = 4 })(i.x)
    end,
    pad_reflect_unbatched = function(i)
        return F.pad(i.x, { 2, 2 }, { mode = "reflect" })
    end,
    pad_replicate_wide = function(i)
        return F.pad(i.x, { 4, 0, 0, 3 }, { mode = "replicate" })
    end,
    embedding_padding_idx = function(i)
        return F.embedding(i.ids, i.w, { padding_idx = 3 })
    end,
    embedding_padding_idx_neg = function(i)
        return F.embedding(i.ids, i.w, { padding_idx = -1 })
    end,
    embedding_max_norm = function(i)
        return F.embedding(i.ids, i.w, { max_norm = 1.5 })
    end,
    embedding_max_norm_p1 = function(i)
        return F.embedding(i.ids, i.w, { max_norm = 2.0, norm_type = 1.0 })
    end,
    embedding_max_norm_pad = function(i)
        return F.embedding(i.ids, i.w, { padding_idx = 1, max_norm = 1.0 })
    end,
}
for _, mode in ipairs({ "reflect", "replicate", "circular" }) do
    local o = { mode = mode }
    CALLS["pad_" .. mode .. "_1d"] = function(i) return F.pad(i.x, { 2, 1 }, o) end
    CALLS["pad_" .. mode .. "_2d"] = function(i) return F.pad(i.x, { 1, 2, 2, 0 }, o) end
    CALLS["pad_" .. mode .. "_3d"] = function(i) return F.pad(i.x, { 1, 0, 2, 1, 1, 2 }, o) end
    CALLS["pad_" .. mode .. "_crop"] = function(i) return F.pad(i.x, { -1, 2 }, o) end
end
for _, red in ipairs({ "mean", "sum", "none" }) do
    CALLS["bcel_weight_" .. red] = function(i)
        return F.binary_cross_entropy_with_logits(i.x, i.t, { weight = i.w, reduction = red })
    end
    CALLS["bcel_pos_weight_" .. red] = function(i)
        return F.binary_cross_entropy_with_logits(i.x, i.t, { pos_weight = i.pw,
            reduction = red })
    end
    CALLS["bcel_both_" .. red] = function(i)
        return nn.BCEWithLogitsLoss({ weight = i.w, pos_weight = i.pw, reduction = red })(i.x,
            i.t)
    end
end

describe("nn options against PyTorch on " .. D.name, function()
    local names = {}
    for name in pairs(REF.cases) do
        names[#names + 1] = name
    end
    table.sort(names)
    for _, name in ipairs(names) do
        it(name, function()
            local c = REF.cases[name]
            local call = assert(CALLS[name], "no tide call for fixture case " .. name)
            local ins = {}
            for k, r in pairs(c.inputs) do
                ins[k] = T(r, { device = D.name })
                if c.grads and c.grads[k] then
                    ins[k]:requires_grad_(true)
                end
            end
            local out, idx = call(ins)
            close(out, c.out, 1e-9, "out")
            if c.indices then
                assert.are.equal("int64", idx.dtype)
                close(idx, c.indices, 0, "indices")
            end
            for k, r in pairs(c.after or {}) do
                close(ins[k], r, 1e-9, "after " .. k)
            end
            if c.grads then
                if c.gy then
                    out:mul(T(c.gy, { device = D.name })):sum():backward()
                else
                    out:backward()
                end
                for k, r in pairs(c.grads) do
                    close(ins[k].grad, r, 1e-9, "grad " .. k)
                end
            end
        end)
    end
end)

describe("inplace", function()
    local vals = { -2, -0.5, 0, 0.5, 3 }
    local cases = {
        { "relu", function(x, o) return F.relu(x, o) end, nn.ReLU },
        { "leaky_relu", function(x, o) return F.leaky_relu(x, o) end, nn.LeakyReLU },
        { "elu", function(x, o) return F.elu(x, o) end, nn.ELU },
        { "hardtanh", function(x, o) return F.hardtanh(x, o) end, nn.Hardtanh },
        { "silu", function(x, o) return F.silu(x, o) end, nn.SiLU },
    }
    for _, c in ipairs(cases) do
        local name, f, M = c[1], c[2], c[3]
        it(name .. " writes its result into the input, with the out-of-place gradient", function()
            local x = tide.tensor(vals, { dtype = "float64", device = D.name })
            local want = f(x)
            local y = f(x, { inplace = true })
            assert.are.equal(x, y) -- the input itself
            close(x, { shape = { 5 }, data = want:to("cpu"):totable() })
            local m = M({ inplace = true })
            local x2 = tide.tensor(vals, { dtype = "float64", device = D.name })
            assert.are.equal(x2, m(x2))
            close(x2, { shape = { 5 }, data = want:to("cpu"):totable() })
            -- on a non-leaf: the gradient is the out-of-place one, through the in-place write
            local w = tide.tensor(vals, { dtype = "float64", device = D.name, requires_grad = true })
            local g = tide.tensor({ 1, 2, 3, 4, 5 }, { dtype = "float64", device = D.name })
            f(w:mul(2)):mul(g):sum():backward()
            local ref = w.grad:to("cpu"):totable()
            local v = tide.tensor(vals, { dtype = "float64", device = D.name, requires_grad = true })
            local h = v:mul(2)
            local out = f(h, { inplace = true })
            assert.are.equal(h, out)
            out:mul(g):sum():backward()
            close(v.grad, { shape = { 5 }, data = ref })
        end)
    end

    it("Dropout and dropout2d zero the input itself in training, keep it in eval", function()
        tide.manual_seed(4)
        local x = tide.ones({ 2, 4, 3, 3 }, { device = D.name })
        local d = nn.Dropout({ p = 0.5, inplace = true })
        assert.are.equal(x, d(x))
        local kept = x:ne(0):sum():item()
        assert.is_true(kept > 0 and kept < 72)
        assert.are.equal(2, x:max():item()) -- the kept cells scaled by 1 / (1 - p)
        local c = tide.ones({ 2, 4, 3, 3 }, { device = D.name })
        assert.are.equal(c, F.dropout2d(c, { p = 0.5, inplace = true }))
        local per = c:sum(4):sum(3):to("cpu"):reshape(-1):totable()
        for _, s in ipairs(per) do -- whole channels: 0 or 9 * 2
            assert.is_true(s == 0 or s == 18)
        end
        d:eval()
        local e = tide.ones({ 3 }, { device = D.name })
        assert.are.equal(e, d(e))
        assert.are.equal(3, e:sum():item())
        -- gradient through an in-place dropout on a non-leaf: the kept mask, scaled
        local w = tide.ones({ 100 }, { dtype = "float64", device = D.name, requires_grad = true })
        local h = w:mul(1)
        F.dropout(h, { p = 0.25, inplace = true }):sum():backward()
        local gw, hv = w.grad:to("cpu"):totable(), h:detach():to("cpu"):totable()
        for i = 1, 100 do
            assert.are.equal(hv[i], gw[i]) -- 0 where dropped, 1 / 0.75 where kept
        end
    end)

    it("refuses a leaf that requires grad, and names the function or the module", function()
        local w = tide.ones({ 3 }, { requires_grad = true, device = D.name })
        local msg = "in-place operation on a leaf tensor that requires grad; leave inplace " ..
            "off, or wrap it in tide.no_grad"
        raises_here("relu: " .. msg, F.relu, w, { inplace = true })
        raises_here("elu: " .. msg, F.elu, w, { alpha = 1, inplace = true })
        raises_here("hardtanh: " .. msg, F.hardtanh, w, { inplace = true })
        raises_here("Hardtanh: " .. msg, nn.Hardtanh({ inplace = true }), w)
        raises_here("Dropout: " .. msg, nn.Dropout({ inplace = true }), w)
        raises_here("relu: expected inplace to be a boolean, got number", F.relu, w,
            { inplace = 1 })
        raises_here('ReLU: unknown option "in_place" (did you mean "inplace"?)', nn.ReLU,
            { in_place = true })
        local h = w:mul(2)
        raises_here("leaky_relu: in-place operation on a view of a leaf tensor that requires " ..
            "grad; leave inplace off, or clone() it first", F.leaky_relu, w:narrow(1, 1, 2),
            { inplace = true })
        assert.are.equal(3, w:sum():item()) -- left unchanged
        -- a view of a non-leaf is written, and the gradient flows through the base
        F.leaky_relu(h:narrow(1, 1, 2), { negative_slope = 0.5, inplace = true })
        assert.are.equal(6, h:sum():item())
        -- under no_grad the leaf is written
        tide.no_grad(function() F.relu(w:mul(-1), { inplace = true }) end)
        local y = tide.no_grad(function() return F.hardtanh(w, { max_val = 0.5, inplace = true }) end)
        assert.are.equal(w, y)
        assert.are.equal(1.5, w:sum():item())
    end)
end)

describe("pooling options", function()
    it("return 1-based indices that max_pool's values sit at", function()
        local x = tide.tensor({ { { { 1, 5, 2 }, { 7, 3, 9 }, { 4, 8, 6 } } } },
            { device = D.name, dtype = "float32" })
        local y, i = F.max_pool2d(x, 2, { stride = 1, return_indices = true })
        assert.are.same({ { { { 7, 9 }, { 8, 9 } } } }, y:to("cpu"):totable())
        assert.are.same({ { { { 4, 6 }, { 8, 6 } } } }, i:to("cpu"):totable())
        assert.is_false(i.requires_grad)
        local v, j = nn.MaxPool1d(2, { ceil_mode = true, return_indices = true })(
            tide.tensor({ { { 3, 1, 4, 1, 5 } } }, { device = D.name, dtype = "float32" }))
        assert.are.same({ { { 3, 4, 5 } } }, v:to("cpu"):totable())
        assert.are.same({ { { 1, 3, 5 } } }, j:to("cpu"):totable())
    end)

    it("check their arguments", function()
        local img = tide.zeros({ 1, 1, 4, 4 }, { device = D.name })
        raises_here("max_pool2d: expected dilation to be an integer >= 1, got 0", F.max_pool2d,
            img, 2, { dilation = 0 })
        raises_here("max_pool2d: kernel 3x3 with dilation 2,2 spans 5x5, larger than the " ..
            "padded input 4x4; use a smaller kernel, dilation or more padding", F.max_pool2d,
            img, 3, { dilation = 2 })
        raises_here("max_pool1d: expected return_indices to be a boolean, got string",
            F.max_pool1d, tide.zeros({ 1, 1, 4 }), 2, { return_indices = "yes" })
        raises_here('avg_pool2d: unknown option "dilation"; options are stride, padding, ' ..
            "count_include_pad, ceil_mode, divisor_override", F.avg_pool2d, img, 2,
            { dilation = 2 })
        raises_here("max_pool2d: expected a floating-point input, got int64", F.max_pool2d,
            tide.zeros({ 1, 1, 2, 2 }, { dtype = "int64" }), 2)
        raises_here("avg_pool2d: expected divisor_override to be a non-zero integer, got 1.5",
            F.avg_pool2d, img, 2, { divisor_override = 1.5 })
        raises_here('MaxPool2d: unknown option "dilations" (did you mean "dilation"?)',
            nn.MaxPool2d, 2,
            { dilations = 2 })
    end)
end)

describe("pad modes", function()
    it("follow PyTorch's rules on ranks, sizes and values", function()
        local t3 = tide.zeros({ 1, 2, 3 }, { device = D.name })
        raises_here('pad: mode "circular" takes 2 sizes for a 3-D input {N, C, W}, 4 for a ' ..
            "4-D input, 6 for a 5-D input; got 2 sizes for a 2-D input", F.pad,
            tide.zeros({ 2, 3 }), { 1, 1 }, { mode = "circular" })
        raises_here('pad: mode "replicate" takes 2 sizes for a 2-D or 3-D input, 4 for a 3-D ' ..
            "or 4-D input, 6 for a 4-D or 5-D input; got 2 sizes for a 4-D input", F.pad,
            tide.zeros({ 1, 1, 2, 3 }), { 1, 1 }, { mode = "replicate" })
        raises_here('pad: mode "circular" wraps around at most once: sizes 4, 0 exceed dim 3 ' ..
            "of size 3 (input {1, 2, 3})", F.pad, t3, { 4, 0 }, { mode = "circular" })
        raises_here('pad: mode "reflect" takes no value (got 1); drop the value option', F.pad,
            t3, { 1, 1 }, { mode = "reflect", value = 1 })
        raises_here('pad: unknown mode "mirror"; use "constant", "reflect", "replicate" or ' ..
            '"circular"', F.pad, t3, { 1, 1 }, { mode = "mirror" })
        raises_here("pad: sizes -2, -1 leave nothing of dim 3 of size 3", F.pad, t3, { -2, -1 },
            { mode = "replicate" })
        assert.are.same({ { { 0, 1, 2, 0, 1, 2 } } }, F.pad(tide.tensor({ { { 0, 1, 2 } } }),
            { 3, 0 }, { mode = "circular" }):totable())
    end)
end)

describe("binary_cross_entropy_with_logits weights", function()
    it("keeps weight and pos_weight as buffers and checks their shapes and devices", function()
        local m = nn.BCEWithLogitsLoss({ weight = tide.ones(3), pos_weight = tide.ones(3) })
        local names = {}
        for k in pairs(m:state_dict()) do
            names[#names + 1] = k
        end
        table.sort(names)
        assert.are.same({ "pos_weight", "weight" }, names)
        raises_here("BCEWithLogitsLoss: weight {3} does not broadcast to the input's shape {2, 2}",
            m, tide.zeros(2, 2), tide.zeros(2, 2))
        local on = { device = D.name }
        raises_here("binary_cross_entropy_with_logits: expected all tensors on the same device, " ..
            "found " .. D.name .. " (input) and " .. D.other .. " (weight); move the input with " ..
            "x:to(\"" .. D.other .. "\")", F.binary_cross_entropy_with_logits, tide.zeros(2, on),
            tide.zeros(2, on), { weight = tide.ones(2, { device = D.other }) })
    end)
end)

describe("embedding options", function()
    it("nn.Embedding zeroes its padding row and leaves it without gradient", function()
        tide.manual_seed(2)
        local e = nn.Embedding(4, 3, { padding_idx = 2 }):to(D.name)
        assert.are.same({ 0, 0, 0 }, e.weight[2]:to("cpu"):totable())
        assert.are.equal(2, e.padding_idx)
        local ids = tide.tensor({ 2, 1, 2, 4 }, { dtype = "int64", device = D.name })
        e(ids):sum():backward()
        assert.are.same({ { 1, 1, 1 }, { 0, 0, 0 }, { 0, 0, 0 }, { 1, 1, 1 } },
            e.weight.grad:to("cpu"):totable())
        local last = nn.Embedding(4, 2, { padding_idx = -1 })
        assert.are.same({ 0, 0 }, last.weight[4]:totable())
    end)

    it("max_norm renormalises the rows looked up, in place, in the module too", function()
        local e = nn.Embedding(3, 2, { max_norm = 1 })
        tide.no_grad(function() e.weight:copy_(tide.tensor({ { 3, 4 }, { 0.3, 0.4 }, { 6, 8 } })) end)
        local y = e(tide.tensor({ 1, 2 }, { dtype = "int64" }))
        local w = e.weight:totable()
        assert.is_true(math.abs(w[1][1] - 0.6) < 1e-6 and math.abs(w[1][2] - 0.8) < 1e-6)
        assert.are.same({ 6, 8 }, w[3]) -- not looked up: left alone
        assert.is_true(math.abs(y[2][1]:item() - 0.3) < 1e-7)
    end)

    it("checks padding_idx and max_norm", function()
        local w = tide.zeros(5, 2)
        local ids = tide.tensor({ 1 }, { dtype = "int64" })
        raises_here("embedding: padding_idx must be a row of the 5 embeddings: 1..5, or -5..-1 " ..
            "from the end; got 6", F.embedding, ids, w, { padding_idx = 6 })
        raises_here("Embedding: padding_idx must be a row of the 5 embeddings: 1..5, or -5..-1 " ..
            "from the end; got 0", nn.Embedding, 5, 2, { padding_idx = 0 })
        raises_here("embedding: expected max_norm > 0 and norm_type > 0, got 1 and -1",
            F.embedding, ids, w, { max_norm = 1, norm_type = -1 })
        assert.is_true(nn.Embedding(5, 2, { sparse = true }).sparse)
        raises_here("Embedding: expected sparse to be a boolean, got string (yes)", nn.Embedding, 5, 2,
            { sparse = "yes" })
    end)
end)

-- Conv2d and Conv1d padding_mode against PyTorch 1.13 (spec/fixtures/padding_mode_torch.lua,
-- made by spec/fixtures/make_padding_mode.py): outputs and input gradients, float64
describe("convolution padding_mode on " .. D.name, function()
    local PM = require("spec.fixtures.padding_mode_torch")
    local function linspace(n, shape)
        return tide.linspace(-1, 1, n, { dtype = "float64", device = D.name }):reshape(shape)
    end
    for _, mode in ipairs({ "zeros", "reflect", "replicate", "circular" }) do
        it("Conv2d and Conv1d with padding_mode " .. mode .. " match PyTorch", function()
            local ref = PM[mode]
            local dd = { dtype = "float64", device = D.name }
            local c2 = nn.Conv2d(2, 3, 3, { padding = { 1, 2 }, padding_mode = mode })
                :to(D.name):to("float64")
            assert.are.equal(mode, c2.padding_mode)
            tide.no_grad(function()
                c2.weight:copy_(tide.arange(0, 54, 1, dd):div(50):sub(0.5):reshape(3, 2, 3, 3))
                c2.bias:copy_(tide.tensor({ 0.1, -0.2, 0.3 }, dd))
            end)
            local x = tide.arange(0, 40, 1, dd):div(10):sub(1):reshape(1, 2, 4, 5)
                :requires_grad_(true)
            local y = c2(x)
            close(y, ref.y2, 1e-12, "Conv2d " .. mode)
            y:mul(linspace(y:numel(), y.shape)):sum():backward()
            close(x.grad, ref.gx2, 1e-12, "Conv2d " .. mode .. " input gradient")

            local c1 = nn.Conv1d(2, 3, 3, { padding = 2, padding_mode = mode })
                :to(D.name):to("float64")
            tide.no_grad(function()
                c1.weight:copy_(tide.arange(0, 18, 1, dd):div(20):sub(0.4):reshape(3, 2, 3))
                c1.bias:copy_(tide.tensor({ 0.1, -0.2, 0.3 }, dd))
            end)
            local x1 = tide.arange(0, 12, 1, dd):div(7):sub(0.5):reshape(1, 2, 6)
                :requires_grad_(true)
            local y1 = c1(x1)
            close(y1, ref.y1, 1e-12, "Conv1d " .. mode)
            y1:mul(linspace(y1:numel(), y1.shape)):sum():backward()
            close(x1.grad, ref.gx1, 1e-12, "Conv1d " .. mode .. " input gradient")
        end)
    end

    it("refuses an unknown mode, and any but zeros for ConvTranspose2d, as PyTorch", function()
        raises_here('Conv2d: unknown padding_mode "mirror"; use "zeros", "reflect", ' ..
            '"replicate" or "circular"', nn.Conv2d, 1, 1, 3, { padding_mode = "mirror" })
        raises_here('ConvTranspose2d: only padding_mode "zeros" is supported (as in PyTorch), ' ..
            'got "reflect"', nn.ConvTranspose2d, 1, 1, 3, { padding_mode = "reflect" })
        raises_here('conv2d: unknown option "padding_mode"; options are stride, padding, ' ..
            'dilation, groups', F.conv2d,
            tide.randn(1, 1, 3, 3), tide.randn(1, 1, 1, 1), nil, { padding_mode = "zeros" })
    end)
end)

-- embedding's scale_grad_by_freq against PyTorch 1.13 (spec/fixtures/embedding_freq_torch.lua,
-- made by spec/fixtures/make_embedding_freq.py): each row's gradient over its id's count
describe("embedding scale_grad_by_freq on " .. D.name, function()
    local EF = require("spec.fixtures.embedding_freq_torch")
    for _, case in ipairs({ { "plain", nil }, { "padding", 3 } }) do
        it("F.embedding and nn.Embedding match PyTorch (" .. case[1] .. ")", function()
            local dd = { dtype = "float64", device = D.name }
            local ids = T(EF.ids, { device = D.name })
            local ref = EF[case[1]]
            local g = tide.linspace(-1, 1, 24, dd):reshape(2, 4, 3)
            local w = tide.arange(0, 15, 1, dd):div(10):sub(0.7):reshape(5, 3):requires_grad_(true)
            local y = F.embedding(ids, w, { padding_idx = case[2], scale_grad_by_freq = true })
            close(y, ref.y, 1e-12, "embedding " .. case[1])
            y:mul(g):sum():backward()
            close(w.grad, ref.gw, 1e-12, "embedding " .. case[1] .. " weight gradient")

            local emb = nn.Embedding(5, 3, { padding_idx = case[2], scale_grad_by_freq = true })
                :to(D.name):to("float64")
            tide.no_grad(function()
                emb.weight:copy_(w:detach())
            end)
            emb(ids):mul(g):sum():backward()
            close(emb.weight.grad, ref.gw, 1e-12, "Embedding " .. case[1] .. " weight gradient")
        end)
    end
end)
