-- add_layer_norm_spec.lua — the add_layer_norm kernel row (include/tide_kernels.def): y =
-- layer_norm(x + residual) in one pass, on the device under test (spec/support/device.lua), and
-- BERT's "add & norm" layers, which run it in inference. A device without the row would answer
-- nil, and BERT would keep its composite there.
local tide = require("tide")
local K = tide.core._internal
local F = require("tide.nn.functional")
local D = require("spec.support.device")
local calls_of = require("spec.support.kernel_calls")

local dev = D.name

local function randn(shape, dtype)
    return tide.randn(shape, { dtype = "float64", device = dev }):to(dtype)
end

describe("the add_layer_norm kernel on " .. dev, function()
    local has_kernel = K.add_layer_norm(randn({ 1, 2 }, "float32"), randn({ 1, 2 }, "float32"),
        nil, nil, 2, 1e-5) ~= nil

    -- how many times K.add_layer_norm ran while fn did, and fn's result
    local function kernel_calls(fn)
        local calls, res = calls_of("add_layer_norm", fn)
        return #calls, res
    end

    it("gives the add's and layer_norm's values: float32, float64 bit for bit, half within a step", function()
        if not has_kernel then
            pending(dev .. " has no add_layer_norm kernel")
            return
        end
        for _, dtype in ipairs({ "float32", "float64", "bfloat16", "float16" }) do
            for _, affine in ipairs({ true, false }) do
                tide.manual_seed(8)
                local x, r = randn({ 3, 5, 24 }, dtype), randn({ 3, 5, 24 }, dtype)
                local w = affine and randn({ 24 }, dtype) or nil
                local b = affine and randn({ 24 }, dtype) or nil
                local y = K.add_layer_norm(x, r, w, b, 24, 1e-12)
                local what = dtype .. " affine " .. tostring(affine)
                assert.are.same({ 3, 5, 24 }, y.shape, what)
                assert.are.equal(dtype, y.dtype, what)
                local composite = F.layer_norm(x + r, { 24 }, { weight = w, bias = b, eps = 1e-12 })
                local diff = (y:to("cpu"):double() - composite:to("cpu"):double()):abs():max():item()
                if (dtype == "float32" or dtype == "float64") and D.kind ~= "cpu" then
                    -- a GPU compiler may contract the two kernels' operations differently
                    assert.is_true(diff <= (dtype == "float64" and 1e-13 or 1e-5), what)
                elseif dtype == "float32" or dtype == "float64" then
                    assert.are.equal(0, diff, what)
                else -- |y| up to ~8: a bfloat16 step is 1/16 there, the sum left unrounded
                    assert.is_true(diff <= (dtype == "bfloat16" and 0.07 or 0.01), what .. ": " .. diff)
                end
            end
        end
    end)

    it("refuses a residual of another shape or dtype, with the dispatch's errors", function()
        local x = randn({ 2, 3 }, "float32")
        local ok, err = pcall(K.add_layer_norm, x, randn({ 2, 4 }, "float32"), nil, nil, 3, 1e-5)
        assert.is_false(ok)
        assert.matches("tide: add_layer_norm: residual of shape [2, 4] must have x's shape [2, 3]",
            err, 1, true)
        ok, err = pcall(K.add_layer_norm, x, randn({ 2, 3 }, "float64"), nil, nil, 3, 1e-5)
        assert.is_false(ok)
        assert.matches("tide: add_layer_norm: residual must have x's dtype float32, got float64",
            err, 1, true)
    end)

    it("runs BERT's add & norm in inference only, with the recorded forward's values", function()
        local bert = require("tide.models.bert")
        local config = bert.BertConfig({ vocab_size = 40, hidden_size = 12, num_hidden_layers = 2,
            num_attention_heads = 3, intermediate_size = 20 })
        tide.manual_seed(12)
        local model = bert.BertModel(config):to(dev)
        model:eval()
        local ids = tide.randint(1, 40, { 2, 6 }, { device = dev })
        -- recorded (the parameters require grad): the composite, no kernel call
        local n_rec, recorded = kernel_calls(function() return model(ids).last_hidden_state end)
        assert.are.equal(0, n_rec)
        -- inference: two add & norms a layer
        local n_inf, inferred = kernel_calls(function()
            return tide.no_grad(function() return model(ids).last_hidden_state end)
        end)
        assert.are.equal(4, n_inf)
        assert.is_true((recorded:detach() - inferred):abs():max():item() < 1e-5)
        -- training with dropout: the composite (the dropout sits between the dense and the add)
        model:train()
        local n_train = kernel_calls(function()
            return tide.no_grad(function() return model(ids).last_hidden_state end)
        end)
        assert.are.equal(0, n_train)
        model:eval()
        -- under autocast layer norm runs in float32 (PyTorch's rule): the composite
        local n_amp = kernel_calls(function()
            return tide.no_grad(function()
                return tide.autocast(D.kind, function() return model(ids).last_hidden_state end)
            end)
        end)
        assert.are.equal(0, n_amp)
    end)
end)
