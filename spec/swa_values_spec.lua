-- swa_values_spec.lua: tide.optim.swa_utils' names and values against PyTorch 1.13's
-- torch.optim.swa_utils (values printed by a throwaway script over the same cases):
-- AveragedModel's attributes, n_averaged, the average after three updates (running mean, an
-- EMA avg_fn, use_buffers, device), its parameter/buffer/state dict names and forward; SWALR's
-- attributes (anneal_func, verbose, group swa_lr/initial_lr), its lrs over 10 steps, an
-- anneal_func set later, its errors; update_bn's statistics, momentum and training flags.
local tide = require("tide")
local nn = tide.nn
local S = tide.optim.swa_utils

local F64 = { dtype = "float64" }

local function close(got, want, what)
    if type(want) == "table" then
        assert(type(got) == "table" and #got == #want, what .. ": expected " .. #want ..
            " values, got " .. (type(got) == "table" and #got or type(got)))
        for i = 1, #want do
            close(got[i], want[i], what .. "[" .. i .. "]")
        end
        return
    end
    assert(type(got) == "number", what .. ": expected a number, got " .. type(got))
    if math.abs(got - want) > 1e-12 * math.max(1, math.abs(want)) then
        error(string.format("%s: got %.17g, PyTorch %.17g", what, got, want), 2)
    end
end

local function names(list)
    local r = {}
    for i, e in ipairs(list) do
        r[i] = e[1]
    end
    return r
end

-- PyTorch's Sequential child names are 0-based, tide's 1-based (docs/API.md)
local function one_based(list)
    local r = {}
    for i, k in ipairs(list) do
        r[i] = k:gsub("^module%.(%d+)", function(d)
            return "module." .. (tonumber(d) + 1)
        end)
    end
    return r
end

local function net(momentum)
    local m = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2, { momentum = momentum }))
    m:double()
    tide.no_grad(function()
        m[1].weight:copy_(tide.tensor({ { 0.5, -0.25 }, { 0.75, 0.1 } }, F64))
        m[1].bias:copy_(tide.tensor({ 0.2, -0.3 }, F64))
    end)
    return m
end

-- the trained model's k-th change: parameters p * (1 + k/2) + k/10, float buffers + k/5,
-- num_batches_tracked + k
local function train_step(m, k)
    tide.no_grad(function()
        for _, p in ipairs(m:parameters()) do
            p:mul_(1 + 0.5 * k):add_(0.1 * k)
        end
        for _, b in ipairs(m:buffers()) do
            b:add_(b.dtype == "float64" and 0.2 * k or k)
        end
    end)
end

local KEYS = { "n_averaged", "module.0.weight", "module.0.bias", "module.1.weight",
    "module.1.bias", "module.1.running_mean", "module.1.running_var",
    "module.1.num_batches_tracked" }
local PARAMS = { "module.0.weight", "module.0.bias", "module.1.weight", "module.1.bias" }
local BUFFERS = { "n_averaged", "module.1.running_mean", "module.1.running_var",
    "module.1.num_batches_tracked" }
local MEAN = { -- PyTorch's running mean after three updates
    weight = { { 2.5999999999999996, -0.4 }, { 3.6000000000000005, 0.9999999999999999 } },
    bias = { 1.4, -0.5999999999999999 },
    forward = { { 15.319926400551992, 23.599885000862496 },
        { -5.839967800241498, -16.419914900638243 } },
}

