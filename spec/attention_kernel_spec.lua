-- attention_kernel_spec.lua — the attention kernel row (include/tide_kernels.def): scaled
-- dot-product attention over packed sequences, each attending to itself, on the device under
-- test (spec/support/device.lua). Values against the per-head composite for every float dtype
-- and for empty sequences, the checks of the offsets, and BERT's forward and gradients through
-- it against BERT's composite (spec/attention_backward_spec.lua: the gradients and the dropout).
-- A device without the row would answer nil, and BERT would keep its composite there.
local tide = require("tide")
local K = tide.core._internal
local D = require("spec.support.device")
local calls_of = require("spec.support.kernel_calls")

local dev = D.name

local function long(values)
    return tide.tensor(values, { dtype = "int64", device = dev })
end

-- per sequence and head: softmax(q k^T * scale) v, in float64 on the CPU
local function reference(q, k, v, offsets, heads, d, scale)
    q, k, v = q:to("cpu"):double(), k:to("cpu"):double(), v:to("cpu"):double()
    local out = tide.zeros(q.shape, { dtype = "float64" })
    for b = 1, #offsets - 1 do
        local first, len = offsets[b] + 1, offsets[b + 1] - offsets[b]
        for h = 1, heads do
            if len > 0 then
                local function head(x) return x:narrow(1, first, len):narrow(2, (h - 1) * d + 1, d) end
                local o = head(q):matmul(head(k):t()):mul(scale):softmax(-1):matmul(head(v))
                head(out):copy_(o)
            end
        end
    end
    return out
end

local TOL = { float64 = 1e-12, float32 = 1e-6, bfloat16 = 2e-2, float16 = 2e-3 }

