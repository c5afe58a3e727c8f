-- optim_fused_spec.lua — the fused optimizer kernels (core._sgd_step_, core._adam_step_, issue
-- 15; core._rmsprop_step_, core._adagrad_step_, issue 13) give what PyTorch's formulas as chains of tensor ops give (the optimizers'
-- formula_update), to 1e-6, on the CPU and (tagged #cuda) on cuda:0, and allocate nothing.
local tide = require("tide")
local optim = require("tide.optim")
local autograd = require("tide.autograd")
local core = require("tide.core")

local CASES = {
    { "SGD", { lr = 0.1 } },
    { "SGD", { lr = 0.05, momentum = 0.9 } },
    { "SGD", { lr = 0.05, momentum = 0.9, dampening = 0.3, weight_decay = 0.01 } },
    { "SGD", { lr = 0.05, momentum = 0.8, nesterov = true, weight_decay = 0.1 } },
    { "SGD", { lr = 0.05, momentum = 0.5, maximize = true } },
    { "Adam", { lr = 0.01 } },
    { "Adam", { lr = 0.01, betas = { 0.8, 0.99 }, weight_decay = 0.1, eps = 1e-6 } },
    { "Adam", { lr = 0.01, maximize = true } },
    { "AdamW", { lr = 0.01 } },
    { "AdamW", { lr = 0.02, weight_decay = 0.5, maximize = true } },
    { "RMSprop", { lr = 0.01 } },
    { "RMSprop", { lr = 0.01, alpha = 0.9, weight_decay = 0.1, eps = 1e-6 } },
    { "RMSprop", { lr = 0.01, momentum = 0.9 } },
    { "RMSprop", { lr = 0.01, centered = true } },
    { "RMSprop", { lr = 0.01, momentum = 0.5, centered = true, weight_decay = 0.01,
        maximize = true } },
    { "Adagrad", { lr = 0.1 } },
    { "Adagrad", { lr = 0.1, lr_decay = 0.1, weight_decay = 0.1, initial_accumulator_value = 0.5,
        eps = 1e-8 } },
    { "Adagrad", { lr = 0.05, maximize = true } },
}

local function describe_case(c)
    local keys = {}
    for k, v in pairs(c[2]) do
        keys[#keys + 1] = k .. "=" .. (type(v) == "table" and table.concat(v, ",") or tostring(v))
    end
    table.sort(keys)
    return c[1] .. "{" .. table.concat(keys, " ") .. "}"
end

-- three steps of optimizer class name on a [33, 7] parameter of dtype on device; fused or
-- through the formula; returns the parameter and the optimizer
local function steps(name, opts, dtype, device, fused)
    tide.manual_seed(7)
    local p = tide.randn({ 33, 7 }, { dtype = dtype, device = device })
    p:requires_grad_(true)
    local o = optim[name]({ p }, opts)
    if not fused then
        o.update = function(self, group, q, g)
            return self:formula_update(group, q, g, name == "AdamW")
        end
    end
    for _ = 1, 3 do
        autograd.set_grad(p, tide.randn({ 33, 7 }, { dtype = dtype, device = device }))
        o:step()
    end
    return p, o
end

local function max_diff(a, b)
    return (a:cpu():double() - b:cpu():double()):abs():max():item()
end

-- the tolerance's scale: 1, or the largest magnitude of a state that grows past it (RMSprop's
-- momentum buffer sums g/avg, about 1/sqrt(1 - alpha) a step), so 1e-6 is relative there
local function scale(t)
    return math.max(1, t:cpu():double():abs():max():item())
end

local function compare_all(device)
    for _, c in ipairs(CASES) do
        for _, dtype in ipairs({ "float32", "float64" }) do
            local what = describe_case(c) .. " " .. dtype .. " on " .. device
            local pf, of = steps(c[1], c[2], dtype, device, true)
            local pr, orf = steps(c[1], c[2], dtype, device, false)
            assert.are.equal(dtype, pf.dtype)
            assert.is_true(max_diff(pf, pr) <= 1e-6, what .. ": parameter differs by "
                .. max_diff(pf, pr))
            local sf, sr = of.state[pf] or {}, orf.state[pr] or {}
            for _, k in ipairs({ "momentum_buffer", "exp_avg", "exp_avg_sq", "square_avg",
                "grad_avg", "sum" }) do
                assert.are.equal(sr[k] == nil, sf[k] == nil, what .. ": state " .. k)
                if sr[k] then
                    assert.is_true(max_diff(sf[k], sr[k]) <= 1e-6 * scale(sr[k]), what .. ": " .. k
                        .. " differs by " .. max_diff(sf[k], sr[k]))
                end
            end
            assert.are.equal(sr.step, sf.step)
        end
    end
end

describe("fused optimizer steps", function()
    it("match the formulas to 1e-6 on the CPU (SGD, Adam, AdamW, RMSprop, Adagrad)", function()
        compare_all("cpu")
    end)

    it("allocate nothing once the state exists", function()
        local p = tide.randn({ 256, 128 }, { dtype = "float32" })
        p:requires_grad_(true)
        local o = optim.SGD({ p }, { lr = 0.1, momentum = 0.9, weight_decay = 1e-4 })
        autograd.set_grad(p, tide.randn({ 256, 128 }))
        o:step()
        collectgarbage()
        collectgarbage("stop")
        local before = core.memory_in_use()
        o:step()
        local after = core.memory_in_use()
        collectgarbage("restart")
        assert.are.equal(before, after)
    end)

    it("allocate nothing once the state exists (RMSprop centered with momentum, Adagrad)",
        function()
            local p = tide.randn({ 256, 128 }, { dtype = "float32" })
            p:requires_grad_(true)
            for _, o in ipairs({
                optim.RMSprop({ p }, { momentum = 0.9, centered = true, weight_decay = 1e-4 }),
                optim.Adagrad({ p }, { lr_decay = 0.01 }) }) do
                autograd.set_grad(p, tide.randn({ 256, 128 }))
                o:step()
                collectgarbage()
                collectgarbage("stop")
                local before = core.memory_in_use()
                o:step()
                local after = core.memory_in_use()
                collectgarbage("restart")
                assert.are.equal(before, after)
            end
        end)

    it("refuse state tensors that do not match the options, leaving the parameter", function()
        local p = tide.ones({ 2, 3 })
        local v = tide.zeros({ 2, 3 })
        -- momentum 0.9 needs a momentum buffer
        local ok, err = pcall(core._rmsprop_step_, p, tide.ones({ 2, 3 }), v, nil, nil, 0.1, 0.99,
            1e-8, 0, 0.9, false)
        assert.is_false(ok)
        assert.is_truthy(err:find("tide: rmsprop_step_: expected state tensors tensor, tensor, nil "
            .. "for these options, got tensor, nil, nil", 1, true), err)
        assert.are.same({ 1, 1, 1 }, p[1]:totable())
        assert.are.same({ 0, 0, 0 }, v[1]:totable())
        ok, err = pcall(core._adagrad_step_, p, tide.ones({ 2, 3 }), tide.zeros({ 3 }), 0.1, 1e-10,
            0, false)
        assert.is_false(ok)
        assert.is_truthy(err:find("tide: adagrad_step_: sum of shape [3] must have param's shape "
            .. "[2, 3]", 1, true), err)
        assert.are.same({ 1, 1, 1 }, p[2]:totable())
    end)

    it("still steps a parameter the kernel does not take (not contiguous)", function()
        local base = tide.tensor({ { 1, 2, 3 }, { 4, 5, 6 } }, { dtype = "float64" })
        local p = base:t():contiguous():t() -- the same values, column-major
        assert.is_false(p:is_contiguous())
        p:requires_grad_(true)
        local o = optim.SGD({ p }, { lr = 0.5 })
        autograd.set_grad(p, tide.ones({ 2, 3 }, { dtype = "float64" }))
        o:step()
        assert.are.same({ { 0.5, 1.5, 2.5 }, { 3.5, 4.5, 5.5 } }, p:totable())
    end)

    it("refuse a gradient of another shape, naming both shapes", function()
        local p = tide.zeros({ 2, 3 })
        local ok, err = pcall(core._sgd_step_, p, tide.zeros({ 3 }), nil, 0.1, 0, 0, 0, false,
            false, false)
        assert.is_false(ok)
        assert.is_truthy(err:find("tide: sgd_step_: grad of shape [3] must have param's shape "
            .. "[2, 3]", 1, true), err)
        assert.are.same({ 0, 0, 0 }, p[1]:totable())
    end)
end)

describe("fused optimizer steps on cuda:0 #cuda", function()
    it("match the formulas to 1e-6 (SGD, Adam, AdamW, RMSprop, Adagrad)", function()
        if not tide.cuda.is_available() then
            pending("no CUDA device")
            return
        end
        compare_all("cuda:0")
    end)
end)
