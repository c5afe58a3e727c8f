-- gpu_attention.lua — make gpu-check's look at the attention kernel row on the GPU: the kernel
-- (src/cuda/attention.cu, one warp per query and head) against the composite BERT runs where it
-- has no kernel (transposes, a batched matmul, softmax, a batched matmul, cuBLAS for the
-- products), on MiniLM's shapes (12 heads of 32 features, batch 64 x 128 tokens), per dtype.
-- The kernel has so far run on the emulated GPU only: these figures say whether it beats the
-- composite on a real one. Then training's forward and backward with attention dropout 0.1
-- (tide.nn._fused.attention: the forward kernel and attention_backward, three warp passes)
-- against the composite's under autograd, and the gradients of the two at dropout 0.
-- Prints "key value" lines for bench/gpu_check.sh's results:
--   gpu_attention_<dtype>_kernel_ms, _composite_ms, _ratio (kernel / composite), _max_diff
--   gpu_attention_train_<dtype>_kernel_ms, _composite_ms, _ratio, _grad_max_diff
--
--   lua5.4 bench/gpu_attention.lua [ITERS] [REPS] [B T]   (the rehearsal: 1 1 2 8)
local tide = require("tide")

local ITERS = tonumber(arg[1]) or 20
local REPS = tonumber(arg[2]) or 5
local B, T = tonumber(arg[3]) or 64, tonumber(arg[4]) or 128
local NH, D = 12, 32
local H = NH * D
local K = tide.core._internal
local fused = require("tide.nn._fused")
local I = require("tide.nn._internal")
local clock = tide.wall_time

if not tide.cuda.is_available() then
    print("no GPU: " .. tostring(tide.cuda.unavailable_reason()))
    return
end

local function median(v)
    table.sort(v)
    return v[math.floor((#v + 1) / 2)]
end

-- the best per-call milliseconds of fn, the GPU drained around each timed run
local function time_ms(fn)
    fn()
    local runs = {}
    for r = 1, REPS do
        tide.cuda.synchronize()
        local t0 = clock()
        for _ = 1, ITERS do
            fn()
        end
        tide.cuda.synchronize()
        runs[r] = (clock() - t0) / ITERS * 1000
    end
    return median(runs)
end

-- the "key value" lines of one comparison (prefix_kernel_ms, _composite_ms, _ratio, and diff's)
local function report(prefix, tk, tc, diff_key, diff)
    print(string.format("%s_kernel_ms %.4f", prefix, tk))
    print(string.format("%s_composite_ms %.4f", prefix, tc))
    print(string.format("%s_ratio %.3f", prefix, tk / tc))
    print(string.format("%s_%s %.3g", prefix, diff_key, diff))
end

local offsets = tide.arange(0, B * T + 1, T, { dtype = "int64", device = "cuda" })
local scale = 1 / math.sqrt(D)
-- BertSelfAttention's composite without a mask (dropout p on the weights)
local function heads(x)
    return x:view(B, T, NH, D):transpose(2, 3)
end
local function composite(q, k, v, p)
    local probs = heads(q:mul(scale)):matmul(heads(k):transpose(3, 4)):softmax(-1)
    if p > 0 then
        probs = I.dropout(probs, p)
    end
    return probs:matmul(heads(v)):transpose(2, 3):reshape(B * T, H)
end

tide.manual_seed(1)
tide.no_grad(function()
    for _, dtype in ipairs({ "float32", "bfloat16", "float16" }) do
        local function rnd()
            return tide.randn({ B * T, H }, { device = "cuda" }):to(dtype)
        end
        local q, k, v = rnd(), rnd(), rnd()
        local function kernel()
            return K.attention(q, k, v, offsets, D, NH, scale, 0, 0)
        end
        local function unfused()
            return composite(q, k, v, 0)
        end
        local diff = (kernel():float() - unfused():float()):abs():max():item()
        local tk, tc = time_ms(kernel), time_ms(unfused)
        report("gpu_attention_" .. dtype, tk, tc, "max_diff", diff)
    end
end)

-- training: forward and backward through the node, against the composite under autograd
for _, dtype in ipairs({ "float32", "bfloat16" }) do
    local function leaf()
        return tide.randn({ B * T, H }, { device = "cuda" }):to(dtype):requires_grad_()
    end
    local q, k, v = leaf(), leaf(), leaf()
    local g = tide.randn({ B * T, H }, { device = "cuda" }):to(dtype)
    local function grads(f)
        q.grad, k.grad, v.grad = nil, nil, nil
        f():backward(g)
        return { q.grad:float(), k.grad:float(), v.grad:float() }
    end
    local a = grads(function() return fused.attention(q, k, v, offsets, D, NH, scale, 0) end)
    local b = grads(function() return composite(q, k, v, 0) end)
    local diff = 0
    for i = 1, 3 do
        diff = math.max(diff, (a[i] - b[i]):abs():max():item())
    end
    local tk = time_ms(function()
        fused.attention(q, k, v, offsets, D, NH, scale, 0.1):backward(g)
    end)
    local tc = time_ms(function() composite(q, k, v, 0.1):backward(g) end)
    report("gpu_attention_train_" .. dtype, tk, tc, "grad_max_diff", diff)
end
