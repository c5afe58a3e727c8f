-- linear_kernel_spec.lua — nn.Linear's one kernel, the linear row of include/tide_kernels.def:
-- y = act(x W^T + b) with the bias add and the activation in the product's epilogue, on the
-- device under test (spec/support/device.lua). Its values against the composite (matmul, add,
-- activation) for every float dtype, the shapes nn passes it, autograd around it, and BERT's
-- intermediate layers, which fuse their GELU into it. The dispatch's errors are
-- kernel_rows_spec.lua's, for every row.
local tide = require("tide")
local K = tide.core._internal
local F = require("tide.nn.functional")
local fused = require("tide.nn._fused")
local D = require("spec.support.device")
local calls_of = require("spec.support.kernel_calls")

local dev = D.name
local ACT = { relu = 0, gelu = 1 }

-- a float64 reference of act(x W^T + b), on the CPU
local function reference(x, w, b, act)
    local y = x:to("cpu"):double():matmul(w:to("cpu"):double():t())
    if b then
        y = y:add(b:to("cpu"):double())
    end
    if act == "gelu" then
        y = y:gelu()
    elseif act == "relu" then
        y = y:relu()
    end
    return y
end

local function max_err(y, ref)
    return (y:to("cpu"):double() - ref):abs():max():item()
end

local function randn(shape, dtype)
    return tide.randn(shape, { dtype = "float64", device = dev }):to(dtype)
end

local TOL = { float64 = 1e-12, float32 = 2e-5, bfloat16 = 0.1, float16 = 1e-2 }

