-- ported_scripts146_spec.lua — Dao-AILab/flash-attention's pure-PyTorch pieces: flash_attn/
-- bert_padding.py (IndexFirstAxis, IndexPutFirstAxis, IndexFirstAxisResidual as autograd
-- Functions, index_first_axis, index_put_first_axis, unpad_input, unpad_input_for_concatenated_
-- sequences, pad_input) and tests/test_flash_attn.py's reference helpers (generate_random_padding_
-- mask with fixed lengths, construct_local_mask, attention_ref), ported line for line at tiny
-- sizes (batch 3, seqlen 5, heads 2, head dim 4) on inputs given by formulas. The Python line
-- stands above each Lua line that differs from it; einops is tide.einops.
-- Indices are 1-based in tide: nonzero's `indices` (the tokens' rows in the flattened batch) and
-- the first-axis gathers / scatters shift by one; cu_seqlens stay offsets (0, l1, l1 + l2, ...),
-- and construct_local_mask's row_idx / col_idx stay 0-based positions (only differences count).
local tide = require("tide")
local F = tide.nn.functional
local einops = tide.einops
local rearrange, repeat_ = einops.rearrange, einops.repeat_
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_close_list = ported.assert_close_list

---------------------------------------------------------------------------------------------
-- 1. flash_attn/bert_padding.py
---------------------------------------------------------------------------------------------
-- class IndexFirstAxis(torch.autograd.Function):
local IndexFirstAxis = tide.autograd.Function:extend("IndexFirstAxis")
-- def forward(ctx, input, indices):
function IndexFirstAxis.forward(ctx, input, indices)
    ctx:save_for_backward(indices)
    assert(input.ndim >= 2)
    -- ctx.first_axis_dim, other_shape = input.shape[0], input.shape[1:]
    local other_shape
    ctx.first_axis_dim, other_shape = input.shape[1], input.shape[{ { 2 } }]
    local second_dim = other_shape:numel()
    -- return torch.gather(
    --     rearrange(input, "b ... -> b (...)"), 0, repeat(indices, "z -> z d", d=second_dim)
    -- ).reshape(-1, *other_shape)
    return tide.gather(rearrange(input, "b ... -> b (...)"), 1,
        repeat_(indices, "z -> z d", { d = second_dim })):reshape(-1, unpack(other_shape))
end

-- def backward(ctx, grad_output):
function IndexFirstAxis.backward(ctx, grad_output)
    -- (indices,) = ctx.saved_tensors
    local indices = ctx.saved_tensors[1]
    assert(grad_output.ndim >= 2)
    -- other_shape = grad_output.shape[1:]
    local other_shape = grad_output.shape[{ { 2 } }]
    grad_output = rearrange(grad_output, "b ... -> b (...)")
    -- grad_input = torch.zeros([ctx.first_axis_dim, grad_output.shape[1]],
    --     device=grad_output.device, dtype=grad_output.dtype)
    local grad_input = tide.zeros({ ctx.first_axis_dim, grad_output.shape[2] },
        { device = grad_output.device, dtype = grad_output.dtype })
    -- grad_input.scatter_(0, repeat(indices, "z -> z d", d=grad_output.shape[1]), grad_output)
    grad_input:scatter_(1, repeat_(indices, "z -> z d", { d = grad_output.shape[2] }), grad_output)
    -- return grad_input.reshape(ctx.first_axis_dim, *other_shape), None
    return grad_input:reshape(ctx.first_axis_dim, unpack(other_shape)), nil
end

-- index_first_axis = IndexFirstAxis.apply
local index_first_axis = IndexFirstAxis.apply