describe("swa_utils values against PyTorch 1.13", function()
    it("AveragedModel: attributes, n_averaged, averages, names, forward", function()
        local cases = {
            { "default", {}, false, MEAN.weight, MEAN.bias, { 0, 0 }, 0, MEAN.forward },
            { "ema", { avg_fn = function(a, m)
                return a * 0.25 + m * 0.75
            end }, false,
                { { 4.1968749999999995, -0.5140625000000001 }, { 5.7671875, 1.6843749999999997 } },
                { 2.3124999999999996, -0.8281249999999998 }, { 0, 0 }, 0,
                { { 41.27472078314881, 62.014519428164846 },
                    { -14.656239797122419, -41.15709362130957 } } },
            { "use_buffers", { use_buffers = true }, true, MEAN.weight, MEAN.bias,
                { 0.6666666666666667, 0.6666666666666667 }, 3,
                { { 9.62660610578305, 16.04024728620786 },
                    { -6.763810244191439, -14.959018419178685 } } },
            { "device", { device = "cpu" }, false, MEAN.weight, MEAN.bias, { 0, 0 }, 0,
                MEAN.forward },
            -- PyTorch's positions (model, device, avg_fn, use_buffers)
            { "positional", { "cpu", nil, true }, true, MEAN.weight, MEAN.bias,
                { 0.6666666666666667, 0.6666666666666667 }, 3,
                { { 9.62660610578305, 16.04024728620786 },
                    { -6.763810244191439, -14.959018419178685 } } },
        }
        for _, c in ipairs(cases) do
            local name, opts, use_buffers = c[1], c[2], c[3]
            local m = net()
            local s = name == "positional" and S.AveragedModel(m, opts[1], opts[2], opts[3])
                or S.AveragedModel(m, opts)
            local w = "AveragedModel " .. name .. ": "
            assert.are.equal(use_buffers, s.use_buffers, w .. "use_buffers")
            assert.are.equal(true, s.training, w .. "training")
            assert.are.equal("function", type(s.avg_fn), w .. "avg_fn")
            assert.are.equal("Sequential", s.module.__name, w .. "module")
            assert.are_not.equal(m, s.module, w .. "module is a copy")
            assert.are.equal(0, s.n_averaged:item(), w .. "n_averaged")
            assert.are.equal("int64", s.n_averaged.dtype, w .. "n_averaged dtype")
            assert.are.equal(0, s.n_averaged:dim(), w .. "n_averaged dim")
            assert.are.equal("cpu", s.n_averaged.device.type, w .. "n_averaged device")
            for k = 1, 3 do
                train_step(m, k)
                s:update_parameters(m)
            end
            assert.are.equal(3, s.n_averaged:item(), w .. "n_averaged after 3")
            close(s.module[1].weight:totable(), c[4], w .. "weight")
            close(s.module[1].bias:totable(), c[5], w .. "bias")
            close(s.module[2].running_mean:totable(), c[6], w .. "running_mean")
            assert.are.equal(c[7], s.module[2].num_batches_tracked:item(),
                w .. "num_batches_tracked")
            local sd = s:state_dict()
            local nkeys = 0
            for _ in pairs(sd) do
                nkeys = nkeys + 1
            end
            assert.are.equal(#KEYS, nkeys, w .. "state_dict size")
            for _, k in ipairs(one_based(KEYS)) do
                assert(tide.is_tensor(sd[k]), w .. "state_dict lacks " .. k)
            end
            assert.are.same(one_based(PARAMS), names(s:named_parameters()), w .. "parameters")
            assert.are.same(one_based(BUFFERS), names(s:named_buffers()), w .. "buffers")
            s:eval()
            close(s(tide.tensor({ { 1.0, 2.0 }, { -1.0, 0.5 } }, F64)):totable(), c[8],
                w .. "forward")
        end
    end)

    it("SWALR: attributes, lrs over 10 steps, anneal_func, errors", function()
        local function opt2()
            local a, b = nn.Parameter(tide.zeros(1)), nn.Parameter(tide.zeros(1))
            return tide.optim.SGD({ { params = { a } }, { params = { b }, lr = 0.5 } },
                { lr = 1.0 })
        end
        local COS = { 0, 0.49999999999999994, 0.1464466094067262 } -- at 0, 0.5, 0.25
        local cases = {
            { "cos", { swa_lr = 0.1, anneal_epochs = 4 }, 4, { 0.1, 0.1 }, COS, { 1.0, 0.5 },
                { { 0.8681980515339464, 0.4414213562373095 }, { 0.55, 0.3 },
                    { 0.23180194846605365, 0.1585786437626905 }, { 0.1, 0.1 } } },
            { "linear", { swa_lr = { 0.1, 0.2 }, anneal_epochs = 3, anneal_strategy = "linear" },
                3, { 0.1, 0.2 }, { 0, 0.5, 0.25 }, { 1.0, 0.5 },
                { { 0.7000000000000001, 0.4 }, { 0.4, 0.30000000000000004 }, { 0.1, 0.2 } } },
            { "default", { swa_lr = 0.05 }, 10, { 0.05, 0.05 }, COS, { 1.0, 0.5 },
                { { 0.976751845240198, 0.48898771616640957 },
                    { 0.9092830723281, 0.45702882373436315 },
                    { 0.8041979948389247, 0.40725168176580645 },
                    { 0.6717830723281001, 0.34452882373436317 }, { 0.525, 0.275 },
                    { 0.37821692767189996, 0.20547117626563682 },
                    { 0.24580200516107537, 0.1427483182341936 },
                    { 0.14071692767189997, 0.09297117626563683 },
                    { 0.07324815475980202, 0.06101228383359043 }, { 0.05, 0.05 } } },
            { "anneal_epochs 0", { swa_lr = 0.2, anneal_epochs = 0 }, 0, { 0.2, 0.2 }, COS,
                { 0.2, 0.2 }, {} },
            -- an anneal_func set after construction is what the steps use (PyTorch's reads it)
            { "anneal_func set", { swa_lr = 0.1, anneal_epochs = 4 }, 4, { 0.1, 0.1 }, COS,
                { 1.0, 0.5 },
                { { 0.775, 0.4 }, { 0.55, 0.3 }, { 0.325, 0.2 }, { 0.1, 0.1 } } },
        }
        for _, c in ipairs(cases) do
            local name, want_lrs = c[1], c[7]
            local w = "SWALR " .. name .. ": "
            local o = opt2()
            local s = S.SWALR(o, c[2])
            assert.are.equal(c[3], s.anneal_epochs, w .. "anneal_epochs")
            assert.are.equal(0, s.last_epoch, w .. "last_epoch")
            assert.are.equal(1, s._step_count, w .. "_step_count")
            assert.are.equal(false, s.verbose, w .. "verbose")
            close(s.base_lrs, { 1.0, 0.5 }, w .. "base_lrs")
            close(s._last_lr, c[6], w .. "_last_lr")
            close(s:get_last_lr(), c[6], w .. "get_last_lr")
            close({ o.param_groups[1].swa_lr, o.param_groups[2].swa_lr }, c[4], w .. "swa_lr")
            close({ o.param_groups[1].initial_lr, o.param_groups[2].initial_lr }, { 1.0, 0.5 },
                w .. "initial_lr")
            assert.are.equal("function", type(s.anneal_func), w .. "anneal_func")
            close({ s.anneal_func(0), s.anneal_func(0.5), s.anneal_func(0.25) }, c[5],
                w .. "anneal_func values")
            if name == "anneal_func set" then
                s.anneal_func = function(t)
                    return t
                end
            end
            for i = 1, 10 do
                o:step()
                s:step()
                local lr = want_lrs[i] or want_lrs[#want_lrs] or c[4]
                close({ o.param_groups[1].lr, o.param_groups[2].lr }, lr, w .. "lr " .. i)
            end
            assert.are.equal(10, s.last_epoch, w .. "last_epoch after 10")
            assert.are.equal(11, s._step_count, w .. "_step_count after 10")
        end
        -- PyTorch's static methods
        close(S.SWALR._get_initial_lr(0.55, 0.1, 0.5), 1.0, "SWALR._get_initial_lr")
        close(S.SWALR._cosine_anneal(0.25), 0.1464466094067262, "SWALR._cosine_anneal")
        close(S.SWALR._linear_anneal(0.3), 0.3, "SWALR._linear_anneal")
        -- PyTorch raises ValueError for each
        local errors = {
            { { swa_lr = 0.1, anneal_strategy = "exp" },
                'tide: SWALR: anneal_strategy must be "cos" or "linear", got exp' },
            { { swa_lr = 0.1, anneal_epochs = -1 },
                "tide: SWALR: anneal_epochs = -1; expected an integer >= 0" },
            { { swa_lr = 0.1, anneal_epochs = 2.5 },
                "tide: SWALR: anneal_epochs = 2.5; expected an integer >= 0" },
            { { swa_lr = { 0.1 } }, "tide: SWALR: expected swa_lr to be a number or a list " ..
                "of 2 numbers (one per parameter group), got a list of 1" },
        }
        for _, e in ipairs(errors) do
            local ok, err = pcall(S.SWALR, opt2(), e[1])
            assert(not ok and tostring(err):find(e[2], 1, true),
                "SWALR error: expected " .. e[2] .. ", got " .. tostring(err))
        end
    end)

    pending("SWALR:state_dict() lacks PyTorch's keys verbose and _get_lr_called_within_step " ..
        "(every tide scheduler's: LRScheduler.lua's STATE) and anneal_func (a function, " ..
        "not saved); loading skips them")

    it("update_bn: statistics, num_batches_tracked, momentum and training restored", function()
        local RM = { -0.04999999999999999, 0.03750000000000003 }
        local RV = { 0.4921875, 1.2009374999999998 }
        for _, name in ipairs({ "train", "eval", "device" }) do
            local w = "update_bn " .. name .. ": "
            local m = net(0.3)
            tide.no_grad(function()
                m[2].running_mean:fill_(5)
                m[2].running_var:fill_(7)
                m[2].num_batches_tracked:fill_(9)
            end)
            if name == "eval" then
                m:eval()
            end
            local loader = { tide.tensor({ { 1.0, 2.0 }, { 3.0, -1.0 }, { 0.5, 0.5 } }, F64),
                { tide.tensor({ { -2.0, 1.0 }, { 0.0, 4.0 } }, F64),
                    tide.tensor({ 1, 2 }, { dtype = "int64" }) } }
            if name == "device" then
                S.update_bn(loader, m, { device = "cpu" })
            else
                S.update_bn(loader, m)
            end
            close(m[2].running_mean:totable(), RM, w .. "running_mean")
            close(m[2].running_var:totable(), RV, w .. "running_var")
            assert.are.equal(2, m[2].num_batches_tracked:item(), w .. "num_batches_tracked")
            assert.are.equal(0.3, m[2].momentum, w .. "momentum")
            assert.are.equal(name ~= "eval", m.training, w .. "training")
            assert.are.equal(name ~= "eval", m[2].training, w .. "bn training")
        end
    end)
end)
