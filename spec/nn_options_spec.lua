-- the nn options of issue 13 that were "not supported yet" (docs/API.md, nn.functional): pooling
-- ceil_mode / dilation / return_indices / divisor_override, pad's reflect / replicate /
-- circular modes, binary_cross_entropy_with_logits' weight / pos_weight, embedding's
-- padding_idx / max_norm, and inplace. Values and gradients against PyTorch 1.13
-- (spec/fixtures/nn_options_torch.lua, made by spec/fixtures/make_nn_options.py) on the device
-- under test (spec/support/device.lua), then the rules and the exact errors.
local tide = require "tide"
local host = require "spec.support.host"
local D = require "spec.support.device"
local nn = tide.nn
local F = nn.functional
local REF = require "spec.fixtures.nn_options_torch"

local function integral(data)
    if host.integers then
        return math.type(data[1]) == "integer"
    end
    for _, v in ipairs(data) do
        if v ~= math.floor(v) then
            return false
        end
    end
    return #data > 0
end

local function T(r, opts)
    opts = opts or {}
    local dtype = opts.dtype or (integral(r.data) and "int64" or "float64")
    local t = tide.tensor(r.data, { dtype = dtype, device = opts.device })
    if #r.shape == 0 then
        return t:reshape({})
    end
    return t:reshape(r.shape)
end

local function close(t, r, tol, what)
    local got = t:to("cpu"):reshape(-1):totable()
    assert.are.same(r.shape, t.shape)
    for i = 1, #r.data do
        local g, w = got[i], r.data[i]
        if not (g == w or math.abs(g - w) <= (tol or 1e-9) * (1 + math.abs(w))) then
            error(string.format("%s element %d: got %.10g, expected %.10g", what or "", i, g, w),
                2)
        end
    end
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