-- class IndexPutFirstAxis(torch.autograd.Function):
local IndexPutFirstAxis = tide.autograd.Function:extend("IndexPutFirstAxis")
-- def forward(ctx, values, indices, first_axis_dim):
function IndexPutFirstAxis.forward(ctx, values, indices, first_axis_dim)
    ctx:save_for_backward(indices)
    assert(indices.ndim == 1)
    assert(values.ndim >= 2)
    -- output = torch.zeros(
    --     first_axis_dim, *values.shape[1:], device=values.device, dtype=values.dtype)
    local output = tide.zeros(tide.Size({ first_axis_dim }) + values.shape[{ { 2 } }],
        { device = values.device, dtype = values.dtype })
    -- output[indices] = values
    output[indices] = values
    return output
end

-- def backward(ctx, grad_output):
function IndexPutFirstAxis.backward(ctx, grad_output)
    -- (indices,) = ctx.saved_tensors
    local indices = ctx.saved_tensors[1]
    -- grad_values = grad_output[indices]
    local grad_values = grad_output[indices]
    return grad_values, nil, nil
end

-- index_put_first_axis = IndexPutFirstAxis.apply
local index_put_first_axis = IndexPutFirstAxis.apply

-- class IndexFirstAxisResidual(torch.autograd.Function):
local IndexFirstAxisResidual = tide.autograd.Function:extend("IndexFirstAxisResidual")
-- def forward(ctx, input, indices):
function IndexFirstAxisResidual.forward(ctx, input, indices)
    ctx:save_for_backward(indices)
    assert(input.ndim >= 2)
    -- ctx.first_axis_dim, other_shape = input.shape[0], input.shape[1:]
    ctx.first_axis_dim = input.shape[1]
    -- output = input[indices]
    local output = input[indices]
    -- return output, input.detach()
    return output, input:detach()
end

-- def backward(ctx, grad_output, grad_residual):
function IndexFirstAxisResidual.backward(ctx, grad_output, grad_residual)
    local indices = ctx.saved_tensors[1]
    assert(grad_output.ndim >= 2)
    local other_shape = grad_output.shape[{ { 2 } }]
    -- assert grad_residual.shape[1:] == other_shape
    assert(grad_residual.shape[{ { 2 } }] == other_shape)
    local grad_input = grad_residual
    -- indices = indices.reshape(indices.shape[0], *((1,) * (grad_output.ndim - 1)))
    local ones = {}
    for i = 1, grad_output.ndim - 1 do ones[i] = 1 end
    indices = indices:reshape(indices.shape[1], unpack(ones))
    indices = indices:expand_as(grad_output)
    -- grad_input.scatter_add_(0, indices, grad_output)
    grad_input:scatter_add_(1, indices, grad_output)
    return grad_input:reshape(ctx.first_axis_dim, unpack(other_shape)), nil
end

-- index_first_axis_residual = IndexFirstAxisResidual.apply
local index_first_axis_residual = IndexFirstAxisResidual.apply

-- def unpad_input(hidden_states, attention_mask, unused_mask=None):
local function unpad_input(hidden_states, attention_mask, unused_mask)
    -- all_masks = (attention_mask + unused_mask) if unused_mask is not None else attention_mask
    local all_masks = unused_mask and (attention_mask + unused_mask) or attention_mask
    -- seqlens_in_batch = all_masks.sum(dim=-1, dtype=torch.int32)
    local seqlens_in_batch = all_masks:sum({ dim = -1, dtype = "int32" })
    local used_seqlens_in_batch = attention_mask:sum({ dim = -1, dtype = "int32" })
    -- indices = torch.nonzero(all_masks.flatten(), as_tuple=False).flatten()
    local indices = tide.nonzero(all_masks:flatten(), { as_tuple = false }):flatten()
    -- max_seqlen_in_batch = seqlens_in_batch.max().item()
    local max_seqlen_in_batch = seqlens_in_batch:max():item()
    -- cu_seqlens = F.pad(torch.cumsum(seqlens_in_batch, dim=0, dtype=torch.int32), (1, 0))
    local cu_seqlens = F.pad(tide.cumsum(seqlens_in_batch, { dim = 1, dtype = "int32" }), { 1, 0 })
    -- return (index_first_axis(rearrange(hidden_states, "b s ... -> (b s) ..."), indices),
    --         indices, cu_seqlens, max_seqlen_in_batch, used_seqlens_in_batch)
    return index_first_axis(rearrange(hidden_states, "b s ... -> (b s) ..."), indices),
        indices, cu_seqlens, max_seqlen_in_batch, used_seqlens_in_batch
