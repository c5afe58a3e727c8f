-- attention_backward_spec.lua — attention's gradients and dropout (the kernel rows attention and
-- attention_backward, include/tide_kernels.def) on the device under test
-- (spec/support/device.lua): the backward kernel's dq, dk, dv against autograd through the
-- per-head composite in every float dtype, empty sequences included; the dropout mask, read back
-- through uniform weights: drawn at the rate asked, one per seed, the forward's and the
-- backward's the same (each against the composite with that mask); and the node of
-- tide.nn._fused.attention, whose gradient is the kernel's, or differentiable ops' for a graph
-- of the gradient.
local tide = require("tide")
local K = tide.core._internal
local fused = require("tide.nn._fused")
local D = require("spec.support.device")

local dev = D.name

local function long(values)
    return tide.tensor(values, { dtype = "int64", device = dev })
end

local function cpu64(x)
    return x:to("cpu"):double()
end

-- autograd through the composite, on float64 copies on the CPU: out and the gradients of
-- sum(out * dout). factor(h, first, len): nil, or head h's [len, len] dropout factors (0 or
-- 1 / (1 - p)) for the sequence at 1-based row first
local function composite(q, k, v, dout, offsets, heads, d, scale, factor)
    local function leaf(x) -- a copy: x itself may be a float64 tensor on the CPU
        return cpu64(x):detach():clone():requires_grad_()
    end
    q, k, v = leaf(q), leaf(k), leaf(v)
    dout = cpu64(dout)
    local out = tide.zeros(q.shape, { dtype = "float64" })
    local loss = tide.zeros({}, { dtype = "float64" })
    for b = 1, #offsets - 1 do
        local first, len = offsets[b] + 1, offsets[b + 1] - offsets[b]
        for h = 1, len > 0 and heads or 0 do
            local function head(x)
                return x:narrow(1, first, len):narrow(2, (h - 1) * d + 1, d)
            end
            local w = head(q):matmul(head(k):t()):mul(scale):softmax(-1)
            if factor then
                w = w:mul(factor(h, first, len))
            end
            local o = w:matmul(head(v))
            loss = loss:add(o:mul(head(dout)):sum())
            tide.no_grad(function() head(out):copy_(o) end)
        end
    end
    loss:backward()
    return out, q.grad, k.grad, v.grad
end

local function max_diff(a, b)
    return (cpu64(a) - cpu64(b)):abs():max():item()
end

local TOL = { float64 = 1e-10, float32 = 2e-5, float16 = 1e-2, bfloat16 = 8e-2 }