describe("the attention kernel on " .. dev, function()
    local has_kernel = K.attention(tide.zeros({ 1, 2 }, { device = dev }),
        tide.zeros({ 1, 2 }, { device = dev }), tide.zeros({ 1, 2 }, { device = dev }),
        long({ 0, 1 }), 2, 1, 1, 0, 0) ~= nil

    it("attends within each packed sequence, empty ones included, in every float dtype", function()
        if not has_kernel then
            pending(dev .. " has no attention kernel: BERT runs its composite there")
            return
        end
        local heads, d = 3, 8
        local offsets = { 0, 5, 5, 7, 19, 20 } -- lengths 5, 0, 2, 12, 1
        tide.manual_seed(4)
        for _, dtype in ipairs({ "float32", "float64", "bfloat16", "float16" }) do
            local function rnd()
                return tide.randn({ 20, heads * d }, { dtype = "float64", device = dev }):to(dtype)
            end
            local q, k, v = rnd(), rnd(), rnd()
            local y = K.attention(q, k, v, long(offsets), d, heads, 1 / math.sqrt(d), 0, 0)
            assert.are.same({ 20, heads * d }, y.shape)
            assert.are.equal(dtype, y.dtype)
            assert.are.equal(dev, tostring(y.device))
            local ref = reference(q, k, v, offsets, heads, d, 1 / math.sqrt(d))
            local err = (y:to("cpu"):double() - ref):abs():max():item()
            assert.is_true(err <= TOL[dtype], dtype .. ": " .. err)
        end
    end)

    it("gives a later key its weight when the first 32 keys score -inf (float32 overflow)", function()
        if not has_kernel then
            pending(dev .. " has no attention kernel")
            return
        end
        -- 33 keys: the first 32 score 1e30 * -1e30 = -inf, the last 0; every query takes v[33]
        local q = tide.full({ 33, 1 }, 1e30, { device = dev })
        local k = tide.cat({ tide.full({ 32, 1 }, -1e30), tide.zeros({ 1, 1 }) }):to(dev)
        local v = tide.arange(1, 34, { dtype = "float32" }):view(33, 1):to(dev)
        local y = K.attention(q, k, v, long({ 0, 33 }), 1, 1, 1, 0, 0)
        assert.are.same(tide.full({ 33, 1 }, 33):totable(), y:to("cpu"):totable())
    end)

    it("refuses offsets that do not cut q's tokens into sequences, and q that is not [N, heads * d]", function()
        local q = tide.randn({ 6, 4 }, { device = dev })
        local function err(offsets, heads, d, x)
            x = x or q
            local ok, e = pcall(K.attention, x, x, x, offsets, d or 2, heads or 2, 0.5, 0, 0)
            assert.is_false(ok)
            return e
        end
        -- 6 rows of 4 features, 2 heads of d = 2: 6 tokens
        if has_kernel then
            assert.matches("tide: attention: offsets must run from 0 to the 6 tokens of q, got 0 to 5",
                err(long({ 0, 2, 5 })), 1, true)
            assert.matches("tide: attention: offsets must run from 0 to the 6 tokens of q, got 1 to 6",
                err(long({ 1, 6 })), 1, true)
            assert.matches("tide: attention: offsets must not decrease, got 4 then 3",
                err(long({ 0, 4, 3, 6 })), 1, true)
            -- no tokens: the offsets are still read (all 0 or refused)
            local none = tide.randn({ 0, 4 }, { device = dev })
            assert.matches("tide: attention: offsets must run from 0 to the 0 tokens of q, got 0 to 1",
                err(long({ 0, 1 }), 2, 2, none), 1, true)
            assert.are.same({ 0, 4 }, K.attention(none, none, none, long({ 0, 0, 0 }), 2, 2, 0.5, 0, 0)
                .shape)
        end
        -- the width is heads * d exactly: 4 features are not 5 heads, nor 1 head of 2, nor 2 of 1
        assert.matches("tide: attention: q of shape [6, 4] must be [N, heads * d] with heads = 5 and " ..
            "d = 2", err(long({ 0, 6 }), 5), 1, true)
        assert.matches("tide: attention: q of shape [6, 4] must be [N, heads * d] with heads = 1 and " ..
            "d = 2", err(long({ 0, 6 }), 1), 1, true)
        assert.matches("tide: attention: q of shape [6, 4] must be [N, heads * d] with heads = 2 and " ..
            "d = 1", err(long({ 0, 6 }), 2, 1), 1, true)
        assert.matches("tide: attention: q of shape [6, 2, 2] must be [N, heads * d] with heads = 2 " ..
            "and d = 2", err(long({ 0, 6 }), 2, 2, q:view(6, 2, 2)), 1, true)
        assert.matches("tide: attention: offsets must be a 1-D int64 tensor of offsets, got " ..
            "float32 [2]", err(tide.tensor({ 0, 6 }, { dtype = "float32", device = dev })), 1, true)
        assert.matches("tide: attention: offsets must be a 1-D int64 tensor of offsets, got " ..
            "int64 [0]", err(long({})), 1, true)
    end)

    -- how many times K.attention ran while fn did, and fn's result
    local function kernel_calls(fn)
        local calls, res = calls_of("attention", fn)
        return #calls, res
    end

    it("gives BERT's forward the composite's values, recorded or not, padded or not", function()
        local bert = require("tide.models.bert")
        local config = bert.BertConfig({ vocab_size = 40, hidden_size = 12, num_hidden_layers = 2,
            num_attention_heads = 3, intermediate_size = 20 })
        tide.manual_seed(9)
        local model = bert.BertModel(config):to(dev)
        model:eval()
        local ids = tide.randint(1, 40, { 3, 7 }, { device = dev })
        -- an all-ones mask without packing: the composite (a mask beyond a packing); no mask:
        -- the kernel, a call per layer, with a graph (parameters require grad) or without
        local ones = tide.ones({ 3, 7 }, { dtype = "int64", device = dev })
        local n_comp, composite = kernel_calls(function()
            return model(ids, { attention_mask = ones }).last_hidden_state
        end)
        assert.are.equal(0, n_comp)
        local n_rec, recorded = kernel_calls(function() return model(ids).last_hidden_state end)
        assert.are.equal(has_kernel and 2 or 0, n_rec)
        assert.is_not_nil(recorded.grad_fn)
        local n_inf, inferred = kernel_calls(function()
            return tide.no_grad(function() return model(ids).last_hidden_state end)
        end)
        assert.are.equal(has_kernel and 2 or 0, n_inf)
        for _, y in ipairs({ recorded, inferred }) do
            local diff = (composite:detach() - y:detach()):abs():max():item()
            assert.is_true(diff < 1e-5, tostring(diff))
        end
        -- SentenceEncoder's path: the padding skipped, packed sequences in the kernel; a fully
        -- padded row is an empty sequence (zeros come back at its positions, no NaN)
        local holes = tide.tensor({ { 1, 1, 1, 1, 1, 1, 1 }, { 0, 0, 0, 0, 0, 0, 0 },
            { 1, 1, 1, 1, 1, 0, 0 } }, { dtype = "int64", device = dev })
        local full = model(ids, { attention_mask = holes }).last_hidden_state:detach()
        local n, packed = kernel_calls(function()
            return tide.no_grad(function()
                return model:_forward(ids, { attention_mask = holes }, "BertModel", true)
                    .last_hidden_state
            end)
        end)
        assert.are.equal(2, n)
        assert.is_false(packed:isnan():any():item())
        for b, len in ipairs({ 7, 0, 5 }) do
            if len > 0 then
                local diff = (packed[b]:narrow(1, 1, len) - full[b]:narrow(1, 1, len)):abs():max():item()
                assert.is_true(diff < 1e-5, tostring(diff))
            end
        end
        assert.are.equal(0, packed[2]:abs():max():item())
        -- an all-ones mask with the padding skipped: nothing to pack, no mask, the kernel
        local ones = tide.ones({ 3, 7 }, { dtype = "int64", device = dev })
        local plain = model(ids, { attention_mask = ones }).last_hidden_state:detach()
        local n1, skipped = kernel_calls(function()
            return tide.no_grad(function()
                return model:_forward(ids, { attention_mask = ones }, "BertModel", true).last_hidden_state
            end)
        end)
        assert.are.equal(2, n1)
        assert.is_true((plain - skipped):abs():max():item() < 1e-5)
    end)

    it("trains through the kernel: BERT's gradients are the composite's", function()
        local bert = require("tide.models.bert")
        local config = bert.BertConfig({ vocab_size = 40, hidden_size = 12, num_hidden_layers = 1,
            num_attention_heads = 3, intermediate_size = 20 })
        tide.manual_seed(10)
        local model = bert.BertModel(config):to(dev)
        model:eval() -- no dropout: the two paths compute the same function
        local ids = tide.randint(1, 40, { 2, 5 }, { device = dev })
        local ones = tide.ones({ 2, 5 }, { dtype = "int64", device = dev })
        local function grads(opts)
            model:zero_grad()
            model(ids, opts).last_hidden_state:pow(2):sum():backward()
            local gs = {}
            for i, p in ipairs(model:parameters()) do
                gs[i] = p.grad and p.grad:clone() or false -- (the pooler gets none)
            end
            return gs
        end
        local composite = grads({ attention_mask = ones })
        local n, kernel = kernel_calls(function() return grads({}) end)
        assert.are.equal(has_kernel and 1 or 0, n)
        local compared = 0
        for i, g in ipairs(composite) do
            assert.are.equal(not g, not kernel[i])
            if g then
                local diff = (g - kernel[i]):abs():max():item()
                assert.is_true(diff < 1e-5 * math.max(1, g:abs():max():item()), i .. ": " .. diff)
                compared = compared + (g:abs():max():item() > 0 and 1 or 0)
            end
        end
        assert.is_true(compared >= 12, tostring(compared))
    end)
end)
