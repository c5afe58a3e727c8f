-- the wider surface's layers and losses (docs/API.md): outputs and gradients against PyTorch
-- 1.13 (spec/fixtures/nn_layers_torch.lua, made by spec/fixtures/make_nn_layers.py), finite
-- differences where tide adds its own gradient (col2im), options and errors. The PyTorch cases
-- run on the device under test (spec/support/device.lua: cpu:1 and cuda:0 in run_all.sh)
local tide = require("tide")
local host = require("spec.support.host")
local fx = require("spec.support.fixtures")
local D = require("spec.support.device")
local nn = tide.nn
local F = nn.functional
local gradcheck = require("spec.support.gradcheck")
local REF = require("spec.fixtures.nn_layers_torch")

local T = fx.tensor

local function close(t, r, tol)
    fx.close(t, r, tol)
end

local W = tide.tensor({ 0.5, 2.0, 1.0, 1.5 }, { dtype = "float64" })
local CLASS_OPTS = {
    w = { weight = W }, ig = { ignore_index = 2 }, ls = { label_smoothing = 0.2 },
    all = { weight = W, ignore_index = 2, label_smoothing = 0.1 },
}

-- the tide module of each fixture case
local function build(name, c)
    local fixed = {
        Conv1d = function() return nn.Conv1d(3, 4, 3, { stride = 2, padding = 1 }) end,
        Conv1d_nobias = function() return nn.Conv1d(2, 3, 2, { bias = false }) end,
        ConvTranspose2d = function()
            return nn.ConvTranspose2d(3, 2, 3, { stride = 2, padding = 1, output_padding = 1 })
        end,
        ConvTranspose2d_rect = function()
            return nn.ConvTranspose2d(2, 3, { 2, 3 }, { stride = { 1, 2 } })
        end,
        Conv2d_groups = function() return nn.Conv2d(4, 6, 3, { padding = 1, groups = 2 }) end,
        Conv2d_dilation = function()
            return nn.Conv2d(3, 4, { 3, 2 }, { stride = { 2, 1 }, padding = { 2, 1 },
                dilation = { 2, 3 } })
        end,
        Conv2d_depthwise = function()
            return nn.Conv2d(3, 6, 3, { stride = 2, dilation = 2, groups = 3, bias = false })
        end,
        Conv1d_groups_dilation = function()
            return nn.Conv1d(4, 6, 3, { stride = 2, padding = 2, dilation = 2, groups = 2 })
        end,
        ConvTranspose2d_groups = function()
            return nn.ConvTranspose2d(4, 6, 3, { stride = 2, padding = 1, output_padding = 1,
                groups = 2 })
        end,
        ConvTranspose2d_dilation = function()
            return nn.ConvTranspose2d(2, 3, { 2, 3 }, { stride = { 1, 2 }, dilation = { 2, 3 } })
        end,
        ConvTranspose2d_dilation_opad = function()
            return nn.ConvTranspose2d(2, 2, 3, { dilation = 2, output_padding = 1, groups = 2 })
        end,
        AvgPool2d = function() return nn.AvgPool2d(3, 2, 1) end,
        AvgPool2d_nopad = function()
            return nn.AvgPool2d(3, { stride = 2, padding = 1, count_include_pad = false })
        end,
        AdaptiveAvgPool2d = function() return nn.AdaptiveAvgPool2d({ 3, 4 }) end,
        AdaptiveAvgPool2d_div = function() return nn.AdaptiveAvgPool2d(2) end,
        AdaptiveAvgPool2d_keep = function() return nn.AdaptiveAvgPool2d({ nil, 2 }) end,
        MaxPool1d = function() return nn.MaxPool1d(3, { stride = 2, padding = 1 }) end,
        GroupNorm = function() return nn.GroupNorm(2, 4) end,
        LeakyReLU = function() return nn.LeakyReLU(0.2) end,
        SiLU = function() return nn.SiLU() end,
        ELU = function() return nn.ELU(0.7) end,
        Softplus = function() return nn.Softplus({ beta = 2, threshold = 3 }) end,
        Hardtanh = function() return nn.Hardtanh(-0.5, 0.8) end,
        KLDivLoss_batchmean_log = function()
            return nn.KLDivLoss({ reduction = "batchmean", log_target = true })
        end,
    }
    if fixed[name] then
        return fixed[name]()
    end
    local cls, red = name:match("^(%w+)Loss_(%a+)$")
    if cls then
        local o = { reduction = red }
        o.beta = cls == "SmoothL1" and 0.5 or nil
        o.delta = cls == "Huber" and 0.7 or nil
        o.weight = cls == "BCE" and T(c.weight, { device = D.name }) or nil
        return nn[cls .. "Loss"](o)
    end
    local kind, tag, r = name:match("^(%u+)_(%a+)_(%a+)")
    if kind then
        -- CE_<tag>_<reduction>[_nd], NLL_<tag>_<reduction>, CE_plain_nd_<reduction>,
        -- CE_default_ignore_<reduction>
        local o = { reduction = name:match("_(%a+)$") }
        if tag ~= "plain" and tag ~= "default" then
            o.reduction = r
            for k, v in pairs(CLASS_OPTS[tag]) do
                o[k] = k == "weight" and v:to(D.name) or v
            end
            if kind == "NLL" then
                o.label_smoothing = nil
            end
        end
        return (kind == "CE" and nn.CrossEntropyLoss or nn.NLLLoss)(o)
    end
    error("no builder for fixture case " .. name)
