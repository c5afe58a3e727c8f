-- tide.optim and tide.data by PyTorch 1.13's keyword names: every form (by position, all by name
-- in one table, mixed) builds the same thing; a misspelt name raises
local tide = require("tide")
local optim, S, D = tide.optim, tide.optim.lr_scheduler, tide.data
local unpack = table.unpack or unpack

local function idx(s) return table.concat(s:indices(), " ") end
local function items(d)
    local r = {}
    for i = 1, d:len() do r[i] = tostring(d[i][1]:item()) end
    return table.concat(r, " ")
end

describe("tide.data by name", function()
    local ds = D.TensorDataset(tide.arange(6))
    it("SequentialSampler({data_source = ds}) reads its name (was an empty sampler)", function()
        assert.are.equal("1 2 3 4 5 6", idx(D.SequentialSampler({ data_source = ds })))
        assert.has_error(function() D.SequentialSampler({ data_sorce = ds }) end,
            'tide: SequentialSampler: unknown option "data_sorce" (did you mean "data_source"?)')
    end)
    it("SubsetRandomSampler({indices =, generator =}) reads its names (was empty)", function()
        local a = idx(D.SubsetRandomSampler({ 2, 4, 6, 8 }, 5))
        assert.are.equal(a, idx(D.SubsetRandomSampler({ indices = { 2, 4, 6, 8 }, generator = 5 })))
        assert.are.equal(a, idx(D.SubsetRandomSampler({ 2, 4, 6, 8 }, { generator = 5 })))
        assert.are.equal(4, #D.SubsetRandomSampler({ indices = { 2, 4, 6, 8 } }):indices())
        assert.has_error(function() D.SubsetRandomSampler({ indices = { 1 }, generater = 1 }) end,
            'tide: SubsetRandomSampler: unknown option "generater" (did you mean "generator"?)')
    end)
    it("Subset by name, mixed and all (was empty / refused)", function()
        assert.are.equal("2 0 4", items(D.Subset(ds, { 3, 1, 5 })))
        assert.are.equal("2 0 4", items(D.Subset(ds, { indices = { 3, 1, 5 } })))
        assert.are.equal("2 0 4", items(D.Subset({ dataset = ds, indices = { 3, 1, 5 } })))
        assert.has_error(function() D.Subset(ds, { indice = { 1 } }) end,
            'tide: Subset: unknown option "indice" (did you mean "indices"?)')
    end)
    it("samplers, BatchSampler, random_split, DataLoader: by name is by position", function()
        assert.are.equal(idx(D.RandomSampler(ds, true, 5, 7)),
            idx(D.RandomSampler(ds, { replacement = true, num_samples = 5, generator = 7 })))
        assert.are.equal(idx(D.WeightedRandomSampler({ 1, 2, 3, 4 }, 3, false, 3)),
            idx(D.WeightedRandomSampler({ 1, 2, 3, 4 }, { num_samples = 3, replacement = false,
                generator = 3 })))
        local function b(s) local r = {} for i, v in ipairs(s:batches()) do
            r[i] = table.concat(v, ",") end return table.concat(r, "|") end
        assert.are.equal("1,2,3|4,5,6", b(D.BatchSampler(D.SequentialSampler(ds), 3, true)))
        assert.are.equal("1,2,3|4,5,6",
            b(D.BatchSampler(D.SequentialSampler(ds), 3, { drop_last = true })))
        local p1 = D.random_split(ds, { 2, 4 }, 9)
        local p2 = D.random_split(ds, { 2, 4 }, { generator = 9 })
        assert.are.equal(items(p1[1]), items(p2[1]))
        local function lb(l) local r = {} for x in l:iter() do
            r[#r + 1] = table.concat(x:tolist(), ",") end return table.concat(r, "|") end
        local a = lb(D.DataLoader(ds, 4, true, nil, nil, 0, nil, false, true, 0, nil, nil, 11))
        assert.are.equal(a, lb(D.DataLoader({ dataset = ds, batch_size = 4, shuffle = true,
            drop_last = true, generator = 11 })))
        assert.are.equal(a, lb(D.DataLoader(ds, 4, { shuffle = true, drop_last = true,
            generator = 11 })))
        assert.has_error(function() D.DataLoader(ds, { batch_sise = 3 }) end)
    end)
end)

-- PyTorch 1.13 (CPU, foreach off): p = {1, -2, 3}, grad {0.5, -1, 0.25}, two steps
local OPT = {
    { "Adam", { 0.1, { 0.8, 0.9 }, 1e-3, 0.1, true }, { "lr", "betas", "eps", "weight_decay",
        "amsgrad" }, { 1.199416, -2.199711, 2.805329 }, { maximize = true } },
    { "AdamW", { 0.1, { 0.8, 0.9 }, 1e-3, 0.1, true }, { "lr", "betas", "eps", "weight_decay",
        "amsgrad" }, { 1.178703, -2.159001, 3.138507 }, { maximize = true } },
    { "Adagrad", { 0.1, 0.1, 0.1, 0.2, 1e-3 }, { "lr", "lr_decay", "weight_decay",
        "initial_accumulator_value", "eps" }, { 1.116328, -2.146552, 2.979116 },
        { maximize = true } },
    { "Adadelta", { 0.5, 0.8, 1e-3, 0.1 }, { "lr", "rho", "eps", "weight_decay" },
        { 1.071337, -2.07226, 2.959285 }, { maximize = true } },
    { "ASGD", { 0.1, 1e-2, 0.5, 1, 0.1, nil, true }, { "lr", "lambd", "alpha", "t0",
        "weight_decay", "foreach", "maximize" }, { 1.077552, -2.155104, 2.984092 } },
    { "RAdam", { 0.1, { 0.8, 0.9 }, 1e-3, 0.1 }, { "lr", "betas", "eps", "weight_decay" },
        { 0.880333, -1.760667, 2.890306 } },
    { "RMSprop", { 0.1, 0.8, 1e-3, 0.1, 0.5, true, nil, true }, { "lr", "alpha", "eps",
        "weight_decay", "momentum", "centered", "foreach", "maximize" },
        { 1.573802, -2.578648, 2.512067 } },
    { "Rprop", { 0.1, { 0.4, 1.5 }, { 1e-3, 1 }, nil, true }, { "lr", "etas", "step_sizes",
        "foreach", "maximize" }, { 1.25, -2.25, 3.25 } },
    { "SGD", { 0.1, 0.9, 0, 0.01, true, }, { "lr", "momentum", "dampening", "weight_decay",
        "nesterov" }, { 1.225713, -2.451426, 3.101341 }, { maximize = true } },
}

describe("tide.optim by name", function()
    for _, c in ipairs(OPT) do
        local name, pos, names, want, extra = c[1], c[2], c[3], c[4], c[5] or {}
        it(name .. ": by position, by name, all in one table and mixed give PyTorch's", function()
            local function named()
                local t = {}
                for i = 1, #names do t[names[i]] = pos[i] end
                for k, v in pairs(extra) do t[k] = v end
                return t
            end
            local forms = {
                function(ps)
                    local a = { unpack(pos, 1, #names) }
                    a[#names + 1] = extra
                    return optim[name](ps, unpack(a, 1, #names + 1))
                end,
                function(ps) return optim[name](ps, named()) end,
                function(ps) local t = named(); t.params = ps; return optim[name](t) end,
                function(ps) local t = named(); t.lr = nil; return optim[name](ps, pos[1], t) end,
            }
            for _, f in ipairs(forms) do
                local p = tide.tensor({ 1, -2, 3 }):float():requires_grad_()
                local o = f({ p })
                for _ = 1, 2 do
                    o:zero_grad(); p.grad = tide.tensor({ 0.5, -1, 0.25 }):float(); o:step()
                end
                local got = p:tolist()
                for i = 1, 3 do assert.is_true(math.abs(got[i] - want[i]) < 1e-5, name) end
            end
            assert.has_error(function()
                optim[name]({ tide.zeros(1):requires_grad_() }, { lr = 0.1, momentun = 0.9 })
            end)
        end)
    end
end)

-- lr over 4 steps (PyTorch 1.13, SGD lr 0.1 momentum 0.9)
local SCH = {
    { "StepLR", { 2, 0.5 }, { "step_size", "gamma" }, "0.1 0.05 0.05 0.025" },
    { "MultiStepLR", { { 1, 3 }, 0.5 }, { "milestones", "gamma" }, "0.05 0.05 0.025 0.025" },
    { "LinearLR", { 0.2, 0.8, 3 }, { "start_factor", "end_factor", "total_iters" },
        "0.04 0.06 0.08 0.08" },
    { "CosineAnnealingLR", { 4, 0.01 }, { "T_max", "eta_min" }, "0.0868198 0.055 0.0231802 0.01" },
    { "CyclicLR", { 0.01, 0.1, 2, 3, "triangular2" }, { "base_lr", "max_lr", "step_size_up",
        "step_size_down", "mode" }, "0.055 0.1 0.07 0.04" },
    { "ReduceLROnPlateau", { "max", 0.5, 1, 0.01, "abs", 1 }, { "mode", "factor", "patience",
        "threshold", "threshold_mode", "cooldown" }, "0.1 0.1 0.05 0.05" },
}

describe("lr schedulers by name", function()
    for _, c in ipairs(SCH) do
        local name, pos, names, want = c[1], c[2], c[3], c[4]
        it(name .. ": by position, by name, all in one table and mixed", function()
            local function named()
                local t = {}
                for i = 1, #names do t[names[i]] = pos[i] end
                return t
            end
            local forms = {
                function(o) return S[name](o, unpack(pos, 1, #names)) end,
                function(o) return S[name](o, named()) end,
                function(o) local t = named(); t.optimizer = o; return S[name](t) end,
                function(o) local t = named(); t[names[1]] = nil; return S[name](o, pos[1], t) end,
            }
            for _, f in ipairs(forms) do
                local o = optim.SGD({ tide.tensor({ 1 }):float():requires_grad_() },
                    { lr = 0.1, momentum = 0.9 })
                local s, r = f(o), {}
                for i = 1, 4 do
                    o:step(); if name == "ReduceLROnPlateau" then s:step(1) else s:step() end
                    r[i] = string.format("%.6g", o.param_groups[1].lr)
                end
                assert.are.equal(want, table.concat(r, " "))
            end
            assert.has_error(function()
                local t = named(); t.gamam = 1
                S[name](optim.SGD({ tide.zeros(1):requires_grad_() }, { lr = 0.1 }), t)
            end)
        end)
    end
end)