-- the dropout factors the kernel draws for seed (q = k = 0: uniform weights 1 / len; v = one-hot
-- rows, token t of its sequence at feature t of each head, d >= the longest sequence): head h's
-- row i of out is its weights' row, keep / ((1 - p) len)
local function factors_of(offsets, heads, d, p, seed)
    local n = offsets[#offsets]
    local v = tide.zeros({ n, heads * d }, { dtype = "float64" })
    for b = 1, #offsets - 1 do
        for t = 0, offsets[b + 1] - offsets[b] - 1 do
            for h = 0, heads - 1 do
                v[offsets[b] + t + 1][h * d + t + 1] = 1
            end
        end
    end
    local zero = tide.zeros({ n, heads * d }, { dtype = "float64", device = dev })
    local out = K.attention(zero, zero, v:to(dev), long(offsets), d, heads, 1, p, seed)
    if not out then
        return nil
    end
    out = cpu64(out)
    return function(h, first, len)
        return out:narrow(1, first, len):narrow(2, (h - 1) * d + 1, len):mul(len)
    end
end

describe("attention's gradients and dropout on " .. dev, function()
    local one = tide.zeros({ 1, 2 }, { device = dev })
    local has_backward = K.attention_backward(one, one, one, long({ 0, 1 }), one, 2, 1, 1, 0, 0) ~=
        nil
    local has_dropout = K.attention(one, one, one, long({ 0, 1 }), 2, 1, 1, 0.5, 1) ~= nil

    it("gives the composite's gradients in every float dtype, empty sequences included", function()
        if not has_backward then
            pending(dev .. " has no attention_backward: training takes the composite there")
            return
        end
        local heads, d, scale = 3, 8, 1 / math.sqrt(8)
        local offsets = { 0, 5, 5, 7, 19, 20 } -- lengths 5, 0, 2, 12, 1
        tide.manual_seed(11)
        for _, dtype in ipairs({ "float64", "float32", "bfloat16", "float16" }) do
            local function rnd()
                return tide.randn({ 20, heads * d }, { dtype = "float64", device = dev }):to(dtype)
            end
            local q, k, v, dout = rnd(), rnd(), rnd(), rnd()
            local _, rq, rk, rv = composite(q, k, v, dout, offsets, heads, d, scale)
            local dq, dk, dv = K.attention_backward(q, k, v, long(offsets), dout, d, heads, scale,
                0, 0)
            for i, pair in ipairs({ { dq, rq }, { dk, rk }, { dv, rv } }) do
                assert.are.same({ 20, heads * d }, pair[1].shape)
                assert.are.equal(dtype, pair[1].dtype)
                local err = max_diff(pair[1], pair[2])
                assert.is_true(err <= TOL[dtype], dtype .. " gradient " .. i .. ": " .. err)
            end
            -- only what is asked for
            local nq, nk, gv = K.attention_backward(q, k, v, long(offsets), dout, d, heads, scale,
                0, 0, false, false, true)
            assert.is_nil(nq)
            assert.is_nil(nk)
            assert.are.equal(0, max_diff(gv, dv))
        end
    end)

    it("draws one mask per seed, at the rate asked, the same in the forward and the backward", function()
        if not (has_backward and has_dropout) then
            pending(dev .. " has no dropout in its attention kernels: training takes the composite")
            return
        end
        local heads, d, p = 2, 6, 0.3
        local offsets = { 0, 6, 6, 10 } -- lengths 6, 0, 4
        local f7, again, f8 = factors_of(offsets, heads, d, p, 7), factors_of(offsets, heads, d, p, 7),
            factors_of(offsets, heads, d, p, 8)
        local same, differ = 0, 0
        for h = 1, heads do
            for _, seq in ipairs({ { 1, 6 }, { 7, 4 } }) do
                local a = f7(h, seq[1], seq[2])
                assert.are.equal(0, max_diff(a, again(h, seq[1], seq[2])))
                differ = differ + a:ne(f8(h, seq[1], seq[2])):sum():item()
                -- each factor 0 or the inverse of the keep probability: p to 16 bits, the
                -- threshold ceil(p * 2^16) of the mask's 16-bit fields (about 1 / (1 - p))
                local kept = a:gt(0.5)
                same = same + kept:sum():item()
                assert.is_true(max_diff(a:masked_fill(kept, 0), tide.zeros(a.shape)) == 0)
                local inv = 65536 / (65536 - math.ceil(p * 65536))
                assert.is_true(math.abs(inv - 1 / (1 - p)) < 1e-4)
                assert.is_true(a:masked_select(kept):sub(inv):abs():max():item() < 1e-12)
            end
        end
        assert.is_true(differ > 0 and same > 0 and same < 2 * (36 + 16))
        -- the rate: 2 heads x 64^2 weights
        local big = factors_of({ 0, 64 }, 2, 64, p, 3)
        local kept = big(1, 1, 64):gt(0):sum():item() + big(2, 1, 64):gt(0):sum():item()
        assert.is_true(math.abs(kept / 8192 - (1 - p)) < 0.03, tostring(kept / 8192))
        -- the forward and the gradients under seed 7 are the composite's with seed 7's mask
        tide.manual_seed(12)
        local function rnd()
            return tide.randn({ 10, heads * d }, { dtype = "float64", device = dev })
        end
        local q, k, v, dout = rnd(), rnd(), rnd(), rnd()
        local scale = 0.4
        local rout, rq, rk, rv = composite(q, k, v, dout, offsets, heads, d, scale, f7)
        local out = K.attention(q, k, v, long(offsets), d, heads, scale, p, 7)
        assert.is_true(max_diff(out, rout) < 1e-12)
        local dq, dk, dv = K.attention_backward(q, k, v, long(offsets), dout, d, heads, scale, p, 7)
        assert.is_true(max_diff(dq, rq) < 1e-12)
        assert.is_true(max_diff(dk, rk) < 1e-12)
        assert.is_true(max_diff(dv, rv) < 1e-12)
        -- dropout 1 keeps nothing: zeros, and zero gradients
        local zeros = tide.zeros({ 10, heads * d }, { dtype = "float64" })
        assert.are.equal(0, max_diff(K.attention(q, k, v, long(offsets), d, heads, scale, 1, 7), zeros))
        local gq, gk, gv = K.attention_backward(q, k, v, long(offsets), dout, d, heads, scale, 1, 7)
        assert.are.equal(0, max_diff(gq, zeros) + max_diff(gk, zeros) + max_diff(gv, zeros))
        -- the seed and the probability are checked
        assert.matches("tide: attention: dropout = 1.5 must be in 0..1",
            select(2, pcall(K.attention, q, k, v, long(offsets), d, heads, scale, 1.5, 7)), 1, true)
        assert.matches("tide: attention_backward: seed = -1 must be in 0..4503599627370495",
            select(2, pcall(K.attention_backward, q, k, v, long(offsets), dout, d, heads, scale,
                0.5, -1)), 1, true)
    end)

    it("records one node: the kernel's gradients, differentiable ops' under create_graph", function()
        local heads, d = 2, 4
        local offsets = long({ 0, 3, 3, 7 })
        tide.manual_seed(13)
        local function leaf()
            return tide.randn({ 7, heads * d }, { dtype = "float64", device = dev }):requires_grad_()
        end
        local q, k, v = leaf(), leaf(), leaf()
        local dout = tide.randn({ 7, heads * d }, { dtype = "float64", device = dev })
        local y = fused.attention(q, k, v, offsets, d, heads, 0.5, 0)
        if not y then
            pending(dev .. " has no attention kernel")
            return
        end
        local _, rq, rk, rv = composite(q, k, v, dout, { 0, 3, 3, 7 }, heads, d, 0.5)
        offsets:copy_(long({ 0, 7, 7, 7 })) -- the node keeps its own offsets
        y:backward(dout)
        offsets:copy_(long({ 0, 3, 3, 7 }))
        local graph = tide.autograd.grad({ fused.attention(q, k, v, offsets, d, heads, 0.5, 0) },
            { q, k, v }, { grad_outputs = { dout }, create_graph = true })
        for i, pair in ipairs({ { q.grad, rq }, { k.grad, rk }, { v.grad, rv } }) do
            assert.is_true(max_diff(pair[1], pair[2]) < 1e-12, "backward " .. i)
            assert.is_true(max_diff(graph[i], pair[2]) < 1e-12, "create_graph " .. i)
            assert.is_not_nil(graph[i].grad_fn, "create_graph " .. i)
        end
        if has_dropout then -- the mask exists inside the kernels only
            local yd = fused.attention(q, k, v, offsets, d, heads, 0.5, 0.25)
            local ok, err = pcall(tide.autograd.grad, { yd }, { q },
                { grad_outputs = { dout }, create_graph = true })
            assert.is_false(ok)
            assert.matches("tide: autograd.grad: attention with dropout 0.25 has no gradient " ..
                "formula outside its kernel", err, 1, true)
        end
    end)
end)