end

describe("nn layers and losses against PyTorch on " .. D.name, function()
    local names = {}
    for name in pairs(REF.cases) do
        names[#names + 1] = name
    end
    table.sort(names)
    for _, name in ipairs(names) do
        it(name, function()
            local c = REF.cases[name]
            local m = build(name, c):double():to(D.name)
            local on = { device = D.name }
            for k, p in pairs(c.params or {}) do
                tide.no_grad(function() m[k]:copy_(T(p, on)) end)
            end
            local x = T(c.x, on):requires_grad_(true)
            local out = c.target and m(x, T(c.target, on)) or m(x)
            close(out, c.out)
            if c.gy then
                out:mul(T(c.gy, on)):sum():backward()
            else
                out:backward()
            end
            close(x.grad, c.gx)
            for k, g in pairs(c.gparams or {}) do
                close(m[k].grad, g)
            end
        end)
    end
end)

describe("nn layers", function()
    it("take PyTorch's parameter names, shapes and init bounds", function()
        tide.manual_seed(1)
        local ct = nn.ConvTranspose2d(4, 6, 3)
        assert.are.same({ 4, 6, 3, 3 }, ct.weight.shape)
        assert.are.same({ 6 }, ct.bias.shape)
        local bound = 1 / math.sqrt(6 * 9) -- fan_in of {in, out, kh, kw} is out * kh * kw
        assert.is_true(ct.weight:abs():max():item() <= bound)
        assert.is_true(ct.weight:abs():max():item() > 0.8 * bound)
        local c1 = nn.Conv1d(4, 5, 3)
        assert.are.same({ 5, 4, 3 }, c1.weight.shape)
        assert.is_true(c1.weight:abs():max():item() <= 1 / math.sqrt(12))
        local sd = nn.GroupNorm(2, 4):state_dict()
        assert.are.same({ 4 }, sd.weight.shape)
        assert.are.same({ 4 }, sd.bias.shape)
        assert.is_nil(nn.GroupNorm(2, 4, { affine = false }).weight)
    end)

    it("ConvTranspose2d's gradients match finite differences", function()
        local x = tide.randn({ 1, 2, 3, 3 }, { dtype = "float64", requires_grad = true })
        local w = tide.randn({ 2, 3, 2, 2 }, { dtype = "float64", requires_grad = true })
        local b = tide.randn({ 3 }, { dtype = "float64", requires_grad = true })
        assert.is_true(gradcheck(function(a, ww, bb)
            return F.conv_transpose2d(a, ww, bb, { stride = 2, padding = 1 })
        end, { x, w, b }))
        assert.is_true(gradcheck(function(a)
            return F.adaptive_avg_pool2d(a, { 2, 2 })
        end, { x }))
    end)

    it("Dropout2d zeroes whole channels in training and is the identity in eval", function()
        tide.manual_seed(3)
        local d = nn.Dropout2d(0.5)
        local y = d(tide.ones({ 4, 8, 3, 3 }))
        local per = y:sum(4):sum(3):reshape(-1):totable()
        local zeros = 0
        for _, v in ipairs(per) do
            assert.is_true(v == 0 or v == 18) -- a channel is all 0 or all 2
            zeros = zeros + (v == 0 and 1 or 0)
        end
        assert.is_true(zeros > 4 and zeros < 28)
        d:eval()
        local x = tide.randn({ 2, 3, 2, 2 })
        assert.are.equal(x, d(x))
    end)

    it("convolutions take PyTorch's weight shapes with groups", function()
        assert.are.same({ 4, 3, 3, 3 }, nn.Conv2d(6, 4, 3, { groups = 2 }).weight.shape)
        assert.are.same({ 6, 1, 5 }, nn.Conv1d(3, 6, 5, { groups = 3 }).weight.shape)
        assert.are.same({ 4, 3, 2, 2 }, nn.ConvTranspose2d(4, 6, 2, { groups = 2 }).weight.shape)
        local c = nn.Conv2d(6, 4, 3, { groups = 2, dilation = { 2, 1 } })
        assert.truthy(tostring(c):find("Conv2d(6, 4, kernel_size={3, 3}, stride={1, 1}, " ..
            "dilation={2, 1}, groups=2)", 1, true))
        local y = c(tide.randn(2, 6, 9, 9))
        assert.are.same({ 2, 4, 5, 7 }, y.shape)
    end)

    it("reject unknown options and bad arguments at the user's line", function()
        local function raises(msg, f)
            local ok, err = pcall(f)
            assert.is_false(ok)
            assert.truthy(err:find("nn_layers_spec.lua:%d+: tide: "), err)
            assert.truthy(err:find(msg, 1, true), err)
        end
        raises('Conv1d: unknown option "strides"', function()
            nn.Conv1d(1, 1, 1, { strides = 2 })
        end)
        raises('CrossEntropyLoss: unknown option "label_smooth"', function()
            nn.CrossEntropyLoss({ label_smooth = 0.1 })
        end)
        raises("GroupNorm: num_channels 5 is not divisible by num_groups 2", function()
            nn.GroupNorm(2, 5)
        end)
        raises("Conv2d: in_channels 6 is not divisible by groups 4", function()
            nn.Conv2d(6, 8, 3, { groups = 4 })
        end)
        raises("Conv2d: out_channels 6 is not divisible by groups 4", function()
            nn.Conv2d(8, 6, 3, { groups = 4 })
        end)
        raises("Conv1d: in_channels 3 is not divisible by groups 2", function()
            nn.Conv1d(3, 4, 3, { groups = 2 })
        end)
        raises("ConvTranspose2d: out_channels 3 is not divisible by groups 2", function()
            nn.ConvTranspose2d(4, 3, 3, { groups = 2 })
        end)
        raises("Conv2d: expected dilation to be an integer >= 1, got 0", function()
            nn.Conv2d(1, 1, 3, { dilation = 0 })
        end)
        raises('Conv2d: unknown padding_mode "reflected"; use "zeros", "reflect", "replicate" or ' ..
            '"circular"', function()
                nn.Conv2d(1, 1, 3, { padding_mode = "reflected" })
            end)
        raises("Conv2d: input 4x4 (padding 0,0) is smaller than the kernel 3x3 (dilation 2,2)",
            function() nn.Conv2d(1, 1, 3, { dilation = 2 })(tide.zeros({ 1, 1, 4, 4 })) end)
        raises("Conv1d: expected input {N, C, L} or unbatched {C, L}, got {3}", function()
            nn.Conv1d(3, 1, 1)(tide.zeros({ 3 }))
        end)
        raises("ConvTranspose2d: expected input {N, 3, H, W} or unbatched {3, H, W}, got " ..
            "{1, 2, 4, 4}", function()
            nn.ConvTranspose2d(3, 1, 2)(tide.zeros({ 1, 2, 4, 4 }))
        end)
        raises("Hardtanh: expected min_val <= max_val, got 1 > 0", function()
            nn.Hardtanh(1, 0)
        end)
        raises("L1Loss: unknown reduction 'avg'", function() nn.L1Loss({ reduction = "avg" }) end)
        raises("HuberLoss: expected target of the input's shape {3}, got {2}", function()
            nn.HuberLoss()(tide.zeros(3), tide.zeros(2))
        end)
        local x = tide.randn({ 3, 4 })
        raises("CrossEntropyLoss: target 5 out of range for 4 classes; class targets are " ..
            "1-based, in 1..4 (or ignore_index 2)", function()
            nn.CrossEntropyLoss({ ignore_index = 2 })(x, tide.tensor({ 2, 5, 1 }))
        end)
        raises("cross_entropy: expected weight of shape {4} (one per class), got {3}", function()
            F.cross_entropy(x, tide.tensor({ 1, 2, 3 }), { weight = tide.ones(3) })
        end)
        raises("cross_entropy: expected target of shape {3, 2} for input {3, 4, 2}, got {3}",
            function()
                F.cross_entropy(tide.zeros({ 3, 4, 2 }), tide.tensor({ 1, 2, 3 }))
            end)
    end)

    it("off the host (cpu:1) the class losses poison an out-of-range target with NaN", function()
        local x = tide.randn({ 3, 4 }, { dtype = "float64" })
        local t = tide.tensor({ 1, 2, 4 })
        local o = { weight = W, ignore_index = 2, label_smoothing = 0.1 }
        local here = F.cross_entropy(x, t, o):item()
        local there = F.cross_entropy(x:to("cpu:1"), t:to("cpu:1"), { weight = W:to("cpu:1"),
            ignore_index = 2, label_smoothing = 0.1 })
        assert.are.equal("cpu:1", tostring(there.device))
        assert.is_true(math.abs(there:item() - here) < 1e-12)
        local bad = F.cross_entropy(x:to("cpu:1"), tide.tensor({ 1, 5, 2 }):to("cpu:1"),
            { ignore_index = 2 }):item()
        assert.is_true(bad ~= bad)
    end)

    it("nn.functional gives the modules' values", function()
        local x = tide.randn({ 2, 4, 3, 2 }, { dtype = "float64" })
        local t = tide.tensor({ { { 1, 2 }, { 3, 4 }, { 2, 2 } },
            { { 4, 1 }, { 1, 1 }, { 3, 2 } } })
        local o = { weight = W, ignore_index = 2, label_smoothing = 0.1 }
        local a = F.cross_entropy(x, t, o):item()
        local b = nn.CrossEntropyLoss(o)(x, t):item()
        assert.are.equal(a, b)
        local lp = x:log_softmax(2)
        assert.are.equal(F.nll_loss(lp, t, { weight = W }):item(),
            nn.NLLLoss({ weight = W })(lp, t):item())
        local y = tide.randn({ 3 }, { dtype = "float64" })
        local z = tide.randn({ 3 }, { dtype = "float64" })
        assert.are.equal(F.huber_loss(y, z, { delta = 0.3 }):item(),
            nn.HuberLoss({ delta = 0.3 })(y, z):item())
        local h = tide.randn({ 2, 5 })
        close(F.hardtanh(h, { min_val = -0.2, max_val = 0.3 }),
            { shape = { 2, 5 }, data = nn.Hardtanh(-0.2, 0.3)(h):reshape(-1):totable() })
    end)
end)
