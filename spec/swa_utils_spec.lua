-- swa_utils_spec.lua — tide.optim.swa_utils (AveragedModel, SWALR, update_bn) against PyTorch
-- 1.13 (spec/fixtures/swa_utils_torch.lua, written by spec/fixtures/make_swa_utils.py): the
-- running mean, an EMA avg_fn and use_buffers over three updates of a small float64 net on the
-- device under test, its state_dict keys and forward; SWALR's cos and linear lrs over 12 steps
-- (anneal_epochs 0 too, one swa_lr per group), its state dict and a resumed run; update_bn's
-- running statistics over a fixed list of batches, a DataLoader and an iterator; the errors.
local tide = require("tide")
local nn = tide.nn
local S = tide.optim.swa_utils
local D = require("spec.support.device")

local REF = dofile("spec/fixtures/swa_utils_torch.lua")
local DEV = D.name

local function close(got, want, tol, what)
    if type(want) == "table" then
        assert(type(got) == "table" and #got == #want, what .. ": expected " .. #want ..
            " values, got " .. (type(got) == "table" and #got or type(got)))
        for i = 1, #want do
            close(got[i], want[i], tol, what .. "[" .. i .. "]")
        end
        return
    end
    if math.abs(got - want) > tol * math.max(1, math.abs(want)) then
        error(string.format("%s: got %.17g, PyTorch %.17g", what, got, want), 2)
    end
end

local function rows(t)
    if t:dim() == 0 then
        return t:cpu():item()
    end
    return t:cpu():totable()
end

-- the fixture's Net: fc1 = Linear(3, 2), bn = BatchNorm1d(2, momentum 0.3), fc2 = Linear(2, 1)
local Net = nn.Module:extend("Net")

function Net:init()
    self.fc1 = nn.Linear(3, 2)
    self.bn = nn.BatchNorm1d(2, { momentum = 0.3 })
    self.fc2 = nn.Linear(2, 1)
end

function Net:forward(x)
    return self.fc2(tide.relu(self.bn(self.fc1(x))))
end

-- make_swa_utils.py's weights(k) and buffers(k)
local function weights(k)
    return {
        { { 0.5 + 0.1 * k, -0.25, 0.75 }, { 0.2, 0.4 - 0.3 * k, -0.6 } },
        { 0.1 * k, -0.2 },
        { 1.0 - 0.2 * k, 0.5 + 0.05 * k },
        { 0.3, -0.4 },
        { { 0.7, -1.2 + 0.25 * k } },
        { 0.05 * k },
    }
end

local function buffers(k)
    return { { 0.1 * k, -0.2 }, { 1.0 + 0.5 * k, 0.8 }, 3 + 5 * k }
end

local function set_state(m, k)
    tide.no_grad(function()
        for i, p in ipairs(m:parameters()) do
            p:copy_(tide.tensor(weights(k)[i], { dtype = "float64", device = p.device }))
        end
        for i, b in ipairs(m:buffers()) do
            b:copy_(tide.tensor(buffers(k)[i], { dtype = b.dtype, device = b.device }))
        end
    end)
end

local function net(k)
    local m = Net():double():to(DEV)
    set_state(m, k or 0)
    return m
end

local function x64()
    return tide.tensor(REF.X, { dtype = "float64", device = DEV })
end

describe("swa_utils.AveragedModel", function()
    local CASES = {
        mean = {},
        ema = { avg_fn = function(a, m) return a * 0.1 + m * 0.9 end, use_buffers = true },
        mean_buffers = { use_buffers = true },
    }
    for _, name in ipairs({ "mean", "ema", "mean_buffers" }) do
        it("averages as PyTorch's: " .. name, function()
            local want = REF.averaged[name]
            local model = net(0)
            local swa = S.AveragedModel(model, CASES[name])
            assert.are.equal(0, swa.n_averaged:dim())
            assert.are.equal("int64", swa.n_averaged.dtype)
            for k = 1, 3 do
                set_state(model, k)
                swa:update_parameters(model)
                for i, p in ipairs(swa.module:parameters()) do
                    assert.are.equal(tide.device(DEV), p.device)
                    close(rows(p), want.params[k][i], 1e-12, name .. " update " .. k ..
                        " param " .. i)
                end
                for i, b in ipairs(swa.module:buffers()) do
                    close(rows(b), want.buffers[k][i], 1e-12, name .. " update " .. k ..
                        " buffer " .. i)
                end
                assert.are.equal(want.n_averaged[k], swa.n_averaged:item())
            end
            swa:eval()
            close(rows(swa(x64())), want.out, 1e-12, name .. " forward")
            local keys = {}
            for key in swa:state_dict() do
                keys[#keys + 1] = key
            end
            assert.are.same(want.keys, keys)
            -- the copy is independent of the model
            assert.are_not.equal(model.fc1.weight, swa.module.fc1.weight)
        end)
    end

    it("moves the copy and n_averaged to device, takes a model elsewhere", function()
        local model = net(1)
        local swa = S.AveragedModel(model, { device = D.other })
        assert.are.equal(tide.device(D.other), swa.module.fc1.weight.device)
        assert.are.equal(tide.device(D.other), swa.n_averaged.device)
        assert.are.equal(tide.device(DEV), model.fc1.weight.device)
        swa:update_parameters(model)
        swa:update_parameters(net(2))
        close(rows(swa.module.fc2.bias), { 0.075 }, 1e-12, "fc2.bias")
        -- a state dict loads back, n_averaged with it
        local swa2 = S.AveragedModel(net(0))
        swa2:load_state_dict(swa:state_dict())
        assert.are.equal(2, swa2.n_averaged:item())
        close(rows(swa2.module.fc2.bias), { 0.075 }, 1e-12, "loaded fc2.bias")
    end)

    it("keeps a Sequential's 1-based names under module.", function()
        local seq = nn.Sequential(nn.Linear(2, 2), nn.ReLU(), nn.Linear(2, 1)):to(DEV)
        local keys = {}
        for key in S.AveragedModel(seq):state_dict() do
            keys[#keys + 1] = key
        end
        assert.are.same({ "n_averaged", "module.1.weight", "module.1.bias", "module.3.weight",
            "module.3.bias" }, keys)
    end)

    it("rejects bad arguments, naming them", function()
        local model = net(0)
        assert.has_error(function() S.AveragedModel(model, { avg = 1 }) end,
            'tide: AveragedModel: unknown option "avg"; options are device, avg_fn, use_buffers')
        assert.has_error(function() S.AveragedModel({}) end,
            "tide: AveragedModel: expected a model (an nn.Module), got table")
        assert.has_error(function() S.AveragedModel(model, { avg_fn = 1 }) end,
            "tide: AveragedModel: avg_fn must be a function(averaged, model_param, " ..
            "num_averaged) returning the new average, got number")
        assert.has_error(function() S.AveragedModel(model, { device = "float64" }) end)
        assert.has_error(function() S.AveragedModel(model, { use_buffers = 1 }) end,
            "tide: AveragedModel: use_buffers must be true or false, got number")
        local swa = S.AveragedModel(model)
        local other = nn.Linear(3, 2):double():to(DEV)
        assert.has_error(function() swa:update_parameters(other) end,
            "tide: AveragedModel:update_parameters: the averaged model has 6 parameters, the " ..
            "model 2; pass the model the AveragedModel was made from")
        assert.are.equal(0, swa.n_averaged:item())
        local bad = S.AveragedModel(model, { avg_fn = function() return 1 end })
        bad:update_parameters(model)
        assert.has_error(function() bad:update_parameters(model) end,
            "tide: AveragedModel:update_parameters: avg_fn returned number for parameters " ..
            "1; it must return a tensor (the new average)")
    end)
end)

local function sgd()
    local a = tide.zeros({ 2 }, { device = DEV }):requires_grad_(true)
    local b = tide.zeros({ 1 }, { device = DEV }):requires_grad_(true)
    return tide.optim.SGD({ { params = { a }, lr = 0.5 }, { params = { b }, lr = 0.1 } },
        { lr = 0.5 })
end

local SWALRS = {
    cos = { swa_lr = 0.05, anneal_epochs = 3 },
    linear = { swa_lr = { 0.05, 0.2 }, anneal_epochs = 4, anneal_strategy = "linear" },
    cos_0 = { swa_lr = 0.05, anneal_epochs = 0 },
    linear_0 = { swa_lr = { 0.05, 0.2 }, anneal_epochs = 0, anneal_strategy = "linear" },
    default = { swa_lr = 0.01 },
}

describe("swa_utils.SWALR", function()
    for _, name in ipairs({ "cos", "linear", "cos_0", "linear_0", "default" }) do
        it("anneals as PyTorch's: " .. name, function()
            local want = REF.swalr[name].lrs
            local opt = sgd()
            local s = S.SWALR(opt, SWALRS[name])
            close(s:get_last_lr(), want[1], 1e-14, name .. " lrs 0")
            for k = 2, #want do
                opt:step()
                s:step()
                close(s:get_last_lr(), want[k], 1e-14, name .. " lrs " .. (k - 1))
                close(opt.param_groups[2].lr, want[k][2], 0, name .. " group 2 lr")
            end
        end)
    end

    it("keeps swa_lr in the groups; is not an lr_scheduler class", function()
        local opt = sgd()
        S.SWALR(opt, { swa_lr = { 0.05, 0.2 } })
        assert.are.equal(0.05, opt.param_groups[1].swa_lr)
        assert.are.equal(0.2, opt.param_groups[2].swa_lr)
        assert.is_nil(rawget(tide.optim.lr_scheduler, "SWALR"))
    end)

    it("saves PyTorch's state dict and resumes from it", function()
        local want = REF.swalr_state
        local opts = { swa_lr = { 0.05, 0.2 }, anneal_epochs = 5 }
        local s = S.SWALR(sgd(), opts)
        for _ = 1, 3 do
            s:step()
        end
        local sd = s:state_dict()
        for k, v in pairs(sd) do
            if k ~= "anneal_func" then
                close(v, want.sd[k], 1e-14, "state_dict " .. k)
            end
        end
        for k in pairs(want.sd) do
            if k ~= "anneal_func" and k ~= "verbose" and k ~= "_get_lr_called_within_step" then
                assert(sd[k] ~= nil, "tide's state dict lacks " .. k)
            end
        end
        -- PyTorch's state dict (anneal_func as its name) loads into a fresh scheduler
        local opt2 = sgd()
        local s2 = S.SWALR(opt2, opts)
        s2:load_state_dict(want.sd)
        for i, g in ipairs(opt2.param_groups) do
            g.lr = want.sd._last_lr[i]
        end
        for k = 1, 2 do
            s2:step()
            close(s2:get_last_lr(), want.resumed[k], 1e-14, "resumed step " .. k)
        end
        -- and through tide.save's tensors
        local s3 = S.SWALR(sgd(), opts)
        s3:load_state_dict(tide.optim.lr_scheduler.to_tensors(sd))
        assert.are.equal(4, s3._step_count)
        assert.are.equal(5, s3.anneal_epochs)
        sd.anneal_epochs = 2.5
        assert.has_error(function() s3:load_state_dict(sd) end,
            "tide: SWALR:load_state_dict: 'anneal_epochs' must be an integer >= 0, got 2.5; " ..
            "pass the state dict sched:state_dict() gave")
    end)

    it("resumes from last_epoch as PyTorch's", function()
        local opt = sgd()
        assert.has_error(function() S.SWALR(opt, { swa_lr = 0.05, last_epoch = 4 }) end,
            "tide: SWALR: last_epoch = 4 needs 'initial_lr' in param group 1 (set when a " ..
            "scheduler first ran); pass last_epoch = -1 to start anew")
        S.SWALR(opt, { swa_lr = 0.05 })
        local s = S.SWALR(opt, { swa_lr = 0.05, last_epoch = 4 })
        assert.are.equal(5, s.last_epoch)
        assert.are.equal(1, s._step_count)
    end)

    it("rejects bad options, naming them", function()
        local opt = sgd()
        assert.has_error(function() S.SWALR(opt, { swa_lr = 0.05, anneal = 3 }) end,
            'tide: SWALR: unknown option "anneal"; options are swa_lr, anneal_epochs, ' ..
            'anneal_strategy, last_epoch')
        assert.has_error(function() S.SWALR(opt, {}) end,
            "tide: SWALR: option swa_lr is required (a number, or a list of 2 numbers, one " ..
            "per parameter group)")
        assert.has_error(function() S.SWALR(opt, { swa_lr = { 0.1 } }) end,
            "tide: SWALR: expected swa_lr to be a number or a list of 2 numbers (one per " ..
            "parameter group), got a list of 1")
        assert.has_error(function() S.SWALR(opt, { swa_lr = { 0.1, "x" } }) end,
            "tide: SWALR: expected swa_lr to be a number or a list of numbers, got string at " ..
            "position 2")
        assert.has_error(function() S.SWALR(opt, { swa_lr = 0.1, anneal_strategy = "exp" }) end,
            'tide: SWALR: anneal_strategy must be "cos" or "linear", got exp')
        assert.has_error(function() S.SWALR(opt, { swa_lr = 0.1, anneal_epochs = -1 }) end,
            "tide: SWALR: anneal_epochs = -1; expected an integer >= 0")
        assert.has_error(function() S.SWALR(opt, { swa_lr = 0.1, anneal_epochs = 1.5 }) end,
            "tide: SWALR: anneal_epochs = 1.5; expected an integer >= 0")
        assert.has_error(function() S.SWALR({}, { swa_lr = 0.1 }) end,
            "tide: SWALR: expected an optimizer (tide.optim.SGD(...) etc.), got table")
    end)
end)

-- make_swa_utils.py's batches: X in rows 1-3, 4-6, 7-8
local function batches()
    local x = x64()
    return { x:narrow(1, 1, 3), x:narrow(1, 4, 3), x:narrow(1, 7, 2) }
end

local function check_bn(model, want, what)
    close(rows(model.bn.running_mean), want.running_mean, 1e-12, what .. " running_mean")
    close(rows(model.bn.running_var), want.running_var, 1e-12, what .. " running_var")
    assert.are.equal(want.num_batches_tracked, model.bn.num_batches_tracked:item())
    assert.are.equal(want.momentum, model.bn.momentum)
    assert.are.equal(want.training, model.training)
    assert.are.equal(want.training, model.bn.training)
end

describe("swa_utils.update_bn", function()
    it("recomputes the statistics as PyTorch's: a list of tables", function()
        local model = net(1):eval()
        local loader = {}
        for i, x in ipairs(batches()) do
            loader[i] = { x, tide.zeros({ x:size(1) }, { device = DEV }) }
        end
        S.update_bn(loader, model)
        check_bn(model, REF.update_bn.tuples, "tuples")
    end)

    it("a list of tensors, a DataLoader, an iterator, on another device", function()
        local want = REF.update_bn.tensors
        local model = net(1):eval()
        S.update_bn(batches(), model)
        check_bn(model, want, "tensors")
        model = net(1):eval()
        local ds = tide.data.TensorDataset(x64(), tide.zeros({ 8 }, { device = DEV }))
        S.update_bn(tide.data.DataLoader(ds, { batch_size = 3 }), model)
        check_bn(model, want, "DataLoader")
        model = net(1):eval()
        local list = batches()
        local i = 0
        S.update_bn(function()
            i = i + 1
            return list[i]
        end, model)
        check_bn(model, want, "iterator")
        -- the inputs on another device, moved to the model's
        model = net(1):eval()
        local other = {}
        for j, x in ipairs(batches()) do
            other[j] = x:to(D.other)
        end
        S.update_bn(other, model, DEV)
        check_bn(model, want, "device")
    end)

    it("through an AveragedModel; keeps training mode", function()
        local swa = S.AveragedModel(net(1))
        S.update_bn(batches(), swa)
        assert.is_true(swa.training)
        close(rows(swa.module.bn.running_mean), REF.update_bn.tensors.running_mean, 1e-12,
            "running_mean")
    end)

    it("leaves a model without BatchNorm alone, restores momenta on error", function()
        local lin = nn.Linear(3, 1)
        S.update_bn(42, lin:eval()) -- not read: PyTorch returns before the loop
        assert.is_false(lin.training)
        local model = net(1):eval()
        assert.has_error(function() S.update_bn({ { "x" } }, model) end,
            "tide: update_bn: expected each batch to be a tensor or a table whose first " ..
            "element is the input tensor, got string")
        assert.are.equal(0.3, model.bn.momentum)
        assert.is_false(model.training)
        assert.has_error(function() S.update_bn(42, model) end,
            "tide: update_bn: expected a loader (a tide.data.DataLoader, an iterator " ..
            "function or a list of batches), got number; wrap a single batch as {x}")
        assert.has_error(function() S.update_bn({}, {}) end,
            "tide: update_bn: expected a model (an nn.Module) as the second argument, got table")
    end)

    it("BatchNorm's momentum = nil is the cumulative average", function()
        local bn = nn.BatchNorm1d(2):double():to(DEV)
        bn.momentum = nil
        local list = batches()
        local fc = nn.Linear(3, 2):double():to(DEV)
        local seen = {}
        tide.no_grad(function()
            for j, x in ipairs(list) do
                seen[j] = fc(x)
                bn(seen[j])
            end
        end)
        -- the mean of the three batch means
        local m = (seen[1]:mean(1) + seen[2]:mean(1) + seen[3]:mean(1)) / 3
        close(rows(bn.running_mean), rows(m), 1e-12, "running_mean")
    end)

    it("passes over a BatchNorm without running statistics, as PyTorch's", function()
        local tide = require("tide")
        local net = tide.nn.Sequential(tide.nn.BatchNorm1d(2),
            tide.nn.BatchNorm1d(2, { track_running_stats = false }))
        local x = tide.tensor({ { 1, 10 }, { 3, 30 } }, { dtype = "float64" })
        net:double()
        tide.optim.swa_utils.update_bn({ x }, net)
        assert.are.same({ 2, 20 }, net[1].running_mean:totable())
        assert.is_nil(net[2].running_mean)
    end)
end)