end

-- def unpad_input_for_concatenated_sequences(hidden_states, attention_mask_in_length):
local function unpad_input_for_concatenated_sequences(hidden_states, attention_mask_in_length)
    -- length = attention_mask_in_length.sum(dim=-1)
    local length = attention_mask_in_length:sum(-1)
    local seqlen = attention_mask_in_length:size(-1)
    -- attention_mask_2d = torch.arange(seqlen, device=length.device, dtype=length.dtype).expand(
    --     len(length), seqlen) < length.unsqueeze(1)
    local attention_mask_2d = tide.arange(seqlen, { device = length.device, dtype = length.dtype })
        :expand(#length, seqlen):lt(length:unsqueeze(2))
    -- real_indices_idx = torch.nonzero(attention_mask_in_length.flatten(),
    --                                 as_tuple=False).flatten()
    local real_indices_idx = tide.nonzero(attention_mask_in_length:flatten(),
        { as_tuple = false }):flatten()
    -- seqlens_in_batch = attention_mask_in_length.flatten()[real_indices_idx]
    local seqlens_in_batch = attention_mask_in_length:flatten()[real_indices_idx]
    local indices = tide.nonzero(attention_mask_2d:flatten(), { as_tuple = false }):flatten()
    local max_seqlen_in_batch = seqlens_in_batch:max():item()
    local cu_seqlens = F.pad(tide.cumsum(seqlens_in_batch, { dim = 1, dtype = "int32" }), { 1, 0 })
    return index_first_axis(rearrange(hidden_states, "b s ... -> (b s) ..."), indices),
        indices, cu_seqlens, max_seqlen_in_batch
end

-- def pad_input(hidden_states, indices, batch, seqlen):
local function pad_input(hidden_states, indices, batch, seqlen)
    -- dim = hidden_states.shape[-1]  (unused upstream)
    -- output = index_put_first_axis(hidden_states, indices, batch * seqlen)
    local output = index_put_first_axis(hidden_states, indices, batch * seqlen)
    -- return rearrange(output, "(b s) ... -> b s ...", b=batch)
    return rearrange(output, "(b s) ... -> b s ...", { b = batch })
end

---------------------------------------------------------------------------------------------
-- 2. tests/test_flash_attn.py's reference helpers
---------------------------------------------------------------------------------------------
-- def generate_random_padding_mask(max_seqlen, batch_size, device, mode="random"):
-- the spec adds mode "fixed" (lengths given, a {batch, 1} tensor) so that PyTorch's values can
-- be compared; "full", "random" and "third" are upstream's
local function generate_random_padding_mask(max_seqlen, batch_size, device, mode, lengths)
    mode = mode or "random"
    -- assert mode in ["full", "random", "third"]
    assert(mode == "full" or mode == "random" or mode == "third" or mode == "fixed")
    if mode == "full" then
        -- lengths = torch.full((batch_size, 1), max_seqlen, device=device, dtype=torch.int32)
        lengths = tide.full({ batch_size, 1 }, max_seqlen, { device = device, dtype = "int32" })
    elseif mode == "random" then
        -- lengths = torch.randint(max(1, max_seqlen - 20), max_seqlen + 1, (batch_size, 1), ...)
        lengths = tide.randint(math.max(1, max_seqlen - 20), max_seqlen + 1, { batch_size, 1 },
            { device = device })
    elseif mode == "third" then
        -- lengths = torch.randint(max_seqlen // 3, max_seqlen + 1, (batch_size, 1), device=device)
        lengths = tide.randint(math.floor(max_seqlen / 3), max_seqlen + 1, { batch_size, 1 },
            { device = device })
    end
    -- padding_mask = (
    --     repeat(torch.arange(max_seqlen, device=device), "s -> b s", b=batch_size) < lengths)
    local padding_mask = repeat_(tide.arange(max_seqlen, { device = device }), "s -> b s",
        { b = batch_size }):lt(lengths)
    return padding_mask
end

-- def construct_local_mask(seqlen_q, seqlen_k, window_size=(-1, -1), query_padding_mask=None,
--                          key_padding_mask=None, device=None, key_leftpad=None):
-- key_leftpad (flash-attn's kvcache tests only) is left out of this port
local function construct_local_mask(seqlen_q, seqlen_k, window_size, query_padding_mask,
                                    key_padding_mask, device)
    window_size = window_size or { -1, -1 }
    -- row_idx = rearrange(torch.arange(seqlen_q, device=device, dtype=torch.long), "s -> s 1")
    local row_idx = rearrange(tide.arange(seqlen_q, { device = device, dtype = "int64" }),
        "s -> s 1")
    local col_idx = tide.arange(seqlen_k, { device = device, dtype = "int64" })
    -- Python's ~mask is :logical_not() (Lua 5.1 has no ~), its > and < :gt and :lt
    -- sk = (seqlen_k if key_padding_mask is None
    --       else rearrange(key_padding_mask.sum(-1), "b -> b 1 1 1"))
    local sk = key_padding_mask == nil and seqlen_k
        or rearrange(key_padding_mask:sum(-1), "b -> b 1 1 1")
    local sq = query_padding_mask == nil and seqlen_q
        or rearrange(query_padding_mask:sum(-1), "b -> b 1 1 1")
    -- if window_size[0] < 0:
    if window_size[1] < 0 then
        -- return col_idx > row_idx + sk - sq + window_size[1]
        return col_idx:gt(row_idx + sk - sq + window_size[2])
    else
        -- sk = torch.full_like(col_idx, seqlen_k) if key_padding_mask is None else sk
        if key_padding_mask == nil then sk = tide.full_like(col_idx, seqlen_k) end
        -- return torch.logical_or(
        --     col_idx > torch.minimum(row_idx + sk - sq + window_size[1], sk),
        --     col_idx < row_idx + sk - sq - window_size[0])
        return tide.logical_or(
            col_idx:gt(tide.minimum(row_idx + sk - sq + window_size[2], sk)),
            col_idx:lt(row_idx + sk - sq - window_size[1]))
    end
end

-- def attention_ref(q, k, v, query_padding_mask=None, key_padding_mask=None, attn_bias=None,
--     dropout_p=0.0, dropout_mask=None, causal=False, window_size=(-1, -1), softcap=0.0,
--     upcast=True, reorder_ops=False, key_leftpad=None):
-- Python's keyword arguments are one options table
local function attention_ref(q, k, v, o)
    o = o or {}
    local query_padding_mask, key_padding_mask = o.query_padding_mask, o.key_padding_mask
    local attn_bias, dropout_p, dropout_mask = o.attn_bias, o.dropout_p or 0.0, o.dropout_mask
    local window_size, softcap = o.window_size or { -1, -1 }, o.softcap or 0.0
    local upcast = o.upcast ~= false
    if o.causal then
        -- window_size = (window_size[0], 0)
        window_size = { window_size[1], 0 }
    end
    local dtype_og = q.dtype
    if upcast then
        -- q, k, v = q.float(), k.float(), v.float()
        q, k, v = q:float(), k:float(), v:float()
    end
    -- seqlen_q, seqlen_k = q.shape[1], k.shape[1]
    local seqlen_q, seqlen_k = q.shape[2], k.shape[2]
    -- k = repeat(k, "b s h d -> b s (h g) d", g=q.shape[2] // k.shape[2])
    -- (// is Lua 5.3's: math.floor for 5.1 and LuaJIT)
    k = repeat_(k, "b s h d -> b s (h g) d", { g = math.floor(q.shape[3] / k.shape[3]) })
    -- v = repeat(v, "b s h d -> b s (h g) d", g=q.shape[2] // v.shape[2])
    v = repeat_(v, "b s h d -> b s (h g) d", { g = math.floor(q.shape[3] / v.shape[3]) })
    local d = q.shape[-1]
    local scores
    if not o.reorder_ops then
        -- scores = torch.einsum("bthd,bshd->bhts", q / math.sqrt(d), k)
        scores = tide.einsum("bthd,bshd->bhts", q / math.sqrt(d), k)
    else
        scores = tide.einsum("bthd,bshd->bhts", q, k / math.sqrt(d))
    end
    if softcap > 0 then
        scores = scores / softcap
        scores = scores:tanh()
        scores = scores * softcap
    end
    if key_padding_mask ~= nil then
        -- scores.masked_fill_(rearrange(~key_padding_mask, "b s -> b 1 1 s"), float("-inf"))
        scores:masked_fill_(rearrange(key_padding_mask:logical_not(), "b s -> b 1 1 s"),
            -math.huge)
    end
    local local_mask
    if window_size[1] >= 0 or window_size[2] >= 0 then
        -- local_mask = construct_local_mask(seqlen_q, seqlen_k, window_size, query_padding_mask,
        --     key_padding_mask, q.device, key_leftpad=key_leftpad)
        local_mask = construct_local_mask(seqlen_q, seqlen_k, window_size, query_padding_mask,
            key_padding_mask, q.device)
        scores:masked_fill_(local_mask, -math.huge)
    end
    if attn_bias ~= nil then
        scores = scores + attn_bias
    end
    -- attention = torch.softmax(scores, dim=-1).to(v.dtype)
    local attention = tide.softmax(scores, -1):to(v.dtype)
    -- Some rows might be completely masked out so we fill them with zero instead of NaN
    if window_size[1] >= 0 or window_size[2] >= 0 then
        -- attention = attention.masked_fill(torch.all(local_mask, dim=-1, keepdim=True), 0.0)
        attention = attention:masked_fill(tide.all(local_mask, { dim = -1, keepdim = true }), 0.0)
    end
    if query_padding_mask ~= nil then
        -- attention = attention.masked_fill(rearrange(~query_padding_mask, "b s -> b 1 s 1"), 0.0)
        attention = attention:masked_fill(
            rearrange(query_padding_mask:logical_not(), "b s -> b 1 s 1"), 0.0)
    end
    local dropout_scaling = 1.0 / (1 - dropout_p)
    local attention_drop
    if dropout_mask ~= nil then
        -- attention_drop = attention.masked_fill(~dropout_mask, 0.0)
        attention_drop = attention:masked_fill(dropout_mask:logical_not(), 0.0)
    else
        attention_drop = attention
    end
    local output = tide.einsum("bhts,bshd->bthd", attention_drop, v * dropout_scaling)
    if query_padding_mask ~= nil then
        -- output.masked_fill_(rearrange(~query_padding_mask, "b s -> b s 1 1"), 0.0)
        output:masked_fill_(rearrange(query_padding_mask:logical_not(), "b s -> b s 1 1"), 0.0)
    end
    -- return output.to(dtype=dtype_og), attention.to(dtype=dtype_og)
    return output:to(dtype_og), attention:to(dtype_og)
end

---------------------------------------------------------------------------------------------
-- 3. checks against PyTorch 1.13 on the same formula inputs
---------------------------------------------------------------------------------------------
local B, S, H, D = 3, 5, 2, 4

-- f(arange(n) * a + b), the shared formula inputs
local function fml(n, a, b, f)
    return f(tide.arange(n, { dtype = "float32" }) * a + b)
end

local function qkv()
    local q = fml(B * S * H * D, 0.1, 0.3, tide.sin):reshape(B, S, H, D)
    local k = fml(B * S * H * D, 0.07, 0.0, tide.cos):reshape(B, S, H, D)
    local v = (fml(B * S * H * D, 0.13, 0.5, tide.sin) * 0.5):reshape(B, S, H, D)
    return q, k, v
end

local function masks()
    local qlens, klens = tide.tensor({ { 5 }, { 3 }, { 2 } }), tide.tensor({ { 4 }, { 5 }, { 2 } })
    local qm = generate_random_padding_mask(S, B, "cpu", "fixed", qlens)
    local km = generate_random_padding_mask(S, B, "cpu", "fixed", klens)
    return qm, km
end

local function list(t)
    return t:flatten():tolist()
end

describe("ported flash-attention bert_padding.py", function()
    it("unpad_input: unpadded rows, 1-based indices, cu_seqlens, max_seqlen; gradient", function()
        local _, km = masks()
        local x = (tide.arange(B * S * D, { dtype = "float32" }) * 0.25 - 3):reshape(B, S, D)
        x:requires_grad_(true)
        local xu, indices, cu_seqlens, max_seqlen, used = unpad_input(x, km)
        assert.are.same({ 11, 4 }, xu.shape)
        -- PyTorch's indices [0, 1, 2, 3, 5, 6, 7, 8, 9, 10, 11], one up here
        assert.are.same({ 1, 2, 3, 4, 6, 7, 8, 9, 10, 11, 12 }, list(indices))
        assert.are.equal("int64", indices.dtype)
        assert.are.same({ 0, 4, 9, 11 }, list(cu_seqlens))
        assert.are.equal("int32", cu_seqlens.dtype)
        assert.are.equal(5, max_seqlen)
        assert.are.same({ 4, 5, 2 }, list(used))
        assert.are.equal(132.5, xu:sum():item())
        assert.are.same({ -3, -2, -1, 0, 2, 3, 4, 5, 6, 7, 8 }, list(xu[{ {}, 1 }]))
        local w = (tide.arange(xu:numel(), { dtype = "float32" }) * 0.1):reshape(xu.shape)
        local loss = (xu * w):sum()
        loss:backward()
        assert_close_list({ 0.6, 2.2, 3.8, 5.4, 0, 7.0, 8.6, 10.2, 11.8, 13.4, 15.0, 16.6,
            0, 0, 0 }, list(x.grad:sum(-1)), 1e-6, "x.grad row sums")
        -- xu.grad_fn.name() == "IndexFirstAxisBackward"
        -- GAP: tide's grad_fn.name is a field (the op's name), not PyTorch's method: tostring
        assert.are.equal("IndexFirstAxisBackward", tostring(xu.grad_fn))
    end)

    it("pad_input round trip and IndexPutFirstAxis' gradient", function()
        local _, km = masks()
        local x = (tide.arange(B * S * D, { dtype = "float32" }) * 0.25 - 3):reshape(B, S, D)
        local xu, indices = unpad_input(x, km)
        xu = xu:detach():requires_grad_(true)
        local xp = pad_input(xu, indices, B, S)
        assert.are.same({ B, S, D }, xp.shape)
        local want = x:masked_fill(rearrange(km:logical_not(), "b s -> b s 1"), 0)
        assert.are.same(list(want), list(xp))
        local w = tide.arange(B * S * D, { dtype = "float32" }):reshape(B, S, D)
        local loss = (xp * w):sum()
        loss:backward()
        -- the gradient of each kept row is w's row at its padded place
        assert.are.same(list(rearrange(w, "b s d -> (b s) d")[indices]), list(xu.grad))
    end)

    it("IndexFirstAxisResidual: output, residual and the summed gradient", function()
        local x = tide.arange(6 * 2, { dtype = "float32" }):reshape(6, 2):requires_grad_(true)
        local idx = tide.tensor({ 2, 5, 2 }, { dtype = "int64" })
        local out, res = index_first_axis_residual(x, idx)
        assert.are.same({ 2, 3, 8, 9, 2, 3 }, list(out))
        assert.are.same(list(x), list(res))
        local loss = out:sum() + (res * 2):sum()
        loss:backward()
        -- grad_residual 2 everywhere, plus 1 per pick of a row (row 2 twice)
        assert.are.same({ 2, 2, 4, 4, 2, 2, 2, 2, 3, 3, 2, 2 }, list(x.grad))
    end)

    it("unpad_input_for_concatenated_sequences", function()
        local aml = tide.tensor({ { 2, 3, 0, 0, 0 }, { 3, 2, 0, 0, 0 }, { 5, 0, 0, 0, 0 } })
        local x = tide.arange(B * S * 2, { dtype = "float32" }):reshape(B, S, 2)
        local xu, indices, cu_seqlens, max_seqlen = unpad_input_for_concatenated_sequences(x, aml)
        assert.are.same({ 15, 2 }, xu.shape)
        local want = {}
        for i = 1, 15 do want[i] = i end
        assert.are.same(want, list(indices))
        assert.are.same({ 0, 2, 5, 8, 10, 15 }, list(cu_seqlens))
        assert.are.equal(5, max_seqlen)
    end)
end)

describe("ported flash-attention test_flash_attn.py reference attention", function()
    it("generate_random_padding_mask: fixed, full and random lengths", function()
        local qm = masks()
        assert.are.same({ B, S }, qm.shape)
        assert.are.same({ 5, 3, 2 }, list(qm:sum(-1)))
        local full = generate_random_padding_mask(S, B, "cpu", "full")
        assert.are.same({ 5, 5, 5 }, list(full:sum(-1)))
        local r = generate_random_padding_mask(S, B, "cpu")
        assert.are.equal("bool", r.dtype)
        for _, n in ipairs(list(r:sum(-1))) do assert.is_true(n >= 1 and n <= S) end
    end)

    it("construct_local_mask with padding and a window", function()
        local qm, km = masks()
        local lm = construct_local_mask(S, S, { 1, 1 }, qm, km)
        assert.are.same({ B, 1, S, S }, lm.shape)
        assert.are.same({ 0, 0, 1, 1, 1, 0, 0, 0, 1, 1, 1, 0, 0, 1, 1,
            1, 1, 0, 1, 1, 1, 1, 1, 1, 1 },
            list(lm[3]:to("int64")))
    end)

    it("attention_ref: plain, causal, padded, padded causal, windowed, GQA", function()
        local q, k, v = qkv()
        local qm, km = masks()
        local o, a = attention_ref(q, k, v)
        assert.are.same({ B, S, H, D }, o.shape)
        assert.are.same({ B, H, S, S }, a.shape)
        assert_close_list({ 10.111771583557129 }, { o:sum():item() }, 1e-5, "plain o")
        -- o[1,2,1] in PyTorch's 0-based indexing
        assert_close_list({ 0.04908548295497894, 0.034552253782749176, 0.019435852766036987,
            0.003991454839706421 }, list(o[2][3][2]), 1e-5, "plain o row")

        o, a = attention_ref(q, k, v, { causal = true })
        assert_close_list({ 7.952385902404785 }, { o:sum():item() }, 1e-5, "causal o")
        assert_close_list({ 0.11260543763637543, 0.1335054188966751, 0.15215232968330383,
            0.16823148727416992 }, list(o[3][4][1]), 1e-5, "causal o row")
        assert_close_list({ 0.6621906161308289, 0.3378094434738159, 0, 0, 0 }, list(a[1][2][2]),
            1e-5, "causal attention")

        o, a = attention_ref(q, k, v, { query_padding_mask = qm, key_padding_mask = km,
            causal = true })
        assert_close_list({ 6.102069854736328 }, { o:sum():item() }, 1e-5, "padded causal o")
        assert_close_list({ 0.10418148338794708, 0.13942313194274902, 0.17231184244155884,
            0.20229244232177734 }, list(o[2][2][1]), 1e-5, "padded causal o row")
        assert_close_list({ 0.4041260778903961, 0.3850356936454773, 0.2108382284641266, 0, 0,
            0.3606621325016022, 0.3479451835155487, 0.20485642552375793, 0.08653624355792999, 0,
            0.2437574416399002, 0.24336101114749908, 0.2124379575252533, 0.16901719570159912,
            0.13142646849155426, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 }, list(a[2][1]), 1e-5,
            "padded causal attention")
        assert_close_list({ 1, 0, 0, 0, 0, 0.4987671971321106, 0.5012328028678894, 0, 0, 0,
            0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 }, list(a[3][2]), 1e-5,
            "padded causal attention, short batch")
        local o2 = attention_ref(q, k, v, { query_padding_mask = qm, key_padding_mask = km,
            causal = true, reorder_ops = true })
        assert.is_true((o2 - o):abs():max():item() < 1e-6)

        o, a = attention_ref(q, k, v, { query_padding_mask = qm, key_padding_mask = km })
        assert_close_list({ 7.0264692306518555 }, { o:sum():item() }, 1e-5, "padded o")
        assert_close_list({ 0.07662060856819153, 0.04902142286300659, 0.020595014095306396,
            -0.00817897915840149 }, list(o[1][4][2]), 1e-5, "padded o row")
        assert_close_list({ 0.4837539494037628, 0.51624596118927, 0, 0, 0 }, list(a[3][1][2]),
            1e-5, "padded attention")

        o, a = attention_ref(q, k, v, { query_padding_mask = qm, key_padding_mask = km,
            window_size = { 1, 1 } })
        assert_close_list({ 7.287405967712402 }, { o:sum():item() }, 1e-5, "windowed o")
        assert_close_list({ 0.3620123863220215, 0.35495203733444214, 0.3419015407562256,
            0.32308101654052734 }, list(o[1][3][2]), 1e-5, "windowed o row")
        assert_close_list({ 1, 0, 0, 0, 0, 0.6621906161308289, 0.3378094434738159, 0, 0, 0,
            0.5016711354255676, 0.32792437076568604, 0.17040446400642395, 0, 0,
            0, 0.29601210355758667, 0.3319956064224243, 0.37199223041534424, 0,
            0, 0, 0.3009914457798004, 0.6990084648132324, 0 }, list(a[1][2]), 1e-5,
            "windowed attention")

        -- k[:, :, :1], v[:, :, :1]: one key head for two query heads
        o = attention_ref(q, k[{ {}, {}, { 1, 1 } }], v[{ {}, {}, { 1, 1 } }],
            { query_padding_mask = qm, key_padding_mask = km })
        assert_close_list({ 6.275484085083008 }, { o:sum():item() }, 1e-5, "GQA o")
        assert_close_list({ 0.30699622631073, 0.3230467140674591, 0.33364543318748474,
            0.33861348032951355 }, list(o[1][2][2]), 1e-5, "GQA o row")
    end)

    it("attention_ref's gradient w.r.t. q (padded, causal)", function()
        local q, k, v = qkv()
        local qm, km = masks()
        local qq = q:clone():requires_grad_(true)
        local o = attention_ref(qq, k, v, { query_padding_mask = qm, key_padding_mask = km,
            causal = true })
        local wo = tide.arange(o:numel(), { dtype = "float32" }):reshape(o.shape):sin()
        local loss = (o * wo):sum()
        loss:backward()
        assert_close_list({ 2.278261661529541 }, { qq.grad:abs():sum():item() }, 1e-5, "|dq|")
        assert_close_list({ -0.004266907460987568, -0.004732475616037846, -0.005174865014851093,
            -0.005591906141489744 }, list(qq.grad[1][3][2]), 1e-4, "dq row")
        -- a padded query row takes no gradient
        assert.are.equal(0, qq.grad[2][5]:abs():sum():item())
    end)
end)
