-- cpu_devices_bits_spec.lua — every CPU device computes the same bits (issue 27): the op table
-- (tide.core._ops, every dtype the CPU accepts, NaN/inf/-0, broadcasts, strided and large
-- inputs), nn's losses, softmax, the norms, convolutions, pooling, matmul, the optimizers' fused
-- steps and a few training steps of an MLP run on cpu and on cpu:1 from identical inputs, and
-- their results (values, gradients, updated parameters) must be equal bit for bit, NaN-aware and
-- telling -0 from 0. A run resumed on another CPU device then continues exactly where it was.
-- Needs TIDE_CPU_DEVICES >= 2 (run_all.sh and the host suites set it).
local tide = require("tide")
local core = require("tide.core")
local nn = require("tide.nn")
local F = nn.functional
local INFO = require("spec.support.opinfo")

local unpack = table.unpack or unpack

local function is_float(dt)
    return dt == "float32" or dt == "float64"
end

local HAVE_CPU1 = pcall(tide.device, "cpu:1")
local OTHER = "cpu:1"

-- ---- comparing -------------------------------------------------------------------------------

local function fmt(v)
    if type(v) == "number" then
        return string.format("%.17g", v)
    end
    return tostring(v)
end

-- x and y are the same bits: NaN against NaN, -0 against -0, else ==
local function same_value(x, y)
    if type(x) == "number" and type(y) == "number" then
        if x ~= x or y ~= y then
            return x ~= x and y ~= y
        end
        if x == 0 and y == 0 then
            return 1 / x == 1 / y
        end
    end
    return x == y
end

local function flat(t)
    return t:to("cpu"):contiguous():reshape(-1):totable()
end

-- a mask of the elements where x and y (cpu tensors of one dtype and shape) hold the same bits:
-- equal, both NaN, or zeros of the same sign (1/x tells them apart)
local function same_mask(x, y)
    local m = x:eq(y)
    if is_float(x.dtype) then
        m = m:logical_or(x:isnan():logical_and(y:isnan()))
        local zeros = x:eq(0):logical_and(y:eq(0))
        m = m:logical_and(zeros:logical_not():logical_or(x:reciprocal():eq(y:reciprocal())))
    end
    return m
end

-- a (computed on cpu) and b (on cpu:1) hold the same bits; what names the result in failures
local function same(a, b, what)
    if type(a) ~= "userdata" then
        assert(same_value(a, b), string.format("%s: %s on cpu, %s on %s", what, fmt(a), fmt(b),
            OTHER))
        return
    end
    assert(type(b) == "userdata", what .. ": a tensor on cpu, a " .. type(b) .. " on " .. OTHER)
    assert(tostring(a.device) == "cpu", what .. ": the cpu result is on " .. tostring(a.device))
    assert(tostring(b.device) == OTHER, what .. ": the " .. OTHER .. " result is on " ..
        tostring(b.device))
    assert(a.dtype == b.dtype, what .. ": dtype " .. a.dtype .. " against " .. b.dtype)
    local sa, sb = table.concat(a.shape, "x"), table.concat(b.shape, "x")
    assert(sa == sb, what .. ": shape " .. sa .. " against " .. sb)
    local x, y = a:detach():reshape(-1), b:detach():to("cpu"):reshape(-1)
    if x:numel() == 0 or same_mask(x, y):all():item() then
        return
    end
    local xs, ys = x:totable(), y:totable()
    for i = 1, #xs do
        if not same_value(xs[i], ys[i]) then
            error(string.format("%s: element %d of %d is %s on cpu and %s on %s", what, i, #xs,
                fmt(xs[i]), fmt(ys[i]), OTHER), 0)
        end
    end
    error(what .. ": the bits differ", 0)
end

