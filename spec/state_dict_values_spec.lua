-- module, optimizer and LR scheduler state dicts against PyTorch 1.13 (values pasted from its
-- output; Sequential indices 1-based, param ids 1-based, as docs/API.md says)
local tide = require("tide")
local nn, optim = tide.nn, tide.optim
local L = optim.lr_scheduler

-- in order: an ordered table (state_dict, named_*) iterates by __call on every host
local function keys(t)
    local r = {}
    local mt = getmetatable(t)
    if mt and mt.__call then
        for k in t do
            r[#r + 1] = k
        end
        return r
    end
    for k in pairs(t) do
        r[#r + 1] = k
    end
    return r
end
local function sorted(t)
    table.sort(t)
    return t
end

local M = nn.Module:extend("SdvM")
function M:init()
    self.seq = nn.Sequential(nn.Linear(3, 2), nn.ReLU(), nn.Linear(2, 1))
    self.bn = nn.BatchNorm1d(2)
    self:register_buffer("tmp", tide.zeros(2), false)
    self:register_buffer("cnt", tide.ones(1))
    self:register_parameter("nothing", nil)
    self.gone = nn.Linear(1, 1)
end

describe("state_dict values against PyTorch 1.13", function()
    it("Module:state_dict keys, order, prefix, keep_vars, nil entries", function()
        local m = M()
        m.gone = nil
        assert.are.same({ "cnt", "seq.1.weight", "seq.1.bias", "seq.3.weight", "seq.3.bias",
            "bn.weight", "bn.bias", "bn.running_mean", "bn.running_var",
            "bn.num_batches_tracked" }, keys(m:state_dict()))
        local p = keys(m:state_dict({ prefix = "p." }))
        assert.are.same({ "p.cnt", "p.seq.1.weight" }, { p[1], p[2] })
        local rg = {}
        for _, v in m:state_dict({ keep_vars = true }) do
            rg[#rg + 1] = v.requires_grad
        end
        assert.are.same({ false, true, true, true, true, true, true, false, false, false }, rg)
        for k, v in m:state_dict() do
            assert.is_false(v.requires_grad, k)
        end
        local nbt = m:state_dict()["bn.num_batches_tracked"]
        assert.are.same({ "int64", 0 }, { nbt.dtype, nbt:item() })
        m:register_buffer("nb", nil) -- PyTorch: allowed, m.nb None, not in the state dict
        assert.is_nil(m.nb)
        assert.is_nil(m:state_dict().nb)
        local l = nn.Linear(2, 2)
        assert.are.same({ "1.weight", "1.bias", "2.weight", "2.bias" },
            keys(nn.Sequential(l, l):state_dict()))
    end)

    it("load_state_dict: strict false lists, strict errors, dtype cast", function()
        local m = M()
        local sd = m:state_dict()
        sd.cnt, sd["extra.w"] = nil, tide.zeros(1)
        local r = m:load_state_dict(sd, false)
        assert.are.same({ "cnt" }, r.missing_keys)
        assert.are.same({ "extra.w" }, r.unexpected_keys)
        assert.are.same({ "cnt" }, r[1]) -- _IncompatibleKeys' r[0], r[1]
        -- PyTorch: Missing key(s) in state_dict: "cnt". Unexpected key(s) in state_dict: "extra.w".
        local ok, err = pcall(m.load_state_dict, m, sd)
        assert.is_false(ok)
        assert.truthy(tostring(err):find("tide: load_state_dict: missing keys: cnt; unexpected " ..
            "keys: extra.w", 1, true), err)
        sd = m:state_dict()
        sd["bn.weight"] = tide.zeros(3)
        -- PyTorch: size mismatch for bn.weight: copying a param with shape torch.Size([3]) from
        -- checkpoint, the shape in current model is torch.Size([2]).
        ok, err = pcall(m.load_state_dict, m, sd)
        assert.truthy(tostring(err):find("size mismatch for 'bn.weight': the model has {2}, " ..
            "the state dict has {3}", 1, true), err)
        sd = {}
        for k, v in m:state_dict() do
            sd[k] = v:double()
        end
        sd.cnt = tide.tensor({ 7 }, { dtype = "float64" })
        r = m:load_state_dict(sd)
        assert.are.same({ {}, {} }, { r.missing_keys, r.unexpected_keys })
        assert.are.same({ "float32", 7 }, { m.cnt.dtype, m.cnt[1]:item() })
    end)

    it("register_buffer / register_parameter errors", function()
        local m = M()
        -- PyTorch: KeyError buffer name can't contain "." / attribute 'train' already exists /
        -- parameter name can't contain "." / attribute 'cnt' already exists / buffer name
        -- can't be empty string / TypeError cannot assign 'int' object to buffer 'x'
        local cases = {
            { function() m:register_buffer("a.b", tide.zeros(1)) end, "without '.'" },
            { function() m:register_buffer("train", tide.zeros(1)) end,
                "attribute 'train' already exists" },
            { function() m:register_parameter("a.b", nil) end, "without '.'" },
            { function() m:register_parameter("cnt", nn.Parameter(tide.zeros(1))) end,
                "'cnt' is already registered as a buffer" },
            { function() m:register_buffer("", tide.zeros(1)) end, "non-empty name" },
            { function() m:register_buffer("x", 3) end, "expected a tensor for 'x', got number" },
        }
        for i, c in ipairs(cases) do
            local ok, err = pcall(c[1])
            assert.is_false(ok, "case " .. i)
            assert.truthy(tostring(err):find("tide: ", 1, true), err)
            assert.truthy(tostring(err):find(c[2], 1, true), "case " .. i .. ": " .. err)
        end
    end)

    it("named_parameters / named_buffers / named_modules options", function()
        local m = M()
        local l = nn.Linear(2, 2)
        local s = nn.Sequential(l, l)
        assert.are.same({ "1.weight", "1.bias" }, keys(s:named_parameters()))
        assert.are.same({ "x.1.weight", "x.1.bias" }, keys(s:named_parameters({ prefix = "x" })))
        assert.are.same({}, keys(m:named_parameters({ recurse = false })))
        assert.are.same({ "tmp", "cnt", "bn.running_mean", "bn.running_var",
            "bn.num_batches_tracked" }, keys(m:named_buffers()))
        assert.are.same({ "tmp", "cnt" }, keys(m:named_buffers({ recurse = false })))
        assert.are.same({ "", "1" }, keys(s:named_modules()))
        assert.are.same({ "", "1", "2" }, keys(s:named_modules({ remove_duplicate = false })))
        assert.are.same({ "x", "x.1" }, keys(s:named_modules({ prefix = "x" })))
    end)

    it("Optimizer state_dict groups, state and resume (SGD, Adam, AdamW, RMSprop, Adagrad)",
        function()
            local x = tide.tensor({ { 1, 2 }, { 3, -1 } }, { dtype = "float32" })
            local y = tide.tensor({ { 1 }, { 0 } }, { dtype = "float32" })
            local function net()
                local n = nn.Linear(2, 1)
                n.weight.data:copy_(tide.tensor({ { -0.0053, 0.3793 } }))
                n.bias.data:fill_(-0.5820)
                return n
            end
            -- PyTorch's keys per group (less foreach/differentiable/capturable/fused, pending),
            -- its state keys, state 0's first tensor and the weight after one resumed step
            local cases = {
                { "SGD", { lr = 0.1, momentum = 0.9 }, { "dampening", "lr", "maximize",
                    "momentum", "nesterov", "params", "weight_decay" }, { "momentum_buffer" },
                    -3.379941701889038, { 0.6803060173988342, 0.7325150370597839 } },
                { "Adam", { lr = 0.1 }, { "amsgrad", "betas", "eps", "lr", "maximize", "params",
                    "weight_decay" }, { "exp_avg", "exp_avg_sq", "step" }, -0.6204352974891663,
                    { 0.2872648239135742, 0.6301024556159973 } },
                { "AdamW", { lr = 0.1 }, { "amsgrad", "betas", "eps", "lr", "maximize", "params",
                    "weight_decay" }, { "exp_avg", "exp_avg_sq", "step" }, -0.6203687787055969,
                    { 0.28697794675827026, 0.6292118430137634 } },
                { "RMSprop", { lr = 0.1 }, { "alpha", "centered", "eps", "lr", "maximize",
                    "momentum", "params", "weight_decay" }, { "square_avg", "step" },
                    0.45805123448371887, { 0.4546806812286377, 0.6069931387901306 } },
                { "Adagrad", { lr = 0.1 }, { "eps", "initial_accumulator_value", "lr",
                    "lr_decay", "maximize", "params", "weight_decay" }, { "step", "sum" },
                    22.092443466186523, { 0.19763214886188507, 0.5349881649017334 } },
            }
            for _, c in ipairs(cases) do
                local name = c[1]
                local n1 = net()
                local function make(n)
                    return optim[name]({ { params = { n.weight } },
                        { params = { n.bias }, lr = 0.01 } }, c[2])
                end
                local o1 = make(n1)
                local function step(n, o)
                    o:zero_grad();
                    ((n(x) - y) ^ 2):mean():backward()
                    o:step()
                end
                step(n1, o1)
                step(n1, o1)
                local sd = o1:state_dict()
                local g = sd.param_groups
                assert.are.same({ c[3], c[3] }, { sorted(keys(g[1])), sorted(keys(g[2])) }, name)
                assert.are.same({ { 1 }, { 2 }, 0.1, 0.01 }, { g[1].params, g[2].params,
                    g[1].lr, g[2].lr }, name)
                assert.are.same({ c[4], c[4] }, { sorted(keys(sd.state[1])),
                    sorted(keys(sd.state[2])) }, name)
                local first = sd.state[1][c[4][1] == "step" and c[4][2] or c[4][1]]
                assert.is_true(math.abs(first[1][1]:item() - c[5]) < 1e-3 * math.abs(c[5]),
                    name .. ": " .. first[1][1]:item())
                if sd.state[1].step then
                    assert.are.equal(2, sd.state[1].step, name)
                end
                local n2 = net()
                n2:load_state_dict(n1:state_dict())
                local o2 = make(n2)
                o2:load_state_dict(sd)
                step(n1, o1)
                step(n2, o2)
                for j = 1, 2 do
                    local a, b = n1.weight[1][j]:item(), n2.weight[1][j]:item()
                    assert.are.equal(a, b, name)
                    assert.is_true(math.abs(a - c[6][j]) < 1e-3, name .. ": " .. a)
                end
            end
        end)
    pending("param_groups' foreach (None in PyTorch: nil in Lua, so absent), differentiable " ..
        "(SGD, Adam, RMSprop), capturable (Adam, AdamW) and fused (Adam) = false: tide's " ..
        "optimizers (SGD.lua, Adam.lua, ...) keep no such defaults")
    pending("verbose and _get_lr_called_within_step in a scheduler's state_dict: tide leaves " ..
        "both out, since their presence marks a state dict as PyTorch's (MultiStepLR then reads " ..
        "milestones as a Counter; SequentialLR its schedulers' dicts); both load")
    pending("Adam/AdamW/Adagrad state 'step' is a float32 0-d tensor in PyTorch 1.13 (2.0); " ..
        "tide's view gives the number 2 (a 0-d tensor in the flat names), as RMSprop's int")

    it("LR schedulers' state_dict keys and values", function()
        -- PyTorch's sorted keys (less lr_lambdas, and verbose and _get_lr_called_within_step:
        -- pending) and its values after 3 steps
        local common = { "_last_lr", "_step_count", "base_lrs", "last_epoch" }
        local function with(...)
            local r = { ... }
            for _, k in ipairs(common) do
                r[#r + 1] = k
            end
            return sorted(r)
        end
        local cases = {
            { "StepLR", function(o) return L.StepLR(o, 2, 0.5) end, with("gamma", "step_size"),
                { step_size = 2, gamma = 0.5, _last_lr = { 0.05 } } },
            { "ExponentialLR", function(o) return L.ExponentialLR(o, 0.9) end, with("gamma"),
                { gamma = 0.9, _last_lr = { 0.07290000000000002 } } },
            { "CosineAnnealingLR", function(o) return L.CosineAnnealingLR(o, 5) end,
                with("T_max", "eta_min"), { T_max = 5, eta_min = 0,
                    _last_lr = { 0.03454915028125263 } } },
            { "LambdaLR", function(o) return L.LambdaLR(o, function(e) return 0.5 ^ e end) end,
                with(), { _last_lr = { 0.0125 } } },
            { "LinearLR", function(o) return L.LinearLR(o) end,
                with("end_factor", "start_factor", "total_iters"), { total_iters = 5,
                    _last_lr = { 0.07333333333333335 } } },
            { "ConstantLR", function(o) return L.ConstantLR(o) end,
                with("factor", "total_iters"), { total_iters = 5,
                    _last_lr = { 0.03333333333333333 } } },
            { "PolynomialLR", function(o) return L.PolynomialLR(o) end,
                with("power", "total_iters"), { power = 1, _last_lr = { 0.04000000000000001 } } },
            { "CosineAnnealingWarmRestarts", function(o)
                return L.CosineAnnealingWarmRestarts(o, 2) end,
                with("T_0", "T_cur", "T_i", "T_mult", "eta_min"),
                { T_0 = 2, T_i = 2, T_mult = 1, T_cur = 1, _step_count = 0, _last_lr = { 0.05 } } },
            { "ReduceLROnPlateau", function(o) return L.ReduceLROnPlateau(o) end,
                sorted({ "_last_lr", "best", "cooldown", "cooldown_counter", "eps", "factor",
                    "last_epoch", "min_lrs", "mode", "mode_worse", "num_bad_epochs", "patience",
                    "threshold", "threshold_mode", "verbose" }),
                { best = 1, num_bad_epochs = 2, mode = "min", mode_worse = math.huge,
                    _last_lr = { 0.1 } } },
            { "SequentialLR", function(o)
                return L.SequentialLR(o, { L.ConstantLR(o), L.ExponentialLR(o, 0.9) }, { 2 }) end,
                { "_last_lr", "_milestones", "_schedulers", "last_epoch" },
                { _milestones = { 2 }, _last_lr = { 0.09000000000000001 } } },
            { "ChainedScheduler", function(o)
                return L.ChainedScheduler({ L.ConstantLR(o), L.ExponentialLR(o, 0.9) }) end,
                { "_last_lr", "_schedulers" }, { _last_lr = { 0.0243 } } },
        }
        for _, c in ipairs(cases) do
            local o = optim.SGD({ nn.Parameter(tide.zeros(1)) }, { lr = 0.1, momentum = 0.9 })
            local s = c[2](o)
            for _ = 1, 3 do
                o:step()
                if c[1] == "ReduceLROnPlateau" then s:step(1.0) else s:step() end
            end
            local sd = s:state_dict()
            assert.are.same(c[3], sorted(keys(sd)), c[1])
            local want = c[4]
            if c[1] ~= "ChainedScheduler" then
                want.last_epoch = 3
            end
            if sd.verbose ~= nil then
                want.verbose = false
            end
            if sd._get_lr_called_within_step ~= nil then
                want._get_lr_called_within_step, want.base_lrs = false, { 0.1 }
                want._step_count = want._step_count or 4
            end
            for k, v in pairs(want) do
                if type(v) == "table" then
                    assert.is_true(math.abs(sd[k][1] - v[1]) < 1e-12, c[1] .. "." .. k)
                else
                    assert.are.equal(v, sd[k], c[1] .. "." .. k)
                end
            end
            -- PyTorch's load takes verbose too; the tensors' form (tide.save) loads back
            if sd.verbose ~= nil then
                sd.verbose = true
                s:load_state_dict(sd)
                assert.is_true(s.verbose, c[1])
            end
            s:load_state_dict(L.to_tensors(s:state_dict()))
            assert.are.equal(sd.last_epoch, s.last_epoch, c[1])
        end
    end)
    pending("CyclicLR/OneCycleLR state_dict: PyTorch's option keys (max_lrs, total_size, " ..
        "step_ratio, mode, gamma, scale_mode, cycle_momentum, base/max_momentums; " ..
        "_schedule_phases, anneal_func, use_beta1): tide keeps the epoch only (CyclicLR.lua, " ..
        "OneCycleLR.lua, not this audit's files)")
    pending("LambdaLR/MultiplicativeLR 'lr_lambdas' ([None] for a plain function): nil in Lua")
    pending("MultiStepLR milestones: PyTorch's Counter {[1] = 1, [3] = 1}; tide's list {1, 3}")
end)
