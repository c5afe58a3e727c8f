-- batch_norm_rows_spec.lua — batch norm through its kernel rows (include/tide_kernels.def:
-- channel_stats, channel_affine, channel_grad_sums; one autograd node) on the device under test
-- (spec/support/device.lua), against PyTorch 1.13's float64 values: training (the batch's
-- statistics, the running ones updated in place) and eval, the gradients of x, weight and bias,
-- 2-D input, no affine; a graph of the gradient (create_graph) through the composite ops; the
-- rows' own checks.
local tide = require("tide")
local core = require("tide.core")
local autograd = require("tide.autograd")
local D = require("spec.support.device")
local F = tide.nn.functional
local K = core._internal

local dev = D.name
local F64 = { dtype = "float64", device = dev }

local function fixed(shape, a, b)
    local n = 1
    for _, s in ipairs(shape) do
        n = n * s
    end
    return tide.arange(n, F64):mul(a):add(b or 0):sin():view(shape)
end

-- sum, abs sum, cos-weighted sum (the reference script's fingerprint of a tensor)
local function cs(t)
    t = t:detach():reshape(-1):to("cpu"):double()
    local w = tide.arange(t:numel(), { dtype = "float64" }):mul(0.7):cos()
    return { t:sum():item(), t:abs():sum():item(), t:mul(w):sum():item() }
end

local function close(want, got, tol, what)
    assert.are.equal(#want, #got, what)
    for i = 1, #want do
        assert.is_true(math.abs(got[i] - want[i]) <= tol * math.max(1, math.abs(want[i])),
            ("%s[%d]: %.17g, PyTorch %.17g"):format(what, i, got[i], want[i]))
    end
end

local function inputs()
    local x = fixed({ 3, 4, 2, 5 }, 0.37, 0.1):requires_grad_(true)
    local w = fixed({ 4 }, 0.9, 0.3):add(1):requires_grad_(true)
    local b = fixed({ 4 }, 0.5, 0.2):requires_grad_(true)
    local g = fixed({ 3, 4, 2, 5 }, 0.23, 0.7)
    local rm = fixed({ 4 }, 0.4):mul(0.1)
    local rv = fixed({ 4 }, 0.6):abs():add(0.5)
    return x, w, b, g, rm, rv
end

describe("batch norm by its kernel rows on " .. dev, function()
    it("in training: the batch's statistics, the running ones updated, the gradients", function()
        local x, w, b, g, rm, rv = inputs()
        local y = F.batch_norm(x, rm, rv, { weight = w, bias = b, training = true })
        close({ 82.99772743357342, 178.3513063700758, -1.958476314115036 }, cs(y), 1e-12, "y")
        close({ 0.0030378026014039865, 0.031077290673999485, 0.06825877069027265,
            0.0815834969160792 }, rm:to("cpu"):totable(), 1e-12, "running_mean")
        close({ 0.501443040113263, 1.0085014729528927, 1.3395178953639233, 1.3785806691767306 },
            rv:to("cpu"):totable(), 1e-12, "running_var")
        y:backward(g)
        close({ -6.217248937900877e-15, 114.97881508761807, 4.744841702355299 }, cs(x.grad),
            1e-12, "grad x")
        close({ 13.353477298038431, 12.405760223238097, -8.930107309970952, -15.036853736940248 },
            w.grad:to("cpu"):totable(), 1e-12, "grad weight")
        close({ 7.540526386622854, -4.683044898987961, -1.3001253410779006, 6.415529577824882 },
            b.grad:to("cpu"):totable(), 1e-12, "grad bias")
    end)

    it("in eval: the running statistics, and the gradients through them", function()
        local x, w, b, g, rm, rv = inputs()
        local y = F.batch_norm(x, rm, rv, { weight = w, bias = b })
        close({ 75.34882768577609, 133.4226705695587, -4.415580927567393 }, cs(y), 1e-12, "y")
        y:backward(g)
        close({ 9.052368900176203, 120.21190545762363, 1.5025800653993406 }, cs(x.grad), 1e-12,
            "grad x")
        close({ 13.641088908947003, 8.742782982089429, -5.185592430562927, -9.405621375367454 },
            w.grad:to("cpu"):totable(), 1e-12, "grad weight")
    end)

    it("on 2-D input without weight, bias or running statistics", function()
        local x = fixed({ 6, 3 }, 0.41, 0.2):requires_grad_(true)
        local y = F.batch_norm(x, nil, nil, { training = true })
        close({ 0.27443149246243714, 0.7319573874196522, 1.0203702654579274, 1.4902678358638874,
            1.310300009513112, 0.9167892356032772, 0.6808012990410411, -0.009368181484635342,
            -0.6362770495256653, -1.0761435552624303, -1.4698765970132774, -1.5708827101014,
            -1.4411515280105494, -1.1265224325205336, -0.642577368469514, 0.07179445590561408,
            0.5635098140856823, 0.9125776270353748 }, y:reshape(-1):to("cpu"):totable(), 1e-12, "y")
        y:backward(fixed({ 6, 3 }, 0.29, 0.1))
        close({ -0.22225557736131127, 0.13051518352069913, 0.5505626596357248, 0.2673635852767362,
            0.7628088568340031, 1.0949766589283765, 0.8966485074809937, 1.0953017934689055,
            1.0007394326112509, 0.9604285432370472, 0.5893648975691667, 0.09853584180370877,
            -0.14693792247988455, -0.730332888330581, -1.1129310951124511, -1.7552471361535815,
            -1.8476578430621933, -1.6318834978666095 }, x.grad:reshape(-1):to("cpu"):totable(),
            1e-12, "grad x")
    end)

    it("on [N, C] with more channels than one block (130), as the composite ops", function()
        local x = fixed({ 8, 130 }, 0.31, 0.4):requires_grad_(true)
        local w = fixed({ 130 }, 0.7, 1.1):requires_grad_(true)
        local g = fixed({ 8, 130 }, 0.17, 0.3)
        local y = F.batch_norm(x, nil, nil, { weight = w, training = true })
        y:backward(g)
        local xr, wr = x:detach():requires_grad_(true), w:detach():requires_grad_(true)
        local m = xr:mean(1, true)
        local v = xr:sub(m):pow(2):mean(1, true)
        local want = xr:sub(m):div(v:add(1e-5):sqrt()):mul(wr)
        want:backward(g)
        assert.is_true(y:sub(want):abs():max():item() < 1e-12)
        assert.is_true(x.grad:sub(xr.grad):abs():max():item() < 1e-12)
        assert.is_true(w.grad:sub(wr.grad):abs():max():item() < 1e-12)
    end)

    it("float32 agrees with float64, and BatchNorm2d trains with it", function()
        local x, w, b, g = inputs()
        local y64 = F.batch_norm(x:detach(), nil, nil, { weight = w:detach(), bias = b:detach(),
            training = true })
        local xf = x:detach():float():requires_grad_(true)
        local y32 = F.batch_norm(xf, nil, nil, { weight = w:detach():float(),
            bias = b:detach():float(), training = true })
        assert.are.equal("float32", y32.dtype)
        assert.is_true(y32:double():sub(y64):abs():max():item() < 1e-5)
        y32:backward(g:float())
        assert.is_true(xf.grad:abs():sum():item() > 1)
        local bn = tide.nn.BatchNorm2d(4):to(dev)
        local out = bn(xf:detach())
        assert.is_true(out:mean({ 1, 3, 4 }):abs():max():item() < 1e-5) -- each channel centred
        assert.is_true(bn.running_mean:abs():sum():item() > 0)
    end)

    it("gives the composite's second derivative under create_graph", function()
        -- small: gradgradcheck perturbs every element (the emulated GPU runs this spec too)
        local x, w, b = fixed({ 3, 2, 2 }, 0.37, 0.1), fixed({ 2 }, 0.9, 1.3), fixed({ 2 }, 0.5)
        for _, training in ipairs({ true, false }) do
            local rm, rv = tide.zeros(2, F64), tide.ones(2, F64)
            local ok, bad = autograd.gradgradcheck(function(xx, ww, bb)
                return F.batch_norm(xx, rm, rv, { weight = ww, bias = bb, training = training })
            end, { x:detach():requires_grad_(true), w:detach():requires_grad_(true),
                b:detach():requires_grad_(true) })
            assert.is_true(ok, tostring(bad))
        end
    end)

    it("refuses geometry the rows do not fit, before anything runs", function()
        local x = tide.zeros({ 2, 6 }, F64)
        local ok, err = pcall(K.channel_stats, x, 6, 4)
        assert.is_false(ok)
        assert.is_truthy(err:find("tide: channel_stats: inner = 4 does not divide d = 6", 1, true),
            err)
        ok, err = pcall(K.channel_affine, x, tide.ones(3, F64), tide.ones(2, F64), nil, nil, nil,
            6, 2)
        assert.is_false(ok)
        assert.is_truthy(err:find("tide: channel_affine: shift of shape [2] must hold 3 elements " ..
            "(one per channel)", 1, true), err)
    end)
end)