-- runs f(dev) on cpu and on cpu:1, from the same seed, and compares the lists they return
-- (tensors, numbers, booleans; a failure on one device must be the failure on the other)
local function both(what, f)
    tide.manual_seed(27)
    local ra = { pcall(f, "cpu") }
    tide.manual_seed(27)
    local rb = { pcall(f, OTHER) }
    assert(ra[1] == rb[1], string.format("%s: %s on cpu, %s on %s", what,
        ra[1] and "ran" or tostring(ra[2]), rb[1] and "ran" or tostring(rb[2]), OTHER))
    if not ra[1] then
        return
    end
    local a, b = ra[2], rb[2]
    assert(#a == #b, what .. ": " .. #a .. " results on cpu, " .. #b .. " on " .. OTHER)
    for i = 1, #a do
        same(a[i], b[i], what .. ", result " .. i)
    end
end

-- ---- inputs ----------------------------------------------------------------------------------

-- n values of dtype dt from a fixed generator (the same on every run and every Lua); floats are
-- not dyadic, so float32 rounds them; special: NaN, +-inf and -0 among them; nonzero: no 0
local function values(dt, n, seed, special, nonzero)
    local s, v = seed, {}
    for i = 1, n do
        s = (s * 1103515245 + 12345) % 2147483648
        local u = s / 2147483648
        if dt == "bool" then
            v[i] = nonzero or u < 0.5
        elseif is_float(dt) then
            v[i] = u * 6 - 3
        elseif dt == "uint8" then
            v[i] = math.floor(u * 250)
        else
            v[i] = math.floor(u * 41) - 20
        end
        if nonzero and v[i] == 0 then
            v[i] = 1
        end
    end
    if special and is_float(dt) then
        local sp = { 0 / 0, 1 / 0, -1 / 0, -0.0, 0.0 }
        for i = 1, #sp do
            v[(i * 7) % n + 1] = sp[i]
        end
    end
    return v
end

-- a cpu tensor of shape from the generator
local function input(dt, shape, seed, special, nonzero)
    local n = 1
    for _, s in ipairs(shape) do
        n = n * s
    end
    return tide.tensor(values(dt, n, seed, special, nonzero), { dtype = dt }):reshape(shape)
end

-- a large cpu tensor (past the kernels' vectorised and threaded thresholds), made by tide ops
local function make_large(dt, n, seed, nonzero)
    local x = tide.arange(0, n, 1, { dtype = "float64" }):mul(0.61803 + seed / 97):sin():mul(5)
    if dt == "bool" then
        return x:gt(nonzero and -10 or 0)
    elseif is_float(dt) then
        return x:to(dt)
    end
    x = x:floor()
    if dt == "uint8" then
        x = x:add(5)
    end
    if nonzero then
        x = core.where(x:eq(0), 1, x)
    end
    return x:to(dt)
end

local LARGE = {}
local function large(dt, n, seed, nonzero)
    local key = table.concat({ dt, n, seed, tostring(nonzero) }, ",")
    LARGE[key] = LARGE[key] or make_large(dt, n, seed, nonzero)
    return LARGE[key]
end

local function call(name, args)
    local a = args[1]
    return a[name](unpack(args))
end

local function T(t)
    return t:t()
end

-- the op's cases for dtype dt: lists of arguments, each a number or {cpu tensor[, view]}: the
-- tensor is moved to the device first and the view (a transpose, ...) taken there, so both
-- devices see the same layout
local function cases(row, entry, dt)
    local fam, nz = row.family, row.int_division and not is_float(dt)
    local out = {}
    if fam == "binary" or fam == "compare" then
        local a, b = { input(dt, { 37, 29 }, 3, true) }, { input(dt, { 37, 29 }, 5, true, nz) }
        out[#out + 1] = { a, b }
        out[#out + 1] = { { input(dt, { 37, 1 }, 7, true) }, { input(dt, { 1, 29 }, 9, true, nz) } }
        out[#out + 1] = { a, { input(dt, { 29, 37 }, 11, true, nz), T } }
        out[#out + 1] = { { large(dt, 70001, 1) }, { large(dt, 70001, 2, nz) } }
        if dt ~= "bool" then
            out[#out + 1] = { a, is_float(dt) and 0.3 or 3 }
        end
    elseif fam == "unary" or fam == "predicate" or fam == "bounded" then
        for _, x in ipairs({ { input(dt, { 37, 29 }, 13, true) },
            { input(dt, { 29, 37 }, 17, true), T }, { large(dt, 70001, 3) } }) do
            local args = { x }
            for _, e in ipairs(entry.args or {}) do
                args[#args + 1] = e
            end
            out[#out + 1] = args
        end
    else -- reductions: everything, along each dim, keepdim, large and strided ones
        local x = { input(dt, { 37, 29 }, 19, false) }
        local xs = { input(dt, { 37, 29 }, 23, true) }
        out[#out + 1] = { x }
        out[#out + 1] = { xs }
        out[#out + 1] = { x, 1 }
        out[#out + 1] = { x, 2, true }
        out[#out + 1] = { { xs[1], T }, -1 }
        out[#out + 1] = { { large(dt, 100003, 4) } }
        out[#out + 1] = { { large(dt, 100002, 5):view(6, -1) }, 2 }
        out[#out + 1] = { { large(dt, 100002, 6):view(6, -1), T }, 1 }
    end
    return out
end

local function to_dev(args, dev)
    local r = {}
    for i, a in ipairs(args) do
        if type(a) == "table" then
            r[i] = a[1]:to(dev)
            if a[2] then
                r[i] = a[2](r[i])
            end
        else
            r[i] = a
        end
    end
    return r
end

-- ---- the suite -------------------------------------------------------------------------------

if not HAVE_CPU1 then
    describe("CPU devices give identical bits", function()
        it("needs TIDE_CPU_DEVICES >= 2", function()
            pending("no cpu:1: set TIDE_CPU_DEVICES=2")
        end)
    end)
    return
end

describe("CPU devices give identical bits: the op table", function()
    for _, row in ipairs(core._ops) do
        local entry = INFO.ops[row.name] or {}
        local dtypes = (entry.dtypes or INFO.device_dtypes).cpu
        it(row.name .. " (" .. row.family .. ")", function()
            for _, dt in ipairs(dtypes) do
                if not row.float_only or is_float(dt) then
                    for k, args in ipairs(cases(row, entry, dt)) do
                        both(row.name .. " on " .. dt .. ", case " .. k, function(dev)
                            return { call(row.name, to_dev(args, dev)) }
                        end)
                    end
                end
            end
        end)
    end
end)

-- f(dev, x...) with leaves x made from the cpu tensors xs on dev: its outputs, then the leaves'
-- gradients of the sum of its first output weighted by fixed values
local function with_grads(xs, f)
    return function(dev)
        local leaves = {}
        for i, x in ipairs(xs) do
            if type(x) == "userdata" and is_float(x.dtype) then
                leaves[i] = x:to(dev):detach():requires_grad_(true)
            else
                leaves[i] = type(x) == "userdata" and x:to(dev) or x
            end
        end
        local outs = { f(dev, unpack(leaves, 1, #xs)) }
        local y = outs[1]
        local w = input(y.dtype, y:numel() > 0 and { y:numel() } or { 1 }, 41, false)
        y:mul(w:to(dev):narrow(1, 1, y:numel()):view(y.shape)):sum():backward()
        for i = 1, #xs do
            if type(leaves[i]) == "userdata" and leaves[i].requires_grad then
                outs[#outs + 1] = leaves[i].grad
            end
        end
        return outs
    end
end

local function randn(shape, dt)
    return tide.randn(shape, { dtype = dt or "float32" })
end

local function targets(n, c, seed)
    local v = values("int64", n, seed)
    for i = 1, n do
        v[i] = v[i] % c + 1
    end
    return tide.tensor(v, { dtype = "int64" })
end

describe("CPU devices give identical bits: nn", function()
    local dts = { "float32", "float64" }

    it("cross_entropy and nll_loss, every option, and CrossEntropyLoss", function()
        for _, dt in ipairs(dts) do
            local x, t = randn({ 64, 10 }, dt), targets(64, 10, 3)
            local tv = t:totable()
            tv[5], tv[40] = -100, -100
            local t_ign = tide.tensor(tv, { dtype = "int64" })
            local w = tide.rand({ 10 }, { dtype = dt }):add(0.5)
            local x4, t4 = randn({ 4, 5, 3, 2 }, dt), targets(24, 5, 7):view(4, 3, 2)
            local opts = { {}, { reduction = "sum" }, { reduction = "none" }, { weight = w },
                { ignore_index = 3 }, { label_smoothing = 0.1 } }
            for k, o in ipairs(opts) do
                both("cross_entropy " .. dt .. " options " .. k, with_grads({ x, t, w },
                    function(dev, xx, tt, ww)
                        local oo = {}
                        for key, v in pairs(o) do
                            oo[key] = key == "weight" and ww or v
                        end
                        return F.cross_entropy(xx, tt, oo)
                    end))
            end
            both("cross_entropy " .. dt .. " ignoring -100", with_grads({ x, t_ign },
                function(_, xx, tt) return F.cross_entropy(xx, tt) end))
            both("cross_entropy " .. dt .. " on {N, C, d1, d2}", with_grads({ x4, t4 },
                function(_, xx, tt) return F.cross_entropy(xx, tt) end))
            both("nll_loss " .. dt, with_grads({ x, t },
                function(_, xx, tt) return F.nll_loss(xx:log_softmax(2), tt) end))
            both("nll_loss " .. dt .. " sum", with_grads({ x, t },
                function(_, xx, tt)
                    return F.nll_loss(xx:log_softmax(2), tt, { reduction = "sum" })
                end))
            both("CrossEntropyLoss " .. dt, with_grads({ x, t },
                function(_, xx, tt) return nn.CrossEntropyLoss()(xx, tt) end))
        end
    end)

    it("the other losses", function()
        for _, dt in ipairs(dts) do
            local x, y = randn({ 33, 7 }, dt), randn({ 33, 7 }, dt)
            local p, q = tide.rand({ 33, 7 }, { dtype = dt }), tide.rand({ 33, 7 }, { dtype = dt })
            local pw = tide.rand({ 7 }, { dtype = dt }):add(0.5)
            local fs = {
                mse = function(_, a, b) return F.mse_loss(a, b) end,
                mse_none = function(_, a, b) return F.mse_loss(a, b, { reduction = "none" }) end,
                l1 = function(_, a, b) return F.l1_loss(a, b) end,
                smooth_l1 = function(_, a, b) return F.smooth_l1_loss(a, b, { beta = 0.5 }) end,
                huber = function(_, a, b) return F.huber_loss(a, b, { delta = 0.7 }) end,
            }
            for name, f in pairs(fs) do
                both(name .. " " .. dt, with_grads({ x, y }, f))
            end
            both("binary_cross_entropy " .. dt, with_grads({ p, q },
                function(_, a, b) return F.binary_cross_entropy(a, b) end))
            both("binary_cross_entropy_with_logits " .. dt, with_grads({ x, q, pw },
                function(_, a, b, c) return F.binary_cross_entropy_with_logits(a, b,
                    { pos_weight = c }) end))
            both("kl_div " .. dt, with_grads({ x:log_softmax(2), p },
                function(_, a, b) return F.kl_div(a, b, { reduction = "batchmean" }) end))
        end
    end)

    it("softmax, log_softmax, layer_norm, group_norm, batch_norm", function()
        for _, dt in ipairs(dts) do
            local x = randn({ 16, 33 }, dt)
            both("softmax " .. dt, with_grads({ x }, function(_, a) return a:softmax(2) end))
            both("softmax dim 1 " .. dt, with_grads({ x },
                function(_, a) return F.softmax(a, 1) end))
            both("log_softmax " .. dt, with_grads({ x },
                function(_, a) return F.log_softmax(a, 2) end))
            local w, b = randn({ 33 }, dt), randn({ 33 }, dt)
            both("layer_norm " .. dt, with_grads({ x, w, b }, function(_, a, ww, bb)
                return F.layer_norm(a, 33, { weight = ww, bias = bb })
            end))
            both("LayerNorm " .. dt, function(dev)
                tide.manual_seed(3)
                local m = nn.LayerNorm(33):to(dev)
                local y = m(x:to(dev))
                y:sum():backward()
                return { y, m.weight.grad, m.bias.grad }
            end)
            local x4 = randn({ 4, 6, 5, 5 }, dt)
            local g6, b6 = randn({ 6 }, dt), randn({ 6 }, dt)
            both("group_norm " .. dt, with_grads({ x4, g6, b6 }, function(_, a, ww, bb)
                return F.group_norm(a, 3, { weight = ww, bias = bb })
            end))
            both("batch_norm training " .. dt, with_grads({ x4, g6, b6 }, function(dev, a, ww, bb)
                local rm = tide.zeros({ 6 }, { dtype = dt, device = dev })
                local rv = tide.ones({ 6 }, { dtype = dt, device = dev })
                local y = F.batch_norm(a, rm, rv, { weight = ww, bias = bb, training = true })
                return y, rm, rv
            end))
            both("BatchNorm2d train and eval " .. dt, function(dev)
                tide.manual_seed(3)
                local m = nn.BatchNorm2d(6):to(dev)
                if dt == "float64" then
                    m:to("float64")
                end
                local y = m(x4:to(dev))
                y:sum():backward()
                m:eval()
                return { y, m.weight.grad, m.running_mean, m.running_var, m(x4:to(dev)) }
            end)
        end
    end)

    it("conv2d, conv1d, conv_transpose2d, pooling", function()
        for _, dt in ipairs(dts) do
            local x, w, b = randn({ 2, 4, 9, 9 }, dt), randn({ 6, 4, 3, 3 }, dt), randn({ 6 }, dt)
            both("conv2d " .. dt, with_grads({ x, w, b },
                function(_, a, ww, bb) return F.conv2d(a, ww, bb, { padding = 1 }) end))
            both("conv2d strided " .. dt, with_grads({ x, w },
                function(_, a, ww) return F.conv2d(a, ww, nil, { stride = 2, dilation = 2 }) end))
            local wg = randn({ 6, 2, 3, 3 }, dt)
            both("conv2d groups " .. dt, with_grads({ x, wg, b },
                function(_, a, ww, bb) return F.conv2d(a, ww, bb, { groups = 2 }) end))
            local x1, w1 = randn({ 3, 4, 17 }, dt), randn({ 5, 4, 3 }, dt)
            both("conv1d " .. dt, with_grads({ x1, w1 },
                function(_, a, ww) return F.conv1d(a, ww, nil, { padding = 1 }) end))
            local wt = randn({ 4, 3, 3, 3 }, dt)
            both("conv_transpose2d " .. dt, with_grads({ x, wt },
                function(_, a, ww) return F.conv_transpose2d(a, ww, nil, { stride = 2 }) end))
            both("max_pool2d " .. dt, with_grads({ x },
                function(_, a) return F.max_pool2d(a, 2, { return_indices = true }) end))
            both("avg_pool2d " .. dt, with_grads({ x },
                function(_, a) return F.avg_pool2d(a, 3, { stride = 2, padding = 1 }) end))
            both("adaptive_avg_pool2d " .. dt, with_grads({ x },
                function(_, a) return F.adaptive_avg_pool2d(a, { 4, 3 }) end))
            both("Conv2d module " .. dt, function(dev)
                tide.manual_seed(5)
                local m = nn.Conv2d(4, 8, 3, { padding = 1 })
                if dt == "float64" then
                    m:to("float64")
                end
                m:to(dev)
                local y = m(x:to(dev))
                y:sum():backward()
                return { y, m.weight.grad, m.bias.grad }
            end)
        end
    end)

    it("matmul (small, BLAS-sized, batched, vector), linear, embedding, attention", function()
        for _, dt in ipairs(dts) do
            for _, sh in ipairs({ { { 3, 5 }, { 5, 4 } }, { { 130, 257 }, { 257, 67 } },
                { { 4, 9, 17 }, { 4, 17, 6 } }, { { 9, 17 }, { 17 } }, { { 17 }, { 17, 5 } },
                { { 3, 4, 9, 17 }, { 17, 6 } } }) do
                local a, b = randn(sh[1], dt), randn(sh[2], dt)
                both("matmul " .. dt .. " " .. table.concat(sh[1], "x") .. " @ " ..
                    table.concat(sh[2], "x"), with_grads({ a, b },
                    function(_, x, y) return x:matmul(y) end))
            end
            local x, w, b = randn({ 50, 40 }, dt), randn({ 30, 40 }, dt), randn({ 30 }, dt)
            both("linear " .. dt, with_grads({ x, w, b },
                function(_, xx, ww, bb) return F.linear(xx, ww, bb) end))
            local ids = targets(40, 12, 9):view(5, 8)
            local e = randn({ 12, 7 }, dt)
            both("embedding " .. dt, with_grads({ e, ids },
                function(_, ww, ii) return F.embedding(ii, ww) end))
            local q, k, v = randn({ 2, 3, 7, 8 }, dt), randn({ 2, 3, 9, 8 }, dt),
                randn({ 2, 3, 9, 8 }, dt)
            both("scaled_dot_product_attention " .. dt, with_grads({ q, k, v },
                function(_, qq, kk, vv) return F.scaled_dot_product_attention(qq, kk, vv) end))
            both("scaled_dot_product_attention causal " .. dt, with_grads({ q, k, v },
                function(_, qq, kk, vv) return F.scaled_dot_product_attention(qq, kk, vv,
                    { is_causal = true }) end))
        end
    end)

    it("dropout draws the same mask from the same seed", function()
        local x = randn({ 1000 })
        both("dropout", function(dev)
            tide.manual_seed(11)
            return { F.dropout(x:to(dev), { p = 0.3, training = true }) }
        end)
    end)
end)

describe("CPU devices give identical bits: optimizers", function()
    -- three steps on parameters of a few shapes and dtypes, the gradients from a fixed loss
    local function steps(make_opt, dt)
        return function(dev)
            local ps = {}
            for i, shape in ipairs({ { 1000 }, { 33, 17 }, { 5 } }) do
                ps[i] = input(dt, shape, 50 + i, false):to(dev):requires_grad_(true)
            end
            local ws = {}
            for i, p in ipairs(ps) do
                ws[i] = input(dt, p.shape, 70 + i, false):to(dev)
            end
            local opt = make_opt(ps)
            for _ = 1, 3 do
                opt:zero_grad()
                local loss
                for i, p in ipairs(ps) do
                    local l = p:mul(p):mul(ws[i]):sum()
                    loss = loss and loss:add(l) or l
                end
                loss:backward()
                opt:step()
            end
            return ps
        end
    end

    local optim = tide.optim
    local makers = {
        SGD = function(ps) return optim.SGD(ps, { lr = 0.01 }) end,
        ["SGD momentum"] = function(ps)
            return optim.SGD(ps, { lr = 0.01, momentum = 0.9, weight_decay = 1e-2 })
        end,
        ["SGD nesterov"] = function(ps)
            return optim.SGD(ps, { lr = 0.01, momentum = 0.9, nesterov = true })
        end,
        Adam = function(ps) return optim.Adam(ps, { lr = 0.01 }) end,
        ["Adam weight_decay"] = function(ps)
            return optim.Adam(ps, { lr = 0.01, weight_decay = 0.1 })
        end,
        ["Adam amsgrad"] = function(ps) return optim.Adam(ps, { lr = 0.01, amsgrad = true }) end,
        AdamW = function(ps) return optim.AdamW(ps, { lr = 0.01, weight_decay = 0.1 }) end,
        RMSprop = function(ps) return optim.RMSprop(ps, { lr = 0.01, momentum = 0.5 }) end,
        Adagrad = function(ps) return optim.Adagrad(ps, { lr = 0.1 }) end,
    }
    for _, name in ipairs({ "SGD", "SGD momentum", "SGD nesterov", "Adam", "Adam weight_decay",
        "Adam amsgrad", "AdamW", "RMSprop", "Adagrad" }) do
        it(name .. " steps", function()
            for _, dt in ipairs({ "float32", "float64" }) do
                both(name .. " on " .. dt, steps(makers[name], dt))
            end
        end)
    end
end)

describe("CPU devices give identical bits: training", function()
    it("an MLP with CrossEntropyLoss and Adam trains to the same bits", function()
        local x = randn({ 64, 20 })
        local t = targets(64, 10, 13)
        both("MLP training", function(dev)
            tide.manual_seed(1)
            local model = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 32),
                nn.Tanh(), nn.Linear(32, 10)):to(dev)
            local opt = tide.optim.Adam(model:parameters(), { lr = 1e-2 })
            local lossf = nn.CrossEntropyLoss()
            local xs, ts = x:to(dev), t:to(dev)
            local out = {}
            for _ = 1, 5 do
                opt:zero_grad()
                local loss = lossf(model(xs), ts)
                loss:backward()
                opt:step()
                out[#out + 1] = loss
            end
            for _, p in ipairs(model:parameters()) do
                out[#out + 1] = p
                out[#out + 1] = p.grad
            end
            return out
        end)
    end)

    it("a run moved to cpu:1 mid-training continues with the same bits", function()
        local x = randn({ 32, 12 })
        local t = targets(32, 5, 17)
        local function train(first, second)
            tide.manual_seed(2)
            local model = nn.Sequential(nn.Linear(12, 16), nn.ReLU(), nn.Linear(16, 5)):to(first)
            local opt = tide.optim.SGD(model:parameters(), { lr = 0.1, momentum = 0.9 })
            local lossf = nn.CrossEntropyLoss()
            for step = 1, 6 do
                local dev = step <= 3 and first or second
                if step == 4 then
                    model:to(second)
                    opt:load_state_dict(opt:state_dict())
                end
                opt:zero_grad()
                lossf(model(x:to(dev)), t:to(dev)):backward()
                opt:step()
            end
            local out = {}
            for _, p in ipairs(model:parameters()) do
                out[#out + 1] = p:to("cpu")
            end
            return out
        end
        local a, b = train("cpu", "cpu"), train("cpu", OTHER)
        for i = 1, #a do
            local x, y = flat(a[i]), flat(b[i])
            for j = 1, #x do
                assert(same_value(x[j], y[j]), string.format("parameter %d, element %d: %s " ..
                    "on cpu throughout, %s after moving to %s", i, j, fmt(x[j]), fmt(y[j]), OTHER))
            end
        end
    end)
end)