describe("the linear kernel on " .. dev, function()
    it("computes act(x W^T + b) in every float dtype, with and without a bias", function()
        for _, dtype in ipairs({ "float32", "float64", "bfloat16", "float16" }) do
            for _, act in ipairs({ false, "relu", "gelu" }) do
                for _, with_bias in ipairs({ true, false }) do
                    tide.manual_seed(7)
                    local x, w = randn({ 9, 13 }, dtype), randn({ 6, 13 }, dtype)
                    local b = with_bias and randn({ 6 }, dtype) or nil
                    local y = K.linear(x, w, b, 13, 6, act and ACT[act] or 2)
                    local what = string.format("%s %s bias %s", dtype, tostring(act),
                        tostring(with_bias))
                    assert.is_not_nil(y, what)
                    assert.are.same({ 9, 6 }, y.shape, what)
                    assert.are.equal(dtype, y.dtype, what)
                    assert.are.equal(dev, tostring(y.device), what)
                    -- half dtypes: the product's own rounding (|y| up to ~10: a bfloat16 ulp is
                    -- 0.06) against the float64 reference
                    assert.is_true(max_err(y, reference(x, w, b, act)) <= TOL[dtype], what)
                end
            end
        end
    end)

    it("gives the composite's values bit for bit, or oneDNN's epilogue's within float32 rounding", function()
        -- float64, and float32 products under 2^19 multiply-adds: the gemm and one pass, each
        -- element as the add and the activation compute it. Larger float32 products run on
        -- oneDNN's matmul primitive (where tide has it) with its own GELU in the epilogue.
        local sizes = { { 33, 40, 24 }, { 96, 128, 64 } } -- 31,680 and 786,432 multiply-adds
        for _, dtype in ipairs({ "float32", "float64" }) do
            for k, sz in ipairs(sizes) do
                for _, act in ipairs({ false, "relu", "gelu" }) do
                    tide.manual_seed(3)
                    local x, w = randn({ sz[1], sz[2] }, dtype), randn({ sz[3], sz[2] }, dtype)
                    local b = randn({ sz[3] }, dtype)
                    local composite = x:matmul(w:t()):add(b)
                    if act then
                        composite = composite[act](composite)
                    end
                    local y = K.linear(x, w, b, sz[2], sz[3], act and ACT[act] or 2)
                    local what = string.format("%s %dx%dx%d %s", dtype, sz[1], sz[2], sz[3],
                        tostring(act))
                    local diff = (y - composite):abs():max():item()
                    if D.kind ~= "cpu" and (dtype == "float64" or k == 1) then
                        -- a GPU compiler may contract the epilogue's operations differently
                        assert.is_true(diff <= (dtype == "float64" and 1e-13 or 1e-5), what)
                    elseif dtype == "float64" or k == 1 then
                        assert.are.equal(0, diff, what)
                    else -- |y| up to ~40: float32's step there is 4e-6
                        assert.is_true(diff <= 2e-5, what .. ": " .. diff)
                    end
                end
            end
        end
    end)

    it("keeps NaN through ReLU and GELU, on every path (oneDNN's ReLU would make it 0)", function()
        -- [512, 32] x [32, 32]: 2^19 multiply-adds, oneDNN's size for float32
        for _, dtype in ipairs({ "float32", "bfloat16", "float64" }) do
            for _, act in ipairs({ "relu", "gelu" }) do
                tide.manual_seed(6)
                local x = randn({ 512, 32 }, dtype)
                x[3][5] = 0 / 0
                local w, b = randn({ 32, 32 }, dtype), randn({ 32 }, dtype)
                local y = K.linear(x, w, b, 32, 32, ACT[act]):to("cpu"):float()
                local what = dtype .. " " .. act
                assert.is_true(y[3]:isnan():all():item(), what) -- the row with the NaN
                assert.is_false(y:narrow(1, 4, 509):isnan():any():item(), what)
                assert.is_true(y:narrow(1, 4, 509):min():item() >= (act == "relu" and 0 or -0.2), what)
            end
        end
    end)

    it("takes what F.linear passes: batched, 1-D and non-contiguous inputs, a narrowed weight", function()
        tide.manual_seed(11)
        local w, b = randn({ 5, 8 }, "float32"), randn({ 5 }, "float32")
        local cases = {
            { randn({ 2, 3, 8 }, "float32"), { 2, 3, 5 } },
            { randn({ 8 }, "float32"), { 5 } },
            { randn({ 8, 4 }, "float32"):t(), { 4, 5 } }, -- a transposed view
            { randn({ 3, 0, 8 }, "float32"), { 3, 0, 5 } }, -- no rows
        }
        for i, case in ipairs(cases) do
            local y = F.linear(case[1], w, b)
            assert.are.same(case[2], y.shape, "case " .. i)
            if y:numel() > 0 then
                assert.is_true(max_err(y, reference(case[1], w, b)) < 2e-5, "case " .. i)
            end
        end
        -- rows 3..5 of a [9, 8] weight (attention's fused projection takes such slices)
        local big = randn({ 9, 8 }, "float32")
        local x = randn({ 4, 8 }, "float32")
        local y = F.linear(x, big:narrow(1, 3, 3), b:narrow(1, 1, 3))
        assert.is_true(max_err(y, reference(x, big:narrow(1, 3, 3), b:narrow(1, 1, 3))) < 2e-5)
    end)

    -- the act each K.linear call asks for while fn runs
    local function acts_of(fn)
        local acts = {}
        for i, args in ipairs((calls_of("linear", fn))) do
            acts[i] = args[6]
        end
        return acts
    end

    it("fuses the activation outside autograd and records linear, then the activation, inside", function()
        tide.manual_seed(5)
        local x = randn({ 6, 10 }, "float32")
        local w, b = randn({ 7, 10 }, "float32"), randn({ 7 }, "float32")
        local ref = reference(x, w, b, "gelu")
        -- no graph: one kernel
        local y0
        assert.are.same({ ACT.gelu }, acts_of(function()
            y0 = tide.no_grad(function() return fused.linear(x, w, b, "gelu") end)
        end))
        assert.is_true(max_err(y0, ref) < 2e-5)
        -- recorded: the gradients of the composite
        local function grads(fn)
            local xr, wr, br = x:clone():requires_grad_(), w:clone():requires_grad_(),
                b:clone():requires_grad_()
            local y = fn(xr, wr, br)
            y:sum():backward()
            return y, xr.grad, wr.grad, br.grad
        end
        local y1, gx1, gw1, gb1
        assert.are.same({ 2 }, acts_of(function() -- the product alone: gelu is a node of its own
            y1, gx1, gw1, gb1 = grads(function(xr, wr, br) return fused.linear(xr, wr, br, "gelu") end)
        end))
        local y2, gx2, gw2, gb2 = grads(function(xr, wr, br)
            return xr:matmul(wr:t()):add(br):gelu()
        end)
        assert.are.equal("gelu", y1.grad_fn.name)
        assert.are.equal(0, (y1 - y2):abs():max():item())
        for _, pair in ipairs({ { gx1, gx2 }, { gw1, gw2 }, { gb1, gb2 } }) do
            assert.is_true((pair[1] - pair[2]):abs():max():item() < 1e-5)
        end
    end)

    it("runs BERT's intermediate GELU in the kernel, and keeps two steps for a hooked dense", function()
        local bert = require("tide.models.bert")
        local layer = require("tide.models.bert.layer")
        local config = bert.BertConfig({ vocab_size = 10, hidden_size = 8, num_hidden_layers = 1,
            num_attention_heads = 2, intermediate_size = 12 })
        tide.manual_seed(2)
        local m = layer.BertIntermediate(config):to(dev)
        for _, p in ipairs(m:parameters()) do
            tide.no_grad(function() p:copy_(randn(p.shape, "float32")) end)
        end
        local x = randn({ 2, 3, 8 }, "float32")
        local ref = reference(x, m.dense.weight, m.dense.bias, "gelu")
        local y
        assert.are.same({ ACT.gelu }, acts_of(function()
            y = tide.no_grad(function() return m(x) end)
        end))
        assert.is_true(max_err(y, ref) < 2e-5)
        -- a forward hook on dense sees dense's own output, before the GELU
        local seen, y2
        m.dense:register_forward_hook(function(_, _, out) seen = out end)
        assert.are.same({ 2 }, acts_of(function()
            y2 = tide.no_grad(function() return m(x) end)
        end))
        assert.is_true(max_err(seen, reference(x, m.dense.weight, m.dense.bias)) < 2e-5)
        assert.are.equal(0, (y2 - y):abs():max():item())
    end)
end)
